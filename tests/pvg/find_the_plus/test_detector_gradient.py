"""Which way the verifier's loss moves its plus detector, against each adversary.

The reading it measures: a verifier trained on its own prover's messages is pushed down
only on the cells its prover's label-0 placements show as 1-pixels, while the exact
attack's placements push down the cells of the best 4-of-5 plus each image offers.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

import torch.nn.functional as F  # noqa: E402

from proofgames.errors import PVGError  # noqa: E402
from proofgames.pvg import FindThePlus, make_task  # noqa: E402
from proofgames.pvg.find_the_plus.detectors import PLUS_CELLS, detector_gradient  # noqa: E402
from proofgames.pvg.find_the_plus.stability import PointingProver, sound_verifier  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def test_the_descent_direction_is_the_loss_gradient_on_the_detectors_cells():
    task = make_task("find-the-plus")
    torch.manual_seed(3)
    verifier, prover = task.make_verifier(), task.make_prover()
    with torch.no_grad():  # a detector on head 2, so that the cells are known
        verifier.classifier.weight.view(task.heads, 5, 5)[2] += 3 * _plus()
    x, y = task.sample(64, torch.Generator().manual_seed(5))
    s = 0.05
    got = detector_gradient(verifier, prover, x, y, label_smoothing=s)
    logits = verifier(x, prover(x, None).message.detach())
    loss = F.binary_cross_entropy_with_logits(logits, y * (1 - s) + s / 2)
    weight, bias = torch.autograd.grad(loss, [verifier.classifier.weight, verifier.classifier.bias])
    cells = -weight.view(task.heads, 5, 5)[2]
    expected = [cells[2 + dr, 2 + dc] for dr, dc in ((0, 0), (-1, 0), (1, 0), (0, -1), (0, 1))]
    total = [a + b for a, b in zip(got["prover"]["label 0"], got["prover"]["label 1"], strict=True)]
    assert got["cells"] == list(PLUS_CELLS)
    assert total == pytest.approx([float(v) for v in expected], abs=1e-5)
    assert got["prover"]["bias"] == pytest.approx(-float(bias[0]), abs=1e-5)


def _plus():
    mask = torch.zeros(5, 5)
    for dr, dc in ((0, 0), (-1, 0), (1, 0), (0, -1), (0, 1)):
        mask[2 + dr, 2 + dc] = 1.0
    return mask


def test_against_its_exact_pointer_the_sound_detector_is_pushed_only_by_label_1_images():
    task = FindThePlus()
    verifier, prover = sound_verifier(task), PointingProver(task, 0.0)
    x, y = task.sample(200, torch.Generator().manual_seed(2))
    got = detector_gradient(verifier, prover, x, y, label_smoothing=0.05)
    # The pointer shows label-0 images their plus of 0-pixels: nothing to push down.
    assert got["prover"]["label 0"] == [0.0] * 5
    raised = got["prover"]["label 1"]  # every label-1 plus shows all five cells as 1
    assert min(raised) > 0 and max(raised) == pytest.approx(min(raised))
    # The exact attack shows it the best 4-of-5 plus of each label-0 image instead.
    lowered = got["exact"]["label 0"]
    assert max(lowered) <= 0 and min(lowered) < 0
    assert got["exact"]["label 1"] == pytest.approx(raised)  # the plus is the best there


def test_detector_gradient_refuses_glimpses_it_cannot_read_cell_by_cell():
    task = FindThePlus(glimpse=10, logits=2)
    x, y = task.sample(8, torch.Generator().manual_seed(0))
    with pytest.raises(PVGError, match="one logit and odd glimpses a pixel apart"):
        detector_gradient(task.make_verifier(), task.make_prover(), x, y)
