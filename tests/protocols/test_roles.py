"""Roles declared once: what V calls on each prover, derived everywhere from one declaration."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Protocol

import numpy as np
import pytest

from proofgames.errors import ProtocolError
from proofgames.protocols import GameContext, get_protocol, protocol_names
from proofgames.protocols.roles import (
    CONTEXT,
    POSITIONS,
    Method,
    Role,
    party_arguments,
    wire_arguments,
)

WIRE_DOC = Path(__file__).resolve().parents[2] / "docs" / "wire.md"


class _Asks(Protocol):
    def ask(self, ctx: GameContext, positions: object) -> object: ...


def test_a_role_must_declare_exactly_its_interfaces_methods():
    ask = Method("ask", (CONTEXT, POSITIONS), "an int")
    assert Role(_Asks, (ask,)).names() == ("ask",)
    with pytest.raises(ProtocolError, match=r"declares methods \['ask', 'tell'\]"):
        Role(_Asks, (ask, Method("tell", (CONTEXT,), "")))
    with pytest.raises(ProtocolError, match=r"takes \('ctx', 'positions'\), declared \('ctx',\)"):
        Role(_Asks, (Method("ask", (CONTEXT,), ""),))
    with pytest.raises(ProtocolError, match="no method 'tell'; this role has ask"):
        Role(_Asks, (ask,)).method("tell")


def test_only_sent_arguments_travel_and_the_read_callback_stays_with_v():
    def read(positions):
        return positions

    challenge = get_protocol("cross-examination").roles["B"].method("challenge")
    plain, relay = wire_arguments(challenge, ("V's context", read))
    assert plain == [] and relay is read
    entries = get_protocol("cross-examination").roles["A"].method("entries")
    plain, relay = wire_arguments(entries, ("V's context", [3, 1]))
    assert relay is None and plain[0].dtype == np.int64 and plain[0].tolist() == [3, 1]
    with pytest.raises(ProtocolError, match="entries takes 2 arguments, got 1"):
        wire_arguments(entries, ("V's context",))


@pytest.mark.parametrize("args", [None, "[1]", [], [[1], [2]]])
def test_a_party_refuses_calls_whose_args_do_not_fit_the_declaration(args):
    entries = get_protocol("cross-examination").roles["A"].method("entries")
    with pytest.raises(ProtocolError, match="entries's args must be a list of 1 values"):
        party_arguments(entries, args, side=None)  # type: ignore[arg-type]


def _documented() -> dict[str, set[tuple[str, str]]]:
    """``{protocol: {(method, role)}}`` from the tables of docs/wire.md, section 4."""
    text = WIRE_DOC.read_text().split("## 4.", 1)[1].split("\n## ", 1)[0]
    out: dict[str, set[tuple[str, str]]] = {}
    for part in re.split(r"^### ", text, flags=re.M)[1:]:
        protocol = part.split()[0]
        for row in re.findall(r"^\| (`.+?) \| ([AB, ]+) \|", part, flags=re.M):
            for method in re.findall(r"`([a-z]+)`", row[0]):
                for role in row[1].replace(" ", "").split(","):
                    out.setdefault(protocol, set()).add((method, role))
    return out


def test_the_wire_format_page_lists_exactly_the_declared_methods():
    documented = _documented()
    builtin = [p for p in protocol_names() if get_protocol(p).play.__module__.startswith("proof")]
    assert sorted(documented) == sorted(builtin)
    for protocol in builtin:
        roles = get_protocol(protocol).role_methods()
        declared = {(m, r) for r, names in roles.items() for m in names}
        assert documented[protocol] == declared, protocol


def test_the_message_index_is_derived_from_the_roles():
    info = get_protocol("stochastic")
    assert set(info.messages) == {"announce", "coin", "abort"}
    assert (
        info.messages["coin"].startswith("A: args [r: ")
        and "; B: args [r: " in info.messages["coin"]
    )
    assert info.to_dict()["messages"] == info.messages
