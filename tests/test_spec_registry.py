"""One spec registry: ``name:key=value,...`` parsed, converted by signature, bound, recorded."""

# No ``from __future__ import annotations``: the factories below carry real annotation
# objects (``int | None``, ``Optional[int]``), and string ones are written out as strings.
from typing import Any, Optional

import pytest

from proofgames._registry import Spec, SpecRegistry, parse_spec, parse_strategy
from proofgames.errors import RegistryError, SpecError
from proofgames.strategies import make_strategy


def vote(votes: int = 3, p: float = 0.5, strict: bool = False, rule: str = "majority") -> str:
    return f"{rule} of {votes} at {p}{' strictly' if strict else ''}"


def capped(limit: int | None = None, scale: Optional[float] = 1.0) -> tuple[Any, Any]:  # noqa: UP045
    return limit, scale


def written(
    n: "int" = 1,
    cap: "float | None" = None,
    tag: "Optional[str]" = "a",  # noqa: UP045
) -> tuple[Any, ...]:
    return n, cap, tag


def needs(size: int) -> int:
    return size


def registry() -> SpecRegistry[Any]:
    reg: SpecRegistry[Any] = SpecRegistry("thing")
    reg.add("vote", vote)
    reg.add("capped", capped)
    reg.add("written", written)
    reg.add("needs", needs)
    reg.add("plain", lambda: "plain")
    return reg


def test_a_spec_splits_into_a_name_and_raw_values_with_normalized_keys():
    assert parse_spec("majority:n=5,p=0.8") == ("majority", {"n": "5", "p": "0.8"})
    assert parse_spec(" lie-at : max-steps = 3 ,, ") == ("lie-at", {"max_steps": "3"})
    assert parse_spec("choose:debate=evade:margin=0.5") == (
        "choose",
        {"debate": "evade:margin=0.5"},
    )
    assert parse_spec("honest") == ("honest", {})


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "has no name"),
        (":n=1", "has no name"),
        ("vote:votes", r"'votes' in 'vote:votes' is not KEY=VALUE"),
        ("vote:=3", "is not KEY=VALUE"),
        ("vote:votes=1,votes=2", "'votes' is given twice"),
    ],
)
def test_a_malformed_spec_is_refused_with_what_is_wrong(text, message):
    with pytest.raises(SpecError, match=message) as caught:
        parse_spec(text)
    assert isinstance(caught.value, RegistryError) and isinstance(caught.value, ValueError)


def test_values_are_converted_by_the_annotation_of_their_parameter():
    reg = registry()
    built, spec = reg.make("vote:votes=5,p=1,strict=YES,rule=unanimity")
    assert built == "unanimity of 5 at 1.0 strictly"
    assert spec.args == (("votes", 5), ("p", 1.0), ("strict", True), ("rule", "unanimity"))
    assert type(spec.kwargs()["p"]) is float
    for text, strict in [("true", True), ("1", True), ("no", False), ("False", False)]:
        assert reg.spec(f"vote:strict={text}").kwargs()["strict"] is strict


def test_optional_parameters_take_none_whether_annotated_by_objects_or_text():
    reg = registry()
    assert reg.make("capped:limit=none,scale=None")[0] == (None, None)
    assert reg.make("capped:limit=7,scale=2.5")[0] == (7, 2.5)
    assert reg.make("written:n=2,cap=0.5,tag=none")[0] == (2, 0.5, None)
    assert reg.make("written:cap=NONE,tag=b")[0] == (1, None, "b")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("vote:votes=2.5", r"bad arguments for thing 'vote': votes must be int, got '2\.5'"),
        ("vote:votes=1e3", "votes must be int, got '1e3'"),
        ("vote:votes=", "votes must be int, got ''"),
        ("vote:p=high", "p must be float, got 'high'"),
        ("vote:strict=maybe", "strict must be true or false, got 'maybe'"),
        ("capped:limit=2.0", "limit must be int or none, got '2.0'"),
    ],
)
def test_a_value_that_does_not_convert_exactly_is_refused_naming_its_key(text, message):
    with pytest.raises(SpecError, match=message):
        registry().make(text)


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "Infinity", "1e999"])
def test_floats_must_be_finite_unless_the_registration_allows_more(value):
    with pytest.raises(SpecError, match=f"p must be a finite float, got '{value}'"):
        registry().make(f"vote:p={value}")
    lenient: SpecRegistry[str] = SpecRegistry("thing")
    lenient.add("vote", vote, nonfinite=("p",))
    assert repr(lenient.make(f"vote:p={value}")[1].kwargs()["p"]) == repr(float(value))


def test_unknown_keys_are_refused_naming_the_known_ones():
    with pytest.raises(SpecError, match=r"no argument 'vots' \(its arguments: votes, p, strict"):
        registry().make("vote:vots=3")
    with pytest.raises(SpecError, match=r"no argument 'x' \(it takes none\)"):
        registry().make("plain:x=1")
    with pytest.raises(SpecError, match=r"no argument 'x' \(its arguments: votes"):
        registry().make("vote", x=1)
    with pytest.raises(RegistryError, match="unknown thing 'vot'; registered: vote, capped"):
        registry().make("vot:votes=3")


def test_a_missing_required_argument_is_refused():
    with pytest.raises(SpecError, match="missing a required argument: 'size'"):
        registry().make("needs")
    assert registry().make("needs:size=4") == (4, Spec("needs", (("size", 4),)))


