"""Property-based fuzzing of the ``pvg`` commands (needs the ``pvg`` extra).

Hypothesis generates hostile values for the options of ``pvg train``, ``stress``,
``diagnose``, ``report``, ``reproduce`` and ``start-gradient``: wrong types, huge and
negative numbers, NaN, junk names, unknown devices, and checkpoint or results files that
are empty, truncated, corrupt, renamed or missing. Every run must succeed or refuse with
exit code 2 and a message, never a traceback, and write nothing outside its working
folder.

Half the cases are clean (all values valid, the checkpoint intact), so real runs happen.
Values that would make a valid run long (steps, batch sizes, attack budgets) are capped so
that the default run stays fast; ``reproduce`` always gets one bad value, since any valid
reproduction trains for minutes. Long profile: ``PROOFGAMES_FUZZ_EXAMPLES=200 pytest -m fuzz``.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.test_fuzz_cli import JUNK, NUMBERS, check, hostile, mostly, option

pytest.importorskip("torch")
pytestmark = pytest.mark.fuzz
FAST = settings(  # a valid run trains, so fewer cases by default than the other fuzz tests
    max_examples=int(os.environ.get("PROOFGAMES_FUZZ_EXAMPLES", "8")), deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)  # fmt: skip

CAPS = {"--steps": 3, "--batch-size": 16, "--eval-size": 16, "--prover-steps": 3,
        "--lbfgs-max-iter": 3, "--n": 16, "--stress-every": 2, "--verifier-steps": 2,
        "--threads": 1, "--checkpoint-every": 2, "--size": 64}  # fmt: skip


DEVICES = mostly(st.just("cpu"), st.one_of(st.sampled_from(["cuda", "cuda:7", "tpu", "mps"]),
                                           JUNK))  # fmt: skip
TASKS = mostly(st.sampled_from(["bec", "find-the-plus", "find-the-needle"]), JUNK)
SMALL = mostly(st.integers(1, 4).map(str), st.one_of(st.integers(-2, 0).map(str), NUMBERS))
REALS = mostly(st.sampled_from(["1e-3", "0.1"]),
               st.one_of(st.sampled_from(["0", "-1", "nan", "inf"]), NUMBERS))  # fmt: skip
RESULTS = Path(__file__).resolve().parents[2] / "reports" / "pvg" / "results.json"


def tame(args: list[str], defaults: tuple[str, ...] = ()) -> list[str]:
    """Cap the options that would make a valid run slow (invalid values pass unchanged).

    Options named in ``defaults`` that are absent are added at their cap, so that a run
    never falls back to a long default (``pvg train``'s 1,000 steps).
    """
    out = list(args) + [x for o in defaults if o not in args for x in (o, str(CAPS[o]))]
    for i, arg in enumerate(out[:-1]):
        if arg in CAPS:
            try:
                value = int(out[i + 1])
            except ValueError:
                continue
            out[i + 1] = str(min(value, CAPS[arg]))
    return out


def flat(opts: dict[str, list[str]]) -> list[str]:
    return [x for v in opts.values() for x in v]


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real (tiny) BEC run to attack and corrupt."""
    from proofgames.pvg import TrainConfig, make_task, train

    out = tmp_path_factory.mktemp("pvg") / "run"
    train(make_task("bec"), TrainConfig(steps=2, batch_size=8, progress=False, seed=0,
                                        out_dir=str(out)))  # fmt: skip
    return out


CORRUPTIONS = ["intact", "intact", "intact", "empty", "truncated", "garbage", "missing",
               "renamed", "folder", "state-only", "config-junk"]  # fmt: skip


def corrupt(run: Path, into: Path, how: str) -> Path:
    """A copy of ``run`` under ``into``, damaged as ``how`` says; the path to pass."""
    target = into / "ckpt"
    shutil.copytree(run, target)
    agents = target / "agents.pt"
    if how == "empty":
        agents.write_bytes(b"")
    elif how == "truncated":
        agents.write_bytes(agents.read_bytes()[: agents.stat().st_size // 2])
    elif how == "garbage":
        agents.write_bytes(os.urandom(512))
    elif how == "missing":
        agents.unlink()
    elif how == "renamed":
        agents.rename(target / "agents.bin")
        return target / "agents.bin"
    elif how == "folder":
        return into / "no-such-run"
    elif how == "state-only":
        return target / "state.pt"
    elif how == "config-junk":
        (target / "config.json").write_bytes(b"\xff{not json")
    return target


def check_on_damaged_run(
    command: str, run: Path, workdir: Path, how: str, opts: dict[str, list[str]]
) -> None:
    """``pvg COMMAND`` on a copy of ``run`` damaged as ``how`` says (see :func:`check`)."""
    path = corrupt(run, workdir, how)
    try:  # a failing case is replayed: leave no copy behind for the replay to trip over
        check(tame(["pvg", command, str(path), "--threads", "1", *flat(opts)]), workdir)
    finally:
        shutil.rmtree(workdir / "ckpt")


@FAST
@given(
    task=TASKS,
    formulation=option("--formulation", mostly(
        st.sampled_from(["simultaneous", "prover-first", "verifier-first", "collaborative"]),
        JUNK)),
    seed=option("--seed", mostly(st.integers(0, 3).map(str), NUMBERS)),
    steps=option("--steps", SMALL),
    batch=option("--batch-size", SMALL),
    lr=option("--lr", REALS),
    smoothing=option("--label-smoothing", mostly(st.just("0.1"), REALS)),
    device=option("--device", DEVICES),
    memory=option("--max-memory-gb", REALS),
    threads=option("--threads", SMALL),
    task_arg=hostile(option("--task-arg", st.one_of(
        st.sampled_from(["pool=0", "bounded_shifts=true"]), JUNK))),  # a task may refuse these
    out=option("--out", mostly(st.just("runs/x"), st.sampled_from(
        [".", "a/../b", "", "\x00"]))),
    setting=option("--set", mostly(st.sampled_from(
        ["pretrain_steps=0", "adaptive_threshold=none", "log_every=1", "stress.eval_size=8"]),
        st.one_of(st.sampled_from(["lr=1", "eval_size=0", "stress.nosuch=2", "x", "=",
                                   "aux_weight=inf", "stress.seed=-1"]), JUNK))),
    json_=st.sampled_from([[], ["--json"]]),
)  # fmt: skip
@pytest.mark.slow
def test_pvg_train_never_crashes(workdir: Path, task: str, **opts: list[str]) -> None:
    check(tame(["pvg", "train", task, *flat(opts)], ("--steps", "--batch-size")), workdir)
    shutil.rmtree(workdir / "runs", ignore_errors=True)  # else the next case's run is refused


@FAST
@given(
    how=mostly(st.just("intact"), st.sampled_from(CORRUPTIONS)),
    attack=option("--attack", mostly(st.sampled_from(["both", "messages", "prover", "all"]),
                                     JUNK)),
    seed=option("--seed", mostly(st.integers(0, 3).map(str), NUMBERS)),
    prover_steps=option("--prover-steps", SMALL),
    batch=option("--batch-size", SMALL),
    lbfgs=option("--lbfgs-max-iter", SMALL),
    eval_size=option("--eval-size", SMALL),
    device=option("--device", DEVICES),
    memory=option("--max-memory-gb", REALS),
)  # fmt: skip
@pytest.mark.slow
def test_pvg_stress_never_crashes(
    trained: Path, workdir: Path, how: str, **opts: list[str]
) -> None:
    check_on_damaged_run("stress", trained, workdir, how, opts)


@FAST
@given(
    how=mostly(st.just("intact"), st.sampled_from(CORRUPTIONS)),
    n=option("--n", SMALL),
    seed=option("--seed", mostly(st.integers(0, 3).map(str), NUMBERS)),
    device=option("--device", DEVICES),
    json_=st.sampled_from([[], ["--json"]]),
)
def test_pvg_diagnose_never_crashes(
    trained: Path, workdir: Path, how: str, **opts: list[str]
) -> None:
    check_on_damaged_run("diagnose", trained, workdir, how, opts)


@FAST
@given(
    how=mostly(st.just("intact"), st.sampled_from(
        ["config-junk", "folder", "state-only", "metrics-junk", "no-metrics", "no-config",
         "metrics-empty"])),
    out=option("--out", mostly(st.just("curves.png"), st.sampled_from(
        [".", "", "\x00", "sub/dir/c.png", "a/../b.png"]))),
    until=option("--until", SMALL),
    json_=st.sampled_from([[], ["--json"]]),
)  # fmt: skip
def test_pvg_curves_never_crashes(
    trained: Path, workdir: Path, how: str, **opts: list[str]
) -> None:
    path = corrupt(trained, workdir, how if how in CORRUPTIONS else "intact")
    try:  # a failing case is replayed: leave no copy behind for the replay to trip over
        if how == "metrics-junk":
            (path / "metrics.jsonl").write_bytes(b'{"step": 1}\n\xff\xfe junk\n{"step": 2}\n')
        elif how == "no-metrics":
            (path / "metrics.jsonl").unlink()
        elif how == "metrics-empty":  # saved before its first row was logged
            (path / "metrics.jsonl").write_text("")
        elif how == "no-config":
            (path / "config.json").unlink()
        check(["pvg", "curves", str(path), *flat(opts)], workdir)
    finally:
        shutil.rmtree(workdir / "ckpt")


@pytest.mark.slow
@FAST
@given(
    content=st.one_of(st.just(RESULTS.read_bytes()), st.binary(max_size=80), st.sampled_from([
        b"", b"null", b"[]", b"{}", b'{"bec": 5}', b'{"bec": {"rows": NaN}}', b"\xff\xfe",
        b'{"profile": "cpu", "seeds": [0], "bec": null, "find_the_plus": null}'])),
    readme=option("--readme", st.sampled_from(["missing.md", "README-copy.md", "", "."])),
)  # fmt: skip
def test_pvg_report_of_any_results_file_is_used_or_refused(
    workdir: Path, content: bytes, readme: list[str]
) -> None:
    (workdir / "results.json").write_bytes(content)
    (workdir / "README-copy.md").write_text("no markers here\n")
    check(["pvg", "report", "results.json", "--out", "rep", *readme], workdir)
    shutil.rmtree(workdir / "rep", ignore_errors=True)


@FAST
@given(
    seeds=st.one_of(st.sampled_from(["0", "-1"]), NUMBERS.filter(lambda v: not v.isdigit())),
    profile=option("--profile", st.one_of(st.sampled_from(["cpu", "smoke", "paper"]), JUNK)),
    task=option("--task", st.one_of(st.sampled_from(["bec", "find-the-plus"]), JUNK)),
    workers=option("--workers", SMALL),
    device=option("--device", DEVICES),
    flags=st.lists(st.sampled_from(["--resume", "--overwrite", "--json"]), max_size=3),
    readme=option("--readme", st.sampled_from(["missing.md", "", "."])),
)  # fmt: skip
def test_pvg_reproduce_refuses_bad_values_before_any_work(
    workdir: Path, seeds: str, flags: list[str], **opts: list[str]
) -> None:
    args = ["pvg", "reproduce", "--seeds", seeds, "--out", "rep", *flat(opts), *flags]
    check(args, workdir)
    assert not (workdir / "rep").exists() or not any((workdir / "rep").rglob("*.pt"))


@FAST
@given(
    error=option("--error", REALS),
    idle=option("--idle-weight", REALS),
    size=option("--size", SMALL),
    seed=option("--seed", SMALL),
    json_=st.sampled_from([[], ["--json"]]),
)
def test_pvg_start_gradient_never_crashes(workdir: Path, **opts: list[str]) -> None:
    check(tame(["pvg", "start-gradient", *flat(opts)], ("--size",)), workdir)
