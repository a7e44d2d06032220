"""Shift-aware plus detectors: a head whose weights form a plus off its glimpse's centre.

Trained verifiers grow such heads (the long FindThePlus runs have heads aligned 0.90-0.97
with a plus one pixel off centre, and about 0.1 with a centred one); their provers point
those heads a pixel beside the plus. The diagnostics must find these detectors, measure
the pointing from where they look, and count the plus cells there.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from proofgames.pvg import make_task  # noqa: E402
from proofgames.pvg.find_the_plus.diagnostics import (  # noqa: E402
    attack_anatomy,
    detector_figures,
    diagnose,
    missing_cells,
    plus_alignment,
    plus_detectors,
    plus_offsets,
    pointing,
    threshold_gap,
)
from proofgames.pvg.find_the_plus.stability import PointingProver, sound_verifier  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _shifted(verifier, rows: int, cols: int):
    """Move every head's classifier weights ``(rows, cols)`` cells within its glimpse."""
    g = verifier.glimpse
    with torch.no_grad():
        w = verifier.classifier.weight.view(verifier.heads, g, g)
        w.copy_(torch.roll(w, (rows, cols), dims=(1, 2)))
    return verifier


class _PointsBeside(torch.nn.Module):
    """The exact pointer, moved ``(rows, cols)`` pixels: it points head 0 beside the plus."""

    def __init__(self, task, rows: int, cols: int) -> None:
        super().__init__()
        self.inner, self.move = PointingProver(task), (rows, cols)
        self.inner.pointer = self._pointer  # type: ignore[method-assign]
        self._exact = PointingProver(task).pointer

    def _pointer(self, x):
        return self._exact(x) + torch.tensor(self.move, dtype=torch.float32)

    def forward(self, x, labels=None):
        return self.inner(x, labels)


def test_the_plus_fits_at_nine_offsets_of_a_default_glimpse_centre_first():
    verifier = make_task("find-the-plus").make_verifier()
    offsets = plus_offsets(verifier)
    assert offsets[0] == (0, 0) and len(offsets) == len(set(offsets)) == 9
    assert {abs(d) for o in offsets for d in o} == {0, 1}


def test_an_off_centre_plus_detector_is_found_with_its_offset():
    task = make_task("find-the-plus")
    verifier = _shifted(sound_verifier(task), 0, 1)  # head 0's plus now one column right
    found = plus_detectors(verifier)
    assert found[0] == {"alignment": pytest.approx(1.0), "offset": [0, 1]}
    assert plus_alignment(verifier)[0] < 0.5  # the centred template misses it
    assert [d["alignment"] for d in found[1:]] == [0.0, 0.0, 0.0]  # idle heads: no shape
    centred = plus_detectors(sound_verifier(task))[0]
    assert centred == {"alignment": pytest.approx(1.0), "offset": [0, 0]}


def test_pointing_is_measured_from_where_the_detector_looks():
    task = make_task("find-the-plus")
    x, y = task.sample(300, torch.Generator().manual_seed(5))
    beside = _PointsBeside(task, 0, -1)  # head 0 one column left of the plus
    shifted = _shifted(sound_verifier(task), 0, 1)  # ... and its plus one column right
    assert pointing(shifted, beside, x, y)["pointing_error_px"] == pytest.approx(0.0, abs=1e-4)
    centred = pointing(sound_verifier(task), beside, x, y)["pointing_error_px"]
    assert centred == pytest.approx(1.0, abs=1e-3)  # the same aim, a centred detector
    assert pointing(shifted, beside, x, y)["on_plus"] == 1.0  # its detector is on the plus
    assert pointing(sound_verifier(task), beside, x, y)["on_plus"] == 0.0


def test_the_attack_counts_plus_cells_where_an_off_centre_detector_looks():
    task = make_task("find-the-plus")
    x, y = task.sample(400, torch.Generator().manual_seed(3))
    shifted = _shifted(sound_verifier(task, bias=-14.0), 1, 0)  # accepts 4 cells of 5
    anatomy = attack_anatomy(shifted, x, y)
    cells = anatomy["attack_plus_cells"]
    assert anatomy["attack_accepts_label0"] > 0.9
    assert cells[5] == 0 and cells[4] >= 0.9 * sum(cells)  # it finds 4-of-5 pluses


