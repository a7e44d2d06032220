"""The language report: judge tokens, accuracy and soundness on the generated task; GSM8K.

:func:`build_report` runs every experiment from one seed and writes ``report.md``,
``results.json`` and the figures to a folder (``reports/language`` in the project):

1. judge tokens per debate against whole-transcript judging, 10 to 1,000 steps;
2. completeness and soundness error against the dishonest A, scripted judge at error
   rates 0 to 0.2 (single judge call), with the exact values of the model next to
   the measured ones;
3. the same with the disputed step decided by Figure 1 (optimized parameters, K = 1),
   against the exact optimal liar, with its exact acceptance and the theorem's bounds;
4. GSM8K model solutions with the calculator judge: debate and whole-transcript judging;
5. every protocol against its baselines (:mod:`.compare`);
6. cross-play of scripted debaters at best-of-1, 4 and 16 with Elo ratings
   (:mod:`.crossplay`), and judge accuracy in self-play against A's rating.

Example (a tiny run)::

    build_report(Path("/tmp/r"), gsm8k=None, n=4, steps=(10, 20), rates=(0.0, 0.1))
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .._seeds import check_seed
from ..reporting import write_json
from .compare import cells, compare_generated
from .experiments import generated_games, gsm8k_games, summarize

TOKEN_STEPS = (10, 20, 50, 100, 200, 500, 1000)
RATES = (0.0, 0.05, 0.1, 0.15, 0.2)
ACCURACY_STEPS = 100
COMPARED = ("cross-examination", "bisection", "whole-transcript", "consultancy")


def exact_rates(protocol: str, e: float, steps: int) -> tuple[float, float]:
    """(completeness, soundness error) of the scripted-judge model, exactly.

    Debate asks one question: honest A passes w.p. 1 - e, the planted error passes w.p.
    e.  The whole-transcript judge errs on each of ``steps + 1`` lines read (every step,
    the answer line).  Consultancy checks one uniform step: it misses the planted error
    w.p. ``1 - 1/steps``.

    Example:
        >>> exact_rates("whole-transcript", 0.1, 1)
        (0.81, 0.09000000000000001)
    """
    if protocol in ("cross-examination", "bisection"):
        return 1 - e, e
    if protocol == "whole-transcript":
        return (1 - e) ** (steps + 1), e * (1 - e) ** steps
    return 1 - e, (1 - 1 / steps) * (1 - e) + e / steps


def _tokens(n: int, seed: int, steps: Sequence[int]) -> list[dict[str, Any]]:
    out = []
    for t in steps:
        for protocol in ("cross-examination", "bisection", "whole-transcript"):
            rows = asyncio.run(
                generated_games(t, n, seed=seed, protocol=protocol, judge="calculator")
            )
            tokens = [r["judge_input_tokens"] for r in rows]
            out.append({"steps": t, "protocol": protocol, "mean": sum(tokens) / len(tokens),
                        "min": min(tokens), "max": max(tokens)})  # fmt: skip
    return out


def figure1_rates(e: float) -> dict[str, float]:
    """Figure 1 on a disputed step judged with error rate ``e``: exact values and bounds.

    The step is ``single-query:p=P`` under ``optimize_params(1.0, 1)``: honest A
    announces P[yes] = 1 - e on a valid step; the exact optimal liar defends the planted
    error (P[yes] = e).  ``exact_*``: V's exact acceptance (:mod:`~proofgames.stochastic.
    optimal`); ``bound_*``: the Lean theorem's proven bounds at these parameters.

    Example:
        >>> r = figure1_rates(0.1)
        >>> r["exact_soundness_error"] <= r["bound_soundness_error"]
        True
    """
    import numpy as np

    from ..stochastic.machines import single_query
    from ..stochastic.optimal import liar_policy_value
    from ..stochastic.optimize import optimize_params
    from .figure1 import liar_acceptance

    params = optimize_params(1.0, 1).params
    honest = single_query(1 - e)
    return {
        "exact_completeness": liar_policy_value(honest, params, 1, [np.array([1 - e])]),
        "exact_soundness_error": liar_acceptance(params, e),
        "bound_completeness": params.proven_completeness(1 - e),
        "bound_soundness_error": params.proven_soundness(e),
    }


def _accuracy(n: int, seed: int, rates: Sequence[float], figure1: bool) -> list[dict[str, Any]]:
    out = []
    protocols = ("cross-examination", "bisection") if figure1 else COMPARED
    for e in rates:
        for protocol in protocols:
            rows = asyncio.run(
                generated_games(ACCURACY_STEPS, n, seed=seed, protocol=protocol,
                                judge=f"scripted:{e}", figure1=figure1)
            )  # fmt: skip
            s = summarize(rows)
            if figure1:
                exact = figure1_rates(e)
            else:
                comp, sound = exact_rates(protocol, e, ACCURACY_STEPS)
                exact = {"exact_completeness": comp, "exact_soundness_error": sound}
            out.append({"rate": e, "protocol": protocol, **s, **exact})
    return out


def _gsm8k(path: Path) -> list[dict[str, Any]]:
    out = []
    for protocol in ("cross-examination", "whole-transcript"):
        rows = asyncio.run(gsm8k_games(path, limit=None, protocol=protocol, judge="calculator"))
        out.append({"protocol": protocol, **summarize(rows),
                    "labelled_correct": sum(r["truth"] for r in rows)})  # fmt: skip
    return out


CROSSPLAY_STEPS = 20


def _crossplay(n: int, seed: int, figure: Path) -> dict[str, Any]:
    """The cross-play grid (default judges, protocols and strengths), its Elo and figure."""
    import dataclasses

    from .crossplay import crossplay_figure, crossplay_generated, crossplay_ratings

    rows = asyncio.run(crossplay_generated(CROSSPLAY_STEPS, n, seed=seed))
    summaries, rated = cells(rows), crossplay_ratings(rows)
    crossplay_figure(summaries, rated, figure)
    return {"steps": CROSSPLAY_STEPS, "n": n, "cells": summaries,
            "ratings": {j: {p: dataclasses.asdict(r) for p, r in v.items()}
                        for j, v in rated.items()}}  # fmt: skip


def build_report(
    out: Path, gsm8k: Path | None, *, n: int = 100, seed: int = 0,
    steps: Sequence[int] = TOKEN_STEPS, rates: Sequence[float] = RATES, figure1_n: int = 40,
) -> dict[str, Any]:  # fmt: skip
    """Run the experiments, write ``results.json``, the figures and ``report.md``."""
    from ._report_figures import write_figures, write_markdown

    check_seed(seed)  # before the folder is made
    out.mkdir(parents=True, exist_ok=True)
    results: dict[str, Any] = {
        "seed": seed, "n": n, "figure1_n": figure1_n, "accuracy_steps": ACCURACY_STEPS,
        "tokens": _tokens(max(5, n // 5), seed, steps),
        "accuracy": _accuracy(n, seed, rates, figure1=False),
        "figure1": _accuracy(figure1_n, seed, rates, figure1=True),
        "gsm8k": _gsm8k(gsm8k) if gsm8k is not None else [],
        "compare": cells(asyncio.run(compare_generated(ACCURACY_STEPS, max(1, n // 2), seed=seed))),
    }  # fmt: skip
    from ..stochastic.optimize import optimize_params

    results["figure1_params"] = optimize_params(1.0, 1).to_dict()
    results["crossplay"] = _crossplay(max(1, n // 5), seed, out / "crossplay.png")
    write_json(out / "results.json", results, indent=1)  # strict: a NaN rate is null
    write_figures(results, out)
    write_markdown(results, out)
    return results
