"""The Cook--Levin tableau of a Turing machine, laid out lazily as a transcript.

Layout for a machine with window S run for T steps (0-based positions):

* rows ``r = 0 .. T``: position ``r * S + j`` holds tape cell ``j`` of the configuration after
  ``r`` steps, encoded as ``symbol`` or, where the head is, ``symbol + k * (state + 1)``
  (``k`` = number of symbols).  Cell ``(r, j)`` depends on cells ``(r-1, j-1 .. j+1)``;
  row 0 depends on nothing (it is the initial configuration, read off the input).
* an output chain of S entries: ``out_j = out_{j-1} OR [cell (T, j) holds the HALT state]``,
  relevant set ``{out_{j-1}, (T, j)}``.  The transcript's output is ``out_{S-1}``.

Every relevant set has at most 3 entries, and nothing is ever materialized: the machine
answers any single step on demand, so T x S may be astronomically large.

Example:
    >>> from proofgames.machines import TuringMachine, TableauTranscript
    >>> tm = TuringMachine.sized("1RB1LB_1LA1RZ", steps=6)
    >>> tab = TableauTranscript(tm, steps=6)
    >>> tab.length, tab.relevant(tab.position(3, 1))
    (32, (8, 9, 10))

"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from .._configuration import Configuration
from .._oracle import OracleView
from .._transcript import IntArray, TranscriptMachine
from ..errors import MachineFormatError, ProtocolError
from .turing import TuringMachine


class TableauTranscript(TranscriptMachine):
    """A Turing machine's T-step computation as a lazily evaluated transcript.

    Args:
        machine: a Turing machine without query states.
        steps: T, the number of steps.

    Example:
        >>> from proofgames import TableauTranscript, TuringMachine
        >>> tm = TuringMachine.sized("1RB1LB_1LA1RZ", steps=6)
        >>> tab = TableauTranscript(tm, steps=6)
        >>> y = tab.run()  # small enough to materialize: (6 + 2) rows x 4 cells
        >>> int(y[tab.output_position])  # the machine halts within 6 steps
        1
        >>> row = y[tab.position(6, 0) : tab.position(7, 0)]  # the configuration at T = 6
        >>> tab.decode_row(row) == tm.advance(tm.initial(), 6)
        True
        >>> tab.locate(tab.output_position), tab.relevant(tab.output_position)
        (('out', 6, 3), (30, 27))

    """

    def __init__(self, machine: TuringMachine, steps: int) -> None:
        if steps <= 0:
            raise ProtocolError(f"steps must be positive, got {steps}")
        if machine.query_mask.any():
            raise MachineFormatError(
                f"{machine.name}: the tableau layout needs a machine without query states; "
                "debate oracle Turing machines with the bisection protocol"
            )
        if (steps + 2) * machine.size > 2**63 - 1:
            raise ProtocolError(
                f"the tableau of {machine.name} for T = {steps} has (T + 2) x {machine.size} "
                "entries, over the 2^63 - 1 positions it can index"
            )
        self.machine = machine
        self.steps = steps
        self.width = machine.size
        p = machine.program
        self._k = p.symbols
        self.alphabet = p.symbols * (p.states + 3)
        self.length = (steps + 2) * self.width
        self.inputs = machine.initial().tape
        self.name = f"tableau({machine.name}, T={steps})"
        self._row0 = self.encode_row(machine.initial())

    # ---------------------------------------------------------------- layout
    def position(self, row: int, cell: int) -> int:
        """Position of cell ``cell`` of the configuration after ``row`` steps."""
        return row * self.width + cell

    @property
    def chain_start(self) -> int:
        """Position of the first output-chain entry."""
        return (self.steps + 1) * self.width

    def locate(self, t: int) -> tuple[str, int, int]:
        """``("cell", row, j)`` or ``("out", T, j)`` for position ``t``."""
        r, j = divmod(t, self.width)
        return ("cell", r, j) if r <= self.steps else ("out", self.steps, j)

    def relevant(self, t: int) -> tuple[int, ...]:
        """Three cells of the previous row, or the chain link and the final cell."""
        kind, r, j = self.locate(t)
        s = self.width
        if kind == "out":
            last = self.position(self.steps, j)
            return (last,) if j == 0 else (t - 1, last)
        if r == 0:
            return ()
        base = (r - 1) * s
        return tuple(base + c for c in (j - 1, j, j + 1) if 0 <= c < s)

    def input_positions(self, t: int) -> tuple[int, ...]:
        """Row 0 reads the input cell under it."""
        kind, r, j = self.locate(t)
        return (j,) if kind == "cell" and r == 0 else ()

    def is_query(self, t: int) -> bool:
        """Tableau steps are all deterministic."""
        return False

    # -------------------------------------------------------------- encoding
    def encode_row(self, config: Configuration) -> IntArray:
        """Encode a configuration as one tableau row."""
        row = np.frombuffer(config.tape, dtype=np.uint8).astype(np.int64)
        row[config.head] += self._k * (config.state + 1)
        return row

    def decode_row(self, row: IntArray) -> Configuration:
        """Decode a row with exactly one head back into a configuration."""
        heads = np.flatnonzero(row >= self._k)
        if heads.size != 1:
            raise MachineFormatError(
                f"a tableau row must hold exactly one head, found {heads.size}"
            )
        h = int(heads[0])
        state = int(row[h] // self._k) - 1
        return Configuration(state, h, (row % self._k).astype(np.uint8).tobytes())

    def entries_of(self, config: Configuration, row: int, positions: IntArray) -> IntArray:
        """Values at ``positions`` (all in ``row``) given that row's configuration."""
        enc = self.encode_row(config)
        return enc[np.asarray(positions, dtype=np.int64) - row * self.width]

    def output_chain(self, final: Configuration) -> IntArray:
        """The output chain's entries for a given final configuration."""
        chain = np.zeros(self.width, dtype=np.int64)
        if final.state == self.machine.program.halt:
            chain[final.head :] = 1
        return chain

    # ------------------------------------------------------------------ steps
    def step_batch(
        self,
        t: int,
        values: IntArray,
        oracle: OracleView | None = None,
        rng: np.random.Generator | None = None,
    ) -> IntArray:
        """The local rule of the tableau, vectorized over a batch of neighbourhoods."""
        values = np.asarray(values, dtype=np.int64)
        n = values.shape[0]
        kind, r, j = self.locate(t)
        halt = self.machine.program.halt
        if kind == "out":
            last = values[:, -1]
            is_halt = (last >= self._k) & (last // self._k - 1 == halt)
            prev = values[:, 0] if j > 0 else np.zeros(n, dtype=np.int64)
            return np.asarray((prev == 1) | is_halt, dtype=np.int64)
        if r == 0:
            return np.full(n, self._row0[j], dtype=np.int64)
        cols = [c for c in (j - 1, j, j + 1) if 0 <= c < self.width]
        none = np.full(n, -1, dtype=np.int64)
        left = values[:, cols.index(j - 1)] if j - 1 in cols else none
        right = values[:, cols.index(j + 1)] if j + 1 in cols else none
        return self._local_rule(left, values[:, cols.index(j)], right, j)

    def _local_rule(self, left: IntArray, centre: IntArray, right: IntArray, j: int) -> IntArray:
        p, k = self.machine.program, self._k
        n_ord = p.states
        write = p.write.astype(np.int64)

        def head_state(v: IntArray) -> IntArray:
            return np.where(v >= k, v // k - 1, -1)

        def active(q: IntArray) -> NDArray[np.bool_]:  # a head in an ordinary state
            return np.asarray((q >= 0) & (q < n_ord), dtype=np.bool_)

        sym = centre % k
        qc = head_state(centre)
        out = sym.copy()
        # head at the centre
        absorbing = qc >= n_ord
        out = np.where(absorbing, centre, out)
        act = active(qc)
        idx = np.where(act, qc * k + sym, 0)
        mv, nq, wr = p.move[idx], p.nxt[idx], write[idx]
        stays = act & (mv == 0)
        leaves_window = act & (mv != 0) & ((j + mv < 0) | (j + mv >= self.width))
        moves_off = act & (mv != 0) & ~leaves_window
        out = np.where(stays, wr + k * (nq + 1), out)
        out = np.where(leaves_window, wr + k * (p.overflow + 1), out)
        out = np.where(moves_off, wr, out)
        # a head arriving from a neighbour
        for nb, direction in ((left, 1), (right, -1)):
            qn = head_state(nb)
            an = active(qn) & (nb >= 0)
            ii = np.where(an, qn * k + nb % k, 0)
            arrives = an & (p.move[ii] == direction)
            out = np.where(arrives, out + k * (p.nxt[ii] + 1), out)
        return out
