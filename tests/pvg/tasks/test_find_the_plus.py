from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from proofgames.pvg.task import ProverOutput  # noqa: E402
from proofgames.pvg.tasks.find_the_plus import (  # noqa: E402
    FindThePlus,
    PlusProver,
    PlusVerifier,
    count_accuracy,
    count_pluses,
    pixel_to_shift,
    plus_centres,
    plus_maps,
    plus_mask,
    shift_to_pixel,
)


def gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


# --- generator ---------------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 2, 7, 64, 2000])
def test_exactly_one_plus_whose_colour_is_the_label(n: int) -> None:
    x, y = FindThePlus().sample(n, gen(n))
    assert x.shape == (n, 1, 10, 10) and y.shape == (n,)
    assert x.dtype == y.dtype == torch.float32
    assert set(x.unique().tolist()) <= {0.0, 1.0}
    zeros, ones = count_pluses(x)
    assert (zeros + ones == 1).all()
    assert torch.equal(ones.float(), y)


@pytest.mark.parametrize("n", [2, 10, 2000])
def test_labels_exactly_balanced_for_even_n(n: int) -> None:
    _, y = FindThePlus().sample(n, gen(0))
    assert int(y.sum()) == n // 2


def test_labels_shuffled_and_odd_n_nearly_balanced() -> None:
    _, y = FindThePlus().sample(1001, gen(1))
    assert int(y.sum()) in (500, 501)
    assert not torch.equal(y[:500], torch.ones(500))  # not sorted


def test_plus_positions_cover_the_image() -> None:
    x, _ = FindThePlus().sample(2000, gen(2))
    zeros, ones = count_pluses(x)
    assert (zeros + ones == 1).all()
    z, o = plus_maps(x)
    centres = (z | o).sum(0)
    assert (centres > 0).all()  # every one of the 8x8 centres occurs


@pytest.mark.slow
def test_the_count_of_ones_leaks_the_label_unless_balanced() -> None:
    # 5 planted 1-pixels against 5 planted 0-pixels in uniform noise: a threshold on the
    # count is right ~68% of the time; balanced_ones draws one count for both labels
    x, y = FindThePlus().sample(4000, gen(7))
    assert 0.64 < count_accuracy(x, y) < 0.72
    task = FindThePlus(balanced_ones=True)
    x, y = task.sample(4000, gen(7))
    zeros, ones = count_pluses(x)
    assert (zeros + ones == 1).all() and torch.equal(ones.float(), y)  # still one plus
    assert count_accuracy(x, y) < 0.53
    counts = x.flatten(1).sum(1)
    assert abs(float(counts[y > 0].mean() - counts[y < 1].mean())) < 0.5
    assert abs(float(counts.std()) - 5.0) < 0.5  # the binomial(100, 1/2) spread
    again, _ = task.sample(4000, gen(7))
    assert torch.equal(again, x)


def test_count_accuracy_on_hand_made_counts() -> None:
    images = torch.zeros(4, 1, 2, 2)
    images[2, 0, 0] = images[3, 0] = 1.0  # counts 0, 0, 2, 4
    assert count_accuracy(images, torch.tensor([0.0, 0.0, 1.0, 1.0])) == 1.0
    assert count_accuracy(images, torch.tensor([0.0, 1.0, 1.0, 1.0])) == 0.75


def test_generator_deterministic_for_a_seed() -> None:
    task = FindThePlus()
    x1, y1 = task.sample(300, gen(5))
    x2, y2 = task.sample(300, gen(5))
    x3, _ = task.sample(300, gen(6))
    assert torch.equal(x1, x2) and torch.equal(y1, y2)
    assert not torch.equal(x1, x3)


def test_other_sizes() -> None:
    x, y = FindThePlus(size=6).sample(50, gen(3))
    zeros, ones = count_pluses(x)
    assert x.shape == (50, 1, 6, 6) and (zeros + ones == 1).all()
    assert torch.equal(ones.float(), y)
    with pytest.raises(ValueError):
        FindThePlus(size=2)


def test_count_pluses_on_hand_built_images() -> None:
    img = torch.full((3, 10, 10), 0.5)  # neither colour: no plus anywhere
    img[1] = 0.0  # all zeros: a zero-plus at every one of the 64 centres
    img[2] = 0.5
    img[2][plus_mask(torch.tensor([2]), torch.tensor([3]), 10)[0]] = 1.0
    img[2][plus_mask(torch.tensor([6]), torch.tensor([7]), 10)[0]] = 0.0
    zeros, ones = count_pluses(img)
    assert zeros.tolist() == [0, 64, 1] and ones.tolist() == [0, 0, 1]
    assert count_pluses(img[:, None])[0].tolist() == [0, 64, 1]


