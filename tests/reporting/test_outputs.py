"""The output-path rule itself (the commands' use of it: tests/cli/test_outputs.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from proofgames.reporting.outputs import (
    MANIFEST,
    OutputError,
    check_output_file,
    claim_folder,
    finish_folder,
    owner,
    writing_folder,
)


def test_a_new_folder_is_claimed_and_its_finished_output_needs_overwrite(tmp_path: Path):
    folder = tmp_path / "out"
    with writing_folder(folder, "proofgames report"):
        (folder / "report.md").write_text("x")
    assert owner(folder) == "proofgames report"
    with pytest.raises(OutputError, match="give --overwrite"):
        claim_folder(folder, "proofgames report")
    claim_folder(folder, "proofgames report", overwrite=True)


def test_an_unfinished_output_of_the_same_command_continues_without_overwrite(tmp_path):
    folder = claim_folder(tmp_path / "out", "proofgames report")
    (folder / "chunks").mkdir()  # an interrupted run's store
    assert claim_folder(folder, "proofgames report") == folder


def test_another_commands_folder_is_never_claimed(tmp_path):
    folder = tmp_path / "out"
    with writing_folder(folder, "proofgames report"):
        (folder / "report.md").write_text("x")
    for overwrite in (False, True):
        with pytest.raises(OutputError, match="holds the output of 'proofgames report'"):
            claim_folder(folder, "proofgames params report", overwrite=overwrite)


def test_a_folder_holding_only_what_the_commands_own_rules_govern_is_its_own(tmp_path):
    folder = tmp_path / "out"
    (folder / "runs").mkdir(parents=True)
    claim_folder(folder, "proofgames pvg reproduce", own=("runs",))
    (folder / "notes.txt").write_text("mine")
    (folder / MANIFEST).unlink()
    with pytest.raises(OutputError, match="no proofgames command wrote"):
        claim_folder(folder, "proofgames pvg reproduce", own=("runs",), overwrite=True)


def test_without_mark_nothing_is_written_until_the_output_is_finished(tmp_path):
    folder = tmp_path / "out"
    claim_folder(folder, "proofgames pvg reproduce", mark=False)
    assert not folder.exists()
    finish_folder(folder, "proofgames pvg reproduce")
    assert owner(folder) == "proofgames pvg reproduce"


def test_inputs_are_never_outputs(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    with pytest.raises(OutputError, match="is an input"):
        claim_folder(data, "proofgames language report", inputs=[data])
    with pytest.raises(OutputError, match="is an input"):
        claim_folder(data / "sub", "proofgames language report", inputs=[data])
    with pytest.raises(OutputError, match="is an input"):
        check_output_file(data / "x.json", inputs=[data])
    source = data / "solutions.jsonl"
    source.write_text("{}\n")
    with pytest.raises(OutputError, match="is an input"):
        check_output_file(source, inputs=[source], overwrite=True)


def test_a_file_in_a_run_or_report_folder_is_refused(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "state.pt").write_bytes(b"")
    with pytest.raises(OutputError, match="training run's folder"):
        check_output_file(run / "curves.png")
    report = claim_folder(tmp_path / "report", "proofgames report")
    with pytest.raises(OutputError, match="output folder of 'proofgames report'"):
        check_output_file(report / "curves.png")
    with pytest.raises(OutputError, match="is a folder"):
        check_output_file(run)


def test_an_unreadable_manifest_names_no_owner(tmp_path):
    folder = tmp_path / "out"
    folder.mkdir()
    (folder / MANIFEST).write_text("not json")
    assert owner(folder) is None
    (folder / MANIFEST).write_text('["a list"]')
    assert owner(folder) is None
