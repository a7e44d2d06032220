"""Prover-Verifier Games (Anil, Zhang, Wu, Grosse 2021) in PyTorch (optional extra ``pvg``).

Where each part lives (everything below is also exported from here):

* the engine, at this level: the task interface (:mod:`~proofgames.pvg.task`) and
  registry (:mod:`~proofgames.pvg.registry`), the game and training loop
  (:mod:`~proofgames.pvg.train`, :mod:`~proofgames.pvg.config`; several seeds as one
  batched model: :mod:`~proofgames.pvg.batched`), stress tests
  (:mod:`~proofgames.pvg.stress`) and checkpoints (:mod:`~proofgames.pvg.checkpoint`);
* :mod:`proofgames.pvg.tasks`: BEC, FindThePlus and FindTheNeedle, one file each;
* :mod:`proofgames.pvg.find_the_plus`: the research on FindThePlus (exact message
  search, detectors, diagnostics, stability from a sound start, start gradient);
* :mod:`proofgames.pvg.reproduce`: the reproduction of the paper, its profiles, report
  and figures.

The ``proofgames pvg`` commands live outside this package, in :mod:`proofgames.cli.pvg`,
with the rest of the command line.

Example:
    >>> from proofgames.pvg import TrainConfig, make_task, train
    >>> task = make_task("bec")
    >>> result = train(task, TrainConfig(steps=3, batch_size=64, eval_size=64, progress=False))
    >>> result.steps, sorted(result.metrics[-1])[:3]
    (3, ['erasure_fraction', 'fn', 'fp'])
"""

from .batched import train_seeds
from .checkpoint import (
    Checkpoint,
    TrainingState,
    load_checkpoint,
    load_training_agents,
    load_training_state,
    save_checkpoint,
)
from .find_the_plus.message_search import ExhaustiveSearch, search_messages
from .registry import make_task, parse_task_args, register_task, task_defaults, task_names
from .reproduce.profiles import PROFILES, Profile
from .reproduce.report import write_report
from .reproduce.reproduce import reproduce
from .stress import (
    ALL_ATTACKS,
    ATTACKS,
    PROVER_ATTACKS,
    AttackResult,
    ExhaustiveMessages,
    StressConfig,
    evaluate,
    stress_test,
    supported_attacks,
)
from .task import ProverOutput, PVGTask
from .tasks.bec import BECProver, BECVerifier, BinaryErasureChannel
from .tasks.find_the_plus import FindThePlus, PlusProver, PlusVerifier
from .tasks.needle import FindTheNeedle
from .train import (
    FORMULATIONS,
    RESUMABLE_CHANGES,
    UPDATES,
    TrainConfig,
    TrainResult,
    train,
)

__all__ = [
    "ALL_ATTACKS",
    "ATTACKS",
    "FORMULATIONS",
    "RESUMABLE_CHANGES",
    "AttackResult",
    "BECProver",
    "BECVerifier",
    "BinaryErasureChannel",
    "PROFILES",
    "PROVER_ATTACKS",
    "Checkpoint",
    "ExhaustiveMessages",
    "ExhaustiveSearch",
    "FindTheNeedle",
    "FindThePlus",
    "PVGTask",
    "PlusProver",
    "PlusVerifier",
    "Profile",
    "ProverOutput",
    "StressConfig",
    "TrainConfig",
    "TrainResult",
    "TrainingState",
    "UPDATES",
    "evaluate",
    "load_checkpoint",
    "load_training_agents",
    "load_training_state",
    "make_task",
    "parse_task_args",
    "register_task",
    "reproduce",
    "save_checkpoint",
    "search_messages",
    "stress_test",
    "supported_attacks",
    "task_defaults",
    "task_names",
    "train",
    "train_seeds",
    "write_report",
]
