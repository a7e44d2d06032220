"""Research on FindThePlus: why trained verifiers are not sound, and what would make them.

Built on the task (:mod:`proofgames.pvg.tasks.find_the_plus`) and the training engine:

* :mod:`~proofgames.pvg.find_the_plus.message_search`: the exact search for the most
  convincing message (the ``exhaustive`` attack and the exact prover);
* :mod:`~proofgames.pvg.find_the_plus.detectors` and
  :mod:`~proofgames.pvg.find_the_plus.diagnostics`: what the verifier's heads detect,
  where the prover points them, and how the exhaustive attack wins (``pvg diagnose``);
* :mod:`~proofgames.pvg.find_the_plus.stability`: training started at a hand-set sound
  verifier (``pvg stability``), with its saves and report;
* :mod:`~proofgames.pvg.find_the_plus.start_gradient`: the verifier's first gradient at
  that start (``pvg start-gradient``).

The task module used to live at this path: for one release its names (e.g.
``FindThePlus``) are still found here, with a :class:`DeprecationWarning` that names
their new home.

Example:
    >>> import warnings
    >>> from proofgames.pvg.tasks.find_the_plus import FindThePlus
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", DeprecationWarning)
    ...     from proofgames.pvg.find_the_plus import FindThePlus as old
    >>> old is FindThePlus
    True
"""

from __future__ import annotations

import importlib
import warnings
from typing import Any

#: Where the task module, once at this path, lives now.
_TASK = "proofgames.pvg.tasks.find_the_plus"


def __getattr__(name: str) -> Any:
    """The task's old names, from :mod:`proofgames.pvg.tasks.find_the_plus` (deprecated).

    Each warns once: its value is then kept here.
    """
    task = importlib.import_module(_TASK)
    if name not in task.__all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    warnings.warn(
        f"{__name__}.{name} moved to {_TASK}.{name}; the old path goes in the next release",
        DeprecationWarning,
        stacklevel=2,
    )
    value = globals()[name] = getattr(task, name)
    return value
