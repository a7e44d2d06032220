"""Atomic writes: the old file or the new one, never a mix; synced to the disk; no leftovers."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from proofgames.errors import ProofgamesError
from proofgames.reporting import WriteError, save_figure, save_with, write_atomic


def _names(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def test_text_and_bytes_replace_the_old_file_whole(tmp_path: Path) -> None:
    path = tmp_path / "report.md"
    write_atomic(path, "first\n")
    write_atomic(path, "café\n")
    assert path.read_bytes() == "café\n".encode()
    write_atomic(path, b"\x00\x01")
    assert path.read_bytes() == b"\x00\x01" and _names(tmp_path) == ["report.md"]


@pytest.mark.parametrize(
    ("error", "raised"),
    [(OSError(28, "No space left on device"), WriteError), (RuntimeError("broke"), RuntimeError)],
    ids=["oserror", "other"],
)
def test_a_failing_save_leaves_the_old_file_and_no_temporary_file(
    tmp_path: Path, error: BaseException, raised: type[BaseException]
) -> None:
    path = tmp_path / "agents.pt"
    path.write_bytes(b"old checkpoint")
    seen: list[Path] = []

    def torn(tmp: Path) -> None:
        seen.append(tmp)
        tmp.write_bytes(b"half a checkp")  # the disk filled up half-way
        raise error

    with pytest.raises(raised) as info:
        save_with(path, torn)
    assert path.read_bytes() == b"old checkpoint"
    assert _names(tmp_path) == ["agents.pt"] and not seen[0].exists()
    assert seen[0].parent == tmp_path and seen[0].suffix == ".pt"  # beside it, same suffix
    if raised is WriteError:
        assert isinstance(info.value, ProofgamesError)
        assert str(info.value) == f"cannot write {path}: No space left on device"


def test_the_file_and_its_folder_are_synced_before_and_after_the_rename(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    events: list[str] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd: int) -> None:
        kind = "folder" if stat.S_ISDIR(os.fstat(fd).st_mode) else "file"
        events.append(f"fsync {kind}")
        real_fsync(fd)

    def replace(src: str | Path, dst: str | Path) -> None:
        events.append("replace")
        real_replace(src, dst)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    write_atomic(tmp_path / "a.json", "{}\n")
    save_with(tmp_path / "b.pt", lambda tmp: tmp.write_bytes(b"x"))
    assert events == ["fsync file", "replace", "fsync folder"] * 2


def test_permissions_of_an_old_file_are_kept_and_a_new_one_gets_the_umask(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.write_text("")  # what open() gives under this umask
    new = write_atomic(tmp_path / "new.md", "x")
    assert stat.S_IMODE(new.stat().st_mode) == stat.S_IMODE(plain.stat().st_mode)
    old = tmp_path / "old.md"
    old.write_text("x")
    old.chmod(0o640)
    write_atomic(old, "y")
    assert stat.S_IMODE(old.stat().st_mode) == 0o640


def test_a_symbolic_link_stays_a_link_to_the_new_content(tmp_path: Path) -> None:
    target = tmp_path / "real.md"
    target.write_text("old")
    link = tmp_path / "link.md"
    link.symlink_to(target)
    write_atomic(link, "new")
    assert link.is_symlink() and target.read_text() == "new"


def test_a_missing_folder_is_an_error_unless_parents_are_asked_for(tmp_path: Path) -> None:
    with pytest.raises(WriteError, match=r"cannot write .*nowhere/x\.md"):
        write_atomic(tmp_path / "nowhere" / "x.md", "text")
    assert not (tmp_path / "nowhere").exists()
    assert write_atomic(tmp_path / "made" / "x.md", "text", parents=True).read_text() == "text"
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(WriteError, match="cannot write"):
        write_atomic(blocker / "x.md", "text", parents=True)


def test_figures_are_saved_atomically_in_the_format_of_their_suffix(tmp_path: Path) -> None:
    import io

    from matplotlib.figure import Figure

    fig = Figure(figsize=(1, 1))
    fig.subplots().plot([0, 1])
    save_figure(fig, tmp_path / "f.png", dpi=20)
    save_figure(fig, tmp_path / "f.svg", dpi=20)
    assert (tmp_path / "f.png").read_bytes()[:4] == b"\x89PNG"
    assert b"<svg" in (tmp_path / "f.svg").read_bytes()
    stream = io.BytesIO()
    save_figure(fig, stream, dpi=20)
    assert stream.getvalue()[:4] == b"\x89PNG"
    with pytest.raises(WriteError):
        save_figure(fig, tmp_path / "nowhere" / "f.png")
    assert _names(tmp_path) == ["f.png", "f.svg"]
