"""Every Python block of the README and guides, and every example, prints its recorded output.

A block is run as a script, from the repository root, in a fresh interpreter (as a
reader who pastes it into a file would run it); each line it prints must match the
patterns recorded here for it, which agree with the comments beside its prints (a figure
that changes fails here, and its comment is then updated with it). A block that cannot
run alone (it needs a judge server or a cluster of your own) is marked in the Markdown
with ``<!-- docs-test: fragment (why) -->`` on the line before it; it is only compiled
(top-level ``await`` allowed).
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BLOCK = re.compile(
    r"(?:<!-- docs-test: fragment \((?P<why>[^)]+)\) -->\n)?```python\n(?P<code>.*?)```", re.S
)

#: Each runnable block's expected output, one full-line pattern per printed line.
EXPECTED: dict[str, list[str]] = {
    "README.md-0": [r"B None 28", r"0\.1622 \{'A': 0, 'B': 0\}"],
    "README.md-1": [
        r"B A's configurations at times \d+ and \d+ are not one step apart",
        r"28 configurations",
        r"A [1-5]",
    ],
    "README.md-2": [r"1\.0 0\.0"],
    "README.md-3": [
        r"0\.16485 0\.1625\d* 0\.1671\d* 0\.3858\d*",  # the comment: 0.165 [0.163, 0.167]
        r"0\.3526\d*",
        r"0\.3934\d*",
        r"None",
    ],
    "extending.md-0": [
        r"\{'A': \('final',\), 'B': \('review',\)\}",
        r"in-process B V reached another configuration",
        r"process B V reached another configuration",
    ],
    "extending.md-1": [r"A always-first", r"B honest"],
    "extending.md-2": [r"two-state 6 A"],
    "extending.md-3": [r"200 1\.0 1\.0"],
    "extending.md-4": [r"True"],
    "distributed.md-0": [r"honest 676064 0\.675\d* 0\.676\d*", r"abort-at 1000000 0\.9999\d* 1\.0"],
    "pvg.md-0": [r"\{'prover': \(1\.0, 1\.0\), 'messages': \(1\.0, 1\.0\)\}"],
    "wire.md-0": [r"A program:standalone_bisection_prover\.py"],
    "selfplay.md-0": [
        r"TuringInstance\(program='0RA0LB_1RZ1LB', space=2, origin=0, steps=4\) truth 0",
        r"0 1\.0 1\.0",
        r"1 -1\.0 0\.0",
    ],
    "selfplay.md-1": [
        r"honest player 0\.2",
        r"player honest 0\.22427",
        r"player player 0\.2",
        r"0\.2 0\.224475",
    ],
    "selfplay.md-2": [
        r"\[0, 640, 1280\] 1\.0 0\.0",
        *(
            rf"{k} (0(\.\d+)?|1\.0)"
            for k in ("truthful_share", "acceptance", "exploit_a", "exploit_b")
        ),
    ],
}
MARKS = {
    "distributed.md-0": [pytest.mark.dask, pytest.mark.slow],
    "pvg.md-0": [pytest.mark.slow],
    "extending.md-3": [pytest.mark.slow],
    "wire.md-0": [pytest.mark.slow],
    "README.md-1": [pytest.mark.slow],
    "extending.md-0": [pytest.mark.slow],
    "README.md-0": [pytest.mark.slow],
    "selfplay.md-0": [pytest.mark.slow],
    "selfplay.md-1": [pytest.mark.slow],
    "selfplay.md-2": [pytest.mark.slow],
}


def _blocks() -> list[tuple[str, str, str | None]]:
    """``(id, code, why it is a fragment or None)`` of every Python block, in order."""
    found = []
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for i, match in enumerate(BLOCK.finditer(path.read_text())):
            found.append((f"{path.name}-{i}", match["code"], match["why"]))
    return found


BLOCKS = _blocks()
RUNNABLE = [
    pytest.param(code, EXPECTED.get(name), id=name, marks=MARKS.get(name, []))
    for name, code, why in BLOCKS
    if why is None
]


def test_every_runnable_block_has_its_expected_output_recorded():
    runnable = {name for name, _, why in BLOCKS if why is None}
    assert runnable == set(EXPECTED), (
        f"blocks without expectations: {sorted(runnable - set(EXPECTED))}; "
        f"expectations without a block: {sorted(set(EXPECTED) - runnable)}"
    )


@pytest.mark.parametrize(
    "code", [pytest.param(code, id=name) for name, code, why in BLOCKS if why is not None]
)
def test_a_fragment_is_valid_python(code):
    compile(code, "<fragment>", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)


@pytest.mark.parametrize(("code", "expected"), RUNNABLE)
def test_a_block_runs_and_prints_its_recorded_output(code, expected, tmp_path):
    script = tmp_path / "block.py"
    script.write_text(code)
    done = subprocess.run(
        [sys.executable, str(script)], cwd=ROOT, capture_output=True, text=True, timeout=900
    )
    assert done.returncode == 0, done.stderr[-3000:]
    printed = done.stdout.splitlines()
    assert expected is not None
    assert len(printed) == len(expected), printed
    for line, pattern in zip(printed, expected, strict=True):
        assert re.fullmatch(pattern, line), (pattern, line)


EXAMPLES = {
    "custom_strategy.py": [
        r"bisection on bb4 \(107 steps\), A lies at 30% of the run; 200 debates each",
        r"p=1\.0: B wins 200/200 \(exact chance 1\.000-1\.000 for 7-7 disputes\), "
        r"simulating 103\.0 steps a debate",
        r"p=0\.9: B wins 133/200 \(exact chance 0\.698-0\.735 for 6-7 disputes\), .*",
        r"p=0\.5: B wins 28/200 \(exact chance 0\.133-0\.178 for 6-7 disputes\), .*",
        r"p=0\.0: B wins 1/200 \(exact chance 0\.008-0\.016 for 6-7 disputes\), "
        r"simulating 0\.0 steps a debate",
    ],
}


def test_every_example_script_has_its_expected_output_recorded():
    scripts = {p.name for p in (ROOT / "examples").glob("*.py")}
    standalone = {  # wire programs: tests/cli/test_cli.py and tests/isolation/test_steps.py
        "standalone_bisection_prover.py",  # play them
        "standalone_step_prover.py",
    }
    assert scripts - standalone == set(EXAMPLES)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_an_example_runs_and_prints_its_recorded_output(name):
    done = subprocess.run(
        [sys.executable, f"examples/{name}"], cwd=ROOT, capture_output=True, text=True,
        timeout=900,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    printed = done.stdout.splitlines()
    assert len(printed) == len(EXAMPLES[name]), printed
    for line, pattern in zip(printed, EXAMPLES[name], strict=True):
        assert re.fullmatch(pattern, line), (pattern, line)
