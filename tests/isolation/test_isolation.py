"""Process isolation: every protocol over the wire, a standalone prover, hostile children."""

from __future__ import annotations

import os
import sys
import textwrap
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from proofgames import isolation, wire
from proofgames.errors import ProofgamesError, RegistryError
from proofgames.harness import play, resolve_instance
from proofgames.isolation._child import ChildProcess
from proofgames.protocols import get_protocol, protocol_names
from proofgames.protocols._catalog import Options
from proofgames.protocols.stochastic import play_stochastic_batch
from proofgames.stochastic.params import resolve_params

ROOT = Path(__file__).resolve().parents[2]
PROVER = [sys.executable, str(ROOT / "examples" / "standalone_bisection_prover.py")]
SMALL = {  # instances whose honest verdict is certain, so both modes must agree
    "bisection": "bb3",
    "cross-examination": "bb3",
    "witness": "sat-small",
    "stochastic": "majority:n=3,p=1.0",
    "stochastic-witness": "panel-choice:p=0.0;1.0;0.0",
}
LIARS = {  # (A, instance, false claim): lies honest B always catches
    "bisection": ("flip-step", "bb4", 0),
    "cross-examination": ("flip-step", "bb4", 0),
    "witness": ("lie-output", "sat-php-3-2", 1),
    "stochastic": ("blatant", "majority:n=3,p=0.3", 1),
    "stochastic-witness": ("choose:pick=best,debate=blatant", "panel-choice:p=0.0;0.1;0.0", 1),
}


#: The quick loop (``-m "not slow"``) compares isolated with in-process play on these;
#: the full suite on every registered protocol (1.5-7 s a test on one core: each starts
#: two processes, a fresh pair per witness under stochastic-witness).
QUICK = {"bisection", "witness"}
PROTOCOLS = [
    pytest.param(p, marks=[] if p in QUICK else [pytest.mark.slow]) for p in protocol_names()
]


def deterministic(protocol: str) -> bool:
    """Played one debate at a time (no lockstep batch): same messages, same costs."""
    return get_protocol(protocol).run_batch is None


def liar(protocol: str) -> tuple[str, str, int] | None:
    """A lie honest B always catches: listed above, else the protocol's default liar."""
    if protocol in LIARS:
        return LIARS[protocol]
    info = get_protocol(protocol)
    truth = resolve_instance(protocol).truth
    if truth is None or 1 - truth not in info.claims:
        return None
    return info.defaults.liar_a, info.defaults.machine, 1 - truth


def _both(protocol: str, instance: str, **kw):
    inp = play(protocol, instance, **kw)
    iso = play(protocol, instance, isolation="process", **kw)
    return inp, iso


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_honest_debates_match_in_process(protocol: str, seed: int) -> None:
    instance = SMALL.get(protocol, get_protocol(protocol).defaults.machine)
    inp, iso = _both(protocol, instance, a="honest", b="honest", seed=seed)
    assert iso.isolation == "process"
    assert (iso.winner, iso.verdict, iso.forfeit) == (inp.winner, inp.verdict, inp.forfeit)
    assert iso.prover_a == inp.prover_a and iso.prover_b == inp.prover_b
    if deterministic(protocol):  # the same messages, and the same (self-reported) costs
        assert iso.messages == inp.messages
        assert _prepared_b(protocol, instance, iso, inp) == inp.costs
        assert iso.reason == inp.reason


def _prepared_b(protocol: str, instance: str, iso, inp):
    """Isolated honest bisection B runs M once at set-up (beside A), not each first half.

    Its reported steps then differ from in-process play's: at least T, the one run. Every
    other cost is the same; the returned costs carry the in-process B's steps for the check.
    """
    if protocol != "bisection" or iso.prover_b.label != "honest":
        return iso.costs
    steps = iso.costs.prover_steps
    assert steps["B"] >= resolve_instance(protocol, instance).steps
    return replace(iso.costs, prover_steps={**steps, "B": inp.costs.prover_steps["B"]})


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_liars_lose_in_both_modes(protocol: str) -> None:
    lie = liar(protocol)
    if lie is None:
        pytest.skip(f"no known liar for {protocol}")
    a, instance, claim = lie
    inp, iso = _both(protocol, instance, claim=claim, a=a, b="honest", seed=3)
    assert inp.winner == "B"
    assert (iso.winner, iso.forfeit) == (inp.winner, inp.forfeit), iso.reason


