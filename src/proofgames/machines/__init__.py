"""Machines: Turing machines (with oracles), their tableau layout, and example computations.

Each module registers its own examples when it is imported (the Turing machines in
:mod:`.examples`, the SAT problems in :mod:`.sat`, the screening machines in
:mod:`.screening`); this package imports all of them, so importing :mod:`proofgames.machines`
(or any of its modules) registers every example.
"""

from . import examples as examples
from .sat import CNF, SatProblem, WitnessError, parse_dimacs, planted_3sat, resolve_sat
from .screening import (
    RULES,
    Screening,
    judgement_oracle,
    screening_machine,
    screening_program,
    screening_transcript,
)
from .tableau import TableauTranscript
from .turing import TMProgram, TuringMachine, measure_span, parse_tm

__all__ = [
    "CNF",
    "RULES",
    "SatProblem",
    "Screening",
    "TMProgram",
    "TableauTranscript",
    "TuringMachine",
    "WitnessError",
    "judgement_oracle",
    "measure_span",
    "parse_dimacs",
    "parse_tm",
    "planted_3sat",
    "resolve_sat",
    "screening_machine",
    "screening_program",
    "screening_transcript",
]