def test_plus_centres_finds_the_planted_plus_of_either_colour() -> None:
    img = torch.full((2, 10, 10), 0.5)
    img[0][plus_mask(torch.tensor([2]), torch.tensor([7]), 10)[0]] = 1.0
    img[1][plus_mask(torch.tensor([8]), torch.tensor([1]), 10)[0]] = 0.0
    assert plus_centres(img).tolist() == [[2.0, 7.0], [8.0, 1.0]]
    x, y = FindThePlus().sample(32, gen(7))
    rows, cols = plus_centres(x).long().T
    cells = x[:, 0][plus_mask(rows, cols, 10)].view(32, 5)  # the five cells of each plus
    assert torch.equal(cells, y[:, None].expand(-1, 5))


# --- verifier glimpses -------------------------------------------------------------


def shifts_for(rows: list[int], cols: list[int]) -> torch.Tensor:
    r = torch.tensor(rows, dtype=torch.float32)
    c = torch.tensor(cols, dtype=torch.float32)
    return torch.stack([pixel_to_shift(c, 10), pixel_to_shift(r, 10)], dim=-1)[None]


def test_pixel_shift_round_trip() -> None:
    p = torch.arange(10, dtype=torch.float32)
    assert torch.allclose(shift_to_pixel(pixel_to_shift(p, 10), 10), p, atol=1e-5)
    assert torch.allclose(pixel_to_shift(torch.tensor([4.5]), 10), torch.tensor([0.0]))


def test_glimpse_centred_on_bright_pixel() -> None:
    verifier = PlusVerifier()
    for r, c in [(0, 0), (3, 7), (9, 2), (5, 5)]:
        x = torch.zeros(1, 1, 10, 10)
        x[0, 0, r, c] = 1.0
        # head 0 on the pixel, head 1 one row up and two columns right of it,
        # head 2 far outside the image, head 3 on the opposite corner region
        shifts = shifts_for([r, r - 1, 40, 9 - r], [c, c + 2, 40, 9 - c])
        g = verifier.glimpses_at(x, shifts)[0]
        assert g.shape == (4, 5, 5)
        assert g[0, 2, 2] == pytest.approx(1.0) and g[0].sum() == pytest.approx(1.0)
        assert g[1, 3, 0] == pytest.approx(1.0) and g[1].sum() == pytest.approx(1.0)
        assert g[2].abs().sum() == 0.0  # zero padding outside the image
        if abs(9 - 2 * r) > 4 or abs(9 - 2 * c) > 4:
            assert g[3].sum() == pytest.approx(0.0)


def test_glimpse_at_pixel_is_the_5x5_patch() -> None:
    x, _ = FindThePlus().sample(3, gen(9))
    verifier = PlusVerifier()
    rows, cols = [2, 4, 7, 5], [2, 6, 3, 7]
    g = verifier.glimpses_at(x, shifts_for(rows, cols).expand(3, -1, -1))
    for h, (r, c) in enumerate(zip(rows, cols, strict=True)):
        assert torch.allclose(g[:, h], x[:, 0, r - 2 : r + 3, c - 2 : c + 3], atol=1e-6)


def test_message_sets_the_shift_and_centres() -> None:
    verifier = PlusVerifier()
    rows, cols = [1, 4, 8, 6], [8, 0, 3, 6]
    with torch.no_grad():
        verifier.to_shift.weight.zero_()
        verifier.to_shift.bias.copy_(shifts_for(rows, cols).flatten())
    x = torch.zeros(2, 1, 10, 10)
    x[1, 0, 8, 3] = 1.0
    with torch.no_grad():
        g, centres = verifier.glimpses(x, torch.randn(2, 32))
    assert centres.shape == (2, 4, 2)
    expected = torch.tensor([rows, cols], dtype=torch.float32).T
    assert torch.allclose(centres, expected.expand(2, -1, -1), atol=1e-5)
    assert g[0].sum() == 0.0
    assert g[1, 2, 2, 2] == pytest.approx(1.0) and g[1].sum() == pytest.approx(1.0)


# --- agents --------------------------------------------------------------------------


def test_shapes_and_interface() -> None:
    task = FindThePlus()
    assert task.name == "find-the-plus" and task.message_dim == 32
    x, y = task.sample(8, gen(0))
    prover, verifier = task.make_prover(), task.make_verifier()
    assert isinstance(prover, PlusProver) and isinstance(verifier, PlusVerifier)
    out = prover(x, y)
    assert isinstance(out, ProverOutput)
    assert out.message.shape == (8, 32) and out.aux_loss.shape == ()
    assert verifier(x, out.message).shape == (8,)
    assert prover.classify(x).shape == (8,)
    assert prover.decoder(prover.features(x)).shape == (8, 1, 10, 10)
    free = torch.randn(8, 32)
    assert task.message_from_free(free, x) is free
    # the message does not depend on the labels
    assert torch.equal(prover(x, 1 - y).message, out.message)
    assert torch.isfinite(prover(x).aux_loss)


