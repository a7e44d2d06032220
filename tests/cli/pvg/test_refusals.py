"""Bad PVG inputs get a one-line refusal (exit 2), never a traceback or a wrong figure."""

from __future__ import annotations

import json
import shutil

import pytest

torch = pytest.importorskip("torch")

import typer  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from proofgames.cli.pvg import app  # noqa: E402
from proofgames.errors import ProofgamesError  # noqa: E402
from proofgames.pvg import (  # noqa: E402
    StressConfig,
    TrainConfig,
    load_checkpoint,
    load_training_state,
    make_task,
    stress_test,
    train,
)

pytestmark = pytest.mark.usefixtures("one_torch_thread")

RUNNER = CliRunner()
TINY_STRESS = ["--prover-steps", "2", "--lbfgs-max-iter", "2", "--eval-size", "16"]


def _said(res) -> str:
    return " ".join(res.output.split())  # a terminal may wrap long lines


def _refused(res, *needles: str) -> str:
    """Exit 2 with a message holding every needle (and no Python traceback)."""
    said = _said(res)
    assert res.exit_code == 2, (res.exception, said)
    assert "Traceback" not in res.output and "No such option" not in said, said
    for needle in needles:
        assert needle in said, said
    return said


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    """A tiny finished BEC run with agents.pt, state.pt, config.json and metrics.jsonl."""
    folder = tmp_path_factory.mktemp("bec-run")
    config = TrainConfig(steps=2, batch_size=16, eval_size=16, log_every=1, progress=False,
                         out_dir=str(folder), checkpoint_every=1)  # fmt: skip
    train(make_task("bec"), config)
    return folder


