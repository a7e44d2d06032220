r"""Strict JSON: text every parser reads, with no NaN or Infinity, integers as integers.

A float that is not a finite number (a diverged loss, an empty batch's rate) is written as
``null``; numpy scalars and arrays become plain numbers and lists.  Every JSON file and
``--json`` output of proofgames goes through :func:`dumps`.

Example:
    >>> import numpy as np
    >>> dumps({"a": float("nan"), "b": np.int64(3), "c": [np.float64(0.5), float("inf")]})
    '{"a": null, "b": 3, "c": [0.5, null]}'
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from .files import write_atomic


def plain(obj: Any) -> Any:
    """``obj`` with numpy scalars and arrays made plain, and non-finite floats as ``None``.

    ``None`` in a number's place means "not a finite number" (no value, or an infinite
    one).  Keys become strings and tuples lists, as in JSON; other objects are kept.

    Example:
        >>> plain({1: (np.float32(0.5), float("-inf")), "n": np.arange(2)})
        {'1': [0.5, None], 'n': [0, 1]}
    """
    if isinstance(obj, dict):
        return {str(k): plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [plain(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return plain(obj.tolist())
    if isinstance(obj, np.generic):
        return plain(obj.item())
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


def dumps(obj: Any, indent: int | None = None, *, ensure_ascii: bool = True) -> str:
    """Strict JSON text of ``obj`` (see :func:`plain`).

    Raises:
        TypeError: ``obj`` holds something JSON has no form for (a set, an object).

    Example:
        >>> print(dumps({"loss": float("nan"), "steps": [1, 2]}, indent=1))
        {
         "loss": null,
         "steps": [
          1,
          2
         ]
        }
    """
    return json.dumps(plain(obj), indent=indent, ensure_ascii=ensure_ascii, allow_nan=False)


def write_json(
    path: Path | str, obj: Any, indent: int | None = None, *, parents: bool = False
) -> Path:
    r"""Write ``obj`` to ``path`` as strict JSON and a final newline, atomically.

    See :func:`dumps` and :func:`~proofgames.reporting.files.write_atomic` (``parents``
    makes missing folders).

    Example:
        >>> import pathlib, tempfile
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "results.json"
        >>> write_json(path, {"rate": float("nan")}).read_text()
        '{"rate": null}\n'
    """
    return write_atomic(path, dumps(obj, indent) + "\n", parents=parents)
