"""The cross-examination rules against the protocol's own play, V's verdicts and forfeits."""

from typing import Any

import numpy as np
import pytest

from proofgames.errors import ProtocolError
from proofgames.protocols import play_cross_examination
from proofgames.selfplay import TuringFamily
from proofgames.selfplay.cross_examination import CrossExaminationNode, CrossExaminationRules
from proofgames.selfplay.rules import TERMINAL


class _Committed:
    def __init__(self, entries: list[int]) -> None:
        self.entries_ = np.array(entries, dtype=np.int64)

    def commit(self, ctx: Any) -> None:
        return None

    def entries(self, ctx: Any, positions: Any) -> Any:
        return self.entries_[np.asarray(positions, dtype=np.int64)]


class _Challenge:
    def __init__(self, position: int) -> None:
        self.position = position

    def challenge(self, ctx: Any, read: Any) -> int:
        return self.position


def _play(rules: CrossExaminationRules, actions: list[int]) -> CrossExaminationNode:
    s = rules.initial()
    for a in actions:
        s = rules.apply(s, a)
    return s


@pytest.mark.parametrize("seed", range(4))
def test_every_game_ends_as_play_cross_examination_decides_it(seed: int) -> None:
    rng = np.random.default_rng(seed)
    reasons = set()
    for inst in TuringFamily(space=3, max_steps=6).split(seed, 10, 0)[0]:
        claim = int(rng.integers(2))
        rules = CrossExaminationRules(**inst.params(), claim=claim)
        truth = rules.machine.run().tolist()
        for _ in range(6):  # the true transcript with 0 or 1 entries changed, any challenge
            entries = list(truth)
            if rng.random() < 0.7:
                entries[int(rng.integers(len(entries)))] = int(rng.integers(rules.alphabet))
            t = int(rng.integers(rules.length))
            s = _play(rules, [*entries, t] if entries[-1] == claim else entries)
            out = play_cross_examination(rules.machine, claim, _Committed(entries), _Challenge(t))
            assert (s.verdict, s.reason) == (out.verdict, out.reason)
            reasons.add(s.reason.split(" ")[2])
    assert {"checks", "A's"} <= reasons <= {"checks", "is", "A's"}  # (checks out, is wrong,
    # transcript ends in: each seed meets the first and last; wrong steps are tested below)


def test_an_honest_a_wins_every_challenge_and_a_wrong_entry_is_found() -> None:
    for inst in TuringFamily(space=3, max_steps=8).split(1, 10, 0)[0]:
        rules = CrossExaminationRules(**inst.params(), claim=-1)
        truth = rules.machine.run().tolist()
        assert truth[-1] == inst.truth
        committed = _play(rules, [inst.truth, *truth])
        assert committed.phase == "challenge"
        for t in range(rules.length):
            assert rules.apply(committed, t).verdict == 1
        wrong = list(truth)
        t = rules.length - 1 - rules.space  # the final row's last cell: not the output chain
        wrong[t] = (wrong[t] + 1) % rules.alphabet
        s = _play(rules, [inst.truth, *wrong])  # the output entry is still the truth
        assert rules.apply(s, t).verdict == 0


def test_an_illegal_action_is_a_loss_with_its_reason() -> None:
    rules = CrossExaminationRules("1RB1LB_1LA1RZ", space=2, origin=0, steps=1, claim=0)
    s = rules.apply(rules.initial(), 10)  # alphabet 2 x 5 = 10: entries 0..9
    assert (s.verdict, s.forfeited_by, s.player) == (0, "A", TERMINAL)
    assert s.reason == "A loses: A played 10 as its commit, not an action in 0..9"
    committed = _play(rules, rules.machine.run().tolist())
    assert committed.phase == "challenge" and committed.player == 1
    for bad in (rules.length, -1, "3", None, 1.0):
        s = rules.apply(committed, bad)
        assert (s.verdict, s.forfeited_by, rules.returns(s)) == (1, "B", (1.0, -1.0))
        assert s.reason.startswith(f"B loses: B played {bad!r} as its challenge")
    with pytest.raises(ProtocolError, match="the game is over"):
        rules.apply(s, 0)


def test_observations_have_the_declared_size_and_range() -> None:
    rules = CrossExaminationRules("1RB1LB_1LA1RZ", space=2, origin=0, steps=3, horizon=5)
    truth = rules.machine.run().tolist()
    s, seen = rules.initial(), set()
    for a in [truth[-1], *truth, 0]:
        obs = rules.observation(s)
        assert obs.shape == (rules.observation_size,) and 0 <= obs.min() <= obs.max() <= 1
        assert np.flatnonzero(rules.mask(s)).tolist() == rules.legal(s)
        seen.add(obs.tobytes())
        s = rules.apply(s, a)
    assert len(seen) == rules.length + 2 and s.terminal
    assert rules.num_actions == (5 + 2) * 2  # the longest transcript of the horizon
