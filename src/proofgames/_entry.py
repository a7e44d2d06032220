"""The ``proofgames`` process's entry point: the command line, with the collector kept aside.

A process that runs one command and exits can spare itself two kinds of work of Python's
cyclic garbage collector, neither of which frees anything it needs:

- collections during the imports: they allocate tens of thousands of objects and make
  almost no cyclic garbage, yet each pass walks them all;
- the interpreter's last collections at exit, which walk every object still alive:
  :func:`gc.freeze` moves them all out of their way first.

On the bb5 bisection debate command these took about 20-30 ms and 20-45 ms of a 0.4 s run
(``docs/performance.md``).  The collector runs as usual while the command itself runs.
Only this entry does either: ``import proofgames.cli`` (a library user, the tests) and
:func:`proofgames.cli.main` called in a process of its own leave the collector alone.
It also keeps OpenBLAS's idle threads from spinning (:mod:`proofgames._blas`; about 0.1
s of CPU a process) unless the user's environment says otherwise.
Exit statuses and output are those of :func:`proofgames.cli.main`.

Example:
    >>> import subprocess, sys
    >>> out = subprocess.run([sys.executable, "-m", "proofgames", "protocols"],
    ...                      capture_output=True, text=True)
    >>> out.returncode, "bisection" in out.stdout
    (0, True)
"""

from __future__ import annotations

import gc
import os
from typing import NoReturn

from ._blas import quiet

__all__ = ["main"]


def main() -> NoReturn:
    """Run the command line (``sys.argv``) as the ``proofgames`` script does."""
    quiet(os.environ)  # before NumPy loads (inherited by the processes this one starts)
    gc.disable()  # the imports make no garbage worth a collection
    try:
        from .cli import main as command_line
    finally:
        gc.enable()
    try:
        command_line()
    finally:
        gc.freeze()  # exiting next: the last collections need not walk what is alive
