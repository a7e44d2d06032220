"""Where the first verifier step goes from the hand-set sound FindThePlus protocol."""

from __future__ import annotations

import json
import math

import pytest

torch = pytest.importorskip("torch")

from typer.testing import CliRunner  # noqa: E402

from proofgames.cli.pvg import app  # noqa: E402
from proofgames.errors import PVGError  # noqa: E402
from proofgames.pvg import FindThePlus  # noqa: E402
from proofgames.pvg.find_the_plus.start_gradient import start_gradient  # noqa: E402

TASK = FindThePlus()


def test_at_the_sound_start_training_grows_every_idle_head_weight():
    g = start_gradient(TASK, 0.0, size=512)
    assert g["label0_logit"] == pytest.approx(-18.0)  # the prover shows the 0-plus: bias alone
    assert g["label1_logit"] == pytest.approx(2.0)  # a full plus: 5 * 4 - 18
    assert g["idle_heads_max"] < 0 and g["bias"] < 0 and g["plus_cells_max"] < 0


def test_only_the_exact_best_response_pushes_grown_idle_heads_back():
    own = start_gradient(TASK, 0.0, size=512, idle_weight=0.03)
    exact = start_gradient(TASK, 0.0, size=512, idle_weight=0.03, negatives="exhaustive")
    assert own["idle_heads_max"] < 0  # the prover's own label-0 messages: still growing
    assert exact["idle_heads_min"] > 0  # the most convincing messages: pushed back
    assert exact["label0_logit"] > own["label0_logit"] + 10


def test_the_bias_gradient_is_the_mean_gap_to_the_smoothed_target():
    # Every label-0 logit is the bias, every label-1 logit 2 (exact pointer): so
    # dL/db = mean(sigmoid(z) - t) has a closed form, with t = 0.025 or 0.975.
    g = start_gradient(TASK, 0.0, size=512, label_smoothing=0.05)
    sig = 1 / (1 + math.exp(-2.0))
    expected = 0.5 * ((1 / (1 + math.exp(18.0)) - 0.025) + (sig - 0.975))
    assert g["bias"] == pytest.approx(expected, abs=1e-6)


@pytest.mark.parametrize(
    ("kwargs", "named"),
    [({"negatives": "random"}, "negatives"), ({"size": 1}, "size"),
     ({"idle_weight": math.nan}, "idle_weight"), ({"idle_weight": 1e39}, "idle_weight"),
     ({"error_px": 1e39}, "pointing error"), ({"seed": -1}, "seed"),
     ({"label_smoothing": 1.0}, "label_smoothing")],
)  # fmt: skip
def test_bad_arguments_are_refused_by_name(kwargs, named):
    with pytest.raises(PVGError, match=named):
        start_gradient(TASK, **kwargs)


def test_pvg_start_gradient_prints_each_row_and_refuses_a_bad_error():
    runner = CliRunner()
    args = ["start-gradient", "--size", "256", "--error", "0", "--idle-weight", "0", "--json"]
    ran = runner.invoke(app, args)
    assert ran.exit_code == 0, ran.output
    rows = json.loads(ran.output)["rows"]
    assert [r["negatives"] for r in rows] == ["prover", "exhaustive"]
    bad = runner.invoke(app, ["start-gradient", "--size", "256", "--error", "-1"])
    assert bad.exit_code == 2 and "pointing error" in bad.output
