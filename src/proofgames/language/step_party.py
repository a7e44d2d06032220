"""The prover's side for step transcripts: ``python -m proofgames.language.step_party NAME``.

Runs one of the library's own step-transcript provers as a separate process that speaks
``docs/wire.md`` (section "Step-transcript debates") on its stdin and stdout, so that
``--isolation process`` puts the built-in provers of a generated task in processes of
their own, as it does the core protocols' strategies. The names:

=============  ===============================================================
``honest``     A, defending the generated task's reference transcript
``dishonest``  A, defending the transcript with the planted error
``reference``  B who knows every step's right result (``ReferenceB``)
``checker``    B who disputes the first step a calculator rejects
``contrarian`` B who disputes a random step, from the hello's seed
=============  ===============================================================

The hello's instance names the generated task it rebuilds:
``{"kind": "step-transcript", "task": str, "generated": {"steps": int, "seed": int}}``
(``error_at``, an int, too when the error was not drawn from the seed); the rebuilt task
must be the hello's ``task`` word for word.

Example (what the language layer runs; see :mod:`proofgames.isolation.steps`)::

    python -m proofgames.language.step_party dishonest
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any

from .. import wire
from ..errors import ProtocolError
from ..isolation.party import run_party
from ..isolation.steps import STEP_METHODS, step_dict
from .generated import generate_chain
from .provers import CheckerB, ContrarianB, ReferenceB, ScriptedA
from .transcript import ArgumentStep, StepTranscript

NAMES = {"honest": "A", "dishonest": "A", "reference": "B", "checker": "B", "contrarian": "B"}
USAGE = (
    f"usage: python -m proofgames.language.step_party {{{','.join(NAMES)}}}"
    "  (speaks docs/wire.md on stdin/stdout)"
)


def build(name: str, hello: dict[str, Any]) -> tuple[str, Any]:
    """The role and the prover ``name`` for the task the hello describes."""
    if name not in NAMES:
        raise ProtocolError(f"unknown step prover {name!r}: use one of {', '.join(NAMES)}")
    role = wire.as_choice(hello.get("role"), ("A", "B"), "role")
    if role != NAMES[name]:
        raise ProtocolError(f"{name} plays {NAMES[name]}, not {role}")
    seed = wire.as_int(hello.get("seed"), "the hello's seed")
    if name == "checker":
        return role, CheckerB()
    if name == "contrarian":
        return role, ContrarianB(seed)
    inst = hello.get("instance")
    gen = inst.get("generated") if type(inst) is dict else None
    if type(gen) is not dict:
        raise ProtocolError(f"{name} needs the generated task's steps, seed and error_at")
    at = gen.get("error_at")
    item = generate_chain(wire.as_int(gen.get("steps"), "steps"),
                          wire.as_int(gen.get("seed"), "seed"),
                          None if at is None else wire.as_int(at, "error_at"))  # fmt: skip
    if type(inst) is not dict or item.task_text != inst.get("task"):
        raise ProtocolError("the generated task rebuilt here differs from V's")
    if name == "reference":
        return role, ReferenceB(item.reference)
    return role, ScriptedA(item.reference if name == "honest" else item.dishonest)


def plain(value: object) -> object:
    """A prover's answer as plain data."""
    if type(value) is StepTranscript:
        return value.to_dict()
    if type(value) is ArgumentStep:
        return step_dict(value)
    return value


def answer(role: str, prover: Any, method: object, args: object) -> object:
    """One call: the typed arguments rebuilt, the async method run, the answer made plain."""
    if method not in STEP_METHODS[role] or type(args) is not list:
        raise ProtocolError(f"prover {role} has no method {method!r}")
    if method == "dispute":
        args = [args[0], StepTranscript.from_dict(args[1])]
    elif method == "half":
        s = args[2]
        said = ArgumentStep(s["text"], tuple(s["uses"]), tuple(s["task_parts"]), s["result"])
        args = [args[0], args[1], said]
    return plain(asyncio.run(getattr(prover, str(method))(*args)))


class StepServer:
    """One built-in step prover answering V's calls (what :func:`serve` needs)."""

    def __init__(self, name: str, hello: dict[str, Any], channel: object) -> None:
        self.role, self.prover = build(name, hello)

    def call(self, method: object, args: object) -> object:
        """One move, as plain data."""
        return answer(self.role, self.prover, method, args)

    def costs(self) -> dict[str, int]:
        """Nothing to report: the built-in provers call no model."""
        return {}


def main(argv: list[str] | None = None) -> int:
    """Entry point: play the prover ``argv[0]`` over stdin/stdout."""
    return run_party(sys.argv[1:] if argv is None else argv, StepServer, USAGE)


if __name__ == "__main__":
    code = main()
    sys.stderr.flush()
    os._exit(code)
