"""DIMACS files that cannot be read, or are too large to search, are refused by name."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest

from proofgames.errors import MachineFormatError, ProofgamesError
from proofgames.machines import sat as sat_module
from proofgames.machines.sat import CNF, SatProblem, resolve_sat


def random_3cnf(variables: int, ratio: float = 4.26, seed: int = 5) -> str:
    rng = np.random.default_rng(seed)
    lines = [f"p cnf {variables} {int(ratio * variables)}"]
    for _ in range(int(ratio * variables)):
        vs, signs = rng.choice(variables, 3, replace=False), rng.integers(0, 2, 3)
        lits = [int(v + 1) if s else -int(v + 1) for v, s in zip(vs, signs, strict=True)]
        lines.append(" ".join(map(str, lits)) + " 0")
    return "\n".join(lines) + "\n"


def test_non_utf8_dimacs_file_is_refused_naming_file_byte_and_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.cnf"
    path.write_bytes(b"c comment\np cnf 2 1\n1 \xff 0\n")
    with pytest.raises(MachineFormatError) as info:
        resolve_sat(f"sat:{path}")
    assert str(info.value) == f"{path}: not a UTF-8 DIMACS file: byte 22 (line 3) is 0xff"


def test_latin1_comment_is_refused_too(tmp_path: Path) -> None:
    path = tmp_path / "latin1.cnf"
    path.write_bytes("c café\np cnf 1 1\n1 0\n".encode("latin-1"))
    with pytest.raises(MachineFormatError, match="not a UTF-8 DIMACS file"):
        resolve_sat(f"sat:{path}")


def test_a_2000_variable_cnf_is_refused_at_once_with_an_estimate(tmp_path: Path) -> None:
    path = tmp_path / "big.cnf"
    path.write_text(random_3cnf(2000))
    start = time.perf_counter()
    with pytest.raises(ProofgamesError) as info:
        resolve_sat(f"sat:{path}").solve()
    assert time.perf_counter() - start < 5
    message = str(info.value)
    assert str(path) in message and "2000 variables, 8520 clauses" in message
    assert "1.03e+09 literal visits" in message and "max_work = 5e+08" in message


def test_a_header_declaring_a_huge_formula_is_refused_before_its_clauses(tmp_path: Path) -> None:
    path = tmp_path / "huge.cnf"
    path.write_text("p cnf 100000 1000000\n1 2 0\n")  # the clause count is wrong, too
    with pytest.raises(MachineFormatError, match=r"line 1: the header declares 100000 var"):
        resolve_sat(f"sat:{path}")


def test_max_work_raises_the_limit(tmp_path: Path) -> None:
    path = tmp_path / "mid.cnf"
    path.write_text(random_3cnf(60, ratio=3.0))
    with pytest.raises(MachineFormatError, match="max_work = 1e\\+05"):
        resolve_sat(f"sat:{path}", max_work=100_000)
    problem = resolve_sat(f"sat:{path}", max_work=10**8)
    assert problem.max_work == 10**8 and problem.solve() is not None
    assert problem.work_estimate() == (20 * 60 + 200) * 180 * 3


def test_examples_take_max_work_too() -> None:
    with pytest.raises(MachineFormatError, match="sat-planted-40"):
        resolve_sat("sat-planted-40", max_work=1000)
    assert resolve_sat("sat-planted-40").max_work == sat_module.MAX_SAT_WORK


def test_dpll_gives_up_with_an_error_not_a_wrong_answer() -> None:
    # PHP(6,5) is unsatisfiable and hard for DPLL; WalkSAT never finds an assignment.
    pigeons, holes = 6, 5
    var = {(i, j): i * holes + j + 1 for i in range(pigeons) for j in range(holes)}
    clauses = [tuple(var[i, j] for j in range(holes)) for i in range(pigeons)]
    clauses += [(-var[i, j], -var[k, j]) for j in range(holes)
                for i in range(pigeons) for k in range(i + 1, pigeons)]  # fmt: skip
    cnf = CNF(pigeons * holes, tuple(clauses))
    small = SatProblem(cnf, "php-6-5", max_work=SatProblem(cnf).work_estimate() + 1000)
    with pytest.raises(MachineFormatError, match="DPLL could not decide"):
        small.solve()
    assert SatProblem(cnf, "php-6-5").solve() is None


@pytest.mark.parametrize("max_work", [0, -1, True, 2.5])
def test_max_work_must_be_a_positive_integer(max_work: object) -> None:
    with pytest.raises(MachineFormatError, match="max_work must be a positive integer"):
        SatProblem(CNF(1, ((1,),)), max_work=max_work)  # type: ignore[arg-type]
