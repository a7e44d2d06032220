"""Registration of strategies by name, with their arguments recorded.

A strategy is made by a small factory registered under ``(protocol, role, name)``.  The
player it returns carries a :class:`StrategySpec` naming the factory and the exact
arguments it was called with, so an outcome record says exactly who played.

Example:
    >>> from proofgames.strategies import make_strategy
    >>> make_strategy("bisection", "A", "flip-step:at=0.25").spec.label
    'flip-step(at=0.25)'

"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from ._errors import RegistryError

Item = TypeVar("Item")


class NameRegistry(Generic[Item]):
    """A mapping from names to items that refuses duplicates and explains unknown names.

    Args:
        what: what the items are, for error messages (e.g. ``"example"``).
    """

    def __init__(self, what: str) -> None:
        self.what = what
        self._items: dict[str, Item] = {}

    def add(self, name: str, item: Item) -> Item:
        """Register ``item`` under ``name``."""
        if name in self._items:
            raise RegistryError(f"{self.what} {name!r} is already registered")
        self._items[name] = item
        return item

    def get(self, name: str) -> Item:
        """The item registered as ``name``."""
        try:
            return self._items[name]
        except KeyError:
            known = ", ".join(self._items) or "none"
            raise RegistryError(f"unknown {self.what} {name!r}; registered: {known}") from None

    def items(self) -> list[tuple[str, Item]]:
        """``(name, item)`` pairs in registration order."""
        return list(self._items.items())


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
        if not self.args:
            return self.name
        return f"{self.name}(" + ", ".join(f"{k}={v!r}" for k, v in self.args) + ")"

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly form."""
        return {"name": self.name, "args": dict(self.args)}


class Player:
    """Base class of every strategy; the protocol fills in ``spec`` and counts ``work``."""

    spec: StrategySpec
    work: int = 0  # machine steps simulated by this player


@dataclass(frozen=True)
class _Entry:
    factory: Callable[..., Player]
    honest: bool
    description: str


_REGISTRY: dict[tuple[str, str, str], _Entry] = {}
P = TypeVar("P", bound=Callable[..., Player])


def register_strategy(
    protocol: str, role: str, name: str, *, honest: bool = False
) -> Callable[[P], P]:
    """Register a factory of players for ``protocol`` and ``role`` ("A" or "B")."""
    if role not in ("A", "B"):
        raise RegistryError(f"role must be 'A' or 'B', got {role!r}")

    def decorate(factory: P) -> P:
        key = (protocol, role, name)
        if key in _REGISTRY:
            raise RegistryError(f"strategy {name!r} is already registered for {protocol} {role}")
        doc = (inspect.getdoc(factory) or "").split("\n")[0]
        _REGISTRY[key] = _Entry(factory, honest, doc)
        return factory

    return decorate


def strategy_names(protocol: str, role: str) -> list[str]:
    """Names registered for a protocol and role, honest first."""
    keys = [k for k in _REGISTRY if k[0] == protocol and k[1] == role]
    return [k[2] for k in sorted(keys, key=lambda k: (not _REGISTRY[k].honest, k[2]))]


def strategy_description(protocol: str, role: str, name: str) -> str:
    """First line of the factory's docstring."""
    return _lookup(protocol, role, name).description


def is_honest(protocol: str, role: str, name: str) -> bool:
    """Whether the registered strategy is the honest one."""
    return _lookup(protocol, role, name).honest


def _lookup(protocol: str, role: str, name: str) -> _Entry:
    try:
        return _REGISTRY[(protocol, role, name)]
    except KeyError:
        known = ", ".join(strategy_names(protocol, role)) or "none"
        raise RegistryError(
            f"no strategy {name!r} for {protocol} prover {role}; registered: {known}"
        ) from None


def parse_strategy(text: str) -> tuple[str, dict[str, Any]]:
    """Split ``"name:key=value,key=value"`` into a name and typed keyword arguments."""
    name, _, rest = text.partition(":")
    kwargs: dict[str, Any] = {}
    for item in filter(None, rest.split(",")):
        key, eq, raw = item.partition("=")
        if not eq or not key:
            raise RegistryError(f"strategy argument {item!r} in {text!r} is not key=value")
        kwargs[key.strip().replace("-", "_")] = _parse_value(raw.strip())
    return name.strip(), kwargs


def _parse_value(raw: str) -> Any:
    for cast in (int, float):
        try:
            return cast(raw)
        except ValueError:
            pass
    return raw


def make_strategy(protocol: str, role: str, text: str, **kwargs: Any) -> Player:
    """Build a registered player from ``"name"`` or ``"name:key=value,..."``."""
    name, parsed = parse_strategy(text)
    parsed.update(kwargs)
    entry = _lookup(protocol, role, name)
    try:
        bound = inspect.signature(entry.factory).bind(**parsed)
    except TypeError as exc:
        raise RegistryError(f"bad arguments for strategy {name!r}: {exc}") from None
    bound.apply_defaults()
    player = entry.factory(**parsed)
    player.spec = StrategySpec(protocol, role, name, tuple(sorted(bound.arguments.items())))
    player.work = 0
    return player
