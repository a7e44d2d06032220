"""Does the FindThePlus game keep a sound protocol it starts in? (issue 16, item 3).

Training that never finds the sound protocol and training that finds it but cannot keep
it look alike in the learning curves. This experiment separates them: it starts the game
*at* a sound and complete protocol and watches whether play preserves it.

* The verifier is :func:`sound_verifier`: head 0 reads the five plus cells of its
  glimpse with weight 4 and bias -18 (a full plus of 1-pixels scores +2, four cells of
  five -2), every other head's classifier weights are 0, and head ``h`` looks where
  message coordinates ``2h, 2h + 1`` say (the identity map, so every shift is reachable).
  No message makes it accept an image without a plus of 1-pixels: the exhaustive search
  (:mod:`proofgames.pvg.find_the_plus.message_search`) certifies that on every batch.
* The prover is a :class:`PointingProver`: it points head 0 at the plus (of either
  colour) with a chosen pointing error (rms, in pixels; 0 is an exact pointer), plus a
  learned correction -- a :class:`~proofgames.pvg.tasks.find_the_plus.PlusProver` whose message
  layer starts at 0 -- which the game trains.

Each run plays ``steps`` game steps of one formulation and update rule with the task's
training settings (no pretraining), and certifies the verifier every ``certify_every``
steps with the exhaustive search on a fixed held-out batch: its specificity and recall
against the most convincing message there is (exact on that batch), the trained prover's
pointing error and the share of label-1 images on which it aims the plus detector at the
plus (:func:`~proofgames.pvg.find_the_plus.detectors.pointing`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import torch
from torch import Tensor, nn

from ...errors import PVGError
from .._stress_settings import at_most, check_seeds
from ..config import BEST_RESPONSES, finite_not_negative
from ..registry import task_defaults
from ..stress import confusion, positive
from ..task import ProverOutput
from ..tasks.find_the_plus import PLUS_OFFSETS, FindThePlus, PlusProver, plus_centres
from ..tasks.plus_verifier import PlusVerifier, pixel_to_shift
from ..train import FORMULATIONS, UPDATES, TrainConfig, resolve_device, train
from ._stability_report import plot_stability, stability_table
from ._stability_saves import Game, carried_rows, checked_run, run_name, trained_start
from .diagnostics import pointing
from .message_search import search_messages

#: Settings added after results were first saved, with the value their absence means.
_ADDED_SETTINGS = {"best_response": "auto"}

__all__ = [
    "PointingProver",
    "StabilitySettings",
    "carried_rows",
    "certify",
    "earlier_runs",
    "finished_runs",
    "plot_stability",
    "played_out",
    "run_name",
    "run_stability",
    "sound_verifier",
    "stability_table",
]


def sound_verifier(task: FindThePlus, weight: float = 4.0, bias: float = -18.0) -> PlusVerifier:
    """The hand-set plus detector on head 0 (see the module docstring).

    Raises:
        PVGError: the task's glimpses are not sampled a pixel apart with one logit (the
            detector's five cells are pixels; ``glimpse=10`` or ``logits=2`` is refused).
    """
    verifier = task.make_verifier()
    if verifier.spacing != 1.0 or verifier.logits != 1:
        raise PVGError(
            "the hand-set sound verifier needs glimpse samples one pixel apart and one logit; "
            f"this task's are {verifier.spacing:g} px apart with {verifier.logits} logits"
        )
    g, heads = verifier.glimpse, verifier.heads
    with torch.no_grad():
        cells = torch.zeros(heads, g, g)
        for dr, dc in PLUS_OFFSETS:
            cells[0, g // 2 + dr, g // 2 + dc] = weight
        verifier.classifier.weight.copy_(cells.view(1, -1))
        verifier.classifier.bias.fill_(bias)
        verifier.to_shift.weight.zero_()
        verifier.to_shift.weight[:, : 2 * heads] = torch.eye(2 * heads)
        verifier.to_shift.bias.zero_()
    return verifier


#: The largest pointing error in pixels (ten times the image's side).
MAX_ERROR_PX = 100.0


def check_error(error_px: float) -> None:
    """Refuse a pointing error that is not a number in ``[0, MAX_ERROR_PX]`` pixels."""
    if not (math.isfinite(error_px) and 0 <= error_px <= MAX_ERROR_PX):
        raise PVGError(f"pointing error must be in [0, {MAX_ERROR_PX:g}] px, got {error_px}")


class PointingProver(nn.Module):
    """Points head 0 at the plus, off by a fixed error per image, plus a learned message.

    The error of an image is a fixed random linear function of its pixels, scaled so
    that its rms length over the task's images is about ``error_px`` pixels (0: exact).
    The prover is a function of its arguments alone: ``seed`` also initializes the
    learned part (its message layer starts at 0, the layers below it do not), and the
    global torch generator is left as it was.

    Args:
        task: the FindThePlus task (its prover architecture makes the learned part).
        error_px: rms pointing error in pixels.
        seed: seed of the error's random projection and of the learned part's weights.
    """

    projection: Tensor

    def __init__(self, task: FindThePlus, error_px: float = 0.0, seed: int = 0) -> None:
        super().__init__()
        check_error(error_px)
        self.error_px, self.size = error_px, task.size
        with torch.random.fork_rng(devices=[]):  # the global generator is restored after
            torch.manual_seed(seed)
            self.learned = task.make_prover()
        assert isinstance(self.learned, PlusProver)
        with torch.no_grad():
            self.learned.to_message.weight.zero_()
            self.learned.to_message.bias.zero_()
        gen = torch.Generator().manual_seed(seed)
        projection = torch.randn(2, task.size * task.size, generator=gen)
        # pixels are fair coins: each axis's error has variance 0.25 |row|^2 before scaling
        scale = error_px / math.sqrt(2) / (0.5 * projection.norm(dim=1, keepdim=True))
        self.register_buffer("projection", projection * scale)

    def pointer(self, x: Tensor) -> Tensor:
        """``(n, 2)`` the (row, col) pixel head 0 is pointed at."""
        error = (x.flatten(1) - 0.5) @ self.projection.T
        return plus_centres(x) + error

    def forward(self, x: Tensor, labels: Tensor | None = None) -> ProverOutput:
        """The pointer (message coordinates 0, 1) plus the learned message."""
        out: ProverOutput = self.learned(x, labels)
        at = self.pointer(x)
        pointing = torch.zeros_like(out.message)
        pointing[:, 0] = pixel_to_shift(at[:, 1], self.size)
        pointing[:, 1] = pixel_to_shift(at[:, 0], self.size)
        return ProverOutput(message=out.message + pointing, aux_loss=out.aux_loss)


def certify(
    verifier: PlusVerifier, prover: nn.Module, x: Tensor, y: Tensor, best_head: int | None = 0
) -> dict[str, float]:
    """Exhaustive certification of ``verifier`` and where ``prover`` points, on ``(x, y)``.

    Returns:
        ``exhaustive_specificity`` and ``exhaustive_recall`` (against the most convincing
        message for each image: exact on this batch), ``sound`` (1.0 when no label-0
        image can be made to pass), and :func:`~proofgames.pvg.find_the_plus.detectors.pointing`'s
        ``pointing_error_px`` (of ``best_head``; ``None``: the most plus-shaped head)
        and ``on_plus``.
    """
    was_training = verifier.training
    verifier.eval()
    with torch.no_grad():
        found = search_messages(verifier, x)
    tp, fp, fn, tn = confusion(found.bound, y)
    where = pointing(verifier, prover, x, y, best_head)
    verifier.train(was_training)
    return {
        "exhaustive_specificity": tn / (tn + fp) if tn + fp else 1.0,
        "exhaustive_recall": tp / (tp + fn) if tp + fn else 0.0,
        "sound": float(fp == 0),
        **where,
    }


@dataclass(frozen=True)
class StabilitySettings:
    """The scale of a stability experiment.

    Attributes:
        steps: game steps per run.
        certify_every: game steps between certifications (step 0 is always certified).
        batch_size: instances per gradient step.
        certify_size: held-out images of each certification.
        errors_px: the prover's rms pointing errors, one run each (0: exact pointer).
        formulations: the formulations played (see :data:`FORMULATIONS`).
        updates: the update rules of simultaneous and collaborative play (the other
            formulations are sequential and play once).
        seed: seed of the game, the held-out batch and the pointing errors.
        device: where the games are played (``"cpu"``, ``"cuda"``, ``"auto"``).
        verifier_weight_decay: the verifier's L2 penalty (see
            :attr:`~proofgames.pvg.config.TrainConfig.verifier_weight_decay`; 0, the
            paper's, by default).
        start: a trained FindThePlus run (its folder, whose ``agents.pt`` or, still
            training, ``state.pt`` is read; or an ``agents.pt``) whose prover and
            verifier start every run instead of the hand-set pair, on that run's own
            task. The pointing errors then do not apply: one run per game.
        best_response: the prover that verifier-first play trains the verifier against
            (see :attr:`~proofgames.pvg.config.TrainConfig.best_response`): ``"auto"``
            (the default) and ``"closed-form"`` the exact best response, found by the
            exhaustive search; ``"trained"`` the trained prover, as in the paper's
            game. The other formulations ignore it.
    """

    steps: int = 300
    certify_every: int = 25
    batch_size: int = 256
    certify_size: int = 500
    errors_px: tuple[float, ...] = (0.0, 0.5, 1.0, 1.8)
    formulations: tuple[str, ...] = ("simultaneous", "verifier-first")
    updates: tuple[str, ...] = UPDATES
    seed: int = 0
    device: str = "cpu"
    verifier_weight_decay: float = 0.0
    start: str | None = None
    best_response: str = "auto"

    def validate(self) -> None:
        """Refuse settings under which the experiment cannot run, naming the setting."""
        positive(
            steps=self.steps,
            certify_every=self.certify_every,
            batch_size=self.batch_size,
            certify_size=self.certify_size,
        )
        at_most(steps=self.steps, batch_size=self.batch_size, certify_size=self.certify_size)
        check_seeds(seed=self.seed)
        finite_not_negative(verifier_weight_decay=self.verifier_weight_decay)
        for name, given, allowed in (
            ("formulation", self.formulations, FORMULATIONS),
            ("update", self.updates, UPDATES),
        ):
            wrong = [v for v in given if v not in allowed]
            if wrong or not given:
                raise PVGError(f"{name}s must be a non-empty subset of {allowed}, got {given}")
        if self.best_response not in BEST_RESPONSES:
            raise PVGError(
                f"best_response must be one of {BEST_RESPONSES}, got {self.best_response!r}"
            )
        if not self.errors_px:
            raise PVGError("errors_px must name at least one pointing error")
        for error in self.errors_px:
            check_error(error)

    def games(self) -> list[tuple[str, str]]:
        """``(formulation, update)`` of each run per pointing error."""
        out = []
        for formulation in self.formulations:
            rules = self.updates if formulation in ("simultaneous", "collaborative") else ("-",)
            out += [(formulation, rule) for rule in rules]
        return out


def _config(settings: StabilitySettings, formulation: str, update: str) -> TrainConfig:
    values: dict[str, Any] = {
        **task_defaults("find-the-plus"),
        "pretrain_steps": 0,
        "formulation": formulation,
        "steps": settings.steps,
        "batch_size": settings.batch_size,
        "eval_size": settings.certify_size,
        "log_every": settings.certify_every,
        "seed": settings.seed,
        "device": settings.device,
        "progress": False,
        "verifier_weight_decay": settings.verifier_weight_decay,
        "best_response": settings.best_response,
    }
    if update != "-":
        values["update"] = update
    return TrainConfig(**values)


#: Called with a partial record (a run as it goes; the whole experiment between runs).
Progress = Callable[[dict[str, Any]], None]


def run_one(
    task: FindThePlus,
    settings: StabilitySettings,
    game: Game,
    progress: Progress | None = None,
    start: tuple[nn.Module, PlusVerifier] | None = None,
    folder: Path | None = None,
    earlier: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """One run of ``game = (formulation, update, error)``: play from the hand-set agents.

    With ``start`` (a trained prover and verifier) play starts from those instead, the
    error is ``None`` and pointing is measured for the most plus-shaped head.
    ``progress``, if given, receives the run's record (``"finished": False``) after each
    certification. With ``folder`` the run saves its training state there at every
    certification (and when stopped by SIGTERM or SIGINT); given ``earlier``, the
    unfinished record of the same run, it continues from that state, keeping the
    certifications made up to it (see :func:`carried_rows`).

    Raises:
        PVGError: ``folder``'s saved state does not fit this run or ``earlier``.
        TrainingStopped: the run was asked to stop and saved its state in ``folder``.
    """
    formulation, update, error = game
    gen = torch.Generator().manual_seed(10_000 + settings.seed)
    x, y = task.sample(settings.certify_size, gen)
    record: dict[str, Any] = {"formulation": formulation, "update": update, "error_px": error}
    config = _config(settings, formulation, update)
    rows: list[dict[str, Any]] = []
    resume = None
    if folder is not None:
        config = replace(config, out_dir=str(folder), checkpoint_every=settings.certify_every)
        rows = carried_rows(folder, earlier, settings.certify_every, settings.steps)
        resume = folder if rows else None

    def observe(step: int, prover: nn.Module, verifier: nn.Module) -> None:
        assert isinstance(verifier, PlusVerifier)
        device = next(verifier.parameters()).device
        where = x.to(device), y.to(device), None if start else 0
        rows.append({"step": step, **certify(verifier, prover, *where)})
        if progress is not None:
            progress({**record, "finished": False, "lost_at": _lost_at(rows), "rows": rows})

    agents = start or (PointingProver(task, error or 0.0, settings.seed), sound_verifier(task))
    result = train(task, config, observe=observe, resume=resume, agents=agents)
    for row, logged in zip(rows[1:], result.metrics, strict=True):
        row["verifier_accuracy"] = logged["verifier_accuracy"]
        row["prover_steps"] = logged["prover_steps"]
    return {
        **record,
        "finished": True,
        "lost_at": _lost_at(rows),
        "seconds": round(result.seconds, 1),
        "rows": rows,
    }


def played_out(run: dict[str, Any], steps: int) -> bool:
    """Whether an earlier run record has played all ``steps`` (a finished shorter one has not)."""
    return bool(run.get("finished", True)) and run["rows"][-1]["step"] >= steps


def _lost_at(rows: list[dict[str, Any]]) -> int | None:
    return next((row["step"] for row in rows if not row["sound"]), None)


def _game_of(run: dict[str, Any]) -> Game:
    error = run["error_px"]
    return run["formulation"], run["update"], None if error is None else float(error)


def _plan(settings: StabilitySettings) -> list[Game]:
    errors: tuple[float | None, ...] = (None,) if settings.start else settings.errors_px
    return [(f, u, e) for e in errors for f, u in settings.games()]


def _described(settings: StabilitySettings, task: FindThePlus) -> dict[str, Any]:
    """The settings as a results file records them (JSON types: lists, not tuples)."""
    described: dict[str, Any] = json.loads(
        json.dumps({**asdict(settings), "task": task.init_args()})
    )
    return described


def finished_runs(
    previous: dict[str, Any], settings: StabilitySettings, task: FindThePlus | None = None
) -> list[dict[str, Any]]:
    """The finished runs of an earlier results file of the same experiment, to reuse.

    Runs are independent and each is seeded by the settings alone, so a finished run
    is exactly what playing it again would give.

    Raises:
        PVGError: as :func:`earlier_runs`.
    """
    return [run for run in earlier_runs(previous, settings, task) if run.get("finished", True)]


def earlier_runs(
    previous: dict[str, Any], settings: StabilitySettings, task: FindThePlus | None = None
) -> list[dict[str, Any]]:
    """The runs, finished or not, of an earlier results file of the same experiment.

    :func:`run_stability` reuses the finished ones and continues an unfinished one from
    its saved state (see :func:`run_one`). The experiment must have the same settings,
    except that it may play more steps than the earlier one: its runs then continue to
    the new length, each from its saved state.

    Raises:
        PVGError: ``previous`` is not a results file, or records other settings (named).
    """
    if not isinstance(previous, dict) or not isinstance(previous.get("runs"), list):
        raise PVGError("the results to resume from are not a stability results file")
    if settings.start is not None:
        task, _, source = trained_start(settings.start, task)
        if previous.get("started_from") != source:  # e.g. the run has trained on since
            raise PVGError(
                f"the results to resume from started from {previous.get('started_from')}, "
                f"not {source}"
            )
    task = task or FindThePlus()
    recorded, wanted = previous.get("settings"), _described(settings, task)
    recorded = {**_ADDED_SETTINGS, **recorded} if isinstance(recorded, dict) else {}
    played = recorded.get("steps")
    if isinstance(played, int) and not isinstance(played, bool) and played <= settings.steps:
        recorded = {**recorded, "steps": settings.steps}  # to be played on, not again
    if recorded != wanted:
        differ = sorted(
            k for k in wanted.keys() | recorded.keys() if recorded.get(k) != wanted.get(k)
        )
        raise PVGError(
            "the results to resume from were played with other settings: "
            + ", ".join(f"{k} {recorded.get(k)!r} there, {wanted.get(k)!r} now" for k in differ)
            + (" (more steps may be played on, not fewer)" if "steps" in differ else "")
        )
    plan = set(_plan(settings))
    runs = [checked_run(run, f"run {i} of the results") for i, run in enumerate(previous["runs"])]
    return [run for run in runs if _game_of(run) in plan]


def run_stability(
    settings: StabilitySettings | None = None,
    task: FindThePlus | None = None,
    *,
    done: list[dict[str, Any]] | None = None,
    progress: Progress | None = None,
    runs_dir: Path | None = None,
) -> dict[str, Any]:
    """Every run of the experiment (see the module docstring), as JSON-able data.

    Args:
        settings: the experiment's scale (defaults: :class:`StabilitySettings`).
        task: the FindThePlus task played (its defaults: 4 heads).
        done: runs of an earlier results file (see :func:`earlier_runs`): the finished
            ones are reused rather than played; an unfinished one (or one that played
            fewer than ``settings.steps``) continues from its state saved in
            ``runs_dir``, if there is one, and is played again if not.
        progress: receives the results so far (``"complete": False``, the current run
            last with ``"finished": False``) after every certification and every run,
            so that a caller can save them as they grow.
        runs_dir: if given, each run saves its training state in its own folder there
            (:func:`run_name`) at every certification, so that a stopped experiment
            can be continued.

    Returns:
        ``{"settings": ..., "complete": True, "runs": [...]}``; each run has its
        formulation, update rule, pointing error, ``lost_at`` (the first certified step
        at which some label-0 image of the held-out batch could be made to pass,
        ``None`` if never) and its certification rows.

    Raises:
        PVGError: invalid settings, a task whose glimpses the exhaustive search cannot
            cover, or a saved state that does not fit its run.
        TrainingStopped: a run was asked to stop (SIGTERM, SIGINT) and saved its state
            in ``runs_dir``; the same call with ``done`` from the saved results goes on.
    """
    settings = settings or StabilitySettings()
    settings.validate()
    resolve_device(settings.device)
    start, source = None, None
    if settings.start is not None:
        task, start, source = trained_start(settings.start, task)
    task = task or FindThePlus()
    task.check_exhaustive()
    reuse = {_game_of(run): run for run in done or []}
    results: dict[str, Any] = {"settings": _described(settings, task), "complete": False}
    if source is not None:
        results["started_from"] = source
    runs: list[dict[str, Any]] = []

    def report(current: dict[str, Any]) -> None:
        if progress is not None:
            progress({**results, "runs": [*runs, current]})

    for game in _plan(settings):
        earlier = reuse.get(game)
        if earlier is None or not played_out(earlier, settings.steps):
            folder = None if runs_dir is None else runs_dir / run_name(game)
            earlier = run_one(task, settings, game, report, start, folder, earlier)
        runs.append(earlier)
        if progress is not None:
            progress({**results, "runs": list(runs)})
    return {**results, "complete": True, "runs": runs}
