"""Inspect AI entry point: the tasks proofgames/gsm8k_debate and proofgames/generated_debate."""

from .inspect_tasks import generated_debate, gsm8k_debate

__all__ = ["generated_debate", "gsm8k_debate"]