@pytest.mark.parametrize("pool", [0, 2, 3])
def test_messages_differ_between_images(pool: int) -> None:
    torch.manual_seed(0)
    x, _ = FindThePlus().sample(16, gen(0))
    prover = FindThePlus(pool=pool).make_prover()
    message = prover(x).message
    assert message.std(dim=0).min() > 1e-4
    assert prover.features(x).shape == (16, 40 * {0: 1, 2: 25, 3: 16}[pool])


def test_instance_norm_before_a_global_pool_would_give_every_image_one_message() -> None:
    # Why PlusProver pools locally: the backbone ends with InstanceNorm (Appendix E.2), and
    # a global mean of an instance-normalized map is its affine bias, the same for all.
    torch.manual_seed(0)
    x, _ = FindThePlus().sample(16, gen(0))
    prover = FindThePlus(pool=2).make_prover()
    with torch.no_grad():
        prover.backbone[-1].bias.normal_()
        pooled = prover.backbone(x).mean(dim=(2, 3))
    assert torch.allclose(pooled, prover.backbone[-1].bias.expand(16, -1), atol=1e-5)


def test_negative_pool_rejected() -> None:
    with pytest.raises(ValueError, match="pool"):
        FindThePlus(pool=-1)
    with pytest.raises(ValueError, match="pool"):
        PlusProver(pool=-2)


def test_verifier_loss_reaches_prover_through_message() -> None:
    torch.manual_seed(0)
    task = FindThePlus()
    x, y = task.sample(32, gen(1))
    prover, verifier = task.make_prover(), task.make_verifier()
    message = prover(x, y).message
    loss = torch.nn.functional.binary_cross_entropy_with_logits(verifier(x, message), y)
    loss.backward()
    first_conv = prover.backbone[0]
    assert isinstance(first_conv, torch.nn.Conv2d)
    assert first_conv.weight.grad is not None and first_conv.weight.grad.abs().sum() > 0
    assert verifier.to_shift.weight.grad is not None
    assert verifier.to_shift.weight.grad.abs().sum() > 0
    assert prover.classifier.weight.grad is None  # aux heads untouched by the verifier


def test_aux_loss_finite_and_decreasing() -> None:
    torch.manual_seed(0)
    task = FindThePlus()
    x, y = task.sample(64, gen(2))
    prover = task.make_prover()
    opt = torch.optim.Adam(prover.parameters(), lr=3e-3)
    losses = []
    for _ in range(10):
        loss = prover(x, y).aux_loss
        assert torch.isfinite(loss)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.8 * losses[0]


def test_aux_weights_switch_terms_off() -> None:
    x, y = FindThePlus().sample(8, gen(4))
    assert float(PlusProver(cls_weight=0.0, recon_weight=0.0)(x, y).aux_loss) == 0.0
    only_cls = PlusProver(recon_weight=0.0)
    expected = torch.nn.functional.binary_cross_entropy_with_logits(only_cls.classify(x), y)
    assert torch.allclose(only_cls(x, y).aux_loss, expected)


def test_bounded_shifts_keep_every_glimpse_centre_inside_the_image() -> None:
    x, _ = FindThePlus().sample(16, torch.Generator().manual_seed(3))
    free = FindThePlus().make_verifier()
    bounded = FindThePlus(bounded_shifts=True).make_verifier()
    bounded.load_state_dict(free.state_dict())
    huge = 100.0 * torch.randn(16, 32, generator=torch.Generator().manual_seed(4))
    _, free_centres = free.glimpses(x, huge)
    _, centres = bounded.glimpses(x, huge)
    assert bool(((centres >= -0.5) & (centres <= 9.5)).all())
    assert not bool(((free_centres >= -0.5) & (free_centres <= 9.5)).all())


def test_checkpoints_keep_the_task_arguments(tmp_path) -> None:
    from proofgames.pvg import TrainConfig, load_checkpoint, save_checkpoint

    task = FindThePlus(size=8, recon_weight=0.0, bounded_shifts=True, pool=0)
    path = save_checkpoint(tmp_path, task, task.make_prover(), task.make_verifier(), TrainConfig())
    restored = load_checkpoint(path, "cpu")
    assert isinstance(restored.task, FindThePlus)
    assert restored.task.init_args() == task.init_args()
    assert restored.verifier.bounded_shifts
    assert restored.prover.pool == 0
    assert load_checkpoint(tmp_path, "cpu").task.init_args() == task.init_args()  # the folder
    with pytest.raises(FileNotFoundError, match="no PVG checkpoint"):
        load_checkpoint(tmp_path / "missing", "cpu")
