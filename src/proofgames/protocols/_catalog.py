"""The registry of protocols, each with the metadata its paper figure declares."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .. import _builtins, plugins
from .._oracle import Oracle
from .._registry import NameRegistry
from ..errors import ProtocolError
from ._common import Outcome
from .roles import Role

if TYPE_CHECKING:  # the lockstep protocols' type, imported with them
    from ._batch import Batch


@dataclass(frozen=True)
class Instance:
    """What a debate is about, resolved from a spec.

    Attributes:
        spec: the spec it was resolved from (``"bb5"``, ``"tm:..."``, ``"sat-planted-40"``).
        name: the name outcome records use.
        kind: ``"configuration"``, ``"transcript"``, ``"witness"``, ``"stochastic"`` or
            ``"stochastic-witness"``.
        target: the machine or problem the protocol plays on.
        steps: T.
        truth: the true output (1 = accepts, or: a witness exists) if known to the set-up.
        oracle: the oracle the machine queries, if any.
        p_accept: P[M = 1] for stochastic machines, if known.
        description: a plain description a separate process can rebuild it from.

    Example:
        The same spec resolves to what each protocol debates: a Turing machine for
        bisection, its tableau for cross-examination:

        >>> from proofgames import play, resolve_instance
        >>> inst = resolve_instance("bisection", "bb2", steps=5)
        >>> inst.kind, inst.name, inst.steps, inst.truth  # bb2 halts at step 6, not 5
        ('configuration', 'bb2', 5, 0)
        >>> play("bisection", inst).claim  # by default A claims the truth
        0
        >>> tab = resolve_instance("cross-examination", "bb2")
        >>> tab.kind, tab.target.name, tab.truth
        ('transcript', 'tableau(bb2, T=6)', 1)
    """

    spec: str
    name: str
    kind: str
    target: Any
    steps: int
    truth: int | None = None
    oracle: Oracle | None = None
    p_accept: float | None = None
    description: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Options:
    """How a debate is played (the same for every protocol).

    Attributes:
        seed: the root seed.
        timeout: seconds allowed per party call (pre-emptive under process isolation).
        params: stochastic protocols: ``"paper"``, ``"lean"``, a JSON file, or parameters.
        progress: callback fed with simulated steps.
        sampling: stochastic protocols: how samples are drawn.
    """

    seed: int | None = 0
    timeout: float | None = None
    params: Any = None
    progress: Callable[[int], None] | None = None
    sampling: str = "binomial"


@dataclass(frozen=True)
class Defaults:
    """What the harness plays when the user names nothing.

    Attributes:
        machine: the default instance spec.
        honest_a, liar_a: A's strategy for a true and for a false claim.
        disputer_b, honest_b: B's strategy against a true and against a false claim.
        params: stochastic protocols' default parameter set.
    """

    machine: str
    honest_a: str = "honest"
    liar_a: str = "flip-step"
    disputer_b: str = "random"
    honest_b: str = "honest"
    params: str | None = None


def refuse_params(options: Options, protocol: str) -> None:
    """Deterministic protocols take no stochastic parameters: say so rather than ignore them."""
    if options.params is not None:
        raise ProtocolError(f"--params applies to the stochastic protocols, not to {protocol}")


RunOne = Callable[[Instance, int, Any, Any, Options], Outcome]
RunBatch = Callable[[Instance, int, Any, Any, Options, int], "Batch"]


@dataclass(frozen=True)
class ProtocolInfo:
    """What a protocol is and what its theorem promises.

    Attributes:
        name: registry name (also the CLI's).
        figure: the paper figure that states the rules.
        theorem: the theorem that proves its guarantees.
        instance: what it debates (``"transcript"``, ``"configuration"`` or ``"witness"``).
        completeness: the theorem's lower bound on P[V accepts] for a true claim, honest A.
        soundness: the theorem's upper bound on P[V accepts] for a false claim, honest B.
        verifier_cost: V's reads and oracle queries, as the theorem bounds them.
        play: the function that plays one debate (its own signature).
        defaults: what the harness plays when nothing is named.
        run: the harness's uniform entry: ``run(instance, claim, a, b, options)``.
        roles: each prover's role, ``{"A": Role, "B": Role}``: the methods V calls, their
            arguments and answers -- the one declaration that isolation, the party's
            process and the message index derive from.
        run_batch: many debates at once (lockstep protocols), or ``None``.
        claims: the claims A may make (witness protocols: only 1, "a witness exists").
    """

    name: str
    figure: str
    theorem: str
    instance: str
    completeness: float
    soundness: float
    verifier_cost: str
    play: Callable[..., Any]
    defaults: Defaults
    run: RunOne
    roles: dict[str, Role]
    run_batch: RunBatch | None = None
    claims: tuple[int, ...] = (0, 1)

    def __post_init__(self) -> None:
        if set(self.roles) != {"A", "B"}:
            raise ProtocolError(f"{self.name} must declare roles A and B, got {sorted(self.roles)}")
        if not self.claims or not set(self.claims) <= {0, 1}:
            raise ProtocolError(f"{self.name}'s claims must be among 0 and 1, got {self.claims}")

    @property
    def messages(self) -> dict[str, str]:
        """The index of the provers' messages, ``{method: "A: args [...] -> answer"}``.

        Derived from :attr:`roles`; a method both roles answer lists both.
        """
        out: dict[str, str] = {}
        for role in ("A", "B"):
            for m in self.roles[role].methods:
                line = f"{role}: {m.describe()}"
                out[m.name] = f"{out[m.name]}; {line}" if m.name in out else line
        return out

    def role_methods(self) -> dict[str, tuple[str, ...]]:
        """``{"A": (method, ...), "B": (...)}``: what V may call on each prover."""
        return {role: self.roles[role].names() for role in ("A", "B")}

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly metadata (without the functions)."""
        skip = ("play", "run", "run_batch", "defaults", "roles")
        out = {k: v for k, v in self.__dict__.items() if k not in skip}
        out["claims"] = list(self.claims)
        return out | {"messages": self.messages, "defaults": dict(self.defaults.__dict__)}


_PROTOCOLS: NameRegistry[ProtocolInfo] = NameRegistry("protocol", _builtins.PROTOCOLS)


def register_protocol(info: ProtocolInfo) -> ProtocolInfo:
    """Add a protocol to the registry (its module, if outside proofgames, is a plugin).

    A protocol module calls this once, at import, with its :class:`ProtocolInfo` (as
    :mod:`proofgames.protocols.bisection` does).  A name is registered once.

    Example:
        Bisection again, under a second name:

        >>> from dataclasses import replace
        >>> from proofgames import get_protocol, protocol_names, register_protocol
        >>> info = register_protocol(replace(get_protocol("bisection"), name="bisection-again"))
        >>> "bisection-again" in protocol_names(), get_protocol("bisection-again").theorem
        (True, 'Theorem 5.1')
        >>> register_protocol(info)
        Traceback (most recent call last):
        ...
        proofgames.errors.RegistryError: protocol 'bisection-again' is already registered
        >>> del _PROTOCOLS._items["bisection-again"]  # tidy up: leave the registry as it was
    """
    _PROTOCOLS.add(info.name, info)
    plugins.note(info.play)
    return info


def get_protocol(name: str) -> ProtocolInfo:
    """Look a protocol up by name.

    Example:
        >>> from proofgames import get_protocol
        >>> info = get_protocol("bisection")
        >>> info.theorem, info.completeness, info.soundness, info.claims
        ('Theorem 5.1', 1.0, 0.0, (0, 1))
        >>> info.role_methods()
        {'A': ('final', 'midpoint'), 'B': ('dispute',)}
        >>> get_protocol("witness").claims  # a witness can prove only membership
        (1,)
    """
    return _PROTOCOLS.get(name)


def has_protocol(name: object) -> bool:
    """Whether a protocol is registered as ``name`` (without listing them all).

    Example:
        >>> from proofgames.protocols import has_protocol
        >>> has_protocol("bisection"), has_protocol("no-such-protocol"), has_protocol(None)
        (True, False, False)
    """
    return name in _PROTOCOLS


def protocol_names() -> list[str]:
    """Registered protocol names, in registration order.

    Example:
        >>> from proofgames import protocol_names
        >>> protocol_names()[:5]  # the built-in protocols; plugins' come after them
        ['bisection', 'cross-examination', 'stochastic', 'stochastic-witness', 'witness']
    """
    return [name for name, _ in _PROTOCOLS.items()]
