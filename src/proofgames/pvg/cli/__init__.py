"""``proofgames pvg``: train Prover-Verifier Games and stress-test the verifiers.

A :class:`typer.Typer` sub-application, :data:`app`; the main CLI mounts it as ``pvg``.
The commands of the engine (``train``, ``stress``) and of the reproduction
(``reproduce``, ``report``) are in :mod:`~proofgames.pvg.cli._main`; ``curves``,
``diagnose``, ``stability`` and ``start-gradient`` each have a module of their own.

Example:
    >>> sorted(command.name for command in app.registered_commands)[:3]
    ['curves', 'diagnose', 'report']
"""

from ._main import app, report_command, reproduce_command, stress_command, train_command

__all__ = ["app", "report_command", "reproduce_command", "stress_command", "train_command"]
