"""Where the PyTorch benchmarks put their figures: results/NAME.{json,md} and a block of
docs/performance.md."""

from __future__ import annotations

import platform
import time
from pathlib import Path
from typing import Any

import torch

from proofgames.reporting import replace_block, write_atomic, write_json

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "results"
PERFORMANCE = ROOT / "docs" / "performance.md"


def measured_with_torch(script: str) -> str:
    """The opening of a performance block: date, machine, torch build and thread count, command."""
    return (
        f"Measured {time.strftime('%Y-%m-%d')} on {platform.machine()}, torch "
        f"{torch.__version__}, {torch.get_num_threads()} thread(s) "
        f"(`.venv/bin/python benchmarks/{script}`)."
    )


def publish(name: str, block: str, result: dict[str, Any], md: str) -> None:
    """Write ``results/NAME.json`` and ``results/NAME.md``, fill the PERFORMANCE block, print."""
    OUT.mkdir(parents=True, exist_ok=True)
    write_json(OUT / f"{name}.json", result, indent=2)
    write_atomic(OUT / f"{name}.md", md)
    replace_block(PERFORMANCE, block, md)
    print(md)
