r"""CNF satisfiability as an NP problem with a witness: DIMACS input, checker machine, solvers.

The instance ``x`` is a CNF formula; a witness ``w`` is an assignment, one bit per variable
(``w[i]`` is the value of variable ``i + 1``).  The checker ``M(x, w)`` is a transcript
machine with constant-size relevant sets, laid out in two chains:

* for each clause, an OR chain over its literals: entry ``e_1`` is the first literal's
  value (one witness bit), and ``e_i = e_{i-1} OR literal_i`` (one entry, one witness bit);
  an empty clause is the constant 0;
* an AND chain over the clauses: ``c_1`` is clause 1's last OR entry, and
  ``c_j = c_{j-1} AND (clause j's last OR entry)`` (two entries).

The output ``c_m`` is 1 iff ``w`` satisfies every clause; the transcript has
``literals + clauses - 1`` entries (a formula without clauses is the single constant 1).
Provers search for witnesses with :meth:`SatProblem.solve` (DPLL: complete, used by the
honest prover) and :meth:`SatProblem.best_effort` (WalkSAT-style local search, for liars).

Example:
    >>> from proofgames.machines.sat import SatProblem
    >>> p = SatProblem.from_dimacs("c x1 or x2, not x1\np cnf 2 2\n1 2 0\n-1 0\n", name="tiny")
    >>> w = p.solve()
    >>> list(w), p.machine(w).run().tolist()
    ([0, 1], [0, 1, 1, 1])

"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from .._errors import ConfigurationError, MachineFormatError, RegistryError
from .._transcript import ExplicitTranscriptMachine, IntArray, StepFn, TranscriptBuilder, gates
from .examples import Example, get_example, register_example


class WitnessError(ConfigurationError):
    """A claimed witness is malformed: wrong length, or a symbol that is not a bit."""


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
            if header is not None:
                raise MachineFormatError(
                    f"line {number}: a second 'p cnf' header (the first is on line {header[2]})"
                )
            parts = line.split()
            if (
                len(parts) != 4
                or parts[:2] != ["p", "cnf"]
                or not all(p.isdigit() for p in parts[2:])
            ):
                raise MachineFormatError(
                    f"line {number}: malformed header {line!r}; expected 'p cnf <variables> "
                    "<clauses>' with non-negative integers"
                )
            header = (int(parts[2]), int(parts[3]), number)
            if max_work is not None and _work(header[0], header[1]) > max_work:
                raise _too_large(
                    f"line {number}: the header declares {header[0]} variables and "
                    f"{header[1]} clauses",
                    _work(header[0], header[1]),
                    max_work,
                )
            continue
        if header is None:
            raise MachineFormatError(
                f"line {number}: clause data before the 'p cnf <variables> <clauses>' header"
            )
        for token in line.split():
            try:
                lit = int(token)
            except ValueError:
                raise MachineFormatError(
                    f"line {number}: token {token!r} is not an integer literal"
                ) from None
            if lit == 0:
                clauses.append(tuple(current))
                current = []
            elif abs(lit) > header[0]:
                raise MachineFormatError(
                    f"line {number}: literal {lit} is out of range; the header declares "
                    f"{header[0]} variables (literals +-1..+-{header[0]})"
                )
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


def _literal_gate(negated: bool, chained: bool) -> StepFn:
    """Gate: a literal's value (its variable is the input, first), OR the previous entry."""

    def fn(v: IntArray) -> IntArray:
        lit = (v[:, 0] == 1) != negated
        out: IntArray = (lit | (v[:, 1] == 1) if chained else lit).astype(np.int64)
        return out

    return fn


def _constant(bit: int) -> StepFn:
    return lambda v: np.full(v.shape[0], bit, dtype=np.int64)


