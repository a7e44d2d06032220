"""The task hooks: a task adds figures to training rows; the engine names no task.

Training calls :meth:`~proofgames.pvg.task.PVGTask.logged_metrics` at every logged step
and :meth:`~proofgames.pvg.task.PVGTask.stress_metrics` after every stress test, and the
stress tests call :meth:`~proofgames.pvg.task.PVGTask.message_metrics` and
:meth:`~proofgames.pvg.task.PVGTask.check_exhaustive`; FindThePlus's figures (where its
prover points the plus detector, the detector's weights) come through these hooks only.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from proofgames.errors import PVGError  # noqa: E402
from proofgames.pvg import (  # noqa: E402
    FindTheNeedle,
    FindThePlus,
    StressConfig,
    TrainConfig,
    make_task,
    stress_test,
    train,
)
from proofgames.pvg.task import PVGTask  # noqa: E402

from ..test_architecture import SRC, import_graph  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")

TINY_STRESS = StressConfig(prover_steps=2, batch_size=16, eval_size=16, lbfgs_max_iter=2)
PVG = SRC / "proofgames" / "pvg"
#: The engine: the top-level modules of proofgames.pvg but the registry (which registers
#: the tasks) and the package (which exports everything).
ENGINE = sorted(p for p in PVG.glob("*.py") if p.stem not in ("__init__", "registry"))


@dataclass(eq=False)
class HookedNeedle(FindTheNeedle):
    """FindTheNeedle that records its hooks' calls and adds a figure from each."""

    calls: list[tuple[str, int, tuple[str, ...]]] = field(default_factory=list, init=False)

    def logged_metrics(self, prover, verifier, x, y):
        self.calls.append(("logged", len(x), ()))
        return {"hooked_logged": float(y.mean())}

    def stress_metrics(self, prover, verifier, x, y, attacks: Sequence[str]):
        self.calls.append(("stress", len(x), tuple(attacks)))
        return {"hooked_stress": 1.0}


def test_every_task_hook_does_nothing_by_default():
    task = make_task("bec")
    x, y = task.sample(8, torch.Generator().manual_seed(0))
    prover, verifier = task.make_prover(), task.make_verifier()
    assert task.logged_metrics(prover, verifier, x, y) == {}
    assert task.stress_metrics(prover, verifier, x, y, ("prover", "messages")) == {}
    assert PVGTask.message_metrics(task, x, prover(x, None).message) == {}
    assert task.check_exhaustive() is None


def test_training_adds_the_task_hooks_figures_to_logged_and_stress_rows():
    task = HookedNeedle(size=6)
    config = TrainConfig(steps=4, batch_size=16, eval_size=12, log_every=1, stress_every=2,
                         stress=TINY_STRESS, stress_attacks=("messages", "exhaustive"),
                         progress=False)  # fmt: skip
    rows = train(task, config).metrics
    assert [row["step"] for row in rows] == [1, 2, 3, 4]
    assert all("hooked_logged" in row for row in rows)
    assert ["hooked_stress" in row for row in rows] == [False, True, False, True]
    # on the evaluation batch, after the stress test of the configured attacks
    assert task.calls == [
        ("logged", 12, ()),
        ("logged", 12, ()),
        ("stress", 12, ("messages", "exhaustive")),
        ("logged", 12, ()),
        ("logged", 12, ()),
        ("stress", 12, ("messages", "exhaustive")),
    ]


def test_find_the_plus_logs_where_its_prover_points_through_its_hooks():
    task = FindThePlus()
    x, y = task.sample(32, torch.Generator().manual_seed(0))
    prover, verifier = task.make_prover(), task.make_verifier()
    assert set(task.logged_metrics(prover, verifier, x, y)) == {"pointing_error_px", "on_plus"}
    figures = task.stress_metrics(prover, verifier, x, y, ("messages", "exhaustive"))
    assert {"detector_centre", "detector_arms", "readout_bias"} <= set(figures)
    assert task.stress_metrics(prover, verifier, x, y, ("messages",)) == {}
    # agents of another kind (e.g. handed to train) get no FindThePlus figures
    other = make_task("bec").make_verifier()
    assert task.logged_metrics(prover, other, x, y) == {}
    assert task.stress_metrics(prover, other, x, y, ("exhaustive",)) == {}
    # glimpses the exact search cannot cover: no detector figures, no error
    literal = FindThePlus(glimpse=10, logits=2)
    v = literal.make_verifier()
    assert literal.stress_metrics(literal.make_prover(), v, x, y, ("exhaustive",)) == {}


def test_the_exhaustive_attack_asks_the_task_to_check_its_settings_first():
    class Refusing(FindTheNeedle):
        def check_exhaustive(self) -> None:
            raise PVGError("no exact search here")

    task = Refusing(size=4)
    verifier = task.make_verifier()
    with pytest.raises(PVGError, match="no exact search here"):
        stress_test(task, verifier, attacks=("exhaustive",), config=TINY_STRESS)
    assert stress_test(task, verifier, task.make_prover(), ("messages",), TINY_STRESS)


def test_the_engine_imports_no_task_research_reproduction_or_cli_module():
    graph = import_graph(SRC, "proofgames")
    engine = [f"proofgames.pvg.{p.stem}" for p in ENGINE]
    assert "proofgames.pvg.train" in engine and "proofgames.pvg._game" in engine
    outside = tuple(
        f"proofgames.pvg.{part}." for part in ("tasks", "find_the_plus", "reproduce", "cli")
    )
    reached = {
        module: sorted(m for m in graph[module] if m.startswith(outside)) for module in engine
    }
    assert reached == {module: [] for module in engine}


def test_the_engine_tests_no_concrete_class_with_isinstance():
    tasks = {"BinaryErasureChannel", "FindThePlus", "FindTheNeedle"}
    agents = {"BECProver", "BECVerifier", "PlusProver", "PlusVerifier", "NeedleVerifier"}
    found = {}
    for path in ENGINE:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "isinstance":
                names = {n.id for n in ast.walk(node.args[1]) if isinstance(n, ast.Name)}
                if names & (tasks | agents):
                    found[f"{path.name}:{node.lineno}"] = sorted(names)
    assert found == {}
    # the capability protocols are what the engine checks instead
    assert "isinstance(task, ExhaustiveMessages)" in (PVG / "stress.py").read_text()


def test_the_package_docstring_says_where_each_part_lives():
    import proofgames.pvg

    doc = proofgames.pvg.__doc__ or ""
    for part in ("tasks", "find_the_plus", "reproduce"):
        assert f"proofgames.pvg.{part}" in doc
        assert (Path(proofgames.pvg.__file__).parent / part / "__init__.py").is_file()
    assert "proofgames.cli.pvg" in doc  # the commands: with the rest of the command line