@pytest.mark.slow
def test_standalone_prover_wins_small_machines() -> None:
    for name in ("bb2", "bb4", "bb2x3"):
        out = play("bisection", name, claim=1, a=PROVER, b="honest", isolation="process")
        assert out.winner == "A", out.reason
        assert out.prover_a.name == "program:standalone_bisection_prover.py"
        assert out.costs.prover_steps["A"] >= resolve_instance("bisection", name).steps


@pytest.mark.slow
def test_standalone_prover_wins_bb5() -> None:
    start = time.perf_counter()
    out = play("bisection", "bb5", claim=1, a=PROVER, b="honest", isolation="process")
    assert out.winner == "A", out.reason
    assert out.forfeit is None
    assert out.costs.prover_steps["A"] >= 47_176_870  # self-reported
    assert time.perf_counter() - start < 120


def test_standalone_prover_does_not_import_proofgames() -> None:
    source = Path(PROVER[1]).read_text()
    assert "proofgames" not in "".join(
        line for line in source.splitlines() if line.startswith(("import", "from"))
    )


# ----------------------------------------------------------------- hostile children

PROLOGUE = """\
import json, os, subprocess, sys, time
PIDS = {pids!r}
def send(m):
    sys.stdout.write(json.dumps(m) + "\\n"); sys.stdout.flush()
def call():
    return json.loads(sys.stdin.readline())
with open(PIDS, "a") as f:
    f.write(f"{{os.getpid()}}\\n")
"""


def _child(tmp_path: Path, body: str) -> tuple[list[str], Path]:
    """A hostile party: a tiny script that records its pid (and its children's)."""
    pids = tmp_path / "pids.txt"
    script = tmp_path / "hostile.py"
    script.write_text(PROLOGUE.format(pids=str(pids)) + textwrap.dedent(body))
    return [sys.executable, str(script)], pids


def _dead(pid: int, wait: float = 10.0) -> bool:
    """Gone, or a zombie (killed, not yet reaped by init)."""
    end = time.monotonic() + wait
    while time.monotonic() < end:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except FileNotFoundError:
            return True
        except OSError:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return True
        else:
            if stat.rsplit(")", 1)[1].split()[0] in ("Z", "X"):
                return True
        time.sleep(0.05)
    return False


def _play_hostile(cmd: list[str], role: str = "A", protocol: str = "bisection", **kw):
    a, b = (cmd, "honest") if role == "A" else ("honest", cmd)
    start = time.perf_counter()
    out = play(protocol, "bb3", claim=1, a=a, b=b, isolation="process", **kw)
    return out, time.perf_counter() - start


def _all_dead(pids: Path) -> None:
    for line in pids.read_text().split():
        assert _dead(int(line)), f"process {line} survived the debate"


@pytest.mark.slow
def test_a_child_that_hangs_is_killed_at_the_timeout(tmp_path: Path) -> None:
    cmd, pids = _child(
        tmp_path,
        """
        hello = call()
        kid = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(1000)"])
        with open(PIDS, "a") as f:
            f.write(f"{kid.pid}\\n")
        send({"type": "ready"})
        call()
        time.sleep(1000)
        """,
    )
    out, seconds = _play_hostile(cmd, timeout=2)
    assert (out.winner, out.forfeit) == ("B", "A")
    assert "timed out after 2 s" in out.reason and "killed" in out.reason
    assert seconds < 30
    assert len(pids.read_text().split()) == 2
    _all_dead(pids)  # the child and its own child: the whole process group