def _bad_files(run_dir, folder):
    """Broken files named like checkpoints: what each is, as a user might meet it."""
    agents = (run_dir / "agents.pt").read_bytes()
    ftp_payload = torch.load(run_dir / "agents.pt", weights_only=True)
    ftp_payload["task"] = "find-the-plus"  # bec weights under another task's name
    files = {
        "empty": b"",
        "not torch": b"this is no checkpoint\n",
        "truncated": agents[: len(agents) // 2],
        "json renamed": (run_dir / "config.json").read_bytes(),
    }
    paths = {}
    for name, data in files.items():
        paths[name] = folder / f"{name.replace(' ', '-')}.pt"
        paths[name].write_bytes(data)
    paths["state renamed"] = folder / "state-as-agents.pt"
    shutil.copy(run_dir / "state.pt", paths["state renamed"])
    paths["a list"] = folder / "list.pt"
    torch.save([1, 2, 3], paths["a list"])
    paths["keys missing"] = folder / "keys.pt"
    torch.save({"format": 1, "task": "bec"}, paths["keys missing"])
    paths["weights of another task"] = folder / "other-task.pt"
    torch.save(ftp_payload, paths["weights of another task"])
    return paths


@pytest.mark.parametrize("command", ["stress", "diagnose"])
def test_broken_checkpoints_are_refused_naming_the_file(command, run_dir, tmp_path):
    extra = TINY_STRESS if command == "stress" else ["--n", "16"]
    for kind, path in _bad_files(run_dir, tmp_path).items():
        res = RUNNER.invoke(app, [command, str(path), *extra])
        _refused(res, str(path))
        with pytest.raises(ProofgamesError) as info:
            load_checkpoint(path, device="cpu")
        assert str(path) in str(info.value) and "\n" not in str(info.value), kind


def test_a_missing_checkpoint_is_a_proofgames_error_and_still_a_file_not_found(tmp_path):
    with pytest.raises(ProofgamesError, match="no PVG checkpoint") as info:
        load_checkpoint(tmp_path / "nothing.pt")
    assert isinstance(info.value, FileNotFoundError)
    _refused(RUNNER.invoke(app, ["stress", str(tmp_path / "nothing.pt")]), "nothing.pt")


def test_broken_training_states_are_refused_by_resume_naming_the_file(run_dir, tmp_path):
    states = {
        "empty": b"",
        "truncated": (run_dir / "state.pt").read_bytes()[:500],
        "not torch": b"garbage",
        "agents renamed": (run_dir / "agents.pt").read_bytes(),
    }
    for kind, data in states.items():
        folder = tmp_path / kind.replace(" ", "-")
        folder.mkdir()
        (folder / "state.pt").write_bytes(data)
        res = RUNNER.invoke(app, ["train", "bec", "--resume", str(folder), "--steps", "4"])
        said = _refused(res, str(folder / "state.pt"))
        assert "Aborted" not in said, kind
        with pytest.raises(ProofgamesError):
            load_training_state(folder)
        # diagnose reads an unfinished run's state.pt too
        _refused(RUNNER.invoke(app, ["diagnose", str(folder), "--n", "8"]), "state.pt")


def test_a_metric_log_torn_by_a_kill_resumes_and_a_damaged_one_is_refused(run_dir, tmp_path):
    torn = tmp_path / "torn"
    shutil.copytree(run_dir, torn)
    with (torn / "metrics.jsonl").open("a") as log:
        log.write('{"step": 3, "verifier_acc')  # killed while appending a later row
    res = RUNNER.invoke(app, ["train", "bec", "--resume", str(torn), "--steps", "3", "--json"])
    assert res.exit_code == 0, res.output
    steps = [json.loads(line)["step"] for line in (torn / "metrics.jsonl").read_text().splitlines()]
    assert steps == [1, 2, 3]
    damaged = tmp_path / "damaged"
    shutil.copytree(run_dir, damaged)
    lines = (damaged / "metrics.jsonl").read_text().splitlines()
    (damaged / "metrics.jsonl").write_text("\n".join(["{oops", *lines[1:]]) + "\n")
    res = RUNNER.invoke(app, ["train", "bec", "--resume", str(damaged), "--steps", "3"])
    _refused(res, str(damaged / "metrics.jsonl"), "line 1")
    (damaged / "metrics.jsonl").write_bytes(b"\xff\xfe not text")
    res = RUNNER.invoke(app, ["train", "bec", "--resume", str(damaged), "--steps", "3"])
    _refused(res, str(damaged / "metrics.jsonl"))


@pytest.mark.parametrize("command", ["train", "reproduce", "report"])
def test_out_paths_that_are_files_or_under_a_file_are_refused(command, tmp_path):
    afile = tmp_path / "afile"
    afile.write_text("mine\n")
    results = tmp_path / "results.json"
    results.write_text("{}")
    base = {
        "train": ["train", "bec", "--steps", "1", "--batch-size", "8"],
        "reproduce": ["reproduce", "--profile", "smoke", "--seeds", "1", "--task", "bec"],
        "report": ["report", str(results)],
    }[command]
    for out in (afile, afile / "sub", afile / "sub" / "deeper"):
        res = RUNNER.invoke(app, [*base, "--out", str(out)])
        _refused(res, "--out", str(afile))
    assert afile.read_text() == "mine\n"


@pytest.mark.parametrize(
    ("device", "needle"),
    [("tpu", "tpu"), ("cuda:7x", "cuda:7x"), ("meta", "meta")]
    + ([] if torch.cuda.is_available() else [("cuda", "CUDA")]),
)
def test_unknown_or_unavailable_devices_are_refused(device, needle, run_dir, tmp_path):
    for args in (
        ["train", "bec", "--steps", "1", "--out", str(tmp_path / "run")],
        ["stress", str(run_dir), *TINY_STRESS],
        ["diagnose", str(run_dir), "--n", "8"],
        ["reproduce", "--profile", "smoke", "--seeds", "1", "--out", str(tmp_path / "rep")],
    ):
        _refused(RUNNER.invoke(app, [*args, "--device", device]), "--device", needle)
    assert not (tmp_path / "run").exists() and not (tmp_path / "rep").exists()


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (["train", "bec", "--steps", "0"], "--steps"),
        (["train", "bec", "--steps", str(2**63 - 1)], "steps = 9,223,372,036,854,775,807"),
        (["train", "bec", "--prover-steps", str(10**9)], "prover_steps = 1,000,000,000"),
        (["train", "bec", "--batch-size", "0"], "--batch-size"),
        (["train", "bec", "--batch-size", "-3"], "--batch-size"),
        (["train", "bec", "--verifier-steps", "0"], "--verifier-steps"),
        (["train", "bec", "--prover-steps", "-1"], "--prover-steps"),
        (["train", "bec", "--stress-every", "-1"], "--stress-every"),
        (["train", "bec", "--checkpoint-every", "-1"], "--checkpoint-every"),
        (["train", "bec", "--lr", "0"], "lr"),
        (["train", "bec", "--lr", "inf"], "lr"),
        (["train", "bec", "--verifier-lr", "-1e-3"], "verifier_lr"),
        (["train", "bec", "--max-memory-gb", "0"], "--max-memory-gb"),
        (["stress", "RUN", "--eval-size", "0"], "--eval-size"),
        (["stress", "RUN", "--eval-size", "-5"], "--eval-size"),
        (["stress", "RUN", "--batch-size", "0"], "--batch-size"),
        (["stress", "RUN", "--prover-steps", "0"], "--prover-steps"),
        (["stress", "RUN", "--lbfgs-max-iter", "0"], "--lbfgs-max-iter"),
        (["stress", "RUN", "--max-memory-gb", "-1"], "--max-memory-gb"),
        (["diagnose", "RUN", "--n", "0"], "--n"),
        (["diagnose", "RUN", "--n", "-2"], "--n"),
        (["reproduce", "--seeds", "0"], "--seeds"),
        (["reproduce", "--workers", "0"], "--workers"),
        (["reproduce", "--workers", "-2"], "--workers"),
        (["reproduce", "--max-memory-gb", "nan"], "--max-memory-gb"),
        # torch folds -1 onto 2**64 - 1 and overflows past 2**64: seeds stay in [0, 2**63)
        (["train", "bec", "--seed", "-1"], "seed"),
        (["train", "bec", "--seed", str(2**63)], "seed"),
        (["train", "bec", "--seed", "56403477073233412096"], "seed"),
        (["stress", "RUN", "--seed", "-1"], "seed"),
        (["diagnose", "RUN", "--seed", str(2**64)], "seed"),
        (["stability", "--seed", "-3", "--steps", "1"], "seed"),
    ],
)
def test_zero_or_negative_sizes_and_counts_are_refused(args, option, run_dir, tmp_path):
    args = [str(run_dir) if a == "RUN" else a for a in args]
    if args[0] == "reproduce":  # the smallest reproduction, should the refusal not come
        args += ["--profile", "smoke", "--task", "bec", *(["--seeds", "1"] * (option != "--seeds"))]
    if args[0] in ("train", "reproduce"):
        args += ["--out", str(tmp_path / "out")]
    _refused(RUNNER.invoke(app, args), option)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("task", "arg", "needle"),
    [
        ("bec", "tokens=2", "tokens"),
        ("bec", "hidden=0", "hidden"),
        ("bec", "temperature=-1", "temperature"),
        ("find-the-plus", "size=2", "size=2"),
        ("find-the-plus", "glimpse=0", "glimpse"),
        ("find-the-plus", "max_repairs=0", "max_repairs"),
        ("find-the-plus", "pool=-1", "pool"),
        ("find-the-needle", "max_needles=0", "max_needles"),
        ("find-the-needle", "hidden=-3", "hidden"),
    ],
)
def test_task_arguments_out_of_range_are_refused(task, arg, needle, tmp_path):
    args = ["train", task, "--task-arg", arg, "--steps", "1", "--batch-size", "8"]
    _refused(RUNNER.invoke(app, [*args, "--out", str(tmp_path / "out")]), needle)
    assert not (tmp_path / "out").exists()


