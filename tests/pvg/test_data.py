"""The seeded data bank: batches drawn from instances generated once from the run's seed."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

torch = pytest.importorskip("torch")

from typer.testing import CliRunner  # noqa: E402

from proofgames.cli.pvg import app  # noqa: E402
from proofgames.errors import PVGError  # noqa: E402
from proofgames.pvg import TrainConfig, make_task, train  # noqa: E402
from proofgames.pvg._data import DataBank  # noqa: E402
from proofgames.pvg.checkpoint import load_training_state  # noqa: E402
from proofgames.pvg.registry import task_defaults  # noqa: E402
from proofgames.pvg.train import check_training  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")

CPU = torch.device("cpu")


def _config(**changes) -> TrainConfig:
    values = {**task_defaults("find-the-plus"), "steps": 10, "pretrain_steps": 1}
    return TrainConfig(**{**values, **changes}, batch_size=8, eval_size=16, log_every=2,
                       progress=False)  # fmt: skip


def test_a_bank_is_a_function_of_the_seed_and_serves_each_instance_once_an_epoch():
    task = make_task("find-the-plus", size=6)
    bank, again, other = (DataBank(task, 30, seed, CPU) for seed in (4, 4, 5))
    assert torch.equal(bank.x, again.x) and torch.equal(bank.y, again.y)
    assert not torch.equal(bank.x, other.x)
    draws = [bank.draw(7) for _ in range(9)]  # 63 instances: two epochs and a bit
    assert [len(x) for x, _ in draws] == [7] * 9 and bank.served == 63
    assert all(
        torch.equal(d[0], a[0])
        for d, a in zip(draws, (again.draw(7) for _ in range(9)), strict=True)
    )
    served = torch.cat([x for x, _ in draws]).flatten(1)
    labels = torch.cat([y for _, y in draws])
    every = bank.x.flatten(1)
    for epoch in (served[:30], served[30:60]):  # each epoch: the whole bank, once
        assert sorted(map(tuple, epoch.tolist())) == sorted(map(tuple, every.tolist()))
    assert not torch.equal(served[:30], served[30:60])  # in a fresh order each epoch
    matches = (served[:, None, :] == every[None]).all(dim=2).float().argmax(dim=1)
    assert torch.equal(labels, bank.y[matches])  # each image keeps its label


@pytest.mark.slow
def test_a_run_with_a_bank_resumes_exactly_and_saves_only_its_draw_count(tmp_path):
    task = make_task("find-the-plus", size=6)
    config = replace(_config(data_bank=40), log_every=1)
    whole = train(task, replace(config, out_dir=str(tmp_path / "whole")))
    part = replace(config, steps=5, out_dir=str(tmp_path / "part"), checkpoint_every=5)
    train(task, part)
    state = load_training_state(tmp_path / "part")
    assert type(state.rng["bank"]) is int and state.rng["bank"] > 0
    resumed = train(task, replace(part, steps=10), resume=tmp_path / "part")
    strip = [{k: v for k, v in row.items() if k != "seconds"} for row in whole.metrics]
    assert [{k: v for k, v in r.items() if k != "seconds"} for r in resumed.metrics] == strip
    for a, b in zip(
        resumed.prover.state_dict().values(), whole.prover.state_dict().values(), strict=True
    ):
        assert torch.equal(a, b)
    fresh = train(task, replace(config, data_bank=0))  # the default: a different stream
    assert [r["train_accuracy"] for r in fresh.metrics] != [r["train_accuracy"] for r in strip]
    with pytest.raises(PVGError, match="cannot resume: data_bank"):
        train(task, replace(part, steps=10, data_bank=0), resume=tmp_path / "part")


def test_a_bank_state_without_its_draw_count_is_refused(tmp_path):
    task = make_task("find-the-plus", size=6)
    part = _config(data_bank=40, steps=2, out_dir=str(tmp_path), checkpoint_every=2)
    train(task, part)
    payload = torch.load(tmp_path / "state.pt", weights_only=True)
    del payload["rng"]["bank"]
    torch.save(payload, tmp_path / "state.pt")
    with pytest.raises(PVGError, match="do not fit"):
        train(task, replace(part, steps=3), resume=tmp_path)


def test_bank_settings_out_of_range_are_refused_with_their_name():
    task = make_task("find-the-plus")
    with pytest.raises(PVGError, match=r"data_bank must be 0 .* at least batch_size"):
        _config(data_bank=4).validate()
    with pytest.raises(PVGError, match="data_bank must be >= 0"):
        _config(data_bank=-1).validate()
    with pytest.raises(PVGError, match="data_bank=10,000,000 instances would take"):
        check_training(task, _config(data_bank=10_000_000, max_memory_gb=1.0, device="cpu"))
    check_training(task, _config(data_bank=1000, device="cpu"))


def test_pvg_train_takes_the_bank_and_the_logging_interval_as_settings(tmp_path):
    out = tmp_path / "run"
    args = ["train", "find-the-plus", "--task-arg", "size=6", "--steps", "4", "--batch-size",
            "8", "--set", "eval_size=16", "--set", "pretrain_steps=0", "--set", "log_every=3",
            "--set", "data_bank=24", "--out", str(out), "--json"]  # fmt: skip
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    saved = json.loads((out / "config.json").read_text())
    assert (saved["data_bank"], saved["log_every"]) == (24, 3)
    rows = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert [row["step"] for row in rows] == [3, 4]
    small = [*args[:-5], "--set", "data_bank=2", "--out", str(tmp_path / "other")]
    refused = CliRunner().invoke(app, small)
    assert refused.exit_code == 2 and "data_bank must be 0" in refused.output


def test_a_state_saved_without_a_bank_holds_no_bank_setting_for_older_code(tmp_path):
    # code from before the bank refuses settings it does not know: a run without a bank
    # (the default) must save none, so that such code can still resume it
    task = make_task("find-the-plus", size=6)
    config = _config(steps=2, out_dir=str(tmp_path / "plain"), checkpoint_every=2)
    train(task, config)
    state = load_training_state(tmp_path / "plain")
    assert "data_bank" not in state.config and "bank" not in state.rng
    assert "data_bank" not in json.loads((tmp_path / "plain" / "config.json").read_text())
    assert TrainConfig.from_dict(state.config).data_bank == 0
    assert train(task, replace(config, steps=3), resume=tmp_path / "plain").steps == 3
