"""Batches of transcript debates, with summaries: used by the CLI, Inspect tasks and report.

Judges are named by a spec: ``calculator`` (annotations), ``calculator-grounded`` (and operands
shown in the inputs), ``scripted:E`` (error rate E, reference: the
exact calculator with operand grounding), or ``model`` (the Inspect model in role
``judge``; needs the ``language`` extra; ``model:NAME`` must name a model Inspect can
load, checked before any debate).  Each debate is played by the core driver and ends in
the core :class:`~proofgames.protocols.Outcome`, or stops with no verdict
(:class:`~proofgames.errors.DebateStopped`: its judge or a model failed, or the budget is
spent). Rates come with 95% Wilson intervals, over the debates that finished; a stopped
debate is counted and reported in its row, and the batch goes on (a spent budget ends
it, keeping the finished debates). A run in which no debate finished is an
:class:`~proofgames.errors.OracleError`.

Example:
    >>> import asyncio
    >>> rows = asyncio.run(generated_games(20, 4, seed=0, protocol="cross-examination",
    ...                                    judge="calculator"))
    >>> s = summarize(rows)
    >>> s["completeness"], s["soundness_error"], s["debates"]
    (1.0, 0.0, 8)
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .._seeds import check_seed
from ..analysis.intervals import wilson_interval
from ..errors import DebateStopped, OracleError, ProtocolError
from ..judges import ScriptedJudge, make_judge
from ..judges.interface import StepJudge, StepQuestion

__all__ = ["PROTOCOLS", "generated_games", "gsm8k_games", "make_judge", "play", "summarize"]
from ..protocols import Outcome
from ..stochastic.optimize import optimize_params
from ._sides import Programs, check_isolation, debates, program_truth, sides
from .costs import DebateCosts, JudgeBudget, JudgeLedger
from .figure1 import Figure1Check, liar_announcement
from .generated import generate_chain
from .gsm8k import load_gsm8k
from .protocols import (
    DEFAULT_TIMEOUT,
    bisection,
    consultancy,
    cross_examination,
    judge_alone,
    whole_transcript,
)
from .provers import CheckerB, ScriptedA
from .transcript import same_value

Models = dict[str, Any]
"""A model prover for role ``"A"`` or ``"B"``: a model name Inspect can load, or a Model."""


Prefer = str | StepJudge | None
"""How best-of-N picks A's sample: ``None`` (the opponent's score), or a judge (a spec or
a :class:`~proofgames.judges.StepJudge`) whose P[yes] on the whole transcript decides."""


def preferrer(prefer: Prefer, seed: int) -> Any:
    """Best-of-N's scorer for A's samples.

    :func:`~.strength.opponent` with the calculator checker as the opponent and the
    calculator as the judge (offline, no model calls), or :func:`~.strength.preference`
    of the judge ``prefer`` (a spec for :func:`make_judge`, or a judge).
    """
    from ..judges import CalculatorJudge
    from .strength import opponent, preference

    if prefer is None:
        return opponent(CheckerB(), CalculatorJudge())
    return preference(make_judge(prefer, seed) if isinstance(prefer, str) else prefer)


def with_models(
    models: Models, a: object, b: object, wrong_answer: str | None, best_of: int | None = None,
    prefer: Prefer = None, seed: int = 0,
) -> tuple[object, object]:  # fmt: skip
    """``a`` and ``b``, with a model in each role ``models`` names (``language`` extra).

    A model A writes its own solution: honestly when ``wrong_answer`` is ``None``, else
    arguing for ``wrong_answer`` while keeping each step plausible. With ``best_of`` N, A
    samples N solutions (temperature 1, provider seeds 0 to N-1) and commits to the one
    :func:`preferrer` scores highest (:class:`~.strength.BestOfN`): by default the
    opponent's score; with ``prefer``, a preference judge's P[yes] on the whole
    transcript (its tokens and dollars count as A's). A model B names the first wrong step.
    """
    unknown = set(models) - {"A", "B"}
    if unknown:
        raise ProtocolError(f"a model prover plays role A or B, not {sorted(unknown)[0]!r}")
    if not models:
        return a, b
    from .model_provers import ModelProverA, ModelProverB

    if "A" in models and best_of is None:
        a = ModelProverA(models["A"], wrong_answer=wrong_answer)
    elif "A" in models and best_of is not None:
        from .strength import BestOfN

        samples = [ModelProverA(models["A"], wrong_answer=wrong_answer, temperature=1.0, seed=k)
                   for k in range(best_of)]  # fmt: skip
        a = BestOfN(samples, preferrer(prefer, seed))
    if "B" in models:
        b = ModelProverB(models["B"])
    return a, b


PROTOCOLS = ("cross-examination", "bisection", "whole-transcript", "consultancy", "judge-alone")
Row = dict[str, Any]


async def play(
    protocol: str, task: str, a: object, b: object, ledger: JudgeLedger, seed: int,
    figure1: Figure1Check | None = None, timeout: float = DEFAULT_TIMEOUT,
) -> Outcome:  # fmt: skip
    """Play one debate of ``protocol`` (seeded by ``seed``; ``timeout`` seconds per move).

    Raises:
        DebateStopped: the debate has no verdict (its judge or a model failed, or the
            budget is spent).
    """
    t = timeout
    if protocol == "cross-examination":
        return await cross_examination(task, a, b, ledger, figure1=figure1, seed=seed, timeout=t)
    if protocol == "bisection":
        return await bisection(task, a, b, ledger, figure1=figure1, seed=seed, timeout=t)
    if protocol == "whole-transcript":
        return await whole_transcript(task, a, ledger, seed=seed, timeout=t)
    if protocol == "consultancy":
        return await consultancy(task, a, ledger, seed=seed, timeout=t)
    if protocol == "judge-alone":
        return await judge_alone(task, a, ledger, seed=seed, timeout=t)
    raise ProtocolError(f"unknown protocol {protocol!r}: use one of {', '.join(PROTOCOLS)}")


async def _played(
    protocol: str, task: str, a: object, b: object, ledger: JudgeLedger, seed: int,
    figure1: Figure1Check | None = None, timeout: float = DEFAULT_TIMEOUT,
) -> Outcome | DebateStopped:  # fmt: skip
    """:func:`play`, with a stopped debate as a value (a batch counts it and goes on)."""
    try:
        return await play(protocol, task, a, b, ledger, seed, figure1, timeout)
    except DebateStopped as exc:
        return exc


def _row(out: Outcome | DebateStopped, truth: bool, **extra: Any) -> Row:
    """One debate's row: its verdict against the truth, its costs, why it ended."""
    if isinstance(out, DebateStopped):
        c: Any = out.costs
        accepted, reason, step, stopped = None, str(out), None, out.kind
    else:
        c, reason, stopped = out.costs, out.reason, None
        accepted, step = out.verdict == 1, out.details.get("disputed_step")
        extra = {**extra, "judgements": list(out.details.get("judgements") or [])}
    return {
        **extra, "truth": truth, "accepted": accepted, "correct": accepted is truth,
        "judge_calls": c.judge_calls, "judge_input_tokens": c.judge_input_tokens,
        "prover_tokens": c.prover_input_tokens + c.prover_output_tokens,
        "prover_calls": dict(c.prover_calls), "cost_usd": c.cost_usd, "reason": reason,
        "disputed_step": step, "stopped": stopped,
    }  # fmt: skip


#: The most problems one run debates (each twice): about a day of the calculator judge.
MAX_PROBLEMS = 100_000


def check_problems(n: object, name: str = "n") -> int:
    """Refuse a number of problems that is not an int in ``[1, MAX_PROBLEMS]``.

    Raises:
        ProtocolError: naming ``name`` and the value.

    Example:
        >>> check_problems(10**20, "--n")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        proofgames.errors.ProtocolError: --n must be an int in [1, 100,000] (problems ...
    """
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_PROBLEMS:
        raise ProtocolError(
            f"{name} must be an int in [1, {MAX_PROBLEMS:,}] (problems to debate), not {n!r}"
        )
    return n


def _seeds(seed: int, n: int) -> list[int]:
    check_seed(seed)
    check_problems(n)
    return [int(s.generate_state(1)[0]) for s in np.random.SeedSequence(seed).spawn(n)]


def _stop_if_failed(out: Outcome | DebateStopped) -> bool:
    """True when the run must stop here: the judge budget of the whole run is spent.

    A debate its judge or a prover's model stopped is counted (its row has ``accepted``
    ``None`` and says why) and the batch goes on: one stopped debate never ends a batch.
    """
    return isinstance(out, DebateStopped) and out.kind == "budget"


def measured(rows: list[Row], required: bool = True) -> list[Row]:
    """``rows``, if at least one debate finished; a run that measured nothing is an error.

    ``required=False`` returns them anyway (a comparison checks its whole grid instead).

    Raises:
        OracleError: every debate stopped (naming how many, and the first one's reason).
    """
    if required and rows and all(r["accepted"] is None for r in rows):
        raise OracleError(
            f"no debate finished: all {len(rows)} stopped (the first: {rows[0]['reason']})"
        )
    return rows


async def generated_games(
    steps: int, n: int, *, seed: int, protocol: str, judge: str, figure1: bool = False,
    budget: JudgeBudget | None = None, isolation: str = "in-process",
    programs: Programs | None = None, timeout: float = DEFAULT_TIMEOUT,
    models: Models | None = None, best_of: int | None = None, require_measured: bool = True,
    prefer: Prefer = None,
) -> list[Row]:  # fmt: skip
    """``n`` generated problems, each debated twice.

    Honest A meets a contrarian B (truth: accept); the dishonest A meets the reference
    B (truth: reject); ``models`` puts a model in a role (:func:`with_models`: a model A
    writes its own solution, honestly or for the planted wrong answer, and the truth is
    whether its answer is right).  With a ``budget`` for the whole run, the run stops at the first
    debate the budget cannot pay for (that debate's row says so). With
    ``isolation="process"`` every built-in prover runs in a process of its own;
    ``programs`` maps a role to a command that plays it in every debate (see
    :mod:`._sides`: a program A debates each problem once, against the reference B).
    """
    programs, models = dict(programs or {}), dict(models or {})
    _strength(models, best_of)  # a bad N is refused before any debate
    check_isolation(isolation)
    if models and (programs or isolation != "in-process"):
        raise ProtocolError("model provers run in process: not with programs or --isolation")
    if figure1 and "A" in programs:
        raise ProtocolError("Figure 1 needs A's announcements: not with a program as A")
    rows: list[Row] = []
    spent = DebateCosts()
    for i, s in enumerate(_seeds(seed, n)):
        item = generate_chain(steps, seed=s)
        for truth, names in debates(item, programs):
            j = make_judge(judge, seed=s + bool(truth))
            fig1 = _figure1(j, s, bool(truth)) if figure1 else None
            ledger = JudgeLedger(j, budget or JudgeBudget(), costs=spent)
            with sides(item, names, protocol=protocol, seed=s, isolation=isolation,
                       programs=programs, timeout=timeout, task_seed=s) as (a, b):  # fmt: skip
                wrong = None if truth else item.dishonest.answer
                a, b = with_models(models, a, b, wrong, best_of, prefer, s)
                out = await _played(protocol, item.task_text, a, b, ledger, s, fig1, timeout)
            if truth is None or "A" in models:
                answer = None if isinstance(out, DebateStopped) else out.details.get("answer")
                truth = program_truth(answer, item)
            stop = _stop_if_failed(out)
            rows.append(_row(out, truth, item=i, steps=steps, error_at=item.error_at,
                             **_strength(models, best_of)))  # fmt: skip
            if stop:
                return measured(rows, require_measured)
    return measured(rows, require_measured)


def _figure1(judge: StepJudge, seed: int, honest: bool) -> Figure1Check:
    """Figure 1 on the disputed step, against the exact optimal liar.

    Honest A announces the judge's true P[yes]; the lying A, what the exact optimal liar
    announces (:func:`~.figure1.liar_announcement`).
    """
    if not isinstance(judge, ScriptedJudge):
        raise ProtocolError("Figure 1 needs a judge whose P[yes] B can model: scripted:E")
    params = optimize_params(1.0, 1).params
    truth = judge.probability

    def liar(question: StepQuestion) -> float:
        return liar_announcement(params, truth(question))

    return Figure1Check(params, truth if honest else liar, truth, seed)


async def gsm8k_games(
    path: str | Path | None, *, limit: int | None, protocol: str, judge: str, seed: int = 0,
    budget: JudgeBudget | None = None, models: Models | None = None,
    best_of: int | None = None, require_measured: bool = True, prefer: Prefer = None,
) -> list[Row]:  # fmt: skip
    """Debate every solution of the first ``limit`` questions; truth: ``is_correct``.

    ``path``: model solutions or problems (:func:`~.gsm8k.load_gsm8k`); ``None``: the
    demo problems shipped with proofgames.  A defends the solution as written; B disputes
    the first step the calculator rejects.  A run ``budget`` stops the run as in
    :func:`generated_games`. With a model as A (``models``; problems only), the model writes
    its own solution to each question, honestly or for the planted wrong answer, and the
    truth is whether its answer is the reference's.
    """
    rows: list[Row] = []
    spent = DebateCosts()
    models = dict(models or {})
    _strength(models, best_of)  # a bad N is refused before any debate
    make_judge(judge, seed)  # a judge that cannot be used fails before any debate
    solutions = load_gsm8k(path, limit)
    right = _reference_answers(solutions) if "A" in models else {}
    seeds = _seeds(seed, len(solutions))  # each debate its own judge and protocol draws
    for sol, own in zip(solutions, seeds, strict=True):
        meta = {"index": sol.index, "model": sol.model}
        if sol.transcript is None:  # A's solution is no transcript: no debate, A loses
            rows.append(_unparsed(sol.parse_error, sol.is_correct, **meta))
            continue
        task = sol.question if "A" in models else " ".join(sol.transcript.task)
        wrong = None if sol.is_correct else sol.transcript.answer
        a, b = with_models(models, ScriptedA(sol.transcript), CheckerB(), wrong, best_of, prefer,
                           own)  # fmt: skip
        ledger = JudgeLedger(make_judge(judge, own), budget or JudgeBudget(), costs=spent)
        out = await _played(protocol, task, a, b, ledger, own)
        stop = _stop_if_failed(out)
        truth = sol.is_correct
        if "A" in models:
            answer = None if isinstance(out, DebateStopped) else out.details.get("answer")
            truth = isinstance(answer, str) and same_value(answer, right[sol.index])
        rows.append(_row(out, truth, **meta, **_strength(models, best_of)))
        if stop:
            break
    return measured(rows, require_measured)


def _strength(models: Models, best_of: int | None) -> dict[str, Any]:
    """The row's ``strength`` (A's best-of-N) when a model A samples N solutions."""
    if best_of is None or "A" not in models:
        return {}
    if isinstance(best_of, bool) or not isinstance(best_of, int) or not 1 <= best_of <= 256:
        raise ProtocolError(f"best-of-N needs N in [1, 256], not {best_of!r}")
    return {"strength": best_of}


def _reference_answers(solutions: Sequence[Any]) -> dict[int, str]:
    """Each problem's right answer, from its reference solution (problems files only).

    Raises:
        ProtocolError: model solutions (a model A needs the reference answers).
    """
    right = {s.index: s.transcript.answer for s in solutions
             if s.model == "reference" and s.transcript is not None}  # fmt: skip
    if any(s.index not in right for s in solutions):
        raise ProtocolError(
            "a model as A needs problems with reference solutions (test.jsonl or the demo "
            "problems), not model solutions"
        )
    return right


def _unparsed(error: object, truth: bool, **extra: Any) -> Row:
    """The row of a solution that is no transcript: rejected before any debate."""
    return {
        **extra, "truth": truth, "accepted": False, "correct": truth is False,
        "judge_calls": 0, "judge_input_tokens": 0, "prover_tokens": 0,
        "prover_calls": {"A": 0, "B": 0}, "cost_usd": None,
        "reason": f"A loses: malformed transcript: {error}", "disputed_step": None,
        "stopped": None,
    }  # fmt: skip


def _rate(rows: Sequence[Row], key: str) -> tuple[float, tuple[float, float]]:
    """The share of ``rows`` whose ``key`` is true, with its 95% Wilson interval.

    An empty batch has rate NaN and the vacuous interval [0, 1].
    """
    if not rows:
        return float("nan"), (0.0, 1.0)
    hits = sum(bool(r[key]) for r in rows)
    return hits / len(rows), wilson_interval(hits, len(rows))


def summarize(rows: Sequence[Row]) -> dict[str, Any]:
    """Rates (with intervals) over the debates that finished, and mean costs over all.

    A debate the run stopped (``accepted`` is ``None``) is counted in ``debates`` and
    ``stopped`` but in no rate: it measured nothing.
    """
    done = [r for r in rows if r["accepted"] is not None]
    true = [r for r in done if r["truth"]]
    false = [r for r in done if not r["truth"]]
    acc, acc_ci = _rate(done, "correct")
    comp, comp_ci = _rate(true, "accepted")
    sound, sound_ci = _rate(false, "accepted")
    return {
        "debates": len(rows), "accuracy": acc, "accuracy_ci": acc_ci,
        "completeness": comp, "completeness_ci": comp_ci,
        "soundness_error": sound, "soundness_error_ci": sound_ci,
        "stopped": sum(r["accepted"] is None for r in rows),
        "judge_calls": float(np.mean([r["judge_calls"] for r in rows])) if rows else 0.0,
        "judge_input_tokens": float(np.mean([r["judge_input_tokens"] for r in rows]))
        if rows else 0.0,
        "prover_tokens": float(np.mean([r["prover_tokens"] for r in rows])) if rows else 0.0,
    }  # fmt: skip
