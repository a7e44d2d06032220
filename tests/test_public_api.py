"""The public front door: ``from proofgames import ...`` covers the README's Python section.

The names are pinned here; each has a docstring with a runnable example (the doctests run
them); the exceptions live in the public ``proofgames.errors``; and ``import proofgames``
itself loads none of them until one is used.
"""

from __future__ import annotations

import inspect
import subprocess
import sys

import pytest

import proofgames
from proofgames import errors

PUBLIC = [
    "BernoulliOracle", "Batch", "CheckpointedRun", "Configuration", "ConfigurationError",
    "ConfigurationMachine", "ExplicitTranscriptMachine", "FunctionOracle", "Instance",
    "MachineFormatError", "Oracle", "OracleError", "OracleLedger", "OracleView", "Outcome",
    "ProofgamesError", "ProtocolError", "RegistryError", "Step", "TableOracle",
    "TableauTranscript", "TranscriptBuilder", "TranscriptMachine", "TuringMachine",
    "estimate_acceptance", "exact_completeness_soundness", "gates", "get_protocol",
    "machine_params", "make_stochastic_machine", "make_strategy", "optimal_liar", "play",
    "play_batch", "play_bisection", "play_cross_examination", "play_stochastic",
    "play_witness", "protocol_names", "register_protocol", "register_strategy",
    "resolve_instance", "strategy_names",
]  # fmt: skip


def test_the_front_door_exports_exactly_the_pinned_names():
    assert sorted(proofgames.__all__) == sorted(["__version__", *PUBLIC])
    for name in PUBLIC:
        assert getattr(proofgames, name) is not None
    with pytest.raises(AttributeError, match="no attribute 'nonsense'"):
        proofgames.nonsense  # noqa: B018


@pytest.mark.parametrize("name", PUBLIC)
def test_every_public_name_has_a_docstring_with_an_example(name):
    doc = inspect.getdoc(getattr(proofgames, name)) or ""
    assert doc.strip(), f"{name} has no docstring"
    assert ">>>" in doc, f"{name}'s docstring has no runnable example"


def test_the_exceptions_live_in_proofgames_errors():
    for name in PUBLIC:
        obj = getattr(proofgames, name)
        if isinstance(obj, type) and issubclass(obj, BaseException):
            assert obj.__module__ == "proofgames.errors"
            assert getattr(errors, name) is obj
            assert issubclass(obj, errors.ProofgamesError)


def test_importing_proofgames_loads_nothing_heavy():
    code = (
        "import sys, proofgames\n"
        "heavy = ['torch', 'scipy', 'matplotlib', 'fastapi', 'inspect_ai', 'numba', 'numpy',\n"
        "         'proofgames.harness', 'proofgames.protocols']\n"
        "print([m for m in heavy if m in sys.modules])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
