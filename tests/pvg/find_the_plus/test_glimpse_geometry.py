"""Head diagnostics follow the glimpse's sampling geometry, also for 10x10 glimpses.

The literal spatial-transformer reading (``glimpse=10``) samples a 5-pixel region half a
pixel apart; the diagnostics once assumed samples a pixel apart, which made a head
centred 3.5 pixels left of the image "not blind" and scored plus shapes against a
one-sample-wide cross.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from proofgames.pvg.find_the_plus.diagnostics import blind_heads, plus_alignment, plus_template  # noqa: E402
from proofgames.pvg.registry import make_task  # noqa: E402
from proofgames.pvg.tasks.find_the_plus import plus_mask  # noqa: E402
from proofgames.pvg.tasks.plus_verifier import pixel_to_shift  # noqa: E402


@pytest.mark.parametrize(("glimpse", "spacing", "half"), [(5, 1.0, 2.0), (10, 0.5, 2.25)])
def test_the_verifier_states_its_sample_spacing_and_extent(glimpse, spacing, half):
    verifier = make_task("find-the-plus", glimpse=glimpse).make_verifier()
    assert verifier.spacing == spacing and verifier.half_extent == half
    centre = torch.tensor([[[4.0, 4.0]]]).double()
    grid_x = torch.zeros(1, 1, 10, 10).double()
    grid_x[0, 0, :, :] = torch.arange(10).double()  # each pixel holds its column
    look = verifier.glimpses_at(grid_x, pixel_to_shift(centre, 10))[0, 0]
    columns = look[glimpse // 2]  # a middle row: the sampled columns
    assert columns[0].item() == pytest.approx(4 - half)
    assert columns[-1].item() == pytest.approx(4 + half)


@pytest.mark.parametrize("glimpse", [5, 10])
def test_a_head_is_blind_exactly_when_its_glimpse_of_an_all_ones_image_is_zero(glimpse):
    task = make_task("find-the-plus", glimpse=glimpse)
    prover, verifier = task.make_prover(), task.make_verifier()
    generator = torch.Generator().manual_seed(glimpse)
    for _ in range(6):
        shifts = (torch.rand(8, generator=generator) - 0.5) * 3.2  # centres -13..12 px
        with torch.no_grad():
            verifier.to_shift.weight.zero_()
            verifier.to_shift.bias.copy_(shifts)  # every head at a fixed place
        blind = blind_heads(task, prover, verifier, n=32)["label 1"]
        ones = torch.ones(1, 1, 10, 10)
        looks = verifier.glimpses_at(ones, shifts.view(1, 4, 2)).detach()
        sees_nothing = [float(looks[0, h].abs().max() == 0) for h in range(4)]
        assert blind == sees_nothing, (shifts.tolist(), blind, sees_nothing)


def test_a_head_left_of_the_image_is_blind_with_half_pixel_samples():
    task = make_task("find-the-plus", glimpse=10)
    prover, verifier = task.make_prover(), task.make_verifier()
    with torch.no_grad():
        verifier.to_shift.weight.zero_()
        verifier.to_shift.bias.zero_()
        verifier.to_shift.bias[0] = pixel_to_shift(torch.tensor(-3.5), 10)  # outermost: -1.25
        verifier.to_shift.bias[2] = pixel_to_shift(torch.tensor(-2.5), 10)  # outermost: -0.25
    blind = blind_heads(task, prover, verifier, n=32)["label 0"]
    assert blind == [1.0, 0.0, 0.0, 0.0]


@pytest.mark.parametrize("glimpse", [5, 10])
def test_the_plus_template_is_what_a_head_on_a_plus_sees_anywhere(glimpse):
    verifier = make_task("find-the-plus", glimpse=glimpse).make_verifier()
    template = plus_template(verifier)
    for row, col in [(3, 6), (7, 2)]:
        image = plus_mask(torch.tensor([row]), torch.tensor([col]), 10).float()[:, None]
        centre = torch.tensor([[[float(col), float(row)]]])
        look = verifier.glimpses_at(image, pixel_to_shift(centre, 10))[0, 0].detach()
        assert torch.allclose(look, template, atol=1e-5)


def test_plus_alignment_scores_a_resampled_plus_detector_1_at_half_pixel_samples():
    verifier = make_task("find-the-plus", glimpse=10, logits=2).make_verifier()
    seen = plus_template(verifier).view(100)
    centre = torch.tensor([5])
    thin = plus_mask(centre, centre, 10).float().view(100)  # five samples: the old template
    with torch.no_grad():  # two logits, read as class 1 minus class 0
        verifier.classifier.weight.zero_()
        verifier.classifier.weight[1].view(4, 100)[0] = 2.0 * seen - 0.3
        verifier.classifier.weight[1].view(4, 100)[1] = 0.5  # counts: shape-blind
        verifier.classifier.weight[1].view(4, 100)[2] = thin
    score = plus_alignment(verifier)
    assert score[0] == pytest.approx(1.0) and score[1] == 0.0
    assert score[2] < 0.8  # a one-sample cross is not what a head sees of a plus


@pytest.mark.parametrize("args", [{"glimpse": 10}, {"logits": 2}])
def test_the_hand_set_sound_verifier_refuses_a_geometry_it_is_not_defined_for(args):
    from proofgames.errors import PVGError
    from proofgames.pvg.find_the_plus.stability import sound_verifier

    with pytest.raises(PVGError, match="one pixel apart and one logit"):
        sound_verifier(make_task("find-the-plus", **args))


def test_attack_anatomy_shows_which_heads_pay_the_bias():
    from proofgames.pvg.find_the_plus.diagnostics import attack_anatomy
    from proofgames.pvg.find_the_plus.stability import sound_verifier

    task = make_task("find-the-plus")
    x, y = task.sample(400, torch.Generator().manual_seed(3))
    sound = sound_verifier(task)  # head 0: weight 4 on the plus cells, bias -18
    anatomy = attack_anatomy(sound, x, y)
    assert anatomy["readout_bias"] == -18.0 and anatomy["attack_accepts_label0"] == 0.0
    assert anatomy["attack_terms"][1:] == [0.0, 0.0, 0.0]  # heads without weights add 0
    cells = anatomy["attack_plus_cells"]  # label-0 images: at best 4 of the 5 cells
    assert cells[5] == 0 and cells[4] >= 0.99 * sum(cells)
    assert anatomy["attack_terms"][0] == pytest.approx(16.0 * cells[4] / sum(cells), abs=0.05)

    with torch.no_grad():  # the same detector, but a count on head 1 pays 2 of the bias
        sound.classifier.weight.view(4, 25)[1] = 0.2  # 0.2 per 1-pixel it sees
    leaky = attack_anatomy(sound, x, y)
    assert leaky["attack_terms"][1] >= 2.0
    # 16 from a partial plus, and over 2 from any 5x5 window with more than ten 1-pixels
    assert leaky["attack_accepts_label0"] >= 0.95
