"""CNF-SAT as a witness problem: DIMACS parsing, the checker machine M(x, w), the solvers."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proofgames import MachineFormatError, RegistryError
from proofgames.machines.examples import example_names, get_example
from proofgames.machines.sat import (
    CNF,
    SatProblem,
    WitnessError,
    parse_dimacs,
    planted_3sat,
    resolve_sat,
)


def brute_force_satisfiable(cnf: CNF) -> bool:
    return any(holds(cnf, w) for w in itertools.product((0, 1), repeat=cnf.num_vars))


def holds(cnf: CNF, w: tuple[int, ...] | bytes) -> bool:
    return all(any((w[abs(lit) - 1] == 1) == (lit > 0) for lit in c) for c in cnf.clauses)


@st.composite
def formulas(draw: st.DrawFn) -> CNF:
    n = draw(st.integers(1, 6))
    literal = st.integers(1, n).flatmap(lambda v: st.sampled_from([v, -v]))
    clauses = draw(st.lists(st.lists(literal, min_size=0, max_size=4), min_size=0, max_size=8))
    return CNF(n, tuple(tuple(c) for c in clauses))


# ------------------------------------------------------------------------------ parsing
def test_dimacs_with_comments_multiline_clauses_and_satlib_end_marker_parses():
    text = "c comment\np cnf 4 3\n1 -2\n 3 0\nc inner comment\n-4 0 2 0\n%\n0\n"
    cnf = parse_dimacs(text)
    assert cnf.num_vars == 4
    assert cnf.clauses == ((1, -2, 3), (-4,), (2,))


def test_dimacs_round_trips_through_to_dimacs():
    cnf = planted_3sat(10, 30, seed=1)
    assert parse_dimacs(cnf.to_dimacs()) == cnf


def test_an_empty_clause_parses_as_an_unsatisfiable_clause():
    problem = SatProblem.from_dimacs("p cnf 1 2\n1 0\n0\n")
    assert problem.cnf.clauses == ((1,), ())
    assert problem.solve() is None
    assert problem.machine(b"\x01").run()[-1] == 0


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "missing 'p cnf"),
        ("c only a comment\n", "missing 'p cnf"),
        ("1 2 0\np cnf 2 1\n", "line 1: clause data before the 'p cnf"),
        ("p cnf 2 1\np cnf 2 1\n1 0\n", "line 2: a second 'p cnf' header .*line 1"),
        ("p cnf 2\n1 0\n", "line 1: malformed header"),
        ("p dnf 2 1\n1 0\n", "malformed header"),
        ("p cnf -2 1\n1 0\n", "malformed header"),
        ("p cnf 2 1\n1 3 0\n", "line 2: literal 3 is out of range.*2 variables"),
        ("p cnf 2 1\n-5 0\n", "literal -5 is out of range"),
        ("p cnf 2 2\n1 0\n", "declares 2 clauses but the formula has 1"),
        ("p cnf 2 1\n1 0\n2 0\n", "declares 1 clauses but the formula has 2"),
        ("p cnf 2 1\n1 x 0\n", "line 2: token 'x' is not an integer"),
        ("p cnf 2 1\n1.5 0\n", "token '1.5' is not an integer"),
        ("p cnf 2 1\n1 2\n", "starting on line 2 .*not terminated by 0"),
        ("p cnf 2 2\n1 0\n2\n", "not terminated by 0"),
    ],
)
def test_malformed_dimacs_raises_an_error_naming_the_problem(text: str, message: str):
    with pytest.raises(MachineFormatError, match=message):
        parse_dimacs(text)


def test_a_cnf_built_directly_rejects_literals_out_of_range():
    with pytest.raises(MachineFormatError, match="literal 4"):
        CNF(3, ((1, 4),))


# ------------------------------------------------------------------ the checker machine
@settings(max_examples=150, deadline=None)
@given(formulas(), st.data())
def test_checker_output_equals_direct_evaluation(cnf: CNF, data: st.DataObject):
    problem = SatProblem(cnf)
    w = bytes(data.draw(st.lists(st.integers(0, 1), min_size=cnf.num_vars, max_size=cnf.num_vars)))
    machine = problem.machine(w)
    assert machine.length == problem.steps
    assert machine.run()[-1] == int(holds(cnf, w)) == int(cnf.evaluate(list(w)))


def test_checker_output_equals_direct_evaluation_on_the_planted_formula():
    problem = get_example("sat-planted-40").build()
    rng = np.random.default_rng(7)
    assignments = rng.integers(0, 2, size=(20, problem.witness_length))
    assignments[0] = list(problem.solve())
    for w in assignments:
        y = problem.machine(bytes(w.astype(np.uint8))).run()
        assert y[-1] == int(holds(problem.cnf, tuple(w)))
    assert problem.machine(bytes(assignments[0].astype(np.uint8))).run()[-1] == 1


@settings(max_examples=60, deadline=None)
@given(formulas())
def test_every_relevant_set_is_small_and_points_backwards(cnf: CNF):
    machine = SatProblem(cnf).machine(bytes(cnf.num_vars))
    machine.validate()
    for t in range(machine.length):
        assert len(machine.relevant(t)) <= 2
        assert all(0 <= i < t for i in machine.relevant(t))
        assert len(machine.input_positions(t)) <= 1
        assert not machine.is_query(t)


def test_the_transcript_has_one_entry_per_literal_plus_one_per_extra_clause():
    problem = get_example("sat-planted-40").build()
    cnf = problem.cnf
    machine = problem.machine(bytes(cnf.num_vars))
    assert machine.length == cnf.num_literals + len(cnf.clauses) - 1 == 679
    assert SatProblem(CNF(2, ())).machine(b"\x00\x00").run().tolist() == [1]


def test_the_witness_bits_are_the_machines_inputs():
    problem = SatProblem.from_dimacs("p cnf 3 1\n1 -3 0\n")
    assert problem.machine(bytes([1, 0, 1])).inputs == bytes([1, 0, 1])


# -------------------------------------------------------------------- witness validation
@pytest.mark.parametrize(
    ("witness", "message"),
    [
        (bytes(4), "witness has 4 symbols; .* 5 variables, so it needs exactly 5"),
        (bytes(6), "witness has 6 symbols"),
        (bytes([0, 1, 2, 0, 0]), "witness symbol 2 \\(variable 3\\) is 2; symbols must be bits"),
        (b"01010", "is 48; .*ASCII digits"),
        ("01010", "a witness must be bytes .* got str"),
        (None, "got NoneType"),
        ([0, 1, -1, 0, 0], "witness symbols must be bits"),
    ],
)
def test_malformed_witnesses_are_rejected_with_a_clear_error(witness: object, message: str):
    problem = get_example("sat-small").build()
    with pytest.raises(WitnessError, match=message):
        problem.validate_witness(witness)
    with pytest.raises(WitnessError):
        problem.machine(witness)


def test_a_witness_may_be_given_as_a_list_or_array_of_bits():
    problem = get_example("sat-small").build()
    assert problem.validate_witness([0, 1, 1, 0, 1]) == bytes([0, 1, 1, 0, 1])
    assert problem.validate_witness(np.array([1, 1, 1, 1, 0])) == bytes([1, 1, 1, 1, 0])


# ------------------------------------------------------------------------------ solvers
@settings(max_examples=150, deadline=None)
@given(formulas())
def test_dpll_finds_a_witness_exactly_when_one_exists(cnf: CNF):
    found = SatProblem(cnf).solve()
    assert (found is not None) == brute_force_satisfiable(cnf)
    if found is not None:
        assert len(found) == cnf.num_vars
        assert holds(cnf, found)


@pytest.mark.parametrize("name", ["sat-small", "sat-php-3-2", "sat-planted-40"])
def test_registered_sat_examples_match_their_facts(name: str):
    example = get_example(name)
    facts = dict(example.facts)
    problem = example.build()
    assert example.kind == "sat"
    assert (problem.solve() is not None) == facts["satisfiable"]
    assert problem.witness_length == facts["variables"]
    assert len(problem.cnf.clauses) == facts["clauses"]
    assert example.steps == problem.steps
    assert name in example_names("sat")


def test_local_search_is_reproducible_and_comes_as_close_as_possible_on_the_pigeonhole():
    problem = get_example("sat-php-3-2").build()
    a = problem.best_effort(np.random.default_rng(5))
    assert a == problem.best_effort(np.random.default_rng(5))
    assert len(a) == 6 and set(a) <= {0, 1}
    assert problem.cnf.satisfied(list(a)).sum() == 8  # all 9 clauses cannot hold


def test_local_search_solves_the_planted_formula():
    problem = get_example("sat-planted-40").build()
    assert problem.cnf.evaluate(list(problem.best_effort(np.random.default_rng(0))))


def test_planted_formulas_are_satisfiable_and_determined_by_their_seed():
    assert planted_3sat(12, 50, seed=3) == planted_3sat(12, 50, seed=3)
    assert planted_3sat(12, 50, seed=3) != planted_3sat(12, 50, seed=4)
    assert SatProblem(planted_3sat(12, 50, seed=3)).solve() is not None


# ------------------------------------------------------------------------ resolve_sat
def test_resolve_sat_reads_dimacs_files_and_example_names(tmp_path):
    path = tmp_path / "mine.cnf"
    path.write_text("p cnf 2 1\n1 -2 0\n")
    problem = resolve_sat(f"sat:{path}")
    assert problem.name == "mine" and problem.cnf.clauses == ((1, -2),)
    assert resolve_sat("sat-small").name == "sat-small"


def test_resolve_sat_errors_name_the_file_or_the_example(tmp_path):
    with pytest.raises(MachineFormatError, match="cannot read DIMACS file"):
        resolve_sat(f"sat:{tmp_path / 'absent.cnf'}")
    bad = tmp_path / "bad.cnf"
    bad.write_text("p cnf 1 1\n2 0\n")
    with pytest.raises(MachineFormatError, match=r"bad\.cnf: line 2: literal 2"):
        resolve_sat(f"sat:{bad}")
    with pytest.raises(RegistryError, match="is a tm example, not a SAT example"):
        resolve_sat("bb2")
    with pytest.raises(RegistryError, match="unknown example"):
        resolve_sat("no-such-formula")


@pytest.mark.parametrize("name", example_names(kind="sat"))
def test_a_sat_examples_recorded_size_steps_and_satisfiability_are_what_building_it_gives(name):
    """The registry records these without building the problem (start-up); they must agree."""
    example = get_example(name)
    problem = example.build()
    facts = dict(example.facts)
    assert example.steps == problem.steps
    assert facts["variables"] == problem.cnf.num_vars
    assert facts["clauses"] == len(problem.cnf.clauses)
    assert facts["satisfiable"] == (problem.solve() is not None)
