"""Bisection B strategies that misbehave inside their own process (a plugin, loaded on demand).

Loaded through ``PROOFGAMES_PLUGINS=tests.isolation.hostile_party`` by a subprocess only
(the party-server tests run V in one), so that the test session's registry stays as it is.

- ``crash``: ends its process in its first call (``os._exit(7)``);
- ``hang``: sleeps in its first call;
- ``garbage``: writes a line that is not JSON to every descriptor above 2 (its private
  channel among them), then sleeps;
- ``flood``: writes a 64 KiB line the same way (V's script lowers its limit to 32 KiB).
"""

from __future__ import annotations

import contextlib
import os
import time
from typing import Any

from proofgames.strategies import Player, register_strategy

P = "bisection"


class _Hostile(Player):
    def __init__(self, how: str) -> None:
        self.how = how

    def dispute(self, ctx: Any, state: Any, midpoint: Any) -> str:
        if self.how == "crash":
            os._exit(7)
        if self.how in ("garbage", "flood"):
            line = b"this is not json\n" if self.how == "garbage" else b"x" * (1 << 16) + b"\n"
            for fd in range(3, 64):
                with contextlib.suppress(OSError):
                    os.write(fd, line)
        time.sleep(1000)
        return "first"


@register_strategy(P, "B", "crash")
def crash_b() -> _Hostile:
    """Ends its own process in its first call."""
    return _Hostile("crash")


@register_strategy(P, "B", "hang")
def hang_b() -> _Hostile:
    """Never answers its first call."""
    return _Hostile("hang")


@register_strategy(P, "B", "garbage")
def garbage_b() -> _Hostile:
    """Answers its first call with a line that is not a message."""
    return _Hostile("garbage")


@register_strategy(P, "B", "flood")
def flood_b() -> _Hostile:
    """Answers its first call with a 64 KiB line (over the limit V's script sets)."""
    return _Hostile("flood")
