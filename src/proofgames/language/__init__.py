"""Debate over language-model reasoning: step transcripts, judges, provers, protocols.

The core (transcripts, parsers, calculator/scripted/callback judges, scripted provers,
the protocols -- played by the core driver, ending in the core ``Outcome`` -- the
generated task, GSM8K loading) needs nothing beyond
the base install.  Model judges and provers, and the Inspect AI tasks, need the
``language`` extra (``pip install 'proofgames[language]'``); see ``docs/language.md``.

Example:
    >>> import asyncio
    >>> from proofgames.language import (CalculatorJudge, JudgeLedger, ReferenceB,
    ...     ScriptedA, cross_examination, generate_chain)
    >>> item = generate_chain(50, seed=0, error_at=17)
    >>> out = asyncio.run(cross_examination(item.task_text, ScriptedA(item.dishonest),
    ...     ReferenceB(item.reference), JudgeLedger(CalculatorJudge())))
    >>> out.verdict, out.winner, out.reason
    (0, 'B', 'the judge rejected step 18')
"""

from ..errors import DebateStopped
from ..judges import CalculatorJudge, CallbackJudge, ScriptedJudge
from .costs import BudgetExhausted, DebateCosts, JudgeBudget, JudgeLedger
from .figure1 import Figure1Check
from .generated import GeneratedItem, generate_chain
from .parsers import MODEL_FORMAT, parse_gsm8k, parse_model_output
from .protocols import bisection, consultancy, cross_examination, whole_transcript
from .provers import (
    CheckerB,
    ContrarianB,
    InconsistentA,
    ProverA,
    ProverB,
    ProverReply,
    ReferenceB,
    ScriptedA,
)
from .transcript import (
    ArgumentStep,
    StepTranscript,
    TranscriptFormatError,
    count_tokens,
)

__all__ = [
    "MODEL_FORMAT",
    "ArgumentStep",
    "BudgetExhausted",
    "CalculatorJudge",
    "CallbackJudge",
    "CheckerB",
    "ContrarianB",
    "DebateCosts",
    "DebateStopped",
    "Figure1Check",
    "GeneratedItem",
    "InconsistentA",
    "JudgeBudget",
    "JudgeLedger",
    "ProverA",
    "ProverB",
    "ProverReply",
    "ReferenceB",
    "ScriptedA",
    "ScriptedJudge",
    "StepTranscript",
    "TranscriptFormatError",
    "bisection",
    "consultancy",
    "count_tokens",
    "cross_examination",
    "generate_chain",
    "parse_gsm8k",
    "parse_model_output",
    "whole_transcript",
]
