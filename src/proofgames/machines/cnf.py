r"""CNF formulas: the DIMACS parser, its size limit, a complete solver and planted 3-SAT.

Formula-level code, kept apart from the witness checker machine
(:mod:`proofgames.machines.sat`), which re-exports the public names.

Example:
    >>> cnf = parse_dimacs("p cnf 2 2\n1 2 0\n-1 0\n")
    >>> cnf.num_vars, cnf.clauses, cnf.evaluate([0, 1])
    (2, ((1, 2), (-1,)), True)
    >>> planted_3sat(5, 7, seed=0).num_vars
    5
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from .._transcript import IntArray
from ..errors import MachineFormatError


@dataclass(frozen=True)
class CNF:
    """A formula in conjunctive normal form.

    Attributes:
        num_vars: variables are ``1 .. num_vars``.
        clauses: each clause a tuple of nonzero literals (``-v`` is "not v").

    """

    num_vars: int
    clauses: tuple[tuple[int, ...], ...]

    def __post_init__(self) -> None:
        if self.num_vars < 0:
            raise MachineFormatError(
                f"a CNF needs a non-negative variable count, not {self.num_vars}"
            )
        for j, clause in enumerate(self.clauses):
            for lit in clause:
                if lit == 0 or abs(lit) > self.num_vars:
                    raise MachineFormatError(
                        f"clause {j + 1} has literal {lit}; literals are +-1..+-{self.num_vars}"
                    )

    @property
    def num_literals(self) -> int:
        """Total number of literal occurrences."""
        return sum(len(c) for c in self.clauses)

    @cached_property
    def _table(self) -> tuple[IntArray, IntArray]:
        """Padded ``(m, width)`` arrays: variable index and wanted value (-1 = padding)."""
        width = max((len(c) for c in self.clauses), default=0)
        var = np.zeros((len(self.clauses), max(width, 1)), dtype=np.int64)
        sign = np.full(var.shape, -1, dtype=np.int64)
        for j, c in enumerate(self.clauses):
            var[j, : len(c)] = [abs(lit) - 1 for lit in c]
            sign[j, : len(c)] = [int(lit > 0) for lit in c]
        return var, sign

    def satisfied(self, assignments: Any) -> np.ndarray:
        """Which clauses each assignment satisfies: shape ``(m,)`` or ``(N, m)`` booleans."""
        a = np.asarray(assignments, dtype=np.int64)
        var, sign = self._table
        vals = a[..., var] if self.num_vars else np.zeros((*a.shape[:-1], *var.shape), np.int64)
        out: np.ndarray = np.any(vals == sign, axis=-1)
        return out

    def evaluate(self, assignment: Any) -> bool:
        """Whether one assignment (``num_vars`` bits) satisfies the formula."""
        return bool(np.all(self.satisfied(assignment)))

    def to_dimacs(self) -> str:
        """The formula in DIMACS text."""
        body = "".join(" ".join(map(str, c)) + (" 0\n" if c else "0\n") for c in self.clauses)
        return f"p cnf {self.num_vars} {len(self.clauses)}\n{body}"


MAX_SAT_WORK = 500_000_000
"""Default limit on a SAT instance's estimated search work, in literal visits.

