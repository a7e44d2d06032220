"""Machines: Turing machines (with oracles), their tableau layout, and example computations."""

from .tableau import TableauTranscript
from .turing import TMProgram, TuringMachine, measure_span, parse_tm

__all__ = ["TMProgram", "TableauTranscript", "TuringMachine", "measure_span", "parse_tm"]
