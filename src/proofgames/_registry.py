"""Registries by name, and specs: ``"name:key=value,..."`` texts that build registered items.

A :class:`SpecRegistry` holds factories by name. ``make(text)`` parses a spec, converts each
value by the annotation of the factory's parameter (``int``, ``float``, ``bool``, ``str``
or ``X | None``), binds them, calls the factory and returns what it built together with a
:class:`Spec`: the name and every argument, defaults applied, so a record says exactly
what was built.  Nothing is guessed or truncated: ``votes=2.5`` for an ``int`` parameter,
an unknown key, or ``nan`` for a ``float`` is a :class:`~proofgames.errors.SpecError`
naming the key.

Strategies are registered here too, under ``(protocol, role, name)``. The player a
strategy factory returns carries a :class:`StrategySpec` naming the factory and the exact
arguments it was called with, so an outcome record says exactly who played.

Example:
    >>> from proofgames.strategies import make_strategy
    >>> make_strategy("bisection", "A", "flip-step:at=0.25").spec.label
    'flip-step(at=0.25)'
    >>> def coin(p: float = 0.5, flips: int = 1) -> str:
    ...     return f"{flips} flip(s) of a {p} coin"
    >>> coins: SpecRegistry[str] = SpecRegistry("coin")
    >>> _ = coins.add("coin", coin)
    >>> coins.make("coin:flips=3")
    ('3 flip(s) of a 0.5 coin', Spec(name='coin', args=(('p', 0.5), ('flips', 3))))
    >>> coins.make("coin:flips=2.5")
    Traceback (most recent call last):
    ...
    proofgames.errors.SpecError: bad arguments for coin 'coin': flips must be int, got '2.5'
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from . import _builtins, plugins
from ._spec import Parameter, format_value, parse_pairs, parse_spec, spec_parameters
from .errors import RegistryError, SpecError

__all__ = [
    "NameRegistry",
    "Parameter",
    "Player",
    "Spec",
    "SpecRegistry",
    "StrategySpec",
    "is_honest",
    "make_strategy",
    "names_so_far",
    "parse_pairs",
    "parse_spec",
    "parse_strategy",
    "register_strategy",
    "spec_parameters",
    "strategy_description",
    "strategy_names",
]

Item = TypeVar("Item")
Built = TypeVar("Built")


class NameRegistry(Generic[Item]):
    """A mapping from names to items that refuses duplicates and explains unknown names.

    Args:
        what: what the items are, for error messages (e.g. ``"example"``).
        builtins: built-in names and the module that registers each: a lookup imports
            that module the first time it misses the name, and a listing imports them
            all first and lists their names in this order (see :mod:`proofgames._builtins`).

    Example:
        >>> registry = NameRegistry("colour", builtins={"red": "proofgames.no_such_module"})
        >>> _ = registry.add("blue", 3)
        >>> registry.get("blue"), "green" in registry
        (3, False)
    """

    def __init__(self, what: str, builtins: Mapping[str, str] | None = None) -> None:
        self.what = what
        self._items: dict[str, Item] = {}
        self._builtins = dict(builtins or {})

    def add(self, name: str, item: Item) -> Item:
        """Register ``item`` under ``name``; a built-in's name is taken by its module first.

        (A module that is registering itself is already being imported: importing it again
        is a no-op, and another thread's import waits for it.)
        """
        self._load_builtin(name)
        if name in self._items:
            raise RegistryError(f"{self.what} {name!r} is already registered")
        self._items[name] = item
        return item

    def _load_builtin(self, name: str) -> None:
        """Import the module that registers the built-in ``name``, if it is one not yet there."""
        if name in self._builtins and name not in self._items:
            importlib.import_module(self._builtins[name])

    def _find(self, name: str) -> bool:
        """Whether ``name`` is registered, after importing its built-in module or the plugins."""
        self._load_builtin(name)
        if name not in self._items:
            plugins.ensure_loaded()  # a plugin may register it
        return name in self._items

    def get(self, name: str) -> Item:
        """The item registered as ``name`` (a miss loads its module, else the plugins once)."""
        if not self._find(name):
            known = ", ".join(name for name, _ in self.items()) or "none"
            raise RegistryError(f"unknown {self.what} {name!r}; registered: {known}")
        return self._items[name]

    def __contains__(self, name: object) -> bool:
        """Whether ``name`` is registered (a miss loads its module, else the plugins once)."""
        return type(name) is str and self._find(name)

    def items(self) -> list[tuple[str, Item]]:
        """``(name, item)`` pairs: the built-ins in declared order, then in registration order."""
        for module in self._builtins.values():
            importlib.import_module(module)
        plugins.ensure_loaded()
        order = {name: i for i, name in enumerate(self._builtins)}
        ranked = sorted(enumerate(self._items), key=lambda p: (order.get(p[1], len(order)), p[0]))
        return [(name, self._items[name]) for _, name in ranked]


@dataclass(frozen=True)
class Spec:
    """What was built: the registered name and every argument, defaults applied.

    Attributes:
        name: the registered name.
        args: ``(keyword, value)`` pairs in the factory's signature order.
    """

    name: str
    args: tuple[tuple[str, Any], ...] = ()

    def kwargs(self) -> dict[str, Any]:
        """The arguments as keywords."""
        return dict(self.args)

    @property
    def label(self) -> str:
        """``name(arg=value, ...)``."""
        if not self.args:
            return self.name
        return f"{self.name}(" + ", ".join(f"{k}={v!r}" for k, v in self.args) + ")"

    def to_text(self, *, omit_none: bool = False) -> str:
        """The canonical spec ``name:key=value,...``, which parses back to this spec.

        Args:
            omit_none: leave out arguments that are ``None``.
        """
        args = ",".join(
            f"{k}={format_value(v)}" for k, v in self.args if not (omit_none and v is None)
        )
        return f"{self.name}:{args}" if args else self.name

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly form."""
        return {"name": self.name, "args": dict(self.args)}


class SpecRegistry(NameRegistry[Callable[..., Built]]):
    """Factories by name, built from specs ``name:key=value,...``; see the module docstring.

    Every parameter of a factory must be annotated ``int``, ``float``, ``bool``, ``str``
    or ``X | None`` (checked when it is added). Errors are
    :class:`~proofgames.errors.SpecError`, both a ``RegistryError`` and a ``ValueError``.

    Args:
        what: what the factories build, for error messages (e.g. ``"PVG task"``).
    """

    def __init__(self, what: str) -> None:
        super().__init__(what)
        self._parameters: dict[str, dict[str, Parameter]] = {}

    def add(
        self, name: str, item: Callable[..., Built], *, nonfinite: Collection[str] = ()
    ) -> Callable[..., Built]:
        """Register the factory ``item`` under ``name``.

        Args:
            name: the registered name.
            item: the factory.
            nonfinite: its ``float`` parameters that accept ``nan`` and ``inf``.
        """
        parameters = spec_parameters(item, nonfinite)
        super().add(name, item)
        self._parameters[name] = parameters
        return item

    def parameters(self, name: str) -> dict[str, Parameter]:
        """The spec parameters of the factory registered as ``name``."""
        self.get(name)
        return dict(self._parameters[name])

    def convert(self, name: str, raw: Mapping[str, str]) -> dict[str, Any]:
        """Typed values of the raw ``raw`` values for the factory ``name``; no defaults added.

        Raises:
            SpecError: an unknown key (the message names the known ones) or a value that
                does not convert exactly.
        """
        parameters = self.parameters(name)
        out: dict[str, Any] = {}
        for key, text in raw.items():
            if key not in parameters:
                raise self._bad(name, f"it has no argument {key!r} ({self._known(name)})")
            try:
                out[key] = parameters[key].convert(text)
            except ValueError as exc:
                raise self._bad(name, str(exc)) from None
        return out

    def bind(self, name: str, values: Mapping[str, Any]) -> Spec:
        """The :class:`Spec` of calling factory ``name`` with keyword ``values``.

        Raises:
            SpecError: a key the factory does not take, or a required one missing.
        """
        signature = inspect.signature(self.get(name))
        try:
            bound = signature.bind(**values)
        except TypeError as exc:
            problem = str(exc)
            unknown = [k for k in values if k not in signature.parameters]
            if unknown and all(p.kind is not p.VAR_KEYWORD for p in signature.parameters.values()):
                problem = f"it has no argument {unknown[0]!r} ({self._known(name)})"
            raise self._bad(name, problem) from None
        bound.apply_defaults()
        args: list[tuple[str, Any]] = []
        for key, value in bound.arguments.items():
            kind = signature.parameters[key].kind
            if kind is inspect.Parameter.VAR_KEYWORD:
                args.extend(value.items())
            elif kind is not inspect.Parameter.VAR_POSITIONAL:
                args.append((key, value))
        return Spec(name, tuple(args))

    def spec(self, text: str, **overrides: Any) -> Spec:
        """The :class:`Spec` that :meth:`make` would build, without building it.

        ``text`` is parsed and its values converted; ``overrides`` (typed) win over them.
        """
        name, raw = parse_spec(text)
        return self.bind(name, {**self.convert(name, raw), **overrides})

    def make(self, text: str, **overrides: Any) -> tuple[Built, Spec]:
        """Build what ``text`` (``name`` or ``name:key=value,...``) specifies.

        Args:
            text: the spec.
            **overrides: typed keyword arguments given in code; they win over ``text``.

        Returns:
            What the factory built, and its :class:`Spec`.

        Raises:
            RegistryError: an unknown name.
            SpecError: a malformed spec, or arguments that do not fit the factory.
        """
        spec = self.spec(text, **overrides)
        return self.get(spec.name)(**spec.kwargs()), spec

    def _known(self, name: str) -> str:
        known = ", ".join(self._parameters[name])
        return f"its arguments: {known}" if known else "it takes none"

    def _bad(self, name: str, problem: str) -> SpecError:
        return SpecError(f"bad arguments for {self.what} {name!r}: {problem}")


# ---------------------------------------------------------------------------- strategies
@dataclass(frozen=True)
class StrategySpec:
    """Who played: the registered name and the arguments of its factory."""

    protocol: str
    role: str
    name: str
    args: tuple[tuple[str, Any], ...] = ()

    @property
    def label(self) -> str:
        """``name(arg=value, ...)``."""
        return Spec(self.name, self.args).label

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly form."""
        return {"name": self.name, "args": dict(self.args)}


class Player:
    """Base class of every strategy; the protocol fills in ``spec`` and counts ``work``."""

    spec: StrategySpec
    work: int = 0  # machine steps simulated by this player


@dataclass(frozen=True)
class _About:
    honest: bool
    description: str


_STRATEGIES: dict[tuple[str, str], SpecRegistry[Player]] = {}
_ABOUT: dict[tuple[str, str, str], _About] = {}
P = TypeVar("P", bound=Callable[..., Player])


def register_strategy(
    protocol: str, role: str, name: str, *, honest: bool = False
) -> Callable[[P], P]:
    """Register a factory of players for ``protocol`` and ``role`` ("A" or "B").

    Its parameters are what a spec ``name:key=value,...`` can set, so each must be
    annotated ``int``, ``float``, ``bool``, ``str`` or ``X | None``.

    Example:
        A bisection B that always disputes the same half, registered under a protocol name
        of its own (registered for ``"bisection"``, ``play("bisection", ..., b="stubborn")``
        would take it) and played with :func:`~proofgames.protocols.play_bisection`:

        >>> from proofgames import TuringMachine, make_strategy, play_bisection
        >>> from proofgames import register_strategy, strategy_names
        >>> from proofgames.strategies import Player
        >>> class Stubborn(Player):
        ...     def __init__(self, half: str) -> None:
        ...         self.half = half
        ...     def dispute(self, ctx, state, midpoint):
        ...         return self.half
        >>> @register_strategy("my-bisection", "B", "stubborn")
        ... def stubborn(half: str = "first") -> Stubborn:
        ...     return Stubborn(half)
        >>> b = make_strategy("my-bisection", "B", "stubborn:half=second")
        >>> b.spec.label, strategy_names("my-bisection", "B")
        ("stubborn(half='second')", ['stubborn'])
        >>> tm = TuringMachine.sized("1RB1LB_1LA1RZ", steps=6)
        >>> liar = make_strategy("bisection", "A", "flip-step")
        >>> play_bisection(tm, 6, 0, liar, b, seed=0).winner  # the lie gets through
        'A'
    """
    if role not in ("A", "B"):
        raise RegistryError(f"role must be 'A' or 'B', got {role!r}")

    def decorate(factory: P) -> P:
        key = (protocol, role, name)
        _load_strategies(protocol)  # the built-ins first: a plugin cannot take their names
        if key in _ABOUT:
            raise RegistryError(f"strategy {name!r} is already registered for {protocol} {role}")
        registry = _STRATEGIES.setdefault((protocol, role), SpecRegistry("strategy"))
        registry.add(name, factory)
        plugins.note(factory)
        doc = (inspect.getdoc(factory) or "").split("\n")[0]
        _ABOUT[key] = _About(honest, doc)
        return factory

    return decorate


def strategy_names(protocol: str, role: str) -> list[str]:
    """Names registered for a protocol and role, honest first.

    Example:
        >>> from proofgames import strategy_names
        >>> strategy_names("bisection", "B")
        ['honest', 'first', 'random', 'second']
        >>> strategy_names("witness", "A")
        ['honest', 'flip-step', 'guess', 'lie-output', 'malformed', 'random-step']
    """
    plugins.ensure_loaded()
    return names_so_far(protocol, role)


def names_so_far(protocol: str, role: str) -> list[str]:
    """:func:`strategy_names` without loading the plugins: what is registered so far.

    For proofgames' own modules that list strategies while they are imported, when loading
    the plugins (which import proofgames) would be circular.

    Example:
        >>> names_so_far("bisection", "B")[:2]
        ['honest', 'first']
    """
    _load_strategies(protocol)
    keys = [k for k in _ABOUT if k[0] == protocol and k[1] == role]
    return [k[2] for k in sorted(keys, key=lambda k: (not _ABOUT[k].honest, k[2]))]


def strategy_description(protocol: str, role: str, name: str) -> str:
    """First line of the factory's docstring."""
    return _lookup(protocol, role, name).description


def is_honest(protocol: str, role: str, name: str) -> bool:
    """Whether the registered strategy is the honest one."""
    return _lookup(protocol, role, name).honest


def _load_strategies(protocol: str) -> None:
    """Import the module that registers ``protocol``'s built-in strategies, if it has one."""
    if protocol in _builtins.STRATEGIES:
        importlib.import_module(_builtins.STRATEGIES[protocol])


def _lookup(protocol: str, role: str, name: str) -> _About:
    key = (protocol, role, name)
    _load_strategies(protocol)
    if key not in _ABOUT:
        plugins.ensure_loaded()  # a plugin may register it
    try:
        return _ABOUT[key]
    except KeyError:
        known = ", ".join(strategy_names(protocol, role)) or "none"
        raise RegistryError(
            f"no strategy {name!r} for {protocol} prover {role}; registered: {known}"
        ) from None


def parse_strategy(text: str) -> tuple[str, dict[str, Any]]:
    """Split ``"name:key=value,..."`` into a name and values guessed as int, float or str.

    For callers without a factory signature to convert by; :meth:`SpecRegistry.make`
    converts each value by its parameter's annotation instead of guessing.

    Raises:
        SpecError: the spec is malformed (see :func:`parse_spec`).
    """
    name, raw = parse_spec(text)
    return name, {key: _guess(value) for key, value in raw.items()}


def _guess(raw: str) -> Any:
    for cast in (int, float):
        try:
            return cast(raw)
        except ValueError:
            pass
    return raw


def check_instance(player: Player, instance: Any) -> None:
    """Run a registered strategy's own size check on ``instance`` before any play.

    Strategies with limits (the exact optimal ones) define ``check_instance``; it raises a
    :class:`~proofgames.ProofgamesError` naming the limit, so a run that cannot be played is
    refused up front instead of ending as a forfeit.
    """
    check = getattr(type(player), "check_instance", None)
    if check is not None:
        check(player, instance)


def make_strategy(protocol: str, role: str, text: str, **kwargs: Any) -> Player:
    """Build a registered player from ``"name"`` or ``"name:key=value,..."``.

    Values are converted by the annotations of the factory's parameters; ``kwargs``
    (typed, given in code) win over the text.

    Raises:
        RegistryError: no such strategy for ``protocol`` and ``role``.
        SpecError: a malformed spec or arguments that do not fit the factory.

    Example:
        >>> from proofgames import make_strategy, play
        >>> liar = make_strategy("bisection", "A", "flip-step:at=0.3")
        >>> liar.spec.label
        'flip-step(at=0.3)'
        >>> make_strategy("bisection", "A", "flip-step:at=0.3", at=0.25).spec.label  # code wins
        'flip-step(at=0.25)'
        >>> play("bisection", "bb2", claim=0, a=liar, b="honest").winner
        'B'
        >>> make_strategy("bisection", "A", "flip-step:at=often")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        proofgames.errors.SpecError: bad arguments for strategy 'flip-step': at must be float, ...
    """
    name, _ = parse_spec(text)
    _lookup(protocol, role, name)
    player, spec = _STRATEGIES[(protocol, role)].make(text, **kwargs)
    player.spec = StrategySpec(protocol, role, spec.name, tuple(sorted(spec.args)))
    player.work = 0
    return player
