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

from collections.abc import Callable
from pathlib import Path

import numpy as np

from .._transcript import ExplicitTranscriptMachine, IntArray, StepFn, TranscriptBuilder, gates
from ..errors import ConfigurationError, MachineFormatError, RegistryError
from ..reporting.reading import DATA_LIMIT, ReadError, read_bytes
from .cnf import (
    _GAVE_UP,
    CNF,
    MAX_SAT_WORK,
    SatTooLargeError,
    _dpll,
    _too_large,
    _work,
    parse_dimacs,
    planted_3sat,
)
from .examples import Example, get_example, register_example

__all__ = [
    "CNF",
    "MAX_SAT_WORK",
    "SatProblem",
    "SatTooLargeError",
    "WitnessError",
    "parse_dimacs",
    "planted_3sat",
    "resolve_sat",
]


class WitnessError(ConfigurationError):
    """A claimed witness is malformed: wrong length, or a symbol that is not a bit."""


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


def resolve_sat(spec: str, max_work: int = MAX_SAT_WORK) -> SatProblem:
    """The problem named by ``sat:<file.cnf>`` (a DIMACS file) or a SAT example's name.

    A file must be a regular file of at most
    :data:`~proofgames.reporting.reading.DATA_LIMIT` bytes (a FIFO or a device is refused
    without being read) holding UTF-8 (ASCII) text; a formula over ``max_work``
    (:data:`MAX_SAT_WORK`) is refused before any search, a header declaring one before the
    clauses are read.

    Raises:
        MachineFormatError: naming the file: unreadable, not a regular file, too large, not
            UTF-8, or malformed DIMACS.
        SatTooLargeError: naming the file, the work estimate and the limit.
    """
    if spec.startswith("sat:"):
        path = Path(spec[4:])
        try:  # a regular file only (a FIFO or a device is refused, never read), size-capped
            raw = read_bytes(path, "DIMACS file", DATA_LIMIT)
        except ReadError as exc:
            raise MachineFormatError(str(exc)) from None
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
    name: str,
    description: str,
    make: Callable[[], SatProblem],
    *,
    satisfiable: bool,
    variables: int,
    clauses: int,
    steps: int,
) -> None:
    """Register a SAT example without building it: its size and step count are recorded.

    Building ``sat-planted-40`` takes milliseconds that every command would otherwise pay at
    import; ``tests/machines/test_sat.py`` builds each one and checks the recorded figures.
    """
    facts = (("satisfiable", satisfiable), ("variables", variables), ("clauses", clauses))
    register_example(Example(name, "sat", description, steps, make, facts))


_register(
    "sat-small",
    "small satisfiable CNF: 5 variables, 7 clauses",
    lambda: SatProblem.from_dimacs(SMALL, "sat-small"),
    satisfiable=True,
    variables=5,
    clauses=7,
    steps=23,
)
_register(
    "sat-php-3-2",
    "pigeonhole PHP(3,2): 3 pigeons in 2 holes, unsatisfiable",
    lambda: SatProblem.from_dimacs(PHP_3_2, "sat-php-3-2"),
    satisfiable=False,
    variables=6,
    clauses=9,
    steps=26,
)
_register(
    "sat-planted-40",
    "planted random 3-SAT (seed 2023): 40 variables, 170 clauses, satisfiable",
    lambda: SatProblem(planted_3sat(40, 170, seed=2023), "sat-planted-40"),
    satisfiable=True,
    variables=40,
    clauses=170,
    steps=679,
)
