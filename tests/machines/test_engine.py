"""The C step loops against numba's: identical results on random machines and on bb5."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from proofgames.machines import TuringMachine, _engine
from proofgames.machines.turing import measure_span

BB5 = "1RB1LC_1RC1RB_1RD0LE_1LA1LD_1RZ0LA"

needs_c = pytest.mark.skipif(_engine._library() is None, reason="no C compiler: numba only")


def _random_program(rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    states, nsym = int(rng.integers(1, 7)), int(rng.integers(2, 5))
    cells = states * nsym
    write = rng.integers(0, nsym, cells).astype(np.uint8)
    move = rng.choice(np.array([-1, 0, 1]), cells, p=[0.45, 0.1, 0.45]).astype(np.int64)
    nxt = rng.integers(0, states + 2, cells).astype(np.int64)  # halt and overflow included
    stop = rng.random(states + 2) < 0.15
    stop[states] = stop[states + 1] = True
    return write, move, nxt, np.int64(nsym), stop


def _both(program: tuple[np.ndarray, ...]) -> tuple[_engine.Kernel, _engine.Kernel]:
    write, move, nxt, nsym, stop = program
    c = _engine.bind(write, move, nxt, int(nsym), stop)
    numba = _engine.Kernel(c.write, c.move, c.nxt, c.nsym, c.stop, lib=None)
    return c, numba


@needs_c
def test_c_and_numba_loops_agree_on_many_random_machines() -> None:
    rng = np.random.default_rng(2026)
    for _ in range(300):
        program = _random_program(rng)
        c, numba = _both(program)
        size = int(rng.integers(1, 64))
        tape = rng.integers(0, int(program[3]), size).astype(np.uint8)
        head, state = int(rng.integers(0, size)), int(rng.integers(0, program[4].size))
        steps = int(rng.integers(0, 5000))
        lo, hi = head, head
        tapes = [tape.copy() for _ in range(4)]
        assert c.run(tapes[0], head, state, steps) == numba.run(tapes[1], head, state, steps)
        assert c.span(tapes[2], head, state, steps, lo, hi) == numba.span(
            tapes[3], head, state, steps, lo, hi
        )
        assert all(np.array_equal(tapes[0], t) for t in tapes[1:])


@needs_c
def test_c_and_numba_loops_agree_on_a_million_steps_of_the_5_state_champion() -> None:
    tm = TuringMachine.sized(BB5, steps=1_000_000)
    c, numba = _both((tm.program.write, tm.program.move, tm.program.nxt,
                      np.int64(tm.program.symbols), tm._stop))  # fmt: skip
    tapes = [np.zeros(tm.size, np.uint8) for _ in range(2)]
    head, state = tm.origin, 0
    for chunk in (1, 999, 250_000, 749_000):  # resumed where the last chunk stopped
        out_c = c.run(tapes[0], head, state, chunk)
        assert out_c == numba.run(tapes[1], head, state, chunk)
        assert np.array_equal(tapes[0], tapes[1])
        _, head, state, _ = out_c
    assert c.backend == "c" and numba.backend == "numba"


@needs_c
def test_the_machine_and_its_span_come_out_the_same_on_either_backend(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    results = []
    for lib in (_engine._library(), None):
        monkeypatch.setattr(_engine, "_library", lambda lib=lib: lib)
        tm = TuringMachine.sized(BB5, steps=300_000)
        final, work = tm.run_steps(tm.initial(), 300_000)
        results.append((final, work, measure_span(tm.program, 300_000), tm._kernel.backend))
    assert results[0][:3] == results[1][:3]
    assert [r[3] for r in results] == ["c", "numba"]


def test_a_kernel_pickles_as_its_tables() -> None:
    tm = TuringMachine.sized("1RB1LB_1LA1RZ", steps=10)
    tm.run_steps(tm.initial(), 1)
    kernel = pickle.loads(pickle.dumps(tm._kernel))
    tape = np.zeros(tm.size, np.uint8)
    assert kernel.run(tape, tm.origin, 0, 100)[0] == 6