def test_an_exact_search_the_task_cannot_do_is_refused_before_training(tmp_path):
    args = ["train", "find-the-plus", "--task-arg", "size=7", "--steps", "1", "--batch-size", "8"]
    for extra in (
        ["--stress-every", "1", "--stress-attack", "exhaustive"],
        ["--formulation", "verifier-first"],  # its exact prover is the exhaustive search
    ):
        res = RUNNER.invoke(app, [*args, *extra, "--out", str(tmp_path / "out")])
        _refused(res, "whole number of pixels")
        assert not (tmp_path / "out").exists()


def test_attacks_that_did_not_run_give_no_figures(run_dir):
    task, verifier = make_task("bec"), load_checkpoint(run_dir, "cpu").verifier
    for config, attack in [
        (StressConfig(prover_steps=0, eval_size=8), "prover"),
        (StressConfig(lbfgs_max_iter=0, eval_size=8), "messages"),
        (StressConfig(eval_size=0), "messages"),
    ]:
        with pytest.raises(ProofgamesError):
            stress_test(task, verifier, attacks=(attack,), config=config)


def test_library_settings_errors_are_proofgames_errors_naming_the_setting():
    for name, value in [
        ("steps", 0),
        ("eval_size", -1),
        ("stress_every", -2),
        ("lr", float("nan")),
        ("max_memory_gb", 0),
        ("seed", -1),
        ("seed", 2**63),
    ]:
        with pytest.raises(ProofgamesError, match=name):
            TrainConfig(**{name: value}).validate()
    with pytest.raises(ProofgamesError, match="seed"):
        StressConfig(seed=-1).validate()


