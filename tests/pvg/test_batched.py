"""Batched seeds (``proofgames.pvg.batched``): the separate runs' game, and resumable."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from typer.testing import CliRunner  # noqa: E402

from proofgames.cli.pvg import app  # noqa: E402
from proofgames.errors import PVGError  # noqa: E402
from proofgames.pvg import StressConfig, TrainConfig, make_task, train  # noqa: E402
from proofgames.pvg._game import Game  # noqa: E402
from proofgames.pvg.batched import BatchedPlay, seed_folder, train_seeds  # noqa: E402
from proofgames.pvg.train import TrainResult  # noqa: E402

pytestmark = [
    pytest.mark.usefixtures("one_torch_thread"),
    pytest.mark.filterwarnings("ignore:There is a performance drop"),
]

TINY_STRESS = StressConfig(prover_steps=3, batch_size=32, eval_size=32, lbfgs_max_iter=3)
SEEDS = [0, 1, 2]
# Small images; pretraining, adaptive prover steps that part the seeds (a seed with
# more prover steps plays them while the others sit out), model-selection stress tests.
CONFIG = TrainConfig(
    formulation="simultaneous", update="alternating", steps=24, batch_size=16, eval_size=32,
    log_every=3, pretrain_steps=2, verifier_steps=1, prover_steps=1,
    adaptive_threshold=0.5, adaptive_window=2, max_prover_steps=4, stress_every=12,
    stress=TINY_STRESS, stress_attacks=("messages",), keep_best="messages", progress=False,
)  # fmt: skip


def _task():  # type: ignore[no-untyped-def]
    return make_task("find-the-plus", size=6)


def _rows(result: TrainResult) -> list[dict[str, object]]:
    return [{k: v for k, v in row.items() if k != "seconds"} for row in result.metrics]


def _same_weights(a: TrainResult, b: TrainResult) -> bool:
    pairs = ((a.prover, b.prover), (a.verifier, b.verifier))
    return all(
        torch.equal(x, y)
        for one, other in pairs
        for x, y in zip(one.state_dict().values(), other.state_dict().values(), strict=True)
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    ("update", "precision"),
    [("alternating", "fp32"), ("simultaneous", "fp32"), ("alternating", "bf16")],
)
def test_seed_by_seed_batched_play_is_the_separate_runs_bit_for_bit(update, precision):
    # vectorize=False runs every part of the batched trainer (stacked players, masks,
    # per-seed Adam, data, logs, stress tests, kept agents, bf16 autocast) but the vmap
    # kernels.
    config = replace(CONFIG, update=update, precision=precision)
    separate = [train(_task(), replace(config, seed=seed)) for seed in SEEDS]
    batched = train_seeds(_task(), config, SEEDS, vectorize=False)
    schedules = {tuple(row["prover_steps"] for row in r.metrics) for r in separate}
    assert len(schedules) > 1, "the seeds' prover step counts should part"
    for alone, together in zip(separate, batched, strict=True):
        assert _rows(together) == _rows(alone)
        assert _same_weights(together, alone)
        assert (together.best_step, together.best_accuracy) == (
            alone.best_step,
            alone.best_accuracy,
        )


@pytest.mark.slow
def test_the_vectorized_update_has_the_separate_gradients_up_to_rounding():
    # vmap turns each seed's convolutions and products into grouped and batched kernels,
    # which sum in another order: the losses agree to float32 rounding and every
    # gradient to 2e-5 of its largest entry (measured: at most 3e-6 at batch 64).
    task, config = make_task("find-the-plus"), TrainConfig(batch_size=64, progress=False)
    games = []
    for seed in SEEDS:
        torch.manual_seed(seed)
        games.append(Game(task, config, torch.device("cpu"), torch.Generator().manual_seed(seed)))
    batches = [game.batch() for game in games]
    x, y = torch.stack([b[0] for b in batches]), torch.stack([b[1] for b in batches])
    vectorized, by_seed = BatchedPlay(games, config), BatchedPlay(games, config, vectorize=False)
    for players in [(True, False), (False, True), (True, True)]:
        fast, slow = vectorized.gradients(x, y, *players), by_seed.gradients(x, y, *players)
        for key, value in slow[0].items():
            torch.testing.assert_close(fast[0][key], value, rtol=1e-6, atol=0)
        for fast_grads, slow_grads in zip(fast[1:], slow[1:], strict=True):
            assert fast_grads.keys() == slow_grads.keys()
            for name, grad in slow_grads.items():
                assert grad is not None and fast_grads[name] is not None
                for b in range(len(SEEDS)):
                    scale = float(grad[b].abs().max())
                    gap = float((fast_grads[name][b] - grad[b]).abs().max())
                    assert gap <= 2e-5 * scale, (name, b, gap, scale)


def test_a_vectorized_first_step_logs_the_separate_figures_up_to_rounding():
    config = replace(CONFIG, steps=1, pretrain_steps=0, stress_every=0, keep_best=None)
    separate = [train(_task(), replace(config, seed=seed)) for seed in SEEDS]
    batched = train_seeds(_task(), config, SEEDS)
    for alone, together in zip(separate, batched, strict=True):
        (one,), (other,) = _rows(alone), _rows(together)
        assert one.keys() == other.keys()
        for key, value in one.items():
            if isinstance(value, float):
                assert other[key] == pytest.approx(value, rel=1e-5, abs=1e-6), key
            else:
                assert other[key] == value, key


@pytest.mark.slow
def test_batched_seeds_resume_exactly_and_each_seed_resumes_alone(tmp_path):
    config = replace(CONFIG, steps=12, checkpoint_every=4, stress_every=6)
    whole = train_seeds(_task(), replace(config, out_dir=str(tmp_path / "whole")), SEEDS)
    first = replace(config, steps=6, out_dir=str(tmp_path / "split"))
    train_seeds(_task(), first, SEEDS)
    resumed = train_seeds(_task(), replace(first, steps=12), SEEDS, resume=tmp_path / "split")
    for a, b in zip(whole, resumed, strict=True):
        assert _rows(a) == _rows(b) and _same_weights(a, b)
    logged = (seed_folder(tmp_path / "split", 1) / "metrics.jsonl").read_text().splitlines()
    assert [json.loads(line)["step"] for line in logged] == [3, 6, 9, 12]
    # A seed's folder is a single-seed run: train() resumes it, seed by seed it is exact.
    by_seed = replace(config, out_dir=str(tmp_path / "by-seed"))
    train_seeds(_task(), replace(by_seed, steps=6), SEEDS, vectorize=False)
    folder = seed_folder(tmp_path / "by-seed", 2)
    alone = train(_task(), replace(by_seed, seed=2, out_dir=str(folder)), resume=folder)
    assert _same_weights(alone, train(_task(), replace(config, seed=2, checkpoint_every=0)))


def test_batched_seeds_refuse_what_they_cannot_play(tmp_path):
    task = _task()
    cases = [
        (task, replace(CONFIG, formulation="verifier-first"), SEEDS, "verifier-first"),
        (task, replace(CONFIG, stop_when_sound=True), SEEDS, "stop_when_sound"),
        (task, CONFIG, [1, 1], "distinct"),
        (task, CONFIG, [], "at least one"),
        (make_task("bec"), CONFIG, SEEDS, "noise"),
        (task, replace(CONFIG, max_memory_gb=1e-6), SEEDS, "batch_size"),
    ]
    for game, config, seeds, words in cases:
        with pytest.raises(PVGError, match=words):
            train_seeds(game, config, seeds)
    config = replace(CONFIG, steps=2, checkpoint_every=1, out_dir=str(tmp_path / "run"))
    train_seeds(task, config, [0])
    train(task, replace(config, seed=1, steps=3, out_dir=str(seed_folder(tmp_path / "run", 1))))
    with pytest.raises(PVGError, match="different steps"):
        train_seeds(task, replace(config, steps=4), [0, 1], resume=tmp_path / "run")
    with pytest.raises(PVGError, match="lr"):
        train_seeds(task, replace(config, steps=4, lr=1e-2), [0], resume=tmp_path / "run")


@pytest.mark.slow
def test_cli_trains_and_resumes_seeds_together_and_refuses_bad_seeds(tmp_path):
    out = tmp_path / "seeds"
    base = ["train", "find-the-plus", "--task-arg", "size=6", "--batch-size", "8",
            "--set", "eval_size=16", "--set", "pretrain_steps=1", "--json"]  # fmt: skip
    runner = CliRunner()
    done = runner.invoke(app, [*base, "--seeds", "0,1", "--steps", "2", "--out", str(out)])
    assert done.exit_code == 0, done.output
    summary = json.loads(done.output)
    assert [run["seed"] for run in summary["runs"]] == [0, 1]
    assert all((seed_folder(out, s) / "state.pt").is_file() for s in (0, 1))
    again = ["train", "find-the-plus", "--seeds", "0,1", "--steps", "4", "--resume", str(out)]
    done = runner.invoke(app, [*again, "--json"])
    assert done.exit_code == 0, done.output
    assert [run["steps"] for run in json.loads(done.output)["runs"]] == [4, 4]
    for bad, words in (("0,x", "--seeds"), ("0,0", "distinct")):
        done = runner.invoke(app, [*base, "--seeds", bad, "--out", str(tmp_path / "bad")])
        assert done.exit_code == 2 and words in done.output, done.output
        assert "Traceback" not in done.output
    mixed = [*base, "--seeds", "0,1", "--seed", "3", "--out", str(tmp_path / "bad")]
    done = runner.invoke(app, mixed)  # --seed is not dropped silently
    assert done.exit_code == 2 and "--seed 3 with --seeds" in done.output, done.output
    assert not Path(tmp_path / "bad").exists()
