from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from proofgames.pvg.tasks.bec import ERASURE_START, BinaryErasureChannel  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture
def task() -> BinaryErasureChannel:
    return BinaryErasureChannel()


def channel_ok(x, message) -> bool:
    """No token 1 for x = 0, no token 0 for x = 1."""
    return bool((message[x == 0, 1] == 0).all() and (message[x == 1, 0] == 0).all())


def test_sample_is_seeded_balanced_and_labels_are_the_bits(task):
    x, y = task.sample(4000, torch.Generator().manual_seed(3))
    x2, _ = task.sample(4000, torch.Generator().manual_seed(3))
    assert torch.equal(x, x2) and torch.equal(x, y)
    assert set(x.unique().tolist()) == {0.0, 1.0}
    assert abs(float(y.mean()) - 0.5) < 0.03


@pytest.mark.parametrize("training", [True, False])
def test_every_sent_message_is_one_hot_and_respects_the_channel(task, training):
    torch.manual_seed(0)
    prover = task.make_prover().train(training)
    with torch.no_grad():
        # push the raw logits hard towards the forbidden tokens: the mask must still hold
        prover.net[-1].bias[:2] += 50.0
    x, y = task.sample(5000, torch.Generator().manual_seed(1))
    message = prover(x, y).message
    assert message.shape == (5000, 16)
    assert torch.equal(message.sum(dim=1), torch.ones(5000))
    assert set(message.unique().tolist()) <= {0.0, 1.0}
    assert channel_ok(x, message)


def test_free_messages_are_distributions_over_the_allowed_tokens(task):
    x, _ = task.sample(500, torch.Generator().manual_seed(2))
    free = 10 * torch.randn(500, 16, generator=torch.Generator().manual_seed(4))
    message = task.message_from_free(free, x)
    assert torch.allclose(message.sum(dim=1), torch.ones(500))
    assert (message >= 0).all() and channel_ok(x, message)


def test_gradients_flow_through_the_straight_through_estimator(task):
    torch.manual_seed(0)
    prover, verifier = task.make_prover().train(), task.make_verifier()
    x, y = task.sample(256, torch.Generator().manual_seed(5))
    out = prover(x, y)
    verifier(x, out.message).sum().backward()
    for name, param in prover.named_parameters():
        assert param.grad is not None, name
        assert torch.isfinite(param.grad).all(), name
    assert float(prover.net[-1].weight.grad.abs().sum()) > 0  # reaches the token logits
    assert float(prover.net[0].weight.grad.abs().sum()) > 0  # and the first layer


def test_evaluation_mode_sends_the_most_likely_token(task):
    torch.manual_seed(0)
    prover = task.make_prover().eval()
    x = torch.tensor([0.0, 1.0])
    sent = prover(x, x).message.argmax(dim=1)
    assert torch.equal(sent, prover.token_probs(x).argmax(dim=1))


def test_closed_form_best_response_matches_appendix_c(task):
    torch.manual_seed(0)
    prover = task.make_prover()
    s = 0.05
    lam = s / (2 * (1 - s))  # the equivalent entropy-regularization coefficient
    q = task.best_response(prover, s)
    probs = prover.token_probs(torch.tensor([0.0, 1.0])).detach()
    assert q[1].item() == pytest.approx((1 + lam) / (1 + 2 * lam))  # only x = 1 sends 1
    assert q[0].item() == pytest.approx(lam / (1 + 2 * lam))  # only x = 0 sends 0
    posterior = probs[1, 2:] / (probs[0, 2:] + probs[1, 2:])
    assert torch.allclose(q[2:].detach(), (1 - s) * posterior + s / 2)


def test_closed_form_prover_loss_is_differentiable_through_the_response(task):
    torch.manual_seed(0)
    prover = task.make_prover()
    loss = task.best_response_prover_loss(prover, 0.05)
    loss.backward()
    assert torch.isfinite(loss) and float(prover.net[-1].weight.grad.abs().sum()) > 0
    assert torch.isfinite(task.best_response_prover_loss(prover, 0.0))  # no log(0) at s = 0


def test_message_metrics_measure_erasures_and_information(task):
    x = torch.tensor([0.0, 0.0, 1.0, 1.0])
    honest = torch.nn.functional.one_hot(torch.tensor([2, 2, 1, 1]), 16).float()
    collapsed = torch.nn.functional.one_hot(torch.tensor([3, 4, 3, 4]), 16).float()
    h, c = task.message_metrics(x, honest), task.message_metrics(x, collapsed)
    assert h["erasure_fraction"] == 0.5 and h["information_bits"] == pytest.approx(1.0)
    assert c["erasure_fraction"] == 1.0 and c["information_bits"] == pytest.approx(0.0, abs=1e-6)
    assert ERASURE_START == 2


def test_needs_an_erasure_token():
    with pytest.raises(ValueError):
        BinaryErasureChannel(tokens=2)
