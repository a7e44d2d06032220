"""README blocks: replaced between their markers, atomically; a README without them refused."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from proofgames.reporting import ReadmeError, WriteError, check_block, markers, replace_block


def test_the_block_between_the_markers_is_replaced_and_the_rest_kept(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text("head\n<!-- t:start -->\nold\n<!-- t:end -->\ntail\n")
    readme.chmod(0o640)
    assert replace_block(readme, "t", "| a |\n|---|\n", required=True)
    assert readme.read_text() == "head\n<!-- t:start -->\n| a |\n|---|\n<!-- t:end -->\ntail\n"
    assert stat.S_IMODE(readme.stat().st_mode) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["README.md"]


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        ("no markers at all\n", "no '<!-- t:start -->' marker"),
        ("<!-- t:start -->\n", "no '<!-- t:end -->' marker"),
        ("<!-- t:end -->\n<!-- t:start -->\n", "marker comes before"),
        (b"\xff\xfe", "not UTF-8"),
        (None, "does not exist"),
    ],
    ids=["no-markers", "no-end", "end-first", "not-utf8", "missing"],
)
def test_a_readme_without_its_markers_is_refused_and_left_alone(
    tmp_path: Path, content: str | bytes | None, needle: str
) -> None:
    readme = tmp_path / "README.md"
    if isinstance(content, str):
        readme.write_text(content)
    elif isinstance(content, bytes):
        readme.write_bytes(content)
    before = readme.read_bytes() if readme.exists() else None
    assert replace_block(readme, "t", "new\n") is False
    with pytest.raises(ReadmeError, match=needle) as info:
        replace_block(readme, "t", "new\n", required=True)
    with pytest.raises(ReadmeError, match=needle):
        check_block(readme, "t")
    assert isinstance(info.value, WriteError) and str(readme) in str(info.value)
    assert (readme.read_bytes() if readme.exists() else None) == before


def test_markers() -> None:
    assert markers("report:pvg") == ("<!-- report:pvg:start -->", "<!-- report:pvg:end -->")
