"""Oracles: the black box (human judgement) that oracle machines query.

An oracle maps a query (a ``bytes`` string of symbols) to a bit.  A deterministic oracle
always gives the same answer; a stochastic oracle answers 1 with probability ``p(z)``,
independently at every call.  Both sit behind one interface, :class:`Oracle`, and every
call is made through an :class:`OracleLedger` so that queries are counted per party
("A", "B", "V") exactly as the Lean formalization does with one oracle id per party.

Example:
    >>> from proofgames import FunctionOracle, OracleLedger
    >>> ledger = OracleLedger(FunctionOracle(lambda z: sum(z) % 2, name="parity"))
    >>> ledger.view("V").ask(bytes([1, 1, 1]))
    1
    >>> ledger.counts()["V"]
    1

"""

from __future__ import annotations

import abc
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from .errors import OracleError

PARTIES = ("A", "B", "V")


class Oracle(abc.ABC):
    """A black box answering queries with bits.

    A subclass gives :meth:`probability`, P[answer = 1], and sets ``deterministic = False``
    if the answer is random.

    Example:
        >>> import numpy as np
        >>> from proofgames import Oracle
        >>> class Majority(Oracle):
        ...     name = "majority"
        ...     def probability(self, query: bytes) -> float:
        ...         return float(2 * sum(query) > len(query))
        >>> Majority().answer(bytes([1, 1, 0]), None)
        1
        >>> Majority().answer_batch([bytes([1, 0, 0]), bytes([1, 1, 1])], None).tolist()
        [0, 1]
        >>> class Noisy(Majority):
        ...     deterministic = False
        ...     def probability(self, query: bytes) -> float:
        ...         return 0.8 if super().probability(query) else 0.2
        >>> rng = np.random.default_rng(0)
        >>> int(Noisy().answer_batch([bytes([1, 1, 0])] * 1000, rng).sum())  # about 800
        788
    """

    name: str = "oracle"
    deterministic: bool = True

    @abc.abstractmethod
    def probability(self, query: bytes) -> float:
        """Return P[O(query) = 1]; 0.0 or 1.0 for a deterministic oracle."""

    def answer(self, query: bytes, rng: np.random.Generator | None) -> int:
        """Answer one query (a deterministic oracle ignores ``rng``)."""
        p = self.probability(query)
        if self.deterministic:
            return _as_bit(p, self.name, query)
        if rng is None:
            raise OracleError(f"stochastic oracle {self.name!r} needs a random generator")
        return int(rng.random() < p)

    def answer_batch(
        self, queries: Sequence[bytes], rng: np.random.Generator | None
    ) -> NDArray[np.int64]:
        """Answer many queries at once (one vectorized draw for a stochastic oracle)."""
        p = np.array([self.probability(q) for q in queries], dtype=np.float64)
        if self.deterministic:
            return np.array(
                [_as_bit(v, self.name, q) for v, q in zip(p, queries, strict=True)],
                dtype=np.int64,
            )
        if rng is None:
            raise OracleError(f"stochastic oracle {self.name!r} needs a random generator")
        return (rng.random(len(queries)) < p).astype(np.int64)


def _as_bit(value: object, name: str, query: bytes) -> int:
    if isinstance(value, (bool, np.bool_)):
        return int(value)
    if isinstance(value, (int, np.integer, float, np.floating)) and value in (0, 1):
        return int(value)
    raise OracleError(
        f"oracle {name!r} answered {value!r} to query {list(query)!r}; "
        "an answer must be a bit 0 or 1"
    )


class FunctionOracle(Oracle):
    """A deterministic oracle given by a Python function of the query symbols.

    Args:
        judge: function from the query (``bytes``) to a bit.
        name: name recorded in outcome records.

    Example:
        >>> from proofgames import FunctionOracle
        >>> at_least_two = FunctionOracle(lambda z: int(sum(z) >= 2), name="at-least-two")
        >>> at_least_two.answer(bytes([1, 0, 1]), None), at_least_two.probability(bytes([1, 0, 0]))
        (1, 0.0)
        >>> at_least_two.answer_batch([bytes([1, 1, 0]), bytes([0, 0, 1])], None).tolist()
        [1, 0]

    """

    def __init__(self, judge: Callable[[bytes], object], name: str = "function") -> None:
        self._judge = judge
        self.name = name

    def probability(self, query: bytes) -> float:
        """Return the judge's bit (validated) as a probability."""
        return float(_as_bit(self._judge(query), self.name, query))


