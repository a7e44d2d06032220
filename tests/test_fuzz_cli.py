"""Property-based fuzzing of the command line and the main Python entry points.

Hypothesis generates hostile values for every option of ``debate``, ``estimate``,
``exhaustive`` and ``strategies``, and for the harness: wrong types, huge and negative
numbers, NaN, junk specs, bad UTF-8 and missing or corrupt files. Every run must either
succeed or refuse with exit code 2 and a one-line message. It must never raise a
traceback, and it must never write outside its own working folder.

Half the cases are clean (one shared draw per case): every value is valid, so real runs
happen and their paths are fuzzed too; the others mix valid and hostile values. The
default run tries 25 cases per test. The long profile runs more:
``PROOFGAMES_FUZZ_EXAMPLES=400 pytest -m fuzz``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from proofgames import ProofgamesError
from proofgames.cli import app
from proofgames.harness import play, resolve_instance

pytestmark = pytest.mark.fuzz
FAST = settings(
    max_examples=int(os.environ.get("PROOFGAMES_FUZZ_EXAMPLES", "25")), deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)  # fmt: skip
runner = CliRunner()

NUMBERS = st.one_of(
    st.integers(-(2**70), 2**70).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(["nan", "inf", "-inf", "1e400", "0", "-0", "", " ", "0x10", "1_000"]),
)
JUNK = st.one_of(
    NUMBERS,
    st.text(min_size=0, max_size=12),
    st.sampled_from(["\x00", "é", "\udcff", ":", "=", ",", "a=b=c", ";;", "tm:", "sat:"]),
)
PROTOCOLS = st.sampled_from(
    ["bisection", "cross-examination", "witness", "stochastic", "stochastic-witness"]
)
NAMES = st.sampled_from(
    ["honest", "random", "flip-step", "lie-output", "evade", "shift", "lie-at", "optimal",
     "random-abort", "abort-at", "biased-coin", "choose", "malformed", "nosuch"]
)  # fmt: skip
KEYS = st.sampled_from(["at", "p", "delta", "step", "z", "margin", "grid", "pick", "debate", "q"])
SPECS = st.one_of(
    NAMES,
    st.builds(lambda n, k, v: f"{n}:{k}={v}", NAMES, KEYS, JUNK),
    JUNK,
)
MACHINES = st.one_of(
    st.sampled_from(["bb2", "bb3", "bb2x3", "screening", "sat-small", "sat-php-3-2",
                     "single-query:p=0.7", "majority:n=3,p=0.8", "panel-choice:p=0.2;0.9"]),
    st.builds(lambda k, v: f"majority:{k}={v}", st.sampled_from(["n", "p", "q"]), JUNK),
    st.builds(lambda v: f"panel-choice:p={v}", JUNK),
    st.builds(lambda v: f"tm:{v}", JUNK),
    JUNK,
)  # fmt: skip
STEPS = st.one_of(st.integers(-5, 64).map(str), NUMBERS)
CLEAN = st.shared(st.booleans(), key="clean")
"""One draw per test case: a clean case takes only valid values, so half the cases run."""


def mostly(valid: st.SearchStrategy[str], bad: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    """A valid value in a clean case; otherwise valid three times in four."""
    return CLEAN.flatmap(lambda clean: valid if clean else st.one_of(valid, valid, valid, bad))


def hostile(values: st.SearchStrategy[list[str]]) -> st.SearchStrategy[list[str]]:
    """An option left out in a clean case; otherwise drawn from ``values``."""
    return CLEAN.flatmap(lambda clean: st.just([]) if clean else values)


def players(protocol: str) -> st.SearchStrategy[list[str]]:
    """``--prover-a``/``--prover-b``: registered names in a clean case, else any spec."""
    from proofgames.strategies import strategy_names

    valid = st.tuples(*(st.sampled_from(strategy_names(protocol, r)) for r in ("A", "B")))
    return CLEAN.flatmap(
        lambda clean: (
            valid.map(lambda ab: ["--prover-a", ab[0], "--prover-b", ab[1]])
            if clean
            else st.tuples(option("--prover-a", SPECS), option("--prover-b", SPECS)).map(
                lambda ab: ab[0] + ab[1]
            )
        )
    )


def option(name: str, values: st.SearchStrategy[str]) -> st.SearchStrategy[list[str]]:
    """Either nothing, or ``[name, value]``."""
    return st.one_of(st.just([]), values.map(lambda v: [name, v]))


def check(args: list[str], where: Path) -> None:
    """The run succeeds, or refuses with exit 2 and a message, and writes only under ``where``.

    The exit code is recorded as a Hypothesis event: ``--hypothesis-show-statistics`` shows
    how many cases ran through and how many were refused.
    """
    before = set(os.listdir(where.parent))
    res = runner.invoke(app, args)
    assert res.exit_code in (0, 2), (args, res.exit_code, res.output, res.exception)
    if res.exception is not None:
        assert isinstance(res.exception, SystemExit), (args, repr(res.exception))
    assert "Traceback" not in res.output
    if res.exit_code == 2:
        assert res.output.strip(), args  # a message, not silence
    assert set(os.listdir(where.parent)) == before, args  # nothing written beside it
    event(f"exit {res.exit_code}")


@FAST
@given(
    protocol=mostly(PROTOCOLS, JUNK),
    machine=hostile(option("--machine", MACHINES)),
    steps=hostile(option("--steps", STEPS)),
    claim=hostile(option("--claim", st.one_of(st.sampled_from(["0", "1"]), NUMBERS))),
    seed=option("--seed", mostly(st.integers(0, 9).map(str), NUMBERS)),
    timeout=option("--timeout", mostly(st.just("30"), NUMBERS)),
    as_json=st.sampled_from([[], ["--json"]]),
    data=st.data(),
)
@pytest.mark.slow
def test_debate_never_crashes(
    workdir: Path, protocol: str, data: st.DataObject, **opts: list[str]
) -> None:
    known = protocol in ("bisection", "cross-examination", "witness", "stochastic",
                         "stochastic-witness")  # fmt: skip
    opts["players"] = data.draw(players(protocol) if known else st.just([]))
    opts["params"] = data.draw(hostile(option("--params", st.one_of(
        st.sampled_from(["paper", "lean:strict"]), JUNK))))  # fmt: skip
    args = ["debate", protocol] + [x for v in opts.values() for x in v]
    check(args, workdir)


@FAST
@given(
    machine=option(
        "--machine",
        mostly(
            st.sampled_from(["single-query:p=0.7", "majority:n=3,p=0.8", "parity:n=3,p=0.2"]),
            MACHINES,
        ),
    ),
    params=option("--params", mostly(st.sampled_from(["paper", "lean"]), JUNK)),
    claim=option("--claim", mostly(st.sampled_from(["0", "1"]), NUMBERS)),
    ab=players("stochastic"),
    debates=option(
        "--debates",
        mostly(st.integers(1, 300).map(str), st.one_of(st.integers(-3, 0).map(str), NUMBERS)),
    ),
    seed=option("--seed", mostly(st.integers(0, 9).map(str), NUMBERS)),
    workers=option("--workers", mostly(st.sampled_from(["1"]), NUMBERS)),
    as_json=st.sampled_from([[], ["--json"]]),
)
def test_estimate_never_crashes(workdir: Path, **opts: list[str]) -> None:
    args = ["estimate"] + [x for v in opts.values() for x in v]
    if "--workers" in args and args[args.index("--workers") + 1] not in ("1",):
        args[args.index("--workers") + 1] = "0"  # pools of many workers are slow to start
    check(args, workdir)


@FAST
@given(
    protocol=st.one_of(st.sampled_from(["bisection", "cross-examination"]), JUNK),
    machine=option("--machine", st.one_of(st.sampled_from(["bb2", "bb3"]), JUNK)),
    steps=option("--steps", st.one_of(st.integers(-3, 12).map(str), NUMBERS)),
    space=option("--space", st.one_of(st.integers(-3, 8).map(str), NUMBERS)),
    store=option("--store", st.sampled_from(["s.jsonl", "s.jsonl", ".", "", "\x00",
                                             "a/../b.jsonl"])),
)  # fmt: skip
def test_exhaustive_and_listings_never_crash(workdir: Path, **opts: list[str]) -> None:
    protocol = opts.pop("protocol")
    check(["exhaustive", protocol] + [x for v in opts.values() for x in v], workdir)
    check(["strategies", protocol], workdir)


@FAST
@given(content=st.one_of(st.binary(max_size=64), st.sampled_from([
    b"", b"null", b"5", b"[]", b'{"w": Infinity, "d": 5}', b"\xff\xfe", b'{"name": 3}',
])))  # fmt: skip
def test_a_params_file_of_any_content_is_used_or_refused(workdir: Path, content: bytes) -> None:
    path = workdir / "params.json"
    path.write_bytes(content)
    check(["debate", "stochastic", "--params", str(path), "--json"], workdir)
    path.unlink()


@FAST
@given(content=st.one_of(st.binary(max_size=64), st.sampled_from([
    b"p cnf 2 1\n1 2 0\n", b"p cnf 1 1\n\xff 0\n", b"", b"p cnf -1 0\n", b"p cnf 2 1\n3 0\n",
])))  # fmt: skip
def test_a_dimacs_file_of_any_content_is_used_or_refused(workdir: Path, content: bytes) -> None:
    path = workdir / "f.cnf"
    path.write_bytes(content)
    check(["debate", "witness", "--machine", f"sat:{path}", "--json"], workdir)
    path.unlink()


@pytest.mark.slow
@FAST
@given(protocol=PROTOCOLS, machine=st.one_of(st.none(), MACHINES), a=SPECS, b=SPECS,
       claim=st.one_of(st.none(), st.integers(-2, 3)),
       seed=st.one_of(st.none(), st.integers(-(2**65), 2**65)))  # fmt: skip
def test_the_harness_returns_an_outcome_or_raises_a_proofgames_error(
    protocol: str, machine: str | None, a: str, b: str, claim: int | None, seed: Any
) -> None:
    try:
        inst = resolve_instance(protocol, machine)
        out = play(protocol, inst, claim, a, b, seed=seed)
    except ProofgamesError as exc:
        assert str(exc).strip()
        return
    assert out.winner in ("A", "B") and out.verdict == int(out.winner == "A")