def _batches(task):
    gen = torch.Generator().manual_seed(8)
    return task.sample(300, gen), task.sample(300, gen)


def test_the_threshold_gap_of_the_hand_set_verifier_is_its_two_logit_slack():
    task = make_task("find-the-plus")
    calibrate, check = _batches(task)
    # weight 4 per plus cell, bias -18: the best 4-of-5 plus scores -2, a plus +2
    gap = threshold_gap(sound_verifier(task), PointingProver(task), calibrate, check)
    assert gap == {"sound_shift": 2.0, "shifted_exhaustive_specificity": 1.0,
                   "shifted_exhaustive_recall": 1.0, "shifted_recall": 1.0}  # fmt: skip
    lax = threshold_gap(sound_verifier(task, bias=-14.0), PointingProver(task), calibrate, check)
    assert lax["sound_shift"] == -2.0 and lax["shifted_recall"] == 1.0  # a bias away


def test_no_threshold_makes_a_pixel_counter_sound_and_complete():
    task = make_task("find-the-plus")
    counter = task.make_verifier()
    with torch.no_grad():
        counter.classifier.weight.view(4, 25)[0] = 0.5  # counts the 1-pixels head 0 sees
    gap = threshold_gap(counter, PointingProver(task), *_batches(task))
    assert gap["shifted_exhaustive_specificity"] > 0.95  # sound there, by construction ...
    assert gap["shifted_recall"] < 0.5  # ... and so rejecting most pluses


def test_the_threshold_gap_needs_both_labels_and_diagnose_reports_it():
    task = make_task("find-the-plus")
    (x, y), check = _batches(task)
    with pytest.raises(ValueError, match="label-0"):
        threshold_gap(sound_verifier(task), PointingProver(task), (x[y > 0.5], y[y > 0.5]), check)
    report = diagnose(task, PointingProver(task), sound_verifier(task), n=200, seed=3)
    assert report["threshold"]["sound_shift"] == 2.0


def test_missing_cells_counts_which_plus_cell_the_placements_lack():
    task = make_task("find-the-plus")
    x, y = task.sample(300, torch.Generator().manual_seed(6))
    negatives = int((y < 0.5).sum())
    sound = missing_cells(sound_verifier(task), PointingProver(task), x, y)
    assert sound["cells"] == ["centre", "up", "down", "left", "right"]
    assert sound["prover"] == [0] * 5  # it shows the plus of 0-pixels: no cell of five
    assert sound["prover_accepted"] == [0] * 5  # and the sound verifier accepts none
    assert sum(sound["attack"]) >= 0.98 * negatives  # the search finds a 4-of-5 plus
    weak = sound_verifier(task)
    with torch.no_grad():  # the centre cell weighs 1 instead of 4: leaving it out pays
        weak.classifier.weight.view(4, 5, 5)[0, 2, 2] = 1.0
    attack = missing_cells(weak, PointingProver(task), x, y)["attack"]
    assert attack[0] > 0.5 * sum(attack)  # most of the attack's pluses lack the centre
    with pytest.raises(ValueError, match="label-0"):
        missing_cells(weak, PointingProver(task), x[y > 0.5], y[y > 0.5])


@pytest.mark.parametrize("size", [3, 4, 5])
def test_small_images_still_have_the_centred_placement(size):
    verifier = make_task("find-the-plus", size=size).make_verifier()
    offsets = plus_offsets(verifier)
    assert offsets[0] == (0, 0)
    assert len(plus_detectors(verifier)) == verifier.heads


def test_detector_figures_read_the_detector_where_its_plus_sits():
    task = make_task("find-the-plus")
    x, y = task.sample(300, torch.Generator().manual_seed(6))
    weak = _shifted(sound_verifier(task), 0, 1)  # the plus one column right of centre
    with torch.no_grad():
        weak.classifier.weight.view(4, 5, 5)[0, 2, 3] = 1.0  # its centre cell weighs 1
    figures = detector_figures(weak, PointingProver(task), x, y)
    assert figures["detector_centre"] == 1.0 and figures["detector_arms"] == 4.0
    assert figures["readout_bias"] == -18.0
    assert "prover_centre_missing" not in figures  # it shows 0-pluses: none 4 of 5
    assert figures["attack_centre_missing"] > 0.5  # the attack leaves the cheap cell out
