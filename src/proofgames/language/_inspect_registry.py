"""Inspect AI entry point: the tasks proofgames/gsm8k_debate and proofgames/generated_debate.

Also registers the offline model provider ``proofgames-gguf`` (:mod:`.local_model`).
"""

from .inspect_tasks import generated_debate, gsm8k_debate
from .local_model import gguf

__all__ = ["generated_debate", "gguf", "gsm8k_debate"]
