import pytest

from proofgames.errors import ProtocolError
from proofgames.selfplay import TuringFamily, TuringInstance


def test_an_instance_is_a_function_of_its_seed() -> None:
    fam = TuringFamily(space=3, max_steps=16)
    draws = [fam.instance(s) for s in range(40)]
    assert draws == [fam.instance(s) for s in range(40)]
    assert len(set(draws)) > 30  # different seeds draw different machines
    for inst in draws:
        assert inst.space == 3 and 0 <= inst.origin < 3 and 1 <= inst.steps <= 16
        tm = inst.machine()
        assert (tm.program.states, tm.program.symbols) == (2, 2)


def test_the_family_has_true_and_false_instances() -> None:
    truths = {TuringFamily(space=2, max_steps=8).instance(s).truth for s in range(60)}
    assert truths == {0, 1}


def test_held_out_instances_are_never_training_instances() -> None:
    fam = TuringFamily(space=1, max_steps=2, states=1)  # a small family: repeats are likely
    train, test = fam.split(seed=5, train=30, test=10)
    assert len(train) == 30 and len(test) == 10
    assert not set(train) & set(test)
    assert (train, test) == fam.split(seed=5, train=30, test=10)
    assert fam.split(seed=6, train=30, test=10) != (train, test)


def test_a_family_too_small_for_the_split_is_refused() -> None:
    fam = TuringFamily(space=1, max_steps=1, states=1, halt_share=1.0)
    with pytest.raises(ProtocolError, match="distinct"):
        fam.split(seed=0, train=50, test=50)


@pytest.mark.parametrize(
    "kwargs", [{"space": 9}, {"max_steps": 0}, {"max_steps": 65}, {"halt_share": 2.0}]
)
def test_bad_family_parameters_are_refused(kwargs: dict[str, float]) -> None:
    with pytest.raises(ProtocolError):
        TuringFamily(**kwargs)  # type: ignore[arg-type]


def test_instance_parameters_rebuild_the_machine() -> None:
    inst = TuringInstance("1RB1LB_1LA1RZ", space=4, origin=2, steps=6)
    assert inst.params() == {"program": "1RB1LB_1LA1RZ", "space": 4, "origin": 2, "steps": 6}
    assert inst.truth == 1 and TuringInstance("1RB1LB_1LA1RZ", 4, 2, 5).truth == 0
