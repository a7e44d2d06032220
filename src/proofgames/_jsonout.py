"""JSON that every parser reads: no NaN or Infinity, integers as integers.

Example:
    >>> import numpy as np
    >>> dumps({"a": float("nan"), "b": np.int64(3), "c": [np.float64(0.5), float("inf")]})
    '{"a": null, "b": 3, "c": [0.5, null]}'
"""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np


def plain(obj: Any) -> Any:
    """``obj`` with numpy scalars and arrays made plain, and non-finite floats as ``None``.

    ``None`` in a number's place means "not a finite number" (no value, or an infinite one).
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


def dumps(obj: Any, **kwargs: Any) -> str:
    """Strict JSON text of ``obj`` (see :func:`plain`)."""
    return json.dumps(plain(obj), allow_nan=False, **kwargs)
