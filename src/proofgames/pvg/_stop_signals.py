"""Stop requests for resumable training: SIGTERM and SIGINT, caught between game steps.

Private to :mod:`proofgames.pvg.train`: a run with ``checkpoint_every`` that is asked to
stop saves its state after the game step in progress and raises ``TrainingStopped``.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from .config import TrainConfig


@contextmanager
def stop_requests(config: TrainConfig) -> Iterator[list[str]]:
    """Catch SIGTERM and SIGINT during a resumable run, so that it can save and stop.

    Yields the names of the signals received; the loop stops after the game step in
    progress. A second signal stops at once (``KeyboardInterrupt``). Nothing is caught
    for a run without ``checkpoint_every`` (it could not be resumed) or off the main
    thread (where Python cannot install handlers); the previous handlers come back after.
    """
    received: list[str] = []
    if not config.checkpoint_every or threading.current_thread() is not threading.main_thread():
        yield received
        return

    def handler(signum: int, frame: Any) -> None:
        if received:
            raise KeyboardInterrupt
        received.append(signal.Signals(signum).name)

    previous = {s: signal.signal(s, handler) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield received
    finally:
        for s, old in previous.items():
            signal.signal(s, old)
