from __future__ import annotations

import importlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from proofgames import interrupts
from proofgames.machines import TuringMachine

# Every module in tests/plugins/ registers what a user outside proofgames would (a toy
# protocol and its strategies): the registry-driven suites pick each one up.
PLUGINS = [
    importlib.import_module(f"tests.plugins.{path.stem}")
    for path in sorted((Path(__file__).parent / "plugins").glob("*.py"))
    if path.stem != "__init__"
]


@pytest.fixture(autouse=True)
def _interrupt_guard_left_whole() -> Iterator[None]:
    """Every test leaves no interrupt guard held (a leaked one disarms all later ones).

    A guard left counted makes every later guard install no handler, so a later test's
    SIGTERM kills the whole run (the CI run of stop 43 died so): name the leaking test.
    """
    yield
    assert interrupts._depth == 0, f"an interrupt guard was left held ({interrupts._depth})"


# (text, steps): halting and non-halting runs, 2 and 3 symbols, 1 step to ~10^3 steps
SMALL_RUNS = [
    ("1RB1LB_1LA1RZ", 6),  # bb2 halts at exactly T
    ("1RB1LB_1LA1RZ", 5),  # one step short: does not halt
    ("1RB1LB_1LA1RZ", 1),
    ("1RB1LB_1LA1RZ", 2),
    ("1RB1RZ_1LB0RC_1LC1LA", 21),
    ("1RB1LB_1LA0LC_1RZ1LD_1RD0RA", 107),
    ("1RB1LB_1LA0LC_1RZ1LD_1RD0RA", 200),  # halted long before T
    ("1RB2LB1RZ_2LA2RB1LB", 38),
    ("1RB0LB_1LA0RA", 33),  # never halts
    ("1RB1LC_1RC1RB_1RD0LE_1LA1LD_1RZ0LA", 1000),
]


@pytest.fixture(params=SMALL_RUNS, ids=lambda r: f"{r[0]}@{r[1]}")
def small_run(request: pytest.FixtureRequest) -> tuple[TuringMachine, int]:
    text, steps = request.param
    return TuringMachine.sized(text, steps), steps


@pytest.fixture(scope="module")
def one_torch_thread():
    """Tiny networks: one thread is as fast, and immune to oversubscribed CPUs."""
    torch = pytest.importorskip("torch")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty working folder (the current directory) with an empty folder around it."""
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    return work


@pytest.fixture
def exact_searches(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The batch sizes of FindThePlus's exact best responses asked for, in order."""
    pytest.importorskip("torch")
    from proofgames.pvg import FindThePlus

    calls: list[int] = []
    original = FindThePlus.best_messages

    def counted(self, verifier, x):
        calls.append(len(x))
        return original(self, verifier, x)

    monkeypatch.setattr(FindThePlus, "best_messages", counted)
    return calls
