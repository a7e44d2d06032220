"""Exhaustive message search on FindThePlus: the verifier's exact worst case."""

from __future__ import annotations

from dataclasses import replace

import pytest

torch = pytest.importorskip("torch")

from proofgames.pvg import (  # noqa: E402
    FindThePlus,
    PlusVerifier,
    StressConfig,
    TrainConfig,
    make_task,
    search_messages,
    stress_test,
    train,
)
from proofgames.pvg.tasks.find_the_plus import PLUS_OFFSETS  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _random_verifier(seed: int, **kwargs) -> PlusVerifier:
    torch.manual_seed(seed)
    verifier = PlusVerifier(**kwargs)
    with torch.no_grad():  # larger weights than the init, so that places matter
        verifier.classifier.weight.normal_()
    return verifier.eval()


def _plus_detector(threshold: float) -> PlusVerifier:
    """Head 0 counts the 1-pixels of a centred plus; it accepts above ``threshold``."""
    torch.manual_seed(0)
    verifier = PlusVerifier()
    with torch.no_grad():
        weight = torch.zeros(verifier.heads, verifier.glimpse, verifier.glimpse)
        for dr, dc in PLUS_OFFSETS:
            weight[0, 2 + dr, 2 + dc] = 1.0
        verifier.classifier.weight.copy_(weight.view(1, -1))
        verifier.classifier.bias.fill_(-threshold)
    return verifier.eval()


@pytest.mark.parametrize(
    "settings",
    [{}, {"bounded_shifts": True}, {"glimpse": 10, "logits": 2}],
    ids=["free", "bounded", "literal-stn"],
)
def test_the_exhaustive_messages_reach_the_bound_and_no_shift_beats_it(settings):
    # literal-stn: 10x10 samples of a 5x5 region (half a pixel apart), two class logits.
    bounded = settings.get("bounded_shifts", False)
    task = FindThePlus(**settings)
    x, _ = task.sample(64, torch.Generator().manual_seed(1))
    verifier = _random_verifier(2, **settings)
    found = search_messages(verifier, x)
    assert found.reachable
    weight, bias = verifier.readout()
    with torch.no_grad():
        assert torch.allclose(verifier(x, found.messages), found.bound, atol=1e-4)
        gen = torch.Generator().manual_seed(3)
        for _ in range(20):  # continuous shifts, inside the image and far outside it
            shifts = torch.rand(64, verifier.heads, 2, generator=gen) * 4 - 2
            if bounded:
                shifts = torch.tanh(shifts)
            looks = verifier.glimpses_at(x, shifts).flatten(1)
            assert bool((looks @ weight + bias <= found.bound + 1e-5).all())


def test_two_class_logits_score_their_difference_and_the_task_builds_them():
    verifier = FindThePlus(glimpse=10, logits=2).make_verifier()
    assert verifier.classifier.out_features == 2 and verifier.glimpse == 10
    x, message = torch.rand(3, 1, 10, 10), torch.randn(3, 32)
    with torch.no_grad():
        out = verifier.classifier(verifier.glimpses_at(x, verifier.shifts(message)).flatten(1))
        assert torch.allclose(verifier(x, message), out[:, 1] - out[:, 0])
    with pytest.raises(ValueError, match="logits must be 1 or 2"):
        FindThePlus(logits=3)


def test_lbfgs_never_finds_a_more_convincing_message_than_the_exhaustive_search():
    task = FindThePlus()
    verifier = _random_verifier(4)
    config = StressConfig(eval_size=200, lbfgs_max_iter=50, random_starts=2)
    results = stress_test(task, verifier, None, ("messages", "exhaustive"), config)
    lbfgs, exact = results["messages"], results["exhaustive"]
    assert exact.tp >= lbfgs.tp and exact.fp >= lbfgs.fp
    assert exact.strongest_logits[0] >= lbfgs.strongest_logits[0] - 1e-5


def test_a_hand_built_plus_detector_is_certified_sound_and_complete():
    # Task images hold exactly one plus, so label-0 images hold no plus of 1-pixels: a
    # head that demands all five plus cells can never be fooled, whatever the message.
    task = FindThePlus()
    strict = stress_test(task, _plus_detector(4.5), None, ("exhaustive",))["exhaustive"]
    assert (strict.fp, strict.fn) == (0, 0) and strict.tp == 1000
    # Four cells of five: random backgrounds almost always hold such a patch somewhere.
    lax = stress_test(task, _plus_detector(3.5), None, ("exhaustive",))["exhaustive"]
    assert lax.fn == 0 and lax.specificity < 0.05


def test_the_exhaustive_search_refuses_what_it_cannot_search():
    with pytest.raises(ValueError, match="whole number of pixels"):
        search_messages(PlusVerifier(glimpse=4), torch.zeros(1, 1, 10, 10))
    with pytest.raises(ValueError, match="exhaustive attack"):
        stress_test(make_task("bec"), make_task("bec").make_verifier(), None, ("exhaustive",))
    with pytest.raises(ValueError, match="unknown attack"):
        stress_test(FindThePlus(), PlusVerifier(), None, ("guess",))


def test_verifier_first_play_trains_the_verifier_on_the_exact_best_response(exact_searches):
    task = make_task("find-the-plus", size=6, glimpse=3)
    calls = exact_searches
    config = TrainConfig(formulation="verifier-first", steps=3, batch_size=16, eval_size=16,
                         verifier_steps=2, prover_steps=1, progress=False, seed=5)  # fmt: skip
    first = train(task, config)
    assert calls == [16] * 6  # two verifier steps per game step, each on a fresh batch
    calls.clear()
    trained = train(task, replace(config, best_response="trained"))
    assert calls == [] and trained.metrics != first.metrics
    with pytest.raises(ValueError, match="no exact prover best response"):
        train(make_task("bec"), replace(config, best_response="closed-form"))


def test_verifier_first_play_against_the_exact_prover_is_seed_deterministic():
    task = make_task("find-the-plus", size=6, glimpse=3)
    config = TrainConfig(formulation="verifier-first", steps=4, batch_size=16, eval_size=16,
                         stress_every=2, stress_attacks=("exhaustive",), progress=False,
                         stress=StressConfig(eval_size=32), seed=7)  # fmt: skip
    a, b = train(task, config), train(task, config)
    drop = "seconds"
    assert [{k: v for k, v in m.items() if k != drop} for m in a.metrics] == [
        {k: v for k, v in m.items() if k != drop} for m in b.metrics
    ]
    assert "exhaustive_accuracy" in a.metrics[-1]


def test_against_the_exact_prover_the_verifier_can_train_alone():
    task = make_task("find-the-plus", size=6, glimpse=3)
    config = TrainConfig(formulation="verifier-first", steps=3, batch_size=16, eval_size=16,
                         prover_steps=0, adaptive_threshold=-1.0, adaptive_window=1,
                         progress=False, seed=2)  # fmt: skip
    torch.manual_seed(config.seed)  # the run's weight init
    untouched = task.make_prover().state_dict()
    result = train(task, config)
    after = result.prover.state_dict()
    assert all(torch.equal(untouched[k], after[k]) for k in untouched)
    assert result.metrics[-1]["verifier_loss"] > 0
    assert result.metrics[-1]["prover_steps"] == 0  # the adaptive rule stays off
    with pytest.raises(ValueError, match="prover_steps=0 needs the exact prover"):
        train(make_task("bec"), config)
    with pytest.raises(ValueError, match="prover_steps may be 0 only"):
        TrainConfig(formulation="simultaneous", prover_steps=0).validate()
