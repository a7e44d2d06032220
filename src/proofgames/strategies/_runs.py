"""Runs that provers present: the true one, or one with a single consistent lie.

A :class:`ClaimedRun` is the true run of a Turing machine up to time ``t0``; there, if a
lie is requested, the configuration is replaced by one whose output is the claim (the
state becomes HALT to claim 1, the absorbing non-accepting OVERFLOW to claim 0), and the
run continues *consistently* from the altered configuration.  Every step but the one at
``t0`` is then a valid step of the machine: the hardest lie to find.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from .._configuration import CheckpointedRun, Configuration
from .._oracle import OracleView
from ..errors import ProtocolError, SpecError
from ..machines.turing import TuringMachine

#: Where a run keeps checkpoints: called with T and the even spacing its budget allows.
Times = Callable[[int, int], Iterable[int]]


def perturb(machine: object, config: Configuration, claim: int) -> Configuration:
    """The configuration a liar substitutes at its chosen time to reach ``claim``."""
    if not isinstance(machine, TuringMachine):
        raise ProtocolError(f"this lie needs a Turing machine, got {type(machine).__name__}")
    p = machine.program
    return Configuration(p.halt if claim == 1 else p.overflow, config.head, config.tape)


def lie_about_output(machine: object, config: Configuration, claim: int) -> Configuration:
    """``config`` with its state changed, if needed, so that its output is ``claim``."""
    if not isinstance(machine, TuringMachine):
        raise ProtocolError(f"this lie needs a Turing machine, got {type(machine).__name__}")
    if machine.accepts(config) == claim:
        return config
    state = machine.program.halt if claim == 1 else 0
    return Configuration(state, config.head, config.tape)


class ClaimedRun:
    """The configurations a prover presents (see module docstring).

    Args:
        machine: the machine.
        steps: T.
        oracle: the prover's counted oracle access.
        flip_at: time ``t0`` of the lie, or ``None`` for the true run.
        claim: the output the lie must reach.
        progress: callback during the runs.
        times: where to keep checkpoints, on the claimed run's own clock (see
            :class:`~proofgames.CheckpointedRun`); default evenly spaced.

    """

    def __init__(
        self,
        machine: TuringMachine,
        steps: int,
        oracle: OracleView | None,
        flip_at: int | None = None,
        claim: int = 1,
        progress: Callable[[int], None] | None = None,
        times: Times | None = None,
    ) -> None:
        self.steps = steps
        self.flip_at = steps + 1 if flip_at is None else int(flip_at)
        if not 0 <= self.flip_at <= steps + 1:
            raise ProtocolError(f"lie time {flip_at} is outside [0, {steps}]")
        head_steps = min(self.flip_at, steps)
        head = tail = None
        if times is not None:  # each run keeps the claimed run's times in its stretch
            head, tail = _shifted(times, steps, 0), _shifted(times, steps, self.flip_at)
        self.true = CheckpointedRun(machine, head_steps, oracle, progress=progress, times=head)
        self.tail: CheckpointedRun | None = None
        if flip_at is not None:
            bad = perturb(machine, self.true.final, claim)
            self.tail = CheckpointedRun(
                machine, steps - self.flip_at, oracle, progress=progress, start=bad, times=tail
            )

    @property
    def work(self) -> int:
        """Steps simulated so far."""
        return self.true.work + (self.tail.work if self.tail is not None else 0)

    def config_at(self, t: int) -> Configuration:
        """The configuration this prover presents for time ``t``."""
        if self.tail is None or t < self.flip_at:
            return self.true.config_at(t)
        return self.tail.config_at(t - self.flip_at)

    @property
    def final(self) -> Configuration:
        """The configuration presented for time T."""
        return self.config_at(self.steps)


def _shifted(times: Times, steps: int, offset: int) -> Times:
    """``times`` over a whole run of ``steps``, on the clock of its stretch from ``offset``."""

    def on_stretch(length: int, spacing: int) -> Iterable[int]:
        return (t - offset for t in times(steps, spacing))

    return on_stretch


def require_range(
    name: str, value: float, lo: float, hi: float | None = None, *, open_hi: bool = False
) -> None:
    """Refuse a strategy argument outside its range when the strategy is built.

    Raises:
        SpecError: naming the argument, its range and the value given.
    """
    above = hi is not None and (value >= hi if open_hi else value > hi)
    if not value >= lo or above:  # also refuses NaN
        bound = "inf)" if hi is None else (f"{hi})" if open_hi else f"{hi}]")
        raise SpecError(f"strategy argument {name} must lie in [{lo}, {bound}, got {value!r}")


def lie_time(at: float, steps: int) -> int:
    """Turn a fraction of the run into a time in ``[1, T]``."""
    if not 0.0 <= at <= 1.0:
        raise ProtocolError(f"'at' must be a fraction in [0, 1], got {at}")
    return max(1, min(steps, round(at * steps)))
