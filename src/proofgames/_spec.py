"""The text of specs ``name:key=value,...``: parsing, and values converted by annotation.

The building blocks of :class:`proofgames._registry.SpecRegistry`: :func:`parse_spec`
splits a spec into its name and raw values, :func:`spec_parameters` reads what a
factory's signature accepts, and :meth:`Parameter.convert` turns one raw value into the
annotated type, exactly or not at all.

Example:
    >>> parse_spec("majority:n=5,p=0.8")
    ('majority', {'n': '5', 'p': '0.8'})
    >>> def coin(p: float = 0.5, flips: int | None = None) -> None: ...
    >>> params = spec_parameters(coin)
    >>> params["flips"].convert("3"), params["flips"].convert("none"), params["p"].convert("1")
    (3, None, 1.0)
    >>> params["flips"].convert("2.5")
    Traceback (most recent call last):
    ...
    ValueError: flips must be int or none, got '2.5'
"""

from __future__ import annotations

import inspect
import math
import re
import types
import typing
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from typing import Any

from .errors import SpecError

__all__ = ["Parameter", "format_value", "parse_pairs", "parse_spec", "spec_parameters"]


def parse_spec(text: str) -> tuple[str, dict[str, str]]:
    """Split ``"name:key=value,key=value"`` into the name and the raw (text) values.

    Keys are stripped and ``-`` becomes ``_``; blank items are skipped. Values stay text:
    :meth:`proofgames._registry.SpecRegistry.convert` types them by a factory's signature.

    Raises:
        SpecError: no name, an item that is not ``key=value``, or a key given twice.
    """
    name, _, rest = text.partition(":")
    if not name.strip():
        raise SpecError(f"spec {text!r} has no name")
    items = [item for item in rest.split(",") if item.strip()]
    return name.strip(), parse_pairs(items, f"in {text!r}")


def parse_pairs(pairs: Iterable[str], where: str = "") -> dict[str, str]:
    """``{key: raw value}`` from ``key=value`` strings (see :func:`parse_spec`).

    Args:
        pairs: the ``key=value`` strings.
        where: appended to error messages (e.g. ``"in 'name:...'"``).
    """
    raw: dict[str, str] = {}
    suffix = f" {where}" if where else ""
    for item in pairs:
        key, eq, value = item.partition("=")
        key = key.strip().replace("-", "_")
        if not eq or not key:
            raise SpecError(f"{item!r}{suffix} is not KEY=VALUE")
        if key in raw:
            raise SpecError(f"{key!r} is given twice{suffix}")
        raw[key] = value.strip()
    return raw


_KINDS: dict[str, type] = {"int": int, "float": float, "bool": bool, "str": str}
_TRUE, _FALSE = ("true", "1", "yes"), ("false", "0", "no")


@dataclass(frozen=True)
class Parameter:
    """A factory parameter that a spec can set.

    Attributes:
        name: the keyword.
        kind: ``int``, ``float``, ``bool`` or ``str``; ``None`` for a parameter with a
            default whose annotation is none of these: it can be given in code only.
        optional: the annotation is ``kind | None``: the text ``none`` means ``None``.
        nonfinite: a ``float`` that may be ``nan`` or ``inf``.
        annotation: the annotation as written, for messages.
    """

    name: str
    kind: type | None
    optional: bool = False
    nonfinite: bool = False
    annotation: str = ""

    def convert(self, raw: str) -> Any:
        """The value ``raw`` denotes, exactly.

        Raises:
            ValueError: ``raw`` is not a value of this parameter's type (an ``int`` takes
                only whole-number literals, a ``bool`` ``true/false/yes/no/1/0``).
        """
        if self.kind is None:
            raise ValueError(f"{self.name} ({self.annotation}) can be given in code only")
        text = raw.strip()
        if self.optional and text.lower() == "none":
            return None
        if self.kind is str:
            return text
        expected = {bool: "true or false", int: "int", float: "float"}[self.kind]
        if self.optional:
            expected += " or none"
        problem = f"{self.name} must be {expected}, got {raw!r}"
        if self.kind is bool:
            if text.lower() in _TRUE + _FALSE:
                return text.lower() in _TRUE
            raise ValueError(problem)
        try:
            value = self.kind(text)
        except ValueError:
            raise ValueError(problem) from None
        if self.kind is float and not (self.nonfinite or math.isfinite(value)):
            raise ValueError(f"{self.name} must be a finite float, got {raw!r}")
        return value


def spec_parameters(
    factory: Callable[..., Any], nonfinite: Collection[str] = ()
) -> dict[str, Parameter]:
    """The parameters of ``factory`` a spec can set, by name, in signature order.

    ``*args`` and ``**kwargs`` are not spec parameters (keyword arguments given in code
    still reach ``**kwargs``). A parameter with a default and an annotation other than
    ``int``, ``float``, ``bool``, ``str`` or ``X | None`` can be given in code only.

    Raises:
        SpecError: a parameter without a default or a supported annotation, a
            positional-only one, or a name in ``nonfinite`` that is not a ``float``
            parameter.
    """
    where = getattr(factory, "__qualname__", repr(factory))
    out: dict[str, Parameter] = {}
    for p in inspect.signature(factory).parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        if p.kind is p.POSITIONAL_ONLY:
            raise SpecError(f"{where}: parameter {p.name!r} is positional-only")
        shown = _shown(p.annotation)
        try:
            kind, optional = _annotation(p.annotation)
        except ValueError:
            if p.default is p.empty:
                raise SpecError(
                    f"{where}: parameter {p.name!r} has {shown} and no default; a spec "
                    "needs int, float, bool, str or X | None"
                ) from None
            out[p.name] = Parameter(p.name, None, annotation=shown)
            continue
        out[p.name] = Parameter(p.name, kind, optional, p.name in nonfinite, shown)
    wrong = sorted(set(nonfinite) - {n for n, p in out.items() if p.kind is float})
    if wrong:
        raise SpecError(f"{where}: nonfinite names {wrong}, which are not float parameters")
    return out


def _annotation(annotation: Any) -> tuple[type, bool]:
    """``(kind, optional)`` of a supported annotation (a type, or its text).

    Raises:
        ValueError: an unsupported annotation.
    """
    if isinstance(annotation, str):
        text = annotation.strip()
        match = re.fullmatch(r"(?:typing\.)?Optional\[(.+)\]", text)
        parts: list[Any] = [match.group(1), "None"] if match else text.split("|")
        parts = [_KINDS.get(p.strip(), None if p.strip() == "None" else p) for p in parts]
    elif typing.get_origin(annotation) in (typing.Union, types.UnionType):
        parts = list(typing.get_args(annotation))
    else:
        parts = [annotation]
    optional = any(p is None or p is type(None) for p in parts)
    kinds = [p for p in parts if not (p is None or p is type(None))]
    if len(kinds) != 1 or kinds[0] not in _KINDS.values():
        raise ValueError(f"unsupported annotation {annotation!r}")
    return kinds[0], optional


def _shown(annotation: Any) -> str:
    if annotation is inspect.Parameter.empty:
        return "no annotation"
    return annotation if isinstance(annotation, str) else inspect.formatannotation(annotation)


def format_value(value: Any) -> str:
    """How ``value`` is written in a spec, so that parsing it back gives ``value``."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value) if isinstance(value, float) else str(value)