def test_the_recorded_spec_has_every_argument_with_defaults_and_parses_back():
    reg = registry()
    built, spec = reg.make("vote:p=0.25", strict=True)
    assert built == "majority of 3 at 0.25 strictly"
    assert spec == Spec("vote", (("votes", 3), ("p", 0.25), ("strict", True), ("rule", "majority")))
    assert spec.to_text() == "vote:votes=3,p=0.25,strict=true,rule=majority"
    assert spec.label == "vote(votes=3, p=0.25, strict=True, rule='majority')"
    assert spec.to_dict() == {"name": "vote", "args": dict(spec.args)}
    for text in ["capped", "written:cap=1e-07", "vote:p=0.1", "plain"]:
        recorded = reg.spec(text)
        assert reg.spec(recorded.to_text()) == recorded
    assert reg.spec("capped").to_text(omit_none=True) == "capped:scale=1.0"


def test_code_given_values_win_over_the_text_and_are_not_converted():
    _, spec = registry().make("vote:votes=5,rule=all", votes=7)
    assert spec.kwargs()["votes"] == 7 and spec.kwargs()["rule"] == "all"


def test_keyword_catch_alls_take_code_given_values_only():
    def loose(size: int = 2, **extra: Any) -> dict[str, Any]:
        return {"size": size, **extra}

    reg: SpecRegistry[dict[str, Any]] = SpecRegistry("loose thing")
    reg.add("loose", loose)
    assert reg.make("loose:size=3", colour="red") == (
        {"size": 3, "colour": "red"},
        Spec("loose", (("size", 3), ("colour", "red"))),
    )
    with pytest.raises(SpecError, match=r"no argument 'colour' \(its arguments: size\)"):
        reg.make("loose:colour=red")


def test_parameters_of_other_types_can_be_given_in_code_only():
    def shaped(widths: tuple[int, ...] = (4, 4), depth: int = 1) -> tuple[Any, ...]:
        return widths, depth

    reg: SpecRegistry[tuple[Any, ...]] = SpecRegistry("net")
    reg.add("shaped", shaped)
    assert reg.make("shaped:depth=2", widths=(8,))[0] == ((8,), 2)
    with pytest.raises(SpecError, match=r"widths \(tuple\[int, \.\.\.\]\) can be given in code"):
        reg.make("shaped:widths=8")


def test_a_factory_a_spec_could_never_build_is_refused_when_registered():
    def untyped(size) -> None:  # type: ignore[no-untyped-def]
        return None

    def either(size: int | str) -> None:
        return None

    def positional(size: int = 1, /) -> None:
        return None

    reg: SpecRegistry[None] = SpecRegistry("thing")
    with pytest.raises(SpecError, match="'size' has no annotation and no default"):
        reg.add("untyped", untyped)
    with pytest.raises(SpecError, match=r"'size' has int \| str and no default"):
        reg.add("either", either)
    with pytest.raises(SpecError, match="'size' is positional-only"):
        reg.add("positional", positional)
    with pytest.raises(SpecError, match=r"nonfinite names \['votes'\]"):
        reg.add("vote", vote, nonfinite=("votes",))
    reg.add("needs", needs)
    with pytest.raises(RegistryError, match="'needs' is already registered"):
        reg.add("needs", needs)
    assert [name for name, _ in reg.items()] == ["needs"]


# ----------------------------------------------------------------------- its users
def test_strategies_are_built_by_their_annotations_and_record_sorted_arguments():
    player = make_strategy("stochastic", "A", "lie-at:step=3", delta=0.5)
    assert player.spec.args == (("delta", 0.5), ("step", 3))
    assert make_strategy("bisection", "A", "flip-step:at=1").spec.args == (("at", 1.0),)
    with pytest.raises(SpecError, match="bad arguments for strategy 'lie-at': step must be int"):
        make_strategy("stochastic", "A", "lie-at:step=2.5")
    with pytest.raises(SpecError, match="delta must be a finite float, got 'nan'"):
        make_strategy("stochastic", "A", "lie-at:delta=nan")


def test_parse_strategy_still_guesses_int_float_or_text_for_callers_without_a_signature():
    assert parse_strategy("x:a=1,b=two,c=0.5") == ("x", {"a": 1, "b": "two", "c": 0.5})
    assert parse_strategy("panel-choice:p=0.2;0.9") == ("panel-choice", {"p": "0.2;0.9"})
    with pytest.raises(RegistryError, match="not KEY=VALUE"):
        parse_strategy("majority:n")


def test_pvg_tasks_are_built_from_specs_converted_by_their_constructors():
    pytest.importorskip("torch")
    from proofgames.pvg import make_task, parse_task_args

    assert make_task("find-the-plus:size=8,bounded-shifts=yes").init_args()["size"] == 8
    assert make_task("bec:tokens=5", hidden=7).init_args() == {
        "tokens": 5,
        "hidden": 7,
        "temperature": 1.0,
    }
    assert parse_task_args("bec", ["temperature=0.5"]) == {"temperature": 0.5}
    for pairs, message in [
        (["tokens=2.5"], "tokens must be int, got '2.5'"),
        (["temperature=nan"], "temperature must be a finite float"),
        (["tokenz=3"], r"no argument 'tokenz' \(its arguments: tokens, hidden, temperature\)"),
    ]:
        with pytest.raises(SpecError, match=message):
            parse_task_args("bec", pairs)
