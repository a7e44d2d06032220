"""A screening procedure: an oracle Turing machine whose oracle is a judgement.

``n`` items (e.g. applications), each a block of ``w`` bits (criteria met or not), are
screened one by one: for each item the machine asks the oracle -- the human judgement --
"does this item pass?", counts passes in its finite control, and accepts (halts) as soon as
``k`` items have passed.  If the items run out first it rejects by looping forever.

Tape (symbols 0..3): ``2 item_1 2 item_2 ... 2 item_n 3`` followed by one blank cell; ``2``
marks the start of an item, ``3`` the end.  The head starts on the first ``2`` in state A.
For each count ``c < k`` the machine has six states:

* ``S_c`` scans right over item bits; on a ``2`` it steps onto the item (``P_c``), on the
  ``3`` it enters the rejecting loop ``J`` (which bounces between the ``3`` and the blank);
* ``P_c`` reads the item's first bit ``b`` and steps back onto the marker (``B_c,b``);
* ``B_c,b`` steps onto the item again in the query state ``Q_c,b``;
* ``Q_c,b`` asks the oracle about the ``w`` cells under and right of the head -- exactly
  the item -- and, by the answer, writes ``b`` back (it is remembered, not read: a query
  state's row is indexed by the answer) and moves on in ``S_c`` or ``S_c+1`` (halting when
  ``c + 1 = k``).

That is ``6k + 1`` states, so ``1 <= k <= 4`` in the 25-state text format; ``n`` and ``w``
are free.  Each item costs ``w + 3`` steps and one oracle query.  The same decision is also
laid out as a transcript machine (:func:`screening_transcript`) for cross-examination.

Example:
    >>> from proofgames import OracleLedger
    >>> s = Screening((bytes([1, 1, 0]), bytes([0, 0, 1]), bytes([1, 0, 1])), k=2)
    >>> ledger = OracleLedger(s.oracle())
    >>> tm = s.machine()
    >>> final = tm.advance(tm.initial(), s.steps, ledger.view("V"))
    >>> tm.accepts(final), ledger.counts()["V"], s.decision, s.queries
    (1, 3, 1, 3)

"""

from __future__ import annotations

import string
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from .._oracle import FunctionOracle, TableOracle
from .._transcript import ExplicitTranscriptMachine, IntArray, TranscriptBuilder
from ..errors import MachineFormatError
from .examples import Example, register_example
from .turing import TuringMachine

MARK, END = 2, 3
MAX_K = 4  # 6k + 1 states must fit in the 25 letters A..Y

RULES: dict[str, Callable[[bytes], int]] = {
    "majority": lambda z: int(2 * sum(s == 1 for s in z) > len(z)),
    "all": lambda z: int(len(z) > 0 and all(s == 1 for s in z)),
    "any": lambda z: int(any(s == 1 for s in z)),
}
"""Named judgement rules: does an item (its bits: criteria met) pass?"""


def judgement_oracle(rule: str = "majority") -> FunctionOracle:
    """A deterministic judgement oracle applying a named rule of :data:`RULES`."""
    if rule not in RULES:
        raise MachineFormatError(f"unknown rule {rule!r}; known rules: {', '.join(RULES)}")
    return FunctionOracle(RULES[rule], name=f"judge:{rule}")


def screening_program(k: int) -> str:
    """The transition table (standard text) of the screener with threshold ``k``."""
    if not 1 <= k <= MAX_K:
        raise MachineFormatError(
            f"threshold k = {k}: the screener counts in its states (6k + 1 of them) and the "
            f"text format has 25, so 1 <= k <= {MAX_K}"
        )
    loop = string.ascii_uppercase[6 * k]

    def scan(c: int) -> str:
        return "Z" if c == k else _state("S", c)

    groups: list[str] = []
    for c in range(k):
        groups.append(f"0R{scan(c)}1R{scan(c)}2R{_state('P', c)}3R{loop}")  # S_c
        groups.append(f"0L{_state('B', c, 0)}1L{_state('B', c, 1)}------")  # P_c
        groups += [f"------2R{_state('Q', c, b)}---" for b in (0, 1)]  # B_c,b
        groups += [f"{b}R{scan(c)}{b}R{scan(c + 1)}------" for b in (0, 1)]  # Q_c,b: by answer
    groups.append(f"0L{loop}------3R{loop}")  # J: the rejecting loop
    return "_".join(groups)


def _state(kind: str, c: int, b: int = 0) -> str:
    """Letter of state ``S_c``, ``P_c``, ``B_c,b`` or ``Q_c,b``."""
    offset = {"S": 0, "P": 1, "B": 2 + b, "Q": 4 + b}[kind]
    return string.ascii_uppercase[6 * c + offset]


def query_states(k: int) -> list[str]:
    """Names of the query states ``Q_c,b`` of :func:`screening_program`."""
    return [_state("Q", c, b) for c in range(k) for b in (0, 1)]


def _check_items(items: Sequence[bytes]) -> tuple[bytes, ...]:
    out = tuple(bytes(i) for i in items)
    if not out:
        raise MachineFormatError("a screening needs at least one item")
    w = len(out[0])
    for i, item in enumerate(out):
        if len(item) != w or w == 0:
            raise MachineFormatError(
                f"item {i} has {len(item)} bits; every item needs the same width >= 1 "
                f"(item 0 has {w})"
            )
        if any(s > 1 for s in item):
            raise MachineFormatError(f"item {i} = {list(item)} holds a symbol that is not a bit")
    return out