_HEAD = (
    '{"seeds": [0], "profile": {"name": "x"}, "seconds": 1,'
    ' "machine": {"platform": "p", "torch": "t", "threads": 1}'
)


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        (None, "no such file"),
        ("not json at all", "not valid JSON"),
        ("[1, 2]", "not a results.json"),
        ('{"seeds": [0]}', "profile"),
        ('{"seeds": [0], "profile": {"name": "smoke"}, "seconds": 1, "machine": {}}',
         "machine.platform"),
        (_HEAD + "}", "neither bec nor find-the-plus"),
        (_HEAD + ', "bec": {"runs": "none"}}', "bec.runs"),
        (_HEAD + ', "bec": {"runs": [], "table": [], "dynamics": [], "formulations": {},'
         ' "settings": {"max_steps": 3}}}', "list index out of range"),
    ],
)  # fmt: skip
def test_malformed_results_files_are_refused_by_report(content, needle, tmp_path):
    path = tmp_path / "results.json"
    if content is not None:
        path.write_text(content)
    res = RUNNER.invoke(app, ["report", str(path), "--out", str(tmp_path / "report")])
    _refused(res, str(path), needle)
    assert not (tmp_path / "report").exists()
    if content is not None:
        assert path.read_text() == content  # not rewritten


def test_a_readme_without_the_report_block_is_refused_before_any_work(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text("no markers here\n")
    args = ["reproduce", "--profile", "smoke", "--seeds", "1", "--task", "bec"]
    res = RUNNER.invoke(app, [*args, "--out", str(tmp_path / "rep"), "--readme", str(readme)])
    _refused(res, str(readme), "report:pvg")
    assert not (tmp_path / "rep").exists()
    missing = tmp_path / "nowhere.md"
    res = RUNNER.invoke(app, [*args, "--out", str(tmp_path / "rep"), "--readme", str(missing)])
    _refused(res, str(missing))


@pytest.mark.parametrize(
    "args",
    [
        ["train", "find-the-plus", "--batch-size", "99000000"],
        ["train", "bec", "--batch-size", "64", "--max-memory-gb", "0.0000001"],
        ["stress", "RUN", "--eval-size", "99000000"],
        ["stress", "RUN", "--batch-size", "99000000", "--attack", "prover"],
        ["diagnose", "RUN", "--n", "3000000000"],
    ],
)
def test_batches_too_large_for_memory_are_refused_with_the_estimate(args, run_dir, tmp_path):
    args = [str(run_dir) if a == "RUN" else a for a in args]
    if args[0] == "train":
        args += ["--out", str(tmp_path / "out")]
    said = _refused(RUNNER.invoke(app, args), "GB", "--max-memory-gb", "estimate")
    assert "limit" in said
    assert not (tmp_path / "out").exists()


def test_max_memory_gb_raises_the_limit(run_dir):
    args = ["diagnose", str(run_dir), "--n", "64", "--json"]
    _refused(RUNNER.invoke(app, [*args, "--max-memory-gb", "0.0000001"]), "estimate")
    res = RUNNER.invoke(app, [*args, "--max-memory-gb", "1"])
    assert res.exit_code == 0, res.output


def _strict(text: str):
    def refuse(constant):
        raise AssertionError(f"not JSON: {constant}")

    return json.loads(text, parse_constant=refuse)


def test_json_output_stays_json_when_training_diverges(tmp_path):
    out = tmp_path / "diverged"
    args = ["train", "bec", "--steps", "2", "--batch-size", "16", "--lr", "1e30"]
    res = RUNNER.invoke(app, [*args, "--out", str(out), "--json"])
    assert res.exit_code == 0, res.output
    summary = _strict(res.stdout)
    assert summary["final"]["prover_loss"] is None  # NaN: null, as documented
    assert isinstance(summary["steps"], int) and isinstance(summary["final"]["tp"], int)
    for line in (out / "metrics.jsonl").read_text().splitlines():
        _strict(line)
    _strict((out / "config.json").read_text())
    res = RUNNER.invoke(app, ["diagnose", str(out), "--n", "16", "--json"])
    assert res.exit_code == 0, res.output
    assert _strict(res.stdout)["sampled_erasure_fraction"] is None


def test_every_pvg_option_is_documented_in_its_help():
    group = typer.main.get_command(app)
    for name, command in group.commands.items():  # type: ignore[attr-defined]
        help_text = " ".join(RUNNER.invoke(app, [name, "--help"]).output.split())
        for param in command.params:
            assert getattr(param, "help", None), f"pvg {name} {param.name} has no help"
            for flag in getattr(param, "opts", []):
                if flag.startswith("--"):
                    assert flag in help_text, f"pvg {name} --help lacks {flag}"


@pytest.mark.parametrize(
    "args",
    [
        ["stress", "RUN", "--prover-steps", str(10**14)],  # ran without end before
        ["stability", "--steps", str(10**14), "--out", "OUT"],  # left its folder behind
    ],
)
def test_counts_beyond_any_run_are_refused_before_any_work(args, run_dir, tmp_path):
    args = [str(run_dir) if a == "RUN" else str(tmp_path / "out") if a == "OUT" else a
            for a in args]  # fmt: skip
    _refused(RUNNER.invoke(app, args), "is over the limit of 100,000,000")
    assert not (tmp_path / "out").exists()
