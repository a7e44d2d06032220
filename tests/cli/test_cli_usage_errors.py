"""Usage errors found by the option parser are one ``error:`` line too, with exit 2.

The console script (:func:`proofgames.cli.main`) prints what the parser refused on one
line naming the option, with where to find help -- never a boxed panel that a pipe wraps
-- for the main commands and for ``pvg``'s.
"""

from __future__ import annotations

import pytest

from proofgames.cli import main

CASES = [
    (["debate", "bisection", "--seed", "abc"], "'--seed'", "proofgames debate --help"),
    (["debate", "bisection", "--seed", "-1"], "'--seed'", "proofgames debate --help"),
    (["debate", "bisection", "--no-such-option"], "--no-such-option", "proofgames debate"),
    (["estimate", "--debates", "1.5"], "'--debates'", "proofgames estimate --help"),
    (["debate"], "Missing argument 'protocol'", "proofgames debate --help"),
    (["pvg", "train", "bec", "--no-such-option"], "--no-such-option", "proofgames pvg train"),
    (["pvg", "train", "bec", "--steps", "9" * 200 + "x"], "'--steps'", "proofgames pvg train"),
]


@pytest.mark.parametrize(("argv", "named", "hint"), CASES)
def test_parser_errors_are_one_line_naming_the_option(
    argv: list[str], named: str, hint: str, capsys: pytest.CaptureFixture[str]
) -> None:
    if argv[0] == "pvg":
        pytest.importorskip("torch")
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith("error: ") and named in lines[0] and hint in lines[0]
    assert captured.out == ""


def test_a_successful_command_exits_zero(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["strategies", "bisection"])
    assert exit_.value.code == 0
    assert "honest" in capsys.readouterr().out


RUN_ERRORS = [
    (["debate", "bisection", "--machine", "bb3", "--isolation", "process", "--prover-a",
      "exec:/nonexistent/prover"], "cannot be run"),  # a path typo, not A's move
    (["debate", "bisection", "--machine", "tm:1RB1LB_1LA1RZ", "--steps",
      "9223372036854775807"], "--max-steps"),  # no run of 2**63 steps without asking
]  # fmt: skip


@pytest.mark.parametrize(("argv", "named"), RUN_ERRORS)
def test_a_run_that_cannot_be_played_is_an_error_never_a_verdict(
    argv: list[str], named: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    captured = capsys.readouterr()
    assert exit_.value.code == 2 and captured.out == "", captured
    assert captured.err.startswith("error: ") and named in captured.err
    assert len(captured.err.strip().splitlines()) == 1


def test_an_unknown_kernel_backend_is_one_error_line_naming_the_variable(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from proofgames import _native

    monkeypatch.setenv(_native.BACKEND_ENV, "fortran")
    _native.reset()  # loaded libraries are kept per process: look again
    try:
        with pytest.raises(SystemExit) as exit_:
            main(["debate", "bisection", "--machine", "bb2"])
    finally:
        _native.reset()
    assert exit_.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines == ["error: PROOFGAMES_KERNELS must be one of auto, c, numba, got 'fortran'"]
