"""Protocols against their baselines, in one run, on the same problems and judges.

Every protocol of :data:`~.experiments.PROTOCOLS` (cross-examination, bisection, the
judge reading the whole transcript, consultancy and the judge alone on the final answer)
is played with every judge named, on the same problems, provers and seeds: the
comparison is paired, so a difference between two rows is the protocols', not the
draw's. Each (protocol, judge) cell reports

* **completeness** (P[accept | A's answer is right]), **soundness error** (P[accept |
  A's answer is wrong]) and **accuracy** (P[verdict right]), each with its 95% Wilson
  interval, over the debates that finished (measured; the intervals are exact-coverage
  approximations, not bounds);
* with ``models``, a model in role A (writing its own solution, honestly or for the
  planted wrong answer; the truth is whether its answer is right) or B;
* the mean **judge calls**, **judge input tokens** and **prover tokens** a debate, and
  the total **dollars** (``None`` when no judge or prover reported a price).

Example:
    >>> import asyncio
    >>> rows = asyncio.run(compare_generated(12, 3, seed=0, judges=("calculator",),
    ...                                      protocols=("bisection", "judge-alone")))
    >>> [(c["protocol"], c["soundness_error"]) for c in cells(rows)]
    [('bisection', 0.0), ('judge-alone', 1.0)]
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import ProtocolError
from ..reporting.tables import markdown_table
from .costs import JudgeBudget
from .experiments import (
    PROTOCOLS,
    Models,
    Prefer,
    Row,
    generated_games,
    gsm8k_games,
    measured,
    summarize,
)

__all__ = [
    "biases",
    "cells",
    "compare_generated",
    "compare_gsm8k",
    "reliability",
    "table",
    "with_controls",
]

DEFAULT_JUDGES = ("calculator", "scripted:0.1")
"""The judges a comparison uses unless told: exact on arithmetic, and one that errs."""


def _checked(protocols: Sequence[str], judges: Sequence[str]) -> tuple[list[str], list[str]]:
    """The protocols and judges, each known and named once (else :class:`ProtocolError`)."""
    unknown = [p for p in protocols if p not in PROTOCOLS]
    if unknown:
        raise ProtocolError(f"unknown protocol {unknown[0]!r}: use one of {', '.join(PROTOCOLS)}")
    for name, values in (("protocol", protocols), ("judge", judges)):
        if not values:
            raise ProtocolError(f"a comparison needs at least one {name}")
        if len(set(values)) != len(values):
            raise ProtocolError(f"each {name} once: {', '.join(values)}")
    return list(protocols), list(judges)


DEBATES = ("cross-examination", "bisection")
"""The protocols that dispute one step (the step Figure 1 can settle)."""
FIGURE1 = " + Figure 1"
"""The suffix of a protocol whose disputed step is settled by Figure 1 (``figure1=True``)."""


def _with_figure1(
    protocols: Sequence[str], judges: Sequence[str], figure1: bool
) -> list[tuple[str, bool]]:
    """(protocol, Figure 1 or not) to play: with ``figure1``, each debate protocol twice.

    Raises:
        ProtocolError: ``figure1`` without a debate protocol or a scripted judge.
    """
    plays = [(p, False) for p in protocols]
    if not figure1:
        return plays
    debating = [p for p in protocols if p in DEBATES]
    if not debating or not any(j.startswith("scripted:") for j in judges):
        raise ProtocolError(
            "Figure 1 settles the disputed step of cross-examination or bisection, for a "
            "judge whose P[yes] B can model (scripted:E): give one of each"
        )
    return plays + [(p, True) for p in debating]


async def compare_generated(
    steps: int, n: int, *, seed: int, judges: Sequence[str] = DEFAULT_JUDGES,
    protocols: Sequence[str] = PROTOCOLS, budget: JudgeBudget | None = None,
    models: Models | None = None, best_of: Sequence[int] = (), figure1: bool = False,
    prefer: Prefer = None,
) -> list[Row]:  # fmt: skip
    """Every protocol with every judge on the same ``n`` generated problems (each twice).

    Rows are those of :func:`~.experiments.generated_games`, tagged with ``protocol`` and
    ``judge``. A ``budget`` applies to each (protocol, judge) run on its own. With
    ``figure1``, cross-examination and bisection are played again with Figure 1's
    stochastic protocol on the disputed step (:mod:`.figure1`; scripted judges only),
    as the protocol ``"<name> + Figure 1"``.
    """
    rows: list[Row] = []
    for protocol, fig1 in _with_figure1(_checked(protocols, judges)[0], judges, figure1):
        for judge in judges:
            if fig1 and not judge.startswith("scripted:"):
                continue  # B models the judge's P[yes]: a scripted judge's alone is known
            for strength in best_of or (None,):
                played = await generated_games(steps, n, seed=seed, protocol=protocol,
                                               judge=judge, budget=budget, models=models,
                                               best_of=strength, figure1=fig1,
                                               require_measured=False,
                                               prefer=prefer)  # fmt: skip
                name = protocol + FIGURE1 if fig1 else protocol
                rows += [{"protocol": name, "judge": judge, **r} for r in played]
    return measured(rows)


async def compare_gsm8k(
    path: str | Path | None, *, limit: int, seed: int = 0, judges: Sequence[str] = DEFAULT_JUDGES,
    protocols: Sequence[str] = PROTOCOLS, budget: JudgeBudget | None = None,
    models: Models | None = None, best_of: Sequence[int] = (), prefer: Prefer = None,
) -> list[Row]:  # fmt: skip
    """Every protocol with every judge on the same GSM8K solutions (see ``gsm8k_games``)."""
    rows: list[Row] = []
    for protocol in _checked(protocols, judges)[0]:
        for judge in judges:
            for strength in best_of or (None,):
                played = await gsm8k_games(path, limit=limit, protocol=protocol, judge=judge,
                                           seed=seed, budget=budget, models=models,
                                           best_of=strength, prefer=prefer,
                                           require_measured=False)  # fmt: skip
                rows += [{"protocol": protocol, "judge": judge, **r} for r in played]
    return measured(rows)


STRENGTH_KEYS = ("strength", "strength_a", "strength_b")
"""The debaters' strengths a row may carry (best-of-N): a cell per value."""