@pytest.mark.slow
def test_a_child_that_never_says_ready_is_killed(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(isolation, "STARTUP_SECONDS", 3.0)
    cmd, pids = _child(tmp_path, "time.sleep(1000)\n")
    out, seconds = _play_hostile(cmd, timeout=1)
    assert out.forfeit == "A" and "failed to start" in out.reason and "timed out" in out.reason
    assert seconds < 30
    _all_dead(pids)


def test_a_child_that_exits_immediately_loses(tmp_path: Path) -> None:
    cmd, pids = _child(tmp_path, "sys.exit(3)\n")
    out, _ = _play_hostile(cmd)
    assert out.forfeit == "A" and "exit code 3" in out.reason
    _all_dead(pids)


def test_a_child_that_dies_mid_debate_loses(tmp_path: Path) -> None:
    cmd, pids = _child(
        tmp_path,
        """
        hello = call()
        send({"type": "ready"})
        call()
        os._exit(5)
        """,
    )
    out, _ = _play_hostile(cmd)
    assert out.forfeit == "A" and "exit code 5" in out.reason
    _all_dead(pids)


@pytest.mark.parametrize(
    "command",
    [["/nonexistent/prover-program"], [sys.executable, "/nonexistent/prover.py"]],
    ids=["program", "script"],
)
def test_a_program_that_cannot_start_is_the_runs_error_not_a_forfeit(command) -> None:
    """A path typo is no prover's move: it is refused before anything starts."""
    with pytest.raises(ProofgamesError, match=r"prover A's (program|script) '/nonexistent/"):
        play("bisection", "bb3", claim=1, a=command, b="honest", isolation="process")


@pytest.mark.parametrize(
    ("reply", "why"),
    [
        ('sys.stdout.write("this is not json\\n"); sys.stdout.flush()', "malformed message"),
        ('sys.stdout.write("[1, 2]\\n"); sys.stdout.flush()', "without a type"),
        ('send({"type": "read", "positions": [0]})', "'read' message in answer to final"),
        ('send({"type": "result"})', "'result' message"),
        ('send({"type": "result", "value": 1, "work": -5})', "not a count"),
        (
            'send({"type": "result", "value": {"state": True, "head": 0, '
            '"tape": {"__bytes__": ""}}})',
            "configuration's state must be an integer, got a bool",
        ),
        (
            'send({"type": "result", "value": {"state": 0, "head": 0, '
            '"tape": {"__bytes__": "!!"}}})',
            "not valid base64",
        ),
        ("os.close(1); time.sleep(1000)", "closed its output"),
    ],
    ids=[
        "garbage",
        "no-type",
        "read-out-of-turn",
        "no-value",
        "bad-work",
        "bool-state",
        "b64",
        "closed-stdout",
    ],
)
def test_malformed_answers_lose(tmp_path: Path, reply: str, why: str) -> None:
    cmd, pids = _child(tmp_path, f'hello = call()\nsend({{"type": "ready"}})\ncall()\n{reply}\n')
    out, _ = _play_hostile(cmd)
    assert (out.winner, out.forfeit) == ("B", "A")
    assert why in out.reason, out.reason
    _all_dead(pids)


def test_a_line_over_the_limit_is_refused(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(wire, "MAX_LINE", 1 << 20)
    body = """
        hello = call()
        send({"type": "ready"})
        call()
        sys.stdout.write("x" * (3 << 20)); sys.stdout.flush()
        time.sleep(1000)
        """
    cmd, pids = _child(tmp_path, body)
    out, seconds = _play_hostile(cmd, timeout=60)
    assert out.forfeit == "A" and "longer than 1048576 bytes" in out.reason
    assert seconds < 30
    _all_dead(pids)


def test_a_line_over_the_real_limit_is_refused(tmp_path: Path) -> None:
    body = f"""
        hello = call()
        send({{"type": "ready"}})
        call()
        chunk = "x" * (1 << 24)
        for _ in range({wire.MAX_LINE // (1 << 24) + 2}):
            sys.stdout.write(chunk)
        sys.stdout.flush()
        time.sleep(1000)
        """
    cmd, pids = _child(tmp_path, body)
    out, _ = _play_hostile(cmd, timeout=120)
    assert out.forfeit == "A" and f"longer than {wire.MAX_LINE} bytes" in out.reason
    _all_dead(pids)


@pytest.mark.parametrize(
    "message",
    [
        {"type": "error", "message": "B forfeits: B crashed"},
        {"type": "forfeit", "party": "B", "reason": "B cheated"},
        {"type": "result", "value": {"forfeit": "B"}},
    ],
    ids=["error-naming-B", "forfeit-message", "forfeit-value"],
)
def test_framing_the_opponent_loses(tmp_path: Path, message: dict) -> None:
    body = f'hello = call()\nsend({{"type": "ready"}})\ncall()\nsend({message!r})\n'
    cmd, _ = _child(tmp_path, body)
    out, _ = _play_hostile(cmd)
    assert (out.winner, out.forfeit) == ("B", "A")
    assert out.reason.startswith("A loses")


def test_b_framing_a_loses(tmp_path: Path) -> None:
    cmd, _ = _child(
        tmp_path,
        """
        hello = call()
        send({"type": "ready"})
        call()
        send({"type": "error", "message": "A forfeits: A lied"})
        """,
    )
    out, _ = _play_hostile(cmd, role="B")
    assert (out.winner, out.forfeit) == ("A", "B")


def test_a_malformed_read_in_a_challenge_is_b_s_forfeit(tmp_path: Path) -> None:
    cmd, _ = _child(
        tmp_path,
        """
        hello = call()
        send({"type": "ready"})
        call()
        send({"type": "read", "positions": [True]})
        reply = call()
        assert reply["type"] == "error", reply
        send({"type": "result", "value": 0})
        """,
    )
    out, _ = _play_hostile(cmd, role="B", protocol="cross-examination")
    assert (out.winner, out.forfeit) == ("A", "B")
    assert "malformed positions" in out.reason


def test_b_reads_through_v(tmp_path: Path) -> None:
    cmd, _ = _child(
        tmp_path,
        """
        hello = call()
        send({"type": "ready"})
        c = call()
        send({"type": "read", "positions": [0, 1, 2]})
        reply = call()
        assert reply["type"] == "entries", reply
        send({"type": "result", "value": 0})
        """,
    )
    out, _ = _play_hostile(cmd, role="B", protocol="cross-examination")
    assert out.forfeit is None
    assert out.costs.prover_reads["B"] == 3


# --------------------------------------------------------------------- the layer itself


@pytest.mark.slow
def test_startup_is_not_charged_to_the_first_call() -> None:
    out = play("bisection", "bb3", claim=1, a="honest", b="honest", isolation="process",
               timeout=0.5)  # fmt: skip
    assert out.winner == "A" and out.forfeit is None


def test_bad_parties_are_refused_before_anything_starts() -> None:
    with pytest.raises(RegistryError):
        play("bisection", "bb3", claim=1, a="no-such-strategy", isolation="process")
    with pytest.raises(ProofgamesError, match="command"):
        play("bisection", "bb3", claim=1, a=object(), isolation="process")
    with pytest.raises(ProofgamesError, match="optimal"):  # a strategy's own limits
        play("stochastic", "long-computation", a="optimal", b="honest", isolation="process")


@pytest.mark.slow
def test_fresh_players_debate_each_witness_in_new_processes() -> None:
    """What ``fresh_player`` of the stochastic-witness protocol needs from a proxy."""
    inst = resolve_instance("stochastic-witness", "panel-choice:p=0.2;0.9;0.4")
    problem = inst.target
    params = resolve_params("lean", problem.lipschitz, problem.steps)
    with isolation.isolated_players("stochastic-witness", inst, 1, "honest", "honest",
                                    Options(seed=0)) as (xa, xb):  # fmt: skip
        sent = xa.witnesses(problem, 4, None)
        assert [bytes(w) for w in sent] == [b"\x00\x01"] * 4
        fa, fb = xa.fresh(b"\x00\x01"), xb.fresh(b"\x00\x01")
        res = play_stochastic_batch(problem.machine(b"\x00\x01"), params, 1, fa, fb,
                                    debates=200, seed=0)  # fmt: skip
    assert res.acceptance > 0.6
    assert not res.forfeits
    assert fa.queries > 0 and fb.queries > 0  # self-reported samples
    for link in (xa._link, xb._link, fa._link, fb._link):
        assert link.child is not None and not link.child.alive


@pytest.mark.slow
def test_stochastic_witness_stays_isolated(monkeypatch) -> None:
    from proofgames.protocols import stochastic_witness

    def no_in_process_players(*args, **kwargs):
        raise AssertionError("a player was built in V's process")

    monkeypatch.setattr(stochastic_witness, "make_strategy", no_in_process_players)
    out = play("stochastic-witness", SMALL["stochastic-witness"], a="honest", b="honest",
               isolation="process")  # fmt: skip
    assert out.winner == "A"


def test_a_round_survives_the_wire() -> None:
    """The child's Round (rebuilt from the plain form) shows what V's Round shows."""
    import io

    from proofgames.isolation.party import Channel, Session
    from proofgames.protocols._lockstep import LockstepParty, Sampler
    from proofgames.protocols.roles import party_arguments, wire_arguments
    from proofgames.strategies import make_strategy

    announce = get_protocol("stochastic").roles["A"].method("announce")

    inst = resolve_instance("stochastic", "majority:n=3,p=0.7")
    m = inst.target
    params = resolve_params("lean", m.lipschitz, m.length)
    sampler = Sampler(m, "binomial", np.random.default_rng(0), np.zeros(4, dtype=np.int64))
    v_side = LockstepParty("A", make_strategy("stochastic", "A", "honest"), m, params, sampler)
    v_side.start(4)
    hello = {"type": "hello", "protocol": "stochastic", "role": "A", "claim": 1, "seed": 5,
             "instance": inst.description}  # fmt: skip
    server = Session("honest", hello, Channel(io.BytesIO(), io.BytesIO()))
    rng = np.random.default_rng(1)
    for t, rows in enumerate([np.arange(4), np.arange(4), np.array([0, 2, 3]), np.array([2])]):
        rel = list(m.relevant(t))
        values = rng.integers(0, 2, size=(rows.size, len(rel)))
        p = m.probability_batch(t, values)
        r = v_side.round(t, rows, values, p, 1)
        plain, read = wire_arguments(announce, (r, rng))
        assert read is None and len(plain) == 1  # the round travels; the generator does not
        mine, own_rng = party_arguments(announce, wire.decode(wire.encode(plain)), server)
        assert own_rng is server.rng
        for field in ("t", "n", "is_query", "claim"):
            assert getattr(mine, field) == getattr(r, field)
        for field in ("rows", "values", "p", "prefix"):
            assert np.array_equal(getattr(mine, field), getattr(r, field)), field
        assert mine.params == r.params
        assert mine.estimate(10).shape == (rows.size,)
        v_side.reveal(rows, t, rng.integers(0, 2, size=rows.size))
    assert server.costs()["queries"] > 0  # its own samples, counted by its own sampler


def test_a_child_that_stops_reading_cannot_block_a_send() -> None:
    child = ChildProcess([sys.executable, "-c", "import time; time.sleep(1000)"], "sleeper")
    start = time.monotonic()
    with pytest.raises(TimeoutError, match="killed"):
        child.send({"data": np.zeros(1 << 20)}, time.monotonic() + 1.0)
    assert time.monotonic() - start < 10
    assert not child.alive


def test_stderr_is_kept_bounded(tmp_path: Path) -> None:
    code = "import sys; sys.stderr.write('e' * 500000 + 'END'); sys.stderr.flush()"
    child = ChildProcess([sys.executable, "-c", code], "noisy")
    child.proc.wait()
    deadline = time.monotonic() + 10
    while not child.stderr_tail().endswith("END") and time.monotonic() < deadline:
        time.sleep(0.01)
    tail = child.stderr_tail()
    assert tail.endswith("END") and len(tail) <= 64 * 1024
    child.kill()


def test_isolated_provers_costs_are_their_own_reports_not_zero() -> None:
    """V cannot count a separate process's samples: the outcome carries its own report."""
    inner = play("stochastic", "single-query:p=0.9", claim=1, a="honest", b="honest", seed=0)
    out = play("stochastic", "single-query:p=0.9", claim=1, a="honest", b="honest", seed=0,
               isolation="process")  # fmt: skip
    assert inner.costs.prover_queries["A"] > 0
    assert out.costs.prover_queries == inner.costs.prover_queries  # same prescribed counts
    assert out.costs.verifier_queries == inner.costs.verifier_queries
