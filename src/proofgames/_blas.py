"""OpenBLAS's idle threads, kept from spinning in short-lived proofgames processes.

When NumPy loads, OpenBLAS starts its worker threads (one per further core), and each then
busy-waits for work for about 2^28 cycles (around 0.1 s) before it sleeps.  A proofgames
command rarely gives them any: the spin is CPU taken from the computation, on a second
core that an isolated prover or the party server may need.  ``OPENBLAS_THREAD_TIMEOUT``
(a power of two of cycles, 4 to 30) shortens the wait; at 4 an idle thread sleeps at once.
The threads stay, and multithreaded BLAS calls run as before (a sleeping thread is woken
when work comes).  On this project's development machine ``python -c "import numpy"``
took 0.18-0.19 s of CPU without it and 0.09-0.10 s with it (``docs/performance.md``).

:func:`quiet` sets it in an environment unless the user has set it; the command line does
so before it imports NumPy, and V passes it to the prover processes it starts.

Example:
    >>> env = {"OPENBLAS_THREAD_TIMEOUT": "20"}
    >>> quiet(env) is env, env["OPENBLAS_THREAD_TIMEOUT"]  # the user's choice stands
    (True, '20')
    >>> quiet({})
    {'OPENBLAS_THREAD_TIMEOUT': '4'}
"""

from __future__ import annotations

from collections.abc import MutableMapping

QUIET = {"OPENBLAS_THREAD_TIMEOUT": "4"}


def quiet(env: MutableMapping[str, str]) -> MutableMapping[str, str]:
    """Add :data:`QUIET`'s settings to ``env`` where it has none; return ``env``."""
    for key, value in QUIET.items():
        env.setdefault(key, value)
    return env
