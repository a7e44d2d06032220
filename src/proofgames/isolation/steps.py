"""Provers of step-transcript debates as separate programs, reached through the wire format.

A :class:`StepProgram` is V's proxy for a prover that runs as its own OS process (any
command, in any language): it has the role's methods (A: ``transcript``, ``step``; B:
``dispute``, ``half``), and each call is one ``{"type": "call"}`` line to the process and
one ``{"type": "result"}`` line back, as for the core protocols (``docs/wire.md``,
section "Step-transcript debates"). The driver (``Party.acall``) runs each call in a
thread of its own under the debate's timeout, so a process that stalls is cut off (and
killed at its own deadline); whatever goes wrong with the process -- it dies, writes
garbage, answers out of turn, reports an error, reports costs out of range -- is that
prover's forfeit. A result may report the tokens and money the move cost
(``input_tokens``, ``output_tokens``, ``cost_usd``): they are the process's own reports,
checked and counted as a :class:`~proofgames.protocols.ProverReply`'s.

Example:
    >>> import asyncio, sys
    >>> from proofgames.language import JudgeLedger, CalculatorJudge, ScriptedA
    >>> from proofgames.language import cross_examination, generate_chain
    >>> item = generate_chain(12, seed=1, error_at=4)
    >>> b_cmd = [sys.executable, "examples/standalone_step_prover.py"]
    >>> with step_program(b_cmd, "B", protocol="cross-examination",
    ...                   task=item.task_text) as b:  # doctest: +SKIP
    ...     out = asyncio.run(cross_examination(item.task_text, ScriptedA(item.dishonest),
    ...                                         b, JudgeLedger(CalculatorJudge())))
    >>> out.winner, out.prover_b.name  # doctest: +SKIP
    ('B', 'program:standalone_step_prover.py')
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from typing import Any

from .._registry import StrategySpec
from .._seeds import check_seed
from ..errors import ProofgamesError
from ..protocols._outcome import ProverReply
from . import CLOSE_GRACE, DEFAULT_TIMEOUT, STARTUP_SECONDS, PartyError
from . import _check_program as check_program
from . import _Link as Link
from . import _program_name as program_name

#: The methods each role answers, in the order a debate may call them.
STEP_METHODS = {"A": ("transcript", "step"), "B": ("dispute", "half")}
#: The step protocols a program can be told it plays (``hello.protocol``).
STEP_PROTOCOLS = ("cross-examination", "bisection", "whole-transcript", "consultancy")


def step_dict(step: Any) -> dict[str, Any]:
    """An argument step as plain data: ``{"text", "uses", "task_parts", "result"}``."""
    parts = [int(p) for p in step.task_parts]
    uses = [int(u) for u in step.uses]
    return {"text": str(step.text), "uses": uses, "task_parts": parts, "result": str(step.result)}


class StepProgram:
    """V's proxy for a step-transcript prover running as its own process.

    Args:
        argv: the command (a list of strings).
        role: ``"A"`` or ``"B"``.
        protocol: the step protocol played (sent in the hello).
        task: the task's text (sent in the hello).
        seed: the program's seed (sent in the hello).
        generated: for a generated ledger task, its ``steps`` and ``seed`` (and
            ``error_at`` when it was not drawn from the seed), sent in the hello's
            instance: the library's own runner rebuilds the task from them.
        timeout: seconds per call (the process is killed at this deadline).
        startup: seconds the process has to answer the hello.

    Raises:
        ProofgamesError: a role, protocol, seed or command that cannot be used (before
            any process starts).
    """

    isolated = True

    def __init__(
        self, argv: Sequence[str], role: str, *, protocol: str, task: str, seed: int = 0,
        generated: dict[str, int] | None = None, timeout: float = DEFAULT_TIMEOUT,
        startup: float = STARTUP_SECONDS,
    ) -> None:  # fmt: skip
        if role not in STEP_METHODS:
            raise ProofgamesError(f"a step prover's role is A or B, not {role!r}")
        if protocol not in STEP_PROTOCOLS:
            raise ProofgamesError(
                f"unknown step protocol {protocol!r}: use one of {', '.join(STEP_PROTOCOLS)}"
            )
        if type(task) is not str:
            raise ProofgamesError(f"the task must be a string, not {type(task).__name__}")
        argv = list(argv) if not isinstance(argv, str) else []
        if not argv or not all(type(x) is str and x for x in argv):
            raise ProofgamesError(f"prover {role}'s command must be a non-empty list of strings")
        check_program(role, argv)
        check_seed(seed, optional=False)
        self.spec = StrategySpec(protocol, role, f"program:{program_name(argv)}")
        self.name, self._role, self._timeout = self.spec.name, role, float(timeout)
        instance: dict[str, Any] = {"kind": "step-transcript", "task": task}
        if generated is not None:
            instance["generated"] = dict(generated)
        hello = {"type": "hello", "protocol": protocol, "role": role, "instance": instance,
                 "seed": seed, "timeout": self._timeout}  # fmt: skip
        self._link = Link(argv, f"prover {role}", hello, startup)

    def wait_ready(self) -> None:
        """Wait (up to the start-up limit) for the process's ready; a failure is kept.

        The first call then raises it (the prover's forfeit), and no call's time
        includes the start-up.
        """
        with suppress(Exception):
            self._link.ready()

    def transcript(self, task: str) -> ProverReply:
        """A's commitment (a transcript object, or text in the model format)."""
        return self._call("transcript", [task])

    def step(self, task: str, t: int) -> ProverReply:
        """An independent copy's restatement of step ``t`` (0-based)."""
        return self._call("step", [task, int(t)])

    def dispute(self, task: str, transcript: Any) -> ProverReply:
        """B's disputed step (0-based) of A's transcript, or ``null`` to concede."""
        return self._call("dispute", [task, transcript.to_dict()])

    def half(self, task: str, t: int, claimed: Any) -> ProverReply:
        """B's ``"first"`` or ``"second"`` for the restated step ``t``."""
        return self._call("half", [task, int(t), step_dict(claimed)])

    def close(self) -> None:
        """Close the process's input; kill it if it has not exited within a second."""
        self._link.child_close_input()
        self._link.close(CLOSE_GRACE)

    def _call(self, method: str, args: list[Any]) -> ProverReply:
        if method not in STEP_METHODS[self._role]:
            raise PartyError(f"prover {self._role} has no method {method!r}")
        msg = self._link.call(method, args, None, self._timeout)
        return ProverReply(
            msg["value"], input_tokens=msg.get("input_tokens", 0),
            output_tokens=msg.get("output_tokens", 0), cost_usd=msg.get("cost_usd"),
        )  # fmt: skip


@contextmanager
def step_program(
    argv: Sequence[str], role: str, *, protocol: str, task: str, seed: int = 0,
    generated: dict[str, int] | None = None, timeout: float = DEFAULT_TIMEOUT,
    startup: float = STARTUP_SECONDS,
) -> Iterator[StepProgram]:  # fmt: skip
    """A started :class:`StepProgram` (ready, or holding its start-up failure); closed after.

    Example:
        See the module's example.
    """
    program = StepProgram(argv, role, protocol=protocol, task=task, seed=seed,
                          generated=generated, timeout=timeout, startup=startup)  # fmt: skip
    try:
        program.wait_ready()
        yield program
    finally:
        program.close()
