"""What the CPU benchmarks share: publishing a result, and the command line around it.

``publish`` writes ``results/NAME.{json,md}`` and fills the ``bench:BLOCK`` block of
docs/performance.md with the markdown under a "Measured ..." line; ``main`` parses
``--repeat``, ``--json`` and ``--publish``, measures, publishes if asked, and prints.
(The PyTorch benchmarks use ``_publish.py``, which records the torch build.)
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from proofgames.reporting import replace_block, write_atomic, write_json

ROOT = Path(__file__).resolve().parent.parent


def publish(name: str, script: str, block: str, result: dict[str, Any], markdown: str) -> str:
    """results/NAME.{json,md} and the docs/performance.md block ``bench:BLOCK``."""
    results = ROOT / "benchmarks" / "results"
    write_json(results / f"{name}.json", result, indent=2)
    md = (
        f"Measured {time.strftime('%Y-%m-%d')} on {platform.machine()}, CPython "
        f"{platform.python_version()} (`.venv/bin/python benchmarks/{script} --publish`)."
        f"\n\n" + markdown
    )
    write_atomic(results / f"{name}.md", md)
    replace_block(ROOT / "docs" / "performance.md", f"bench:{block}", md)
    return md


def main(
    description: str,
    measure: Callable[[int], dict[str, Any]],
    markdown: Callable[[dict[str, Any]], str],
    publish_result: Callable[[dict[str, Any]], object],
    repeat: int,
) -> None:
    """Parse the arguments, measure ``--repeat`` rounds, publish if asked, print."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--repeat", type=int, default=repeat)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--publish", action="store_true")
    args = parser.parse_args()
    result = measure(args.repeat)
    if args.publish:
        publish_result(result)
    print(json.dumps(result, indent=2) if args.json else markdown(result))
