"""Who argues each side of a generated debate: the built-in provers, in process or not, or programs.

A generated problem is debated twice by the built-in provers: the honest A against a
contrarian B (truth: accept) and the dishonest A against the reference B (truth:
reject). With ``isolation="process"`` each of them runs in a process of its own
(``python -m proofgames.language.step_party NAME``), reached only through the wire
format; a program given for a role (``exec:COMMAND`` on the command line) plays that
role in every debate. A program as A defends its own answer once per problem, against
the reference B; the truth is then whether its committed answer is the right one.

Example:
    >>> from proofgames.language.generated import generate_chain
    >>> item = generate_chain(4, seed=0, error_at=2)
    >>> [names for _, names in debates(item, programs={})]
    [('honest', 'contrarian'), ('dishonest', 'reference')]
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager

from ..errors import ProtocolError
from .generated import GeneratedItem
from .provers import CheckerB, ContrarianB, ProverA, ProverB, ReferenceB, ScriptedA
from .transcript import same_value

ISOLATIONS = ("in-process", "process")
Programs = Mapping[str, Sequence[str]]


def debates(item: GeneratedItem, programs: Programs) -> list[tuple[bool | None, tuple[str, str]]]:
    """The debates of one problem: (truth, or ``None`` when A is a program; A's and B's names)."""
    if "A" in programs:
        return [(None, ("program", "program" if "B" in programs else "reference"))]
    b = "program" if "B" in programs else None
    return [(True, ("honest", b or "contrarian")), (False, ("dishonest", b or "reference"))]


def check_isolation(isolation: str) -> str:
    """Refuse an unknown isolation mode."""
    if isolation not in ISOLATIONS:
        raise ProtocolError(f"isolation must be one of {', '.join(ISOLATIONS)}, not {isolation!r}")
    return isolation


def _in_process(name: str, item: GeneratedItem, seed: int) -> ProverA | ProverB:
    if name in ("honest", "dishonest"):
        return ScriptedA(item.reference if name == "honest" else item.dishonest)
    if name == "reference":
        return ReferenceB(item.reference)
    return ContrarianB(seed) if name == "contrarian" else CheckerB()


@contextmanager
def sides(
    item: GeneratedItem, names: tuple[str, str], *, protocol: str, seed: int,
    isolation: str, programs: Programs, timeout: float, task_seed: int,
) -> Iterator[tuple[object, object]]:  # fmt: skip
    """A and B for one debate (processes are closed when the block ends).

    ``task_seed``: the seed ``item`` was generated from (its error drawn from it), sent
    to the library's own runner to rebuild the item.
    """
    from ..isolation.steps import StepProgram

    generated = {"steps": len(item.reference), "seed": task_seed}
    with ExitStack() as stack:
        players: list[object] = []
        for role, name in zip(("A", "B"), names, strict=True):
            if name != "program" and isolation == "in-process":
                players.append(_in_process(name, item, seed))
                continue
            runner = [sys.executable, "-m", "proofgames.language.step_party", name]
            argv = list(programs[role]) if name == "program" else runner
            program = StepProgram(argv, role, protocol=protocol, task=item.task_text,
                                  seed=seed, generated=generated, timeout=timeout)  # fmt: skip
            stack.callback(program.close)
            players.append(program)
        for p in players:
            if isinstance(p, StepProgram):
                p.wait_ready()
        yield players[0], players[1]


def program_truth(answer: object, item: GeneratedItem) -> bool:
    """Whether a program A defended the right answer (no answer committed: not right)."""
    return isinstance(answer, str) and same_value(answer, item.reference.answer)