class SatProblem:
    """CNF-SAT as a witness problem: ``x`` is the formula, a witness is an assignment.

    Args:
        cnf: the formula.
        name: name used in outcome records.
        max_work: limit on the search work (:data:`MAX_SAT_WORK`): :meth:`solve` and
            :meth:`best_effort` refuse a formula whose :meth:`work_estimate` exceeds it, and
            DPLL gives up (an error, never a wrong answer) after that many literal visits.

    """

    def __init__(self, cnf: CNF, name: str = "sat", max_work: int = MAX_SAT_WORK) -> None:
        if isinstance(max_work, bool) or not isinstance(max_work, int) or max_work <= 0:
            raise MachineFormatError(f"max_work must be a positive integer, got {max_work!r}")
        self.cnf = cnf
        self.name = name
        self.max_work = max_work
        self._solved: tuple[bytes | None] | None = None

    @classmethod
    def from_dimacs(cls, text: str, name: str = "sat", max_work: int = MAX_SAT_WORK) -> SatProblem:
        """Parse DIMACS text (see :func:`parse_dimacs`); refuse it if over ``max_work``."""
        problem = cls(parse_dimacs(text, max_work), name, max_work)
        problem.check_size()
        return problem

    def work_estimate(self, flips: int | None = None) -> int:
        """WalkSAT's work in literal visits: flips times the padded clause table's cells."""
        c = self.cnf
        width = max((len(clause) for clause in c.clauses), default=0)
        cells = len(c.clauses) * max(width, 1)
        return _work(c.num_vars, cells) if flips is None else flips * cells

    def check_size(self, flips: int | None = None) -> None:
        """Refuse (before any search) a formula whose work estimate exceeds ``max_work``.

        Raises:
            SatTooLargeError: naming the estimate and the limit.
        """
        work = self.work_estimate(flips)
        if work > self.max_work:
            c = self.cnf
            raise _too_large(
                f"{self.name} ({c.num_vars} variables, {len(c.clauses)} clauses)",
                work,
                self.max_work,
            )

    def __repr__(self) -> str:
        c = self.cnf
        return f"SatProblem({self.name!r}, {c.num_vars} variables, {len(c.clauses)} clauses)"

    @property
    def witness_length(self) -> int:
        """Symbols in a witness: one bit per variable."""
        return self.cnf.num_vars

    @property
    def steps(self) -> int:
        """T: the length of ``M(x, w)``'s transcript (the same for every witness)."""
        if not self.cnf.clauses:
            return 1
        return sum(max(1, len(c)) for c in self.cnf.clauses) + len(self.cnf.clauses) - 1

    def validate_witness(self, w: object) -> bytes:
        """Return ``w`` as bytes if it is ``witness_length`` bits.

        Raises:
            WitnessError: naming the wrong type, length or first non-bit symbol.

        """
        if isinstance(w, (bytes, bytearray, memoryview)):
            b = bytes(w)
        elif isinstance(w, (list, tuple, np.ndarray)):
            try:
                b = bytes(int(s) for s in w)
            except (TypeError, ValueError) as exc:
                raise WitnessError(f"witness symbols must be bits 0 or 1: {exc}") from None
        else:
            raise WitnessError(
                f"a witness must be bytes (one 0/1 symbol per variable), got {type(w).__name__}"
            )
        n = self.witness_length
        if len(b) != n:
            raise WitnessError(
                f"witness has {len(b)} symbols; {self.name} has {n} variables, so it needs "
                f"exactly {n}"
            )
        for i, s in enumerate(b):
            if s > 1:
                hint = " (ASCII digits? send bytes([0, 1, ...]))" if s in (48, 49) else ""
                raise WitnessError(
                    f"witness symbol {i} (variable {i + 1}) is {s}; symbols must be bits 0 or 1"
                    + hint
                )
        return b

    def machine(self, w: object) -> ExplicitTranscriptMachine:
        """The checker ``M(x, w)`` as a transcript machine whose inputs are the witness bits."""
        bits = self.validate_witness(w)
        b = TranscriptBuilder(inputs=bits)
        ends: list[int] = []
        for j, clause in enumerate(self.cnf.clauses, start=1):
            if not clause:
                ends.append(b.gate(_constant(0), label=f"clause {j} is empty: 0"))
                continue
            prev: int | None = None
            for lit in clause:
                var, neg = abs(lit) - 1, lit < 0
                name = f"{'not ' if neg else ''}x{var + 1}"
                rel = [] if prev is None else [prev]
                label = f"clause {j}: {'... or ' if rel else ''}{name}"
                prev = b.gate(_literal_gate(neg, bool(rel)), rel, [var], label)
            assert prev is not None
            ends.append(prev)
        if not ends:
            b.gate(_constant(1), label="a formula without clauses is true")
        else:
            acc = ends[0]
            for j, end in enumerate(ends[1:], start=2):
                acc = b.gate(gates.AND, relevant=[acc, end], label=f"clauses 1..{j} hold")
        return b.build(name=f"{self.name}: M(x, w)")

    def solve(self) -> bytes | None:
        """A satisfying assignment, or ``None`` if the formula is unsatisfiable.

        A seeded WalkSAT pass runs first (fast on satisfiable random formulas); DPLL, which
        is complete, decides whatever it leaves open.  The answer is kept: a second call
        returns it at once.

        Raises:
            SatTooLargeError: the formula is over ``max_work`` (checked first), or DPLL
                could not decide it within ``max_work`` literal visits.
        """
        if self._solved is None:
            self.check_size()
            guess = self.best_effort(np.random.default_rng(0))
            bits = np.frombuffer(guess, dtype=np.uint8).astype(np.int64)
            if bool(self.cnf.satisfied(bits).all()):
                self._solved = (guess,)
            else:
                budget = max(0, self.max_work - self.work_estimate())  # one shared limit
                found = _dpll(self.cnf, budget)
                if found is _GAVE_UP:
                    c = self.cnf
                    raise SatTooLargeError(
                        f"{self.name} ({c.num_vars} variables, {len(c.clauses)} clauses): "
                        f"WalkSAT found no satisfying assignment and DPLL could not decide "
                        f"satisfiability within max_work = {self.max_work:.3g} literal visits "
                        "(WalkSAT's and DPLL's together); "
                        "raise max_work (--max-sat-work) to search longer"
                    )
                self._solved = (None if found is None else bytes(found),)
        return self._solved[0]

    def best_effort(
        self, rng: np.random.Generator, flips: int | None = None, noise: float = 0.5
    ) -> bytes:
        """WalkSAT: the assignment satisfying the most clauses seen in a local search.

        Args:
            rng: the source of every random choice.
            flips: variable flips to try (default ``20 * variables + 200``).
            noise: probability of flipping a random variable of the chosen clause rather
                than the one that leaves the most clauses satisfied.

        Raises:
            SatTooLargeError: the search's work estimate is over ``max_work``.

        """
        self.check_size(flips)
        cnf, n = self.cnf, self.cnf.num_vars
        a = rng.integers(0, 2, size=n, dtype=np.int64)
        if n == 0:
            return b""
        sat = cnf.satisfied(a)
        best, best_count = a.copy(), int(sat.sum())
        flips = 20 * n + 200 if flips is None else flips
        for _ in range(flips):
            open_clauses = [j for j in np.flatnonzero(~sat).tolist() if cnf.clauses[j]]
            if not open_clauses:
                break
            clause = cnf.clauses[open_clauses[int(rng.integers(len(open_clauses)))]]
            candidates = [abs(lit) - 1 for lit in clause]
            if rng.random() < noise:
                v = candidates[int(rng.integers(len(candidates)))]
            else:
                trial = np.repeat(a[None, :], len(candidates), axis=0)
                trial[np.arange(len(candidates)), candidates] ^= 1
                v = candidates[int(np.argmax(cnf.satisfied(trial).sum(axis=1)))]
            a[v] ^= 1
            sat = cnf.satisfied(a)
            if int(sat.sum()) > best_count:
                best, best_count = a.copy(), int(sat.sum())
        return bytes(best.astype(np.uint8))


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