def cells(rows: Sequence[Row]) -> list[dict[str, Any]]:
    """One summary per (protocol, judge), in the order the rows came.

    Each is :func:`~.experiments.summarize` of its rows, with ``protocol``, ``judge`` and
    ``cost_usd`` (the total; ``None`` when no debate reported a price), and A's
    ``strength`` (best-of-N) where the rows have one, or A's and B's (``strength_a``,
    ``strength_b``, from :mod:`.crossplay`): a cell per strength.
    """

    def key(r: Row) -> tuple[Any, ...]:
        return r["protocol"], r["judge"], *(r.get(k) for k in STRENGTH_KEYS)

    out = []
    for k in dict.fromkeys(key(r) for r in rows):
        mine = [r for r in rows if key(r) == k]
        prices = [r["cost_usd"] for r in mine if r["cost_usd"] is not None]
        strengths = {name: mine[0][name] for name in STRENGTH_KEYS if name in mine[0]}
        out.append({"protocol": k[0], "judge": k[1], **summarize(mine),
                    "cost_usd": sum(prices) if prices else None, **strengths})  # fmt: skip
    return out


def _rate(value: float, ci: Sequence[float]) -> str:
    if value != value:  # NaN: no debate of that kind finished
        return "-"
    return f"{value:.3f} [{ci[0]:.3f}, {ci[1]:.3f}]"


def _cells(c: dict[str, Any]) -> list[object]:
    """One table row: a (protocol, judge) summary, formatted."""
    dollars = "-" if c["cost_usd"] is None else f"{c['cost_usd']:.4f}"
    judge = c["judge"]
    for key, side in (("strength", "A"), ("strength_a", "A"), ("strength_b", "B")):
        if c.get(key) is not None:
            judge += f", {side} best-of-{c[key]}"
    return [
        c["protocol"], judge, c["debates"],
        _rate(c["completeness"], c["completeness_ci"]),
        _rate(c["soundness_error"], c["soundness_error_ci"]),
        _rate(c["accuracy"], c["accuracy_ci"]),
        f"{c['judge_calls']:.2f}", f"{c['judge_input_tokens']:.0f}",
        f"{c['prover_tokens']:.0f}", dollars, c["stopped"],
    ]  # fmt: skip


def table(summaries: Sequence[dict[str, Any]]) -> str:
    """The comparison as a Markdown table (rates with their 95% Wilson intervals)."""
    headers = ["protocol", "judge", "debates", "completeness", "soundness error", "accuracy",
               "judge calls", "judge tokens", "prover tokens", "dollars", "stopped"]  # fmt: skip
    return markdown_table(headers, [_cells(c) for c in summaries],
                          align=[None, None] + ["right"] * 9)  # fmt: skip


def with_controls(judges: Sequence[str]) -> list[str]:
    """``judges``, each that reads the question followed by its ``flip:`` and ``swap:`` forms.

    Judges that check annotations whatever they are asked (the calculator, the scripted
    judges) are left alone: a control would measure only that.
    """
    out = []
    for judge in judges:
        out.append(judge)
        if judge == "model" or judge.startswith("model:"):
            out += [f"flip:{judge}", f"swap:{judge}"]
    return out


def _mean_p_yes(rows: Sequence[Row]) -> float:
    """The mean P[yes] over every judgement of the finished debates (NaN if none)."""
    values = [p for r in rows if r["accepted"] is not None for p in r.get("judgements", [])]
    return sum(values) / len(values) if values else float("nan")


