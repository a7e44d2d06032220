"""Shared by the red-team suites: what a hostile party can reach from what V hands it."""

from __future__ import annotations

import types
from typing import Any

import numpy as np


def reachable(root: Any, limit: int = 200_000) -> list[Any]:
    """Objects reachable from ``root`` through attributes, containers and closures (not gc)."""
    seen: dict[int, Any] = {}
    todo = [root]
    while todo and len(seen) < limit:
        obj = todo.pop()
        if id(obj) in seen or isinstance(obj, (type, types.ModuleType, str, bytes, int, float)):
            continue
        seen[id(obj)] = obj
        if isinstance(obj, dict):
            todo.extend(obj.values())
        elif isinstance(obj, (list, tuple, set, frozenset)):
            todo.extend(obj)
        elif isinstance(obj, types.FunctionType):
            todo.extend(c.cell_contents for c in obj.__closure__ or () if _filled(c))
        elif isinstance(obj, types.MethodType):
            todo.extend((obj.__self__, obj.__func__))
        if isinstance(obj, np.ndarray):
            continue
        todo.extend(getattr(obj, "__dict__", {}).values())
        for slot in getattr(type(obj), "__slots__", ()):
            if hasattr(obj, slot):
                todo.append(getattr(obj, slot))
    return list(seen.values())


def _filled(cell: Any) -> bool:
    try:
        cell.cell_contents  # noqa: B018
    except ValueError:
        return False
    return True