def resolve_sat(spec: str, max_work: int = MAX_SAT_WORK) -> SatProblem:
    """The problem named by ``sat:<file.cnf>`` (a DIMACS file) or a SAT example's name.

    A file must be UTF-8 (ASCII) text; a formula over ``max_work`` (:data:`MAX_SAT_WORK`)
    is refused before any search, a header declaring one before the clauses are read.

    Raises:
        MachineFormatError: naming the file: unreadable, not UTF-8, or malformed DIMACS.
        SatTooLargeError: naming the file, the work estimate and the limit.
    """
    if spec.startswith("sat:"):
        path = Path(spec[4:])
        try:
            raw = path.read_bytes()
        except OSError as exc:
            reason = exc.strerror or str(exc)
            raise MachineFormatError(f"cannot read DIMACS file {str(path)!r}: {reason}") from None
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = raw.count(b"\n", 0, exc.start) + 1
            raise MachineFormatError(
                f"{path}: not a UTF-8 DIMACS file: byte {exc.start} (line {line}) is "
                f"{raw[exc.start]:#04x}"
            ) from None
        try:
            return SatProblem.from_dimacs(text, name=path.stem, max_work=max_work)
        except MachineFormatError as exc:
            raise type(exc)(f"{path}: {exc}") from None
    example = get_example(spec)
    if example.kind != "sat":
        raise RegistryError(f"example {spec!r} is a {example.kind} example, not a SAT example")
    problem = example.build()
    assert isinstance(problem, SatProblem)
    problem = SatProblem(problem.cnf, problem.name, max_work)
    problem.check_size()
    return problem


# ------------------------------------------------------ SAT examples (witness problems)
SMALL = """c a small satisfiable formula: 5 variables, 7 clauses
p cnf 5 7
1 2 -3 0
-1 3 0
-2 4 5 0
3 -4 0
-5 -1 0
2 5 0
-3 4 1 0
"""

PHP_3_2 = """c pigeonhole PHP(3,2): 3 pigeons, 2 holes; p(i,j) = variable 2(i-1)+j
c unsatisfiable: every pigeon sits in a hole, no hole holds two
p cnf 6 9
1 2 0
3 4 0
5 6 0
-1 -3 0
-1 -5 0
-3 -5 0
-2 -4 0
-2 -6 0
-4 -6 0
"""


def _register(
    name: str, description: str, make: Callable[[], SatProblem], satisfiable: bool
) -> None:
    problem = make()
    cnf = problem.cnf
    facts = (
        ("satisfiable", satisfiable),
        ("variables", cnf.num_vars),
        ("clauses", len(cnf.clauses)),
    )
    register_example(Example(name, "sat", description, problem.steps, make, facts))


_register(
    "sat-small",
    "small satisfiable CNF: 5 variables, 7 clauses",
    lambda: SatProblem.from_dimacs(SMALL, "sat-small"),
    satisfiable=True,
)
_register(
    "sat-php-3-2",
    "pigeonhole PHP(3,2): 3 pigeons in 2 holes, unsatisfiable",
    lambda: SatProblem.from_dimacs(PHP_3_2, "sat-php-3-2"),
    satisfiable=False,
)
_register(
    "sat-planted-40",
    "planted random 3-SAT (seed 2023): 40 variables, 170 clauses, satisfiable",
    lambda: SatProblem(planted_3sat(40, 170, seed=2023), "sat-planted-40"),
    satisfiable=True,
)
