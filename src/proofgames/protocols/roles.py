"""What a protocol asks its provers, declared once: roles, methods, arguments and answers.

A protocol declares, in its :class:`~proofgames.protocols.ProtocolInfo`, one
:class:`Role` per prover.  A role names the typing ``Protocol`` class that players
implement and lists its :class:`Method` s; each method lists its :class:`Param` s in the
order V passes them and describes the answer.  Everything else is derived from that
declaration: the message index (``ProtocolInfo.messages``), what a method's call looks
like on the wire (:mod:`proofgames.isolation`, V's side), how a party's own process turns
the plain arguments back into the typed ones its strategy expects
(:mod:`proofgames.isolation.party`), and the schema in ``docs/wire.md``.

A parameter is either *sent* (V's value is encoded as plain data, and decoded on the
party's side) or the party's *own* (its context, its generator, its copy of the problem,
its read callback): an own value never travels; the party's process supplies its own.

Example:
    >>> from proofgames.protocols import get_protocol
    >>> role = get_protocol("bisection").roles["A"]
    >>> role.names()
    ('final', 'midpoint')
    >>> tuple(p.name for p in role.method("midpoint").params if p.sent)
    ('state',)
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

import numpy as np

from ..errors import ProtocolError
from ..wire import as_configuration, as_int, as_positions, configuration_dict


class PartySide(Protocol):
    """What a party's own process holds while it plays (``proofgames.isolation.party.Session``).

    Decoders of sent arguments and the methods' ``after`` hooks see only this.

    Attributes:
        ctx: the party's current :class:`~proofgames.protocols.GameContext`.
        rng: the party's own generator.
        target: the party's copy of what is debated (a machine or a problem).
        role: ``"A"`` or ``"B"``.
        player: the strategy object.
        view: the party's counted oracle view.
        sampling: how stochastic samples are drawn (the hello's ``sampling``).
        sample_rng: the party's own stream for samples (apart from ``rng``).
        samples: per-debate sample counts, for a protocol that counts samples (then they,
            not ``view``'s queries, are what the party reports).
        state: room for a protocol's own per-process state (say, a lockstep transcript).
    """

    ctx: Any
    rng: np.random.Generator
    target: Any
    role: str
    player: Any
    view: Any
    sampling: str
    sample_rng: np.random.Generator
    samples: Any
    state: dict[str, Any]

    def read(self, positions: Any) -> Any:
        """B's reads of A's transcript, relayed through V."""
        ...

    def play_on(self, witness: object) -> Any:
        """Switch to the machine M(x, ``witness``) and return the new context."""
        ...


def _same(value: Any) -> Any:
    return value


@dataclass(frozen=True)
class Param:
    """One argument of a role method, in the order V passes it.

    Attributes:
        name: its name (as in the role's typing ``Protocol``).
        schema: how it travels (``docs/wire.md`` notation); empty for the party's own.
        encode: V's side: the value V passed, as plain data (``None``: not sent).
        decode: the party's side: plain data (and the party's state) to the typed value.
        own: the party's side, for an argument that is not sent: its own value.
        relay: the argument is V's read callback; a call may relay reads through V.
    """

    name: str
    schema: str = ""
    encode: Callable[[Any], Any] | None = None
    decode: Callable[[Any, PartySide], Any] | None = None
    own: Callable[[PartySide], Any] | None = None
    relay: bool = False

    @property
    def sent(self) -> bool:
        """Whether the argument travels to the party's process."""
        return self.encode is not None

    def renamed(self, name: str) -> Param:
        """The same parameter under another name (as a role's method calls it)."""
        return replace(self, name=name)


def sent(
    name: str,
    schema: str,
    decode: Callable[[Any, PartySide], Any],
    encode: Callable[[Any], Any] = _same,
) -> Param:
    """A parameter V sends: ``encode`` on V's side, ``decode`` on the party's."""
    return Param(name, schema, encode=encode, decode=decode)


def own(name: str, get: Callable[[PartySide], Any], relay: bool = False) -> Param:
    """A parameter the party's process supplies itself (never sent)."""
    return Param(name, own=get, relay=relay)


#: The party's own context (its copy of the machine, its oracle view, its generator).
CONTEXT = own("ctx", lambda side: side.ctx)
#: The party's own random generator.
RNG = own("rng", lambda side: side.rng)
#: The party's own copy of the problem under debate.
PROBLEM = own("problem", lambda side: side.target)
#: B's read callback: under isolation, B's reads are relayed through V.
READ = own("read", lambda side: side.read, relay=True)
#: Transcript positions.
POSITIONS = sent(
    "positions",
    "int64[k]",
    decode=lambda x, side: np.array(as_positions(x, "positions")),
    encode=lambda x: np.asarray(x, dtype=np.int64),
)
#: A Turing machine configuration.
CONFIGURATION = sent(
    "configuration",
    "conf",
    decode=lambda x, side: as_configuration(x, "configuration"),
    encode=configuration_dict,
)
#: A count.
COUNT = sent("n", "int", decode=lambda x, side: as_int(x, "n"), encode=int)


@dataclass(frozen=True)
class Method:
    """One method of a role: its parameters in V's order, and what the prover answers.

    Attributes:
        name: the method's name.
        params: its parameters, in the order V passes them.
        answer: what the prover answers (``docs/wire.md`` notation).
        after: the party's side, once it has answered: a hook given the party's state and
            its answer (the witness protocol: A plays on M(x, w) once its witness is sent).
    """

    name: str
    params: tuple[Param, ...]
    answer: str
    after: Callable[[PartySide, Any], None] | None = None

    @property
    def wire_params(self) -> tuple[Param, ...]:
        """The parameters that travel, in order (a call's ``args``)."""
        return tuple(p for p in self.params if p.sent)

    def describe(self) -> str:
        """``args [..] -> answer`` as plain text."""
        args = ", ".join(f"{p.name}: {p.schema}" for p in self.wire_params)
        return f"args [{args}] -> {self.answer}"


@dataclass(frozen=True)
class Role:
    """One prover's role: the typing ``Protocol`` its players implement, and its methods.

    The methods must be exactly the public methods of ``interface``, with matching
    parameters, or the declaration is refused.

    Attributes:
        interface: the typing ``Protocol`` class (for type checkers and readers).
        methods: the methods V may call, with their parameters and answers.
    """

    interface: type
    methods: tuple[Method, ...]
    _index: dict[str, Method] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_index", {m.name: m for m in self.methods})
        declared = _interface_methods(self.interface)
        if set(declared) != set(self._index) or len(self._index) != len(self.methods):
            raise ProtocolError(
                f"role {self.interface.__name__} declares methods {sorted(self._index)}, "
                f"but the class has {sorted(declared)}"
            )
        for m in self.methods:
            names = tuple(p.name for p in m.params)
            if names != declared[m.name]:
                raise ProtocolError(
                    f"{self.interface.__name__}.{m.name} takes {declared[m.name]}, declared {names}"
                )

    def names(self) -> tuple[str, ...]:
        """The methods' names, in declaration order."""
        return tuple(self._index)

    def method(self, name: object) -> Method:
        """The method called ``name``, or a :class:`ProtocolError` naming the role's methods."""
        if type(name) is not str or name not in self._index:
            raise ProtocolError(f"no method {name!r}; this role has {', '.join(self._index)}")
        return self._index[name]


def _interface_methods(cls: type) -> dict[str, tuple[str, ...]]:
    """``{method: parameter names}`` of the public methods a typing ``Protocol`` declares."""
    out: dict[str, tuple[str, ...]] = {}
    for base in reversed(cls.__mro__):
        if base in (object, Protocol) or base.__module__ == "typing":
            continue
        for name, value in vars(base).items():
            if not name.startswith("_") and inspect.isfunction(value):
                out[name] = tuple(inspect.signature(value).parameters)[1:]
    return out


def wire_arguments(method: Method, args: tuple[Any, ...]) -> tuple[list[Any], Any]:
    """V's side: a call's plain ``args`` and V's read callback (or ``None``).

    Raises:
        ProtocolError: V passed a different number of arguments than declared.
    """
    if len(args) != len(method.params):
        raise ProtocolError(f"{method.name} takes {len(method.params)} arguments, got {len(args)}")
    plain: list[Any] = []
    read = None
    for param, value in zip(method.params, args, strict=True):
        if param.relay:
            read = value
        elif param.encode is not None:
            plain.append(param.encode(value))
    return plain, read


def party_arguments(method: Method, plain: object, side: PartySide) -> list[Any]:
    """The party's side: the typed arguments of a call from its plain ``args``.

    Raises:
        ProtocolError: ``args`` is not a list of the declared length.
    """
    wire = method.wire_params
    if type(plain) is not list or len(plain) != len(wire):
        raise ProtocolError(f"{method.name}'s args must be a list of {len(wire)} values")
    values = iter(plain)
    out = []
    for param in method.params:
        if param.decode is not None:
            out.append(param.decode(next(values), side))
        else:
            assert param.own is not None
            out.append(param.own(side))
    return out