WalkSAT (:meth:`SatProblem.best_effort`) makes ``20 V + 200`` flips for ``V`` variables,
each scanning the padded clause table (clauses x longest clause); its work is their
product, :meth:`SatProblem.work_estimate`.  At about 4e-8 s per visit (measured: a random
2,000-variable 3-CNF of 8,520 clauses, 1.0e9 visits, took 43 s) the default is roughly 20 s
of search.  DPLL (:meth:`SatProblem.solve`, after WalkSAT) counts the literal visits of its
unit propagation against what WalkSAT left of the same limit, and gives up with an error
(never a wrong answer) when it runs out.  Raise it with ``max_work=`` on
:func:`resolve_sat`, :meth:`SatProblem.from_dimacs` or :class:`SatProblem`.
"""


class SatTooLargeError(MachineFormatError):
    """A SAT instance whose search would exceed the work limit (``max_work``)."""


def _work(variables: int, cells: int) -> int:
    return (20 * variables + 200) * cells


def _too_large(what: str, work: int, max_work: int) -> SatTooLargeError:
    return SatTooLargeError(
        f"{what}: too large to search: WalkSAT's estimated work is {work:.3g} literal visits "
        f"(about {work * 4e-8:.0f} s), over the limit max_work = {max_work:.3g}; raise "
        "max_work (--max-sat-work) to search it anyway"
    )


def parse_dimacs(text: str, max_work: int | None = None) -> CNF:
    r"""Parse a DIMACS CNF file (``c`` comments, one ``p cnf V C`` header, 0-terminated clauses).

    A line starting with ``%`` ends the formula (as in the SATLIB benchmark files).  With
    ``max_work``, a header declaring a formula too large to search (its work estimate
    counting one literal per clause already over ``max_work``) is refused before the
    clauses are read.

    Raises:
        MachineFormatError: naming the line and the problem (missing or duplicate header,
            non-integer token, literal out of range, unterminated clause, clause count).
        SatTooLargeError: the header's formula is over ``max_work`` (see :data:`MAX_SAT_WORK`).

    Example:
        >>> parse_dimacs("p cnf 3 2\n1 -3 0 2\n3 0\n").clauses
        ((1, -3), (2, 3))

    """
    header: tuple[int, int, int] | None = None  # (variables, clauses, line)
    clauses: list[tuple[int, ...]] = []
    current: list[int] = []
    current_line = 0
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("c"):
            continue
        if line.startswith("%"):
            break
        if line.startswith("p"):
            header = _header(line, number, header, max_work)
            continue
        if header is None:
            raise MachineFormatError(
                f"line {number}: clause data before the 'p cnf <variables> <clauses>' header"
            )
        for token in line.split():
            lit = _literal(token, number, header[0])
            if lit == 0:
                clauses.append(tuple(current))
                current = []
            else:
                current_line = current_line if current else number
                current.append(lit)
    if header is None:
        raise MachineFormatError("missing 'p cnf <variables> <clauses>' header")
    if current:
        raise MachineFormatError(
            f"the clause starting on line {current_line} ({' '.join(map(str, current))}) is not "
            "terminated by 0"
        )
    if len(clauses) != header[1]:
        raise MachineFormatError(
            f"the header (line {header[2]}) declares {header[1]} clauses but the formula has "
            f"{len(clauses)}"
        )
    return CNF(header[0], tuple(clauses))


def _header(
    line: str, number: int, previous: tuple[int, int, int] | None, max_work: int | None
) -> tuple[int, int, int]:
    """The ``p cnf V C`` header on line ``number`` as ``(V, C, number)``, checked."""
    if previous is not None:
        raise MachineFormatError(
            f"line {number}: a second 'p cnf' header (the first is on line {previous[2]})"
        )
    parts = line.split()
    if len(parts) != 4 or parts[:2] != ["p", "cnf"] or not all(p.isdigit() for p in parts[2:]):
        raise MachineFormatError(
            f"line {number}: malformed header {line!r}; expected 'p cnf <variables> "
            "<clauses>' with non-negative integers"
        )
    variables, count = int(parts[2]), int(parts[3])
    if max_work is not None and _work(variables, count) > max_work:
        raise _too_large(
            f"line {number}: the header declares {variables} variables and {count} clauses",
            _work(variables, count),
            max_work,
        )
    return variables, count, number


def _literal(token: str, number: int, variables: int) -> int:
    """The literal ``token`` of line ``number`` (0 ends a clause), in range."""
    try:
        lit = int(token)
    except ValueError:
        raise MachineFormatError(
            f"line {number}: token {token!r} is not an integer literal"
        ) from None
    if abs(lit) > variables:
        raise MachineFormatError(
            f"line {number}: literal {lit} is out of range; the header declares "
            f"{variables} variables (literals +-1..+-{variables})"
        )
    return lit


_GAVE_UP: list[int] = []  # _dpll's answer when its budget ran out (identity-compared)


def _dpll(cnf: CNF, max_work: int | None = None) -> list[int] | None:
    """Depth-first DPLL with unit propagation; branches on a shortest open clause.

    Returns ``_GAVE_UP`` once propagation has scanned more than ``max_work`` literals.
    """
    stack: list[dict[int, bool]] = [{}]
    per_round = max(1, cnf.num_literals)
    budget = [max_work // per_round if max_work is not None else -1]
    while stack:
        assign = stack.pop()
        open_clause = _propagate(cnf.clauses, assign, budget)
        if budget[0] == 0 and open_clause is None and max_work is not None:
            return _GAVE_UP
        if open_clause is None:
            continue  # conflict
        if not open_clause:
            return [int(assign.get(v, False)) for v in range(1, cnf.num_vars + 1)]
        lit = next(x for x in open_clause if abs(x) not in assign)
        for value in (lit < 0, lit > 0):  # the branch making ``lit`` true is popped first
            stack.append(assign | {abs(lit): value})
    return None


def _propagate(
    clauses: Sequence[tuple[int, ...]], assign: dict[int, bool], budget: list[int] | None = None
) -> tuple[int, ...] | None:
    """Unit-propagate in place; return a shortest open clause, ``()`` if none, None on conflict.

    ``budget[0]``, if given and not negative, is the number of rounds (scans of every clause)
    left; at 0 propagation stops and returns None, as on a conflict.
    """
    while True:
        if budget is not None and budget[0] >= 0:
            if budget[0] == 0:
                return None
            budget[0] -= 1
        shortest: tuple[int, ...] = ()
        size = 0
        unit = False
        for clause in clauses:
            free = 0
            last = 0
            for lit in clause:
                value = assign.get(abs(lit))
                if value is None:
                    free, last = free + 1, lit
                elif value == (lit > 0):
                    break
            else:
                if free == 0:
                    return None
                if free == 1:
                    assign[abs(last)] = last > 0
                    unit = True
                elif not shortest or free < size:
                    shortest, size = clause, free
        if not unit:
            return shortest


def planted_3sat(variables: int, clauses: int, seed: int) -> CNF:
    """A random 3-CNF satisfied by a hidden assignment drawn from ``seed``."""
    if variables < 3:
        raise MachineFormatError(f"3-SAT needs at least 3 variables, got {variables}")
    rng = np.random.default_rng(seed)
    hidden = rng.integers(0, 2, size=variables)
    out: list[tuple[int, ...]] = []
    while len(out) < clauses:
        vs = rng.choice(variables, size=3, replace=False)
        signs = rng.integers(0, 2, size=3)
        if np.any(hidden[vs] == signs):
            out.append(
                tuple(int(v + 1) if s else -int(v + 1) for v, s in zip(vs, signs, strict=True))
            )
    return CNF(variables, tuple(out))
