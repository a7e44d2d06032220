"""Where the PyTorch benchmarks put their figures: results/NAME.{json,md} and a README block."""

from __future__ import annotations

import json
import platform
import time
from pathlib import Path
from typing import Any

import torch

from proofgames._readme import replace_block

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "results"


def measured_with_torch(script: str) -> str:
    """The opening of a README block: date, machine, torch build and thread count, command."""
    return (
        f"Measured {time.strftime('%Y-%m-%d')} on {platform.machine()}, torch "
        f"{torch.__version__}, {torch.get_num_threads()} thread(s) "
        f"(`.venv/bin/python benchmarks/{script}`)."
    )


def publish(name: str, block: str, result: dict[str, Any], md: str) -> None:
    """Write ``results/NAME.json`` and ``results/NAME.md``, fill the README block, print."""
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / f"{name}.json").write_text(json.dumps(result, indent=2) + "\n")
    (OUT / f"{name}.md").write_text(md)
    replace_block(ROOT / "README.md", block, md)
    print(md)