class TableOracle(Oracle):
    """A deterministic oracle given by a table of answers (e.g. recorded human verdicts).

    Args:
        table: mapping from query to bit.
        default: answer for queries not in the table; ``None`` makes them an error.
        name: name recorded in outcome records.

    Example:
        >>> from proofgames import TableOracle
        >>> verdicts = TableOracle({bytes([0]): 0, bytes([1]): 1}, name="verdicts")
        >>> verdicts.answer(bytes([1]), None)
        1
        >>> verdicts.answer(bytes([2]), None)
        Traceback (most recent call last):
        ...
        proofgames.errors.OracleError: oracle 'verdicts' has no answer for query [2]
        >>> TableOracle({bytes([1]): 1}, default=0).answer(bytes([2]), None)
        0

    """

    def __init__(
        self, table: Mapping[bytes, int], default: int | None = None, name: str = "table"
    ) -> None:
        for q, a in table.items():
            _as_bit(a, name, q)
        self._table = dict(table)
        self._default = default
        self.name = name

    def probability(self, query: bytes) -> float:
        """Look the query up."""
        if query in self._table:
            return float(self._table[query])
        if self._default is None:
            raise OracleError(f"oracle {self.name!r} has no answer for query {list(query)!r}")
        return float(_as_bit(self._default, self.name, query))


class BernoulliOracle(Oracle):
    """A stochastic oracle: each call answers 1 independently with probability ``p(query)``.

    Args:
        p: function from the query to a probability in [0, 1].
        name: name recorded in outcome records.

    Example:
        A judge who is right 90% of the time about whether the query's first symbol is 1:

        >>> import numpy as np
        >>> from proofgames import BernoulliOracle
        >>> judge = BernoulliOracle(lambda z: 0.9 if z[0] else 0.1, name="noisy")
        >>> judge.probability(bytes([1])), judge.deterministic
        (0.9, False)
        >>> rng = np.random.default_rng(0)
        >>> int(judge.answer_batch([bytes([1])] * 1000, rng).sum())
        904

    """

    deterministic = False

    def __init__(self, p: Callable[[bytes], float], name: str = "bernoulli") -> None:
        self._p = p
        self.name = name

    def probability(self, query: bytes) -> float:
        """Return the (validated) probability of answering 1."""
        p = float(self._p(query))
        if not 0.0 <= p <= 1.0:
            raise OracleError(
                f"oracle {self.name!r} gave probability {p} for query {list(query)!r}; "
                "it must lie in [0, 1]"
            )
        return p


@dataclass
class OracleLedger:
    """Routes every oracle call through a party and counts it.

    Args:
        oracle: the oracle being shared (``None`` for machines that never query).

    Example:
        >>> from proofgames import FunctionOracle, OracleLedger
        >>> ledger = OracleLedger(FunctionOracle(lambda z: z[0]))
        >>> ledger.view("A").ask(bytes([1]))
        1
        >>> ledger.view("V").ask_batch([bytes([0]), bytes([1])]).tolist()
        [0, 1]
        >>> ledger.counts()
        {'A': 1, 'B': 0, 'V': 2}

    """

    oracle: Oracle | None
    _counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(PARTIES, 0))

    def view(self, party: str) -> OracleView:
        """Return the handle through which ``party`` queries the oracle."""
        if party not in self._counts:
            raise OracleError(f"unknown party {party!r}; expected one of {PARTIES}")
        return OracleView(self, party)

    def counts(self) -> dict[str, int]:
        """Return the number of oracle calls made by each party so far."""
        return dict(self._counts)


@dataclass(frozen=True)
class OracleView:
    """One party's counted access to the shared oracle.

    Example:
        >>> from proofgames import FunctionOracle, OracleLedger
        >>> ledger = OracleLedger(FunctionOracle(lambda z: int(sum(z) >= 2)))
        >>> b = ledger.view("B")
        >>> b.ask(bytes([0, 1, 1])), b.ask(bytes([0, 0, 1])), b.queries
        (1, 0, 2)
        >>> ledger.view("V").queries
        0
    """

    ledger: OracleLedger
    party: str

    def ask(self, query: bytes, rng: np.random.Generator | None = None) -> int:
        """Ask one query and count it against this party."""
        oracle = self.ledger.oracle
        if oracle is None:
            raise OracleError("this machine made an oracle query but no oracle was supplied")
        self.ledger._counts[self.party] += 1
        return oracle.answer(bytes(query), rng)

    def ask_batch(
        self, queries: Sequence[bytes], rng: np.random.Generator | None = None
    ) -> NDArray[np.int64]:
        """Ask many queries at once; each counts against this party."""
        oracle = self.ledger.oracle
        if oracle is None:
            raise OracleError("this machine made an oracle query but no oracle was supplied")
        self.ledger._counts[self.party] += len(queries)
        return oracle.answer_batch([bytes(q) for q in queries], rng)

    @property
    def queries(self) -> int:
        """Number of calls this party has made."""
        return self.ledger._counts[self.party]