def biases(rows: Sequence[Row]) -> list[dict[str, Any]]:
    """Each controlled judge's bias, per protocol, against its plain form on the same debates.

    ``bias`` is the mean P[the step follows] of the plain judge minus that of its control
    (measured, on the same questions where the protocol asks the same ones): positive
    under ``flip`` means the judge says "yes" more readily than the question warrants;
    under ``swap``, that the order of the inputs moves it. ``acceptance`` is each form's
    share of debates accepted.
    """
    out = []
    for c in cells(rows):
        control, _, plain = c["judge"].partition(":")
        if control not in ("flip", "swap"):
            continue
        mine = [r for r in rows if (r["protocol"], r["judge"]) == (c["protocol"], c["judge"])]
        base = [r for r in rows if (r["protocol"], r["judge"]) == (c["protocol"], plain)]
        if not base:
            continue
        done = [r for r in base if r["accepted"] is not None]
        out.append({
            "protocol": c["protocol"], "judge": plain, "control": control,
            "p_yes": _mean_p_yes(base), "p_yes_controlled": _mean_p_yes(mine),
            "bias": _mean_p_yes(base) - _mean_p_yes(mine),
            "acceptance": sum(bool(r["accepted"]) for r in done) / len(done) if done else None,
            "acceptance_controlled": (
                sum(bool(r["accepted"]) for r in mine if r["accepted"] is not None)
                / max(1, sum(r["accepted"] is not None for r in mine))
            ),
        })  # fmt: skip
    return out


def _judged_truths(row: Row) -> bool | None:
    """Whether the steps a debate's judge was asked about follow (None: not known).

    Known when the judge read the whole transcript or the bare answer (true iff A's answer
    is right), or, on the generated task (one planted error, at ``error_at``), for the
    disputed step: it follows unless A lies and it is the planted one.
    """
    if row.get("disputed_step") is None:
        return bool(row["truth"])
    if "error_at" not in row:
        return None
    return bool(row["truth"]) or row["disputed_step"] != row["error_at"]


def reliability(rows: Sequence[Row], bins: int = 5) -> list[dict[str, Any]]:
    """Each judge's reliability curve: in each bin of its P[yes], how often the step followed.

    Over every judgement of the finished debates whose judged step's truth is known
    (:func:`_judged_truths`), per (protocol, judge) (a judge may be calibrated on single
    steps and not on bare answers): the bin's range, the judgements in it, their mean
    P[yes], and the share whose step followed with its 95% Wilson interval (measured). A
    calibrated judge's share matches its mean P[yes] in every bin.
    """
    from ..analysis.intervals import wilson_interval

    out = []
    for protocol, judge in dict.fromkeys((r["protocol"], r["judge"]) for r in rows):
        pairs = [(p, t) for r in rows
                 if (r["protocol"], r["judge"]) == (protocol, judge) and r["accepted"] is not None
                 for t in [_judged_truths(r)] if t is not None
                 for p in r.get("judgements", [])]  # fmt: skip
        for k in range(bins):
            lo, hi = k / bins, (k + 1) / bins
            inside = [(p, t) for p, t in pairs if lo <= p < hi or (k == bins - 1 and p == 1.0)]
            if not inside:
                continue
            follows = sum(t for _, t in inside)
            out.append({
                "protocol": protocol, "judge": judge, "bin": (lo, hi), "judgements": len(inside),
                "mean_p_yes": sum(p for p, _ in inside) / len(inside),
                "followed": follows / len(inside),
                "followed_ci": wilson_interval(follows, len(inside)),
            })  # fmt: skip
    return out


def load_prices(path: str | Path) -> dict[str, Any]:
    """Model prices from Inspect's model-cost config format, set for Inspect's cost tracking.

    The file (YAML or JSON) maps a model name to its prices in dollars per million
    tokens: ``{"openai/gpt-4o-mini": {"input": 0.15, "output": 0.6,
    "input_cache_write": 0, "input_cache_read": 0.075}}`` -- what ``inspect eval
    --model-cost-config`` reads. Each is registered with Inspect (``set_model_cost``), so
    every call's usage carries its cost; returns the prices read.

    Raises:
        ProtocolError: an unreadable file, a malformed price, or a model Inspect does not
            know.
    """
    import yaml  # type: ignore[import-untyped]  # (inspect-ai needs it)
    from inspect_ai.model import ModelCost
    from inspect_ai.model._model_info import set_model_cost

    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise ProtocolError(f"cannot read the model-cost config {path}: {exc}") from None
    if not isinstance(data, dict) or not data:
        raise ProtocolError(f"{path}: a model-cost config maps model names to their prices")
    prices = {}
    for name, cost in data.items():
        try:
            prices[str(name)] = ModelCost(**cost)
            set_model_cost(str(name), prices[str(name)])
        except Exception as exc:  # pydantic's or Inspect's refusal, in one line
            first = str(exc).splitlines()[0]
            raise ProtocolError(f"{path}: the price of {name!r} is not usable: {first}") from None
    return prices
