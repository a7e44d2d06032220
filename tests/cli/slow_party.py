"""Provers that stall inside their call, for the interrupt tests (a plugin, loaded on demand).

Loaded by a subprocess through ``PROOFGAMES_PLUGINS=tests.cli.slow_party`` only: it is not
in ``tests/plugins`` (whose modules every test session registers).

- bisection A ``stall:path=P`` touches P and sleeps in its first call (``swallow=true``:
  it catches whatever interrupts the sleep, then plays on as the honest A);
- stochastic A ``stall-second-chunk:path=P`` plays as the honest A, but the second player
  of a process to be called (the second chunk of an estimate) touches P and sleeps first.

Neither stalls once P exists: a run started again plays as the honest A.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from proofgames.strategies import Player, make_strategy, register_strategy

_PLAYING = {"players": 0}  # players of this process that have been called


def _stall(path: str, swallow: bool) -> None:
    if Path(path).exists():  # stalled once already: a resumed run plays on
        return
    Path(path).touch()
    try:
        time.sleep(120)
    except BaseException:
        if not swallow:
            raise


class _Stalling(Player):
    """Delegates to the honest player after stalling once (if asked to)."""

    def __init__(self, protocol: str, path: str, when: int, swallow: bool) -> None:
        self._honest = make_strategy(protocol, "A", "honest")
        self._path, self._when, self._swallow = path, when, swallow
        self._called = False

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._honest, name)

        def call(*args: Any) -> Any:
            if not self._called:
                self._called = True
                _PLAYING["players"] += 1
                if _PLAYING["players"] == self._when:
                    _stall(self._path, self._swallow)
            out = method(*args)
            self.work = getattr(self._honest, "work", 0)
            return out

        return call


@register_strategy("bisection", "A", "stall")
def stall(path: str = "stall.flag", swallow: bool = False) -> _Stalling:
    """The honest A, after touching ``path`` and sleeping in its first call."""
    return _Stalling("bisection", path, 1, swallow)


@register_strategy("stochastic", "A", "stall-second-chunk")
def stall_second_chunk(path: str = "stall.flag") -> _Stalling:
    """The honest A; the second one called in a process stalls first."""
    return _Stalling("stochastic", path, 2, False)
