"""The command line starts without the heavy optional libraries.

``proofgames --help`` and every command import ``proofgames.cli``. Loading SciPy's
statistics (about 0.4 s), PyTorch, Inspect AI or matplotlib's pyplot there would slow
every call, so each is imported where a command first needs it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from proofgames.machines import _engine

HEAVY = ("scipy.stats", "torch", "inspect_ai", "matplotlib.pyplot", "dask.distributed")
LIBRARY_HEAVY = (
    "torch", "scipy.stats", "matplotlib", "fastapi", "inspect_ai", "sqlalchemy", "pyspiel",
    "pettingzoo", "numba",
)  # fmt: skip


def test_importing_the_library_loads_none_of_its_heavy_dependencies() -> None:
    """``import proofgames`` (issue 41): no PyTorch, SciPy statistics, matplotlib, web
    framework, Inspect AI, database layer, self-play library or compiler."""
    code = (
        "import json, sys\n"
        "import proofgames\n"
        f"print(json.dumps([m for m in {LIBRARY_HEAVY!r} if m in sys.modules]))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == []


def test_importing_the_cli_loads_no_heavy_library() -> None:
    code = (
        "import json, sys\n"
        "import proofgames.cli\n"
        f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == []


def test_an_estimate_still_gets_its_interval_from_scipy() -> None:
    from proofgames.experiments.montecarlo import clopper_pearson_interval, wilson_interval

    lo, hi = clopper_pearson_interval(0, 10)
    assert lo == 0.0 and abs(hi - (1 - 0.025 ** (1 / 10))) < 1e-12  # closed form at 0 successes
    wlo, whi = wilson_interval(5, 10)
    assert 0.0 < wlo < 0.5 < whi < 1.0 and abs((wlo + whi) / 2 - 0.5) < 1e-12


def test_an_estimate_on_a_majority_machine_runs_without_scipy_stats() -> None:
    """Issue 41: ``estimate`` built the machine's K and its interval with scipy.stats
    (0.4-1 s to import for one binomial); the votes' tail is exact rational arithmetic
    up to 64 votes, and the interval uses scipy.special."""
    code = (
        "import json, sys\n"
        "from proofgames.cli import app\n"
        "sys.argv = ['proofgames', 'estimate', '--machine', 'majority:n=5', '--debates', '200']\n"
        "try:\n    app()\nexcept SystemExit:\n    pass\n"
        "print(json.dumps('scipy.stats' in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout.strip().splitlines()[-1]) is False


def _numba_imported_by(argv: list[str], backend: str) -> bool:
    code = (
        "import json, sys\n"
        "from proofgames.cli import app\n"
        f"sys.argv = ['proofgames', *{argv!r}]\n"
        "try:\n    app()\nexcept SystemExit:\n    pass\n"
        "print(json.dumps('numba' in sys.modules))\n"
    )
    env = {**os.environ, "PROOFGAMES_KERNELS": backend}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    return bool(json.loads(out.stdout.strip().splitlines()[-1]))


ESTIMATE = ["estimate", "--machine", "majority:n=5,p=0.7", "--debates", "200"]
DEBATE = ["debate", "bisection", "--machine", "bb4"]


@pytest.mark.slow
@pytest.mark.skipif(_engine._library() is None, reason="no C kernels here: numba is the engine")
def test_a_debate_and_an_estimate_run_on_the_c_kernels_without_importing_numba() -> None:
    """Issue 41: importing numba and loading its cached kernels took about half a second
    of every bisection debate and of ``estimate``'s every-step K."""
    assert not _numba_imported_by(DEBATE, "auto")
    assert not _numba_imported_by(ESTIMATE, "auto")


@pytest.mark.slow
def test_with_numba_asked_for_the_same_commands_load_it() -> None:
    assert _numba_imported_by(DEBATE, "numba")
    assert _numba_imported_by(ESTIMATE, "numba")


#: What a debate of built-in parts does not need at start-up (issue 41): typer 0.29's
#: option coercion (pydantic), the plugin entry-point scan (importlib.metadata), the event
#: loop (asyncio, for async parties only), the stochastic parameter search and SAT solver;
#: the other protocols, their strategies and the lockstep machinery (loaded by name, see
#: proofgames._builtins); the other commands' modules (the CLI's lazy group).
DEBATE_UNUSED = (
    "pydantic", "importlib.metadata", "asyncio", "proofgames.stochastic.optimize",
    "proofgames.stochastic.tight", "concurrent.futures", *HEAVY,
    "proofgames.protocols.cross_examination", "proofgames.protocols.stochastic",
    "proofgames.protocols.stochastic_witness", "proofgames.protocols.witness",
    "proofgames.protocols._lockstep", "proofgames.protocols._batch",
    "proofgames.strategies.cross_examination", "proofgames.strategies.stochastic",
    "proofgames.strategies.stochastic_witness", "proofgames.strategies.witness",
    "proofgames.cli.catalog", "proofgames.cli.demo", "proofgames.cli.stochastic",
    "proofgames.cli.params", "proofgames.cli.language", "proofgames.cli.judge",
    "proofgames.cli.selfplay",
)  # fmt: skip


def test_a_bisection_debate_from_the_command_line_loads_only_what_it_uses() -> None:
    code = (
        "import json, sys\n"
        "from proofgames.cli import main\n"
        "try:\n    main(['debate', 'bisection', '--machine', 'bb2', '--claim', '1'])\n"
        "except SystemExit as exc:\n    assert exc.code == 0, exc.code\n"
        f"print(json.dumps([m for m in {DEBATE_UNUSED!r} if m in sys.modules]))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PROOFGAMES_PLUGINS"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []
