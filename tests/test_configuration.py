"""``CheckpointedRun``: any configuration of one run, from evenly spaced or chosen checkpoints."""

from __future__ import annotations

import pytest

from proofgames import CheckpointedRun, TuringMachine
from proofgames.protocols.bisection import midpoint_times

BB4 = TuringMachine.sized("1RB1LB_1LA0LC_1RZ1LD_1RD0RA", steps=107)


def _truth(tm: TuringMachine, steps: int) -> list:
    out = [tm.initial()]
    for _ in range(steps):
        out.append(tm.run_steps(out[-1], 1)[0])
    return out


@pytest.mark.parametrize("times", [None, midpoint_times, lambda n, spacing: [3, 3, 50, -4, 500]])
def test_every_time_of_the_run_is_its_true_configuration(times) -> None:
    truth = _truth(BB4, 107)
    run = CheckpointedRun(BB4, 107, memory_bytes=2000, times=times)
    assert run.work == 107 and run.final == truth[107]
    for t in (0, 1, 3, 50, 51, 52, 99, 106, 107, 26, 80, 53):
        assert run.config_at(t) == truth[t], t
    with pytest.raises(IndexError, match="outside the run"):
        run.config_at(108)


def test_a_chosen_time_is_kept_and_costs_nothing_to_read() -> None:
    asked: list[tuple[int, int]] = []

    def times(steps: int, spacing: int) -> list[int]:
        asked.append((steps, spacing))
        return [10, 61, 62, 95]

    run = CheckpointedRun(BB4, 107, memory_bytes=2000, times=times)
    assert asked == [(107, run.interval)]  # given T and the budget's even spacing
    for t in (10, 61, 62, 95, 107):
        run.config_at(t)
    assert run.work == 107  # each was a checkpoint
    run.config_at(64)
    assert run.work == 107 + 2  # from the checkpoint at 62


def test_progress_reports_every_chunk_of_the_first_run() -> None:
    seen: list[int] = []
    run = CheckpointedRun(BB4, 107, memory_bytes=2000, progress=seen.append, times=midpoint_times)
    assert sum(seen) == 107 and len(seen) == len(midpoint_times(107, run.interval)) + 1 > 2


def test_a_run_of_no_steps_is_its_start() -> None:
    run = CheckpointedRun(BB4, 0, times=midpoint_times)
    assert run.final == BB4.initial() and run.work == 0