def screening_tape(items: Sequence[bytes]) -> bytes:
    """The tape ``2 item 2 item ... 2 item 3`` for the screener."""
    return b"".join(bytes([MARK]) + item for item in _check_items(items)) + bytes([END])


def screening_machine(items: Sequence[bytes], k: int, name: str = "screening") -> TuringMachine:
    """The screener as an oracle Turing machine (window: the tape plus one blank cell)."""
    tape = screening_tape(items)
    w = len(_check_items(items)[0])
    return TuringMachine(
        screening_program(k),
        space=len(tape) + 1,
        origin=0,
        tape_input=tape,
        query_states=query_states(k),
        query_width=w,
        name=name,
    )


def screening_transcript(
    items: Sequence[bytes], k: int, name: str = "screening-transcript"
) -> ExplicitTranscriptMachine:
    """The same decision as a transcript machine over the concatenated item bits.

    Entries: for each item a query step (its query is the item's bits) and a counter step
    ``c_i = min(k, c_{i-1} + pass_i)`` (alphabet ``k + 1``), then the output ``[c_n = k]``.
    Unlike the Turing machine it asks about every item (``n`` queries).
    """
    checked = _check_items(items)
    if k < 1:
        raise MachineFormatError(f"threshold k must be at least 1, got {k}")
    w = len(checked[0])
    b = TranscriptBuilder(inputs=b"".join(checked), alphabet=max(2, k + 1))

    def count(v: IntArray) -> IntArray:
        out: IntArray = np.minimum(k, v.sum(axis=1)).astype(np.int64)
        return out

    counter: int | None = None
    for i in range(len(checked)):
        q = b.query(
            lambda row: bytes(row.tolist()),
            inputs=range(i * w, (i + 1) * w),
            label=f"does item {i} pass?",
        )
        rel = [q] if counter is None else [counter, q]
        counter = b.gate(count, relevant=rel, label=f"passes among items 0..{i} (capped at {k})")
    assert counter is not None
    b.gate(lambda v: (v[:, 0] == k).astype(np.int64), relevant=[counter], label=f">= {k} pass")
    return b.build(name=name)


@dataclass(frozen=True)
class Screening:
    """A screening instance: items, threshold and judgement rule.

    Attributes:
        items: the items, each ``w`` bits.
        k: accept iff at least ``k`` items pass (``1 <= k <= 4``).
        rule: the judgement rule (a key of :data:`RULES`).
        name: name used in outcome records.

    """

    items: tuple[bytes, ...]
    k: int
    rule: str = "majority"
    name: str = "screening"

    def __post_init__(self) -> None:
        object.__setattr__(self, "items", _check_items(self.items))
        screening_program(self.k)  # validates k
        judgement_oracle(self.rule)  # validates the rule

    def machine(self) -> TuringMachine:
        """The oracle Turing machine."""
        return screening_machine(self.items, self.k, self.name)

    def transcript(self) -> ExplicitTranscriptMachine:
        """The transcript-machine version (for cross-examination)."""
        return screening_transcript(self.items, self.k, f"{self.name}-transcript")

    def oracle(self) -> FunctionOracle:
        """The judgement oracle (the rule applied to the queried bits)."""
        return judgement_oracle(self.rule)

    def recorded_oracle(self, default: int | None = None) -> TableOracle:
        """The judge's verdicts on these items, recorded as a table (other queries: ``default``)."""
        judge = RULES[self.rule]
        return TableOracle(
            {it: judge(it) for it in self.items}, default, name=f"recorded:{self.rule}"
        )

    @property
    def verdicts(self) -> list[int]:
        """Which items pass."""
        return [RULES[self.rule](it) for it in self.items]

    @property
    def decision(self) -> int:
        """1 iff at least ``k`` items pass."""
        return int(sum(self.verdicts) >= self.k)

    @property
    def queries(self) -> int:
        """Oracle queries in a plain run: up to the ``k``-th pass, else every item."""
        passed = np.cumsum(self.verdicts)
        hit = np.flatnonzero(passed >= self.k)
        return int(hit[0]) + 1 if hit.size else len(self.items)

    @property
    def steps(self) -> int:
        """Steps until the machine has decided: it halts, or enters the rejecting loop."""
        per_item = len(self.items[0]) + 3
        if self.decision:
            return (self.queries - 1) * per_item + 4
        return len(self.items) * per_item + 1


_APPLICANTS = tuple(
    bytes(int(c) for c in s) for s in ("1101", "0100", "1110", "0011", "1011", "0001")
)


def _register(name: str, k: int, description: str) -> None:
    s = Screening(_APPLICANTS, k, "majority", name)
    facts = (
        ("decision", s.decision),
        ("queries", s.queries),
        ("decided_after", s.steps),
        ("verdicts", tuple(s.verdicts)),
    )
    register_example(Example(name, "oracle-tm", description, s.steps, lambda: s, facts))


_register("screening", 3, "screen 6 applicants (4 criteria, majority rule): accept at 3 passes")
_register("screening-strict", 4, "the same 6 applicants with threshold 4: rejects (loops)")
