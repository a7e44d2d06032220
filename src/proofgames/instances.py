"""What protocols debate: instance kinds, and specs resolved into instances.

Each protocol names the kind of thing it debates (``ProtocolInfo.instance``):
``configuration`` (a Turing machine's run, for bisection), ``transcript`` (its
Cook-Levin tableau, for cross-examination), ``witness`` (a SAT problem), ``stochastic``
(a machine with known oracle probabilities), ``stochastic-witness`` (a panel choice). A
kind is registered once with its resolver and the limits it takes; a protocol over a new
kind of object registers its kind beside it (:func:`register_instance_kind`).

Example:
    >>> inst = resolve("configuration", "bb2")
    >>> inst.name, inst.steps, inst.truth
    ('bb2', 6, 1)
    >>> get_instance_kind("witness").options
    ('max_sat_work',)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from . import plugins
from ._registry import NameRegistry
from .errors import ProofgamesError
from .machines import TableauTranscript, TuringMachine
from .machines.examples import get_example, recorded_window
from .machines.turing import Span, check_steps, parse_tm
from .protocols import get_protocol, protocol_names
from .protocols._catalog import Instance


@dataclass(frozen=True)
class InstanceKind:
    """What one kind of protocol debates, and how a spec (or an object) becomes one.

    Attributes:
        name: the kind (``ProtocolInfo.instance`` names it).
        resolve: ``resolve(spec, **options)``: the :class:`Instance` a spec names.
        options: the limits it takes (``"steps"``, ``"max_steps"``, ``"max_sat_work"``);
            each is recorded in the instance's description when given, so that an
            isolated prover rebuilds the instance under the same limit.
        wrap: ``wrap(target)``: the :class:`Instance` of an object built in code (say, a
            machine passed to an experiment), or ``None`` if the kind takes specs only.
        rebuild: ``rebuild(description)``: the instance an isolated prover builds from the
            description in V's hello without V's set-up work (a Turing machine's window is
            in it: the prover does not run the machine to find it again); ``None``, or a
            ``rebuild`` that returns ``None``, resolves the description's spec again.
    """

    name: str
    resolve: Callable[..., Instance]
    options: tuple[str, ...] = ()
    wrap: Callable[[Any], Instance] | None = None
    rebuild: Callable[[dict[str, Any]], Instance | None] | None = None


_KINDS: NameRegistry[InstanceKind] = NameRegistry("instance kind")


def register_instance_kind(kind: InstanceKind) -> InstanceKind:
    """Add a kind of instance (a new protocol may debate a new kind of thing)."""
    plugins.note(kind.resolve)
    return _KINDS.add(kind.name, kind)


def get_instance_kind(name: str) -> InstanceKind:
    """The registered kind called ``name``."""
    return _KINDS.get(name)


def resolve(kind: str, spec: str, **options: int | None) -> Instance:
    """The :class:`Instance` for ``spec`` as a protocol of instance ``kind`` debates it."""
    k = get_instance_kind(kind)
    return k.resolve(spec, **{name: options.get(name) for name in k.options})


def machine_instance(kind: str, target: object, **options: int | None) -> Instance:
    """The :class:`Instance` of ``target``: a spec string (resolved), or an object (wrapped).

    Raises:
        ProofgamesError: the kind takes specs only.
    """
    if isinstance(target, str):
        return resolve(kind, target, **options)
    k = get_instance_kind(kind)
    if k.wrap is None:
        raise ProofgamesError(f"a {kind} instance must be given by its spec")
    return k.wrap(target)


def resolve_instance(
    protocol: str,
    spec: str | None = None,
    steps: int | None = None,
    *,
    max_steps: int | None = None,
    max_sat_work: int | None = None,
) -> Instance:
    """Build the instance ``spec`` names for ``protocol`` (its default when ``None``).

    Args:
        protocol: a registered protocol name.
        spec: the instance spec (default: the protocol's default instance).
        steps: T, for bisection and cross-examination only.
        max_steps: the limit on a machine's steps, checked before it is built or run
            (default :data:`~proofgames.stochastic.machines.MAX_STEPS` for stochastic
            machines, :data:`MAX_TM_STEPS` for Turing machines).
        max_sat_work: witness only: the limit on the SAT search work (default
            :data:`~proofgames.machines.sat.MAX_SAT_WORK`), checked before any search.

    Raises:
        ProofgamesError: for an unknown protocol or spec, or an option the protocol does
            not take (``steps`` for stochastic and witness protocols, ``max_steps``
            for the others, ``max_sat_work`` outside ``witness``), or a limit that
            is not a positive integer.

    Example:
        >>> from proofgames import resolve_instance
        >>> inst = resolve_instance("bisection", "tm:1RB1LB_1LA1RZ", steps=6)
        >>> inst.name, inst.steps, inst.truth, inst.target.size
        ('tm:1RB1LB_1LA1RZ', 6, 1, 4)
        >>> resolve_instance("stochastic", "majority:n=3,p=0.8").p_accept
        0.896
        >>> resolve_instance("witness", "sat-small", steps=5)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        proofgames.errors.ProofgamesError: witness does not take --steps; it applies only to ...
    """
    info = get_protocol(protocol)
    spec = spec if spec is not None else info.defaults.machine
    kind = get_instance_kind(info.instance)
    given = {"steps": steps, "max_steps": max_steps, "max_sat_work": max_sat_work}
    for name, value in given.items():
        if value is None:
            continue
        flag = "--" + name.replace("_", "-")
        if type(value) is not int or value <= 0:
            raise ProofgamesError(f"{flag} must be a positive integer, got {value!r}")
        if name not in kind.options:
            users = [p for p in protocol_names() if name in _takes(p)]
            raise ProofgamesError(
                f"{protocol} does not take {flag}; it applies only to {' and '.join(users)}"
            )
    return resolve(info.instance, spec, **given)


def _takes(protocol: str) -> tuple[str, ...]:
    """The limits the instances of ``protocol`` take."""
    return get_instance_kind(get_protocol(protocol).instance).options


#: The most steps T a debate over a Turing machine runs unless ``--max-steps`` allows more.
MAX_TM_STEPS = 10**9
#: The engine's speed on one core (``docs/performance.md``: 2.0e8 for bb5), for estimates.
ENGINE_STEPS_PER_SECOND = 2.0e8


def check_tm_steps(t: int, max_steps: int | None) -> None:
    """Refuse T over the limit, before anything runs, with the time it would take.

    A debate simulates T steps two or three times (both honest provers, and sizing).

    Raises:
        ProofgamesError: T is over ``max_steps`` (default :data:`MAX_TM_STEPS`).

    Example:
        >>> check_tm_steps(2**63 - 1, None)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        proofgames.errors.ProofgamesError: T = 9,223,372,036,854,775,807 steps is over ...
    """
    check_steps(t)  # the engine's own bound first (2^63 - 1)
    limit = MAX_TM_STEPS if max_steps is None else max_steps
    if t > limit:
        seconds = 3 * t / ENGINE_STEPS_PER_SECOND
        tape = _size(2 * t + 1)  # a machine may move T cells either way: one byte each
        raise ProofgamesError(
            f"T = {t:,} steps is over the limit of {limit:,}: a debate would simulate it "
            f"about 3 times, some {_duration(seconds)} at {ENGINE_STEPS_PER_SECOND:.0e} "
            f"steps/s, with a tape of up to {tape} in each prover; give --max-steps to "
            "allow it"
        )


def _duration(seconds: float) -> str:
    """A duration for people: ``_duration(30)`` is ``'30.0 seconds'``."""
    if seconds < 120:
        return f"{seconds:,.1f} seconds"
    if seconds < 7200:
        return f"{seconds / 60:,.0f} minutes"
    return f"{seconds / 3600:,.1f} hours"


def _size(n_bytes: int) -> str:
    """A byte count for people: ``_size(3 * 10**9)`` is ``'3.0 GB'``."""
    for unit, scale in (("EB", 10**18), ("PB", 10**15), ("TB", 10**12), ("GB", 10**9)):
        if n_bytes >= scale:
            return f"{n_bytes / scale:,.1f} {unit}"
    return f"{n_bytes / 10**6:,.1f} MB"


def _program_text(spec: str) -> tuple[str, int | None]:
    """The program text of ``tm:<text>`` or of a plain-TM example, and its default T."""
    if spec.startswith("tm:"):
        return spec[3:], None
    example = get_example(spec)
    if example.kind != "tm":
        raise ProofgamesError(f"example {spec!r} is a {example.kind} example, not a plain TM")
    return example.build(), example.steps


def turing_machine(
    spec: str, steps: int | None, max_steps: int | None = None
) -> tuple[TuringMachine, int]:
    """The machine named by ``tm:<text>`` or a plain-TM example, sized for its run.

    Sizing runs the machine once, unless the program's window at T is recorded
    (:func:`~proofgames.machines.examples.recorded_window`: the named Busy Beavers).

    Example:
        >>> tm, t = turing_machine("bb5", None)  # recorded: no run of 47,176,870 steps
        >>> t, tm.size, tm.origin, tm.known_output
        (47176870, 12289, 12243, 1)
    """
    text, default_steps = _program_text(spec)
    t = steps if steps is not None else default_steps
    if t is None:
        raise ProofgamesError("give --steps T for a machine given as tm:<text>")
    if t <= 0:
        raise ProofgamesError(f"--steps must be positive, got {t}")
    check_tm_steps(t, max_steps)
    window = recorded_window(text.strip(), t)
    span = None if window is None else Span(window[0], window[1], True)
    name = spec if not spec.startswith("tm:") else None
    return TuringMachine.sized(text, t, name=name, span=span), t


def _turing(
    kind: str, spec: str, steps: int | None = None, max_steps: int | None = None
) -> Instance:
    if not spec.startswith("tm:") and get_example(spec).kind == "oracle-tm":
        example = get_example(spec)
        t = steps if steps is not None else (example.steps or 0)
        check_tm_steps(t, max_steps)
        screening = example.build()
        oracle = screening.oracle()
        tm = screening.machine()
        from ._oracle import OracleLedger

        truth = tm.accepts(tm.advance(tm.initial(), t, OracleLedger(oracle).view("V")))
        target: Any = tm if kind == "configuration" else screening.transcript()
        desc: dict[str, Any] = {"kind": "example", "spec": spec, "steps": t}
        if max_steps is not None:
            desc["max_steps"] = max_steps
        return Instance(spec, tm.name, kind, target, t, truth, oracle, description=desc)
    tm, t = turing_machine(spec, steps, max_steps)
    return _turing_instance(kind, spec, tm, t, max_steps)


def _turing_instance(
    kind: str, spec: str, tm: TuringMachine, t: int, max_steps: int | None
) -> Instance:
    # one step loads the compiled engine (the C kernel, or numba's cache where no C
    # compiler works: ~0.3 s in a fresh process) here, in set-up, not in a prover's first call
    tm.run_steps(tm.initial(), 1)
    target = tm if kind == "configuration" else TableauTranscript(tm, t)
    desc: dict[str, Any] = {
        "kind": "turing-machine",
        "spec": spec,
        "steps": t,
        "program": tm.program.text,
        "space": tm.size,
        "origin": tm.origin,
        "states": tm.program.states,
        "symbols": tm.program.symbols,
        "halt": tm.program.halt,
        "overflow": tm.program.overflow,
    }
    if max_steps is not None:
        desc["max_steps"] = max_steps
    return Instance(spec, tm.name, kind, target, t, tm.known_output, description=desc)


def _rebuild_turing(kind: str, description: dict[str, Any]) -> Instance | None:
    """A plain Turing machine's instance from V's description, without running it.

    The window (``space``, ``origin``) is V's: V sized it (a run, or a recorded window)
    and checks every configuration against its own machine, so no prover's window ever
    reaches V's verdict.  Here it is checked for what can be checked without a run: it
    fits a run of T steps, and a named example's window is its recorded one.

    Raises:
        ProofgamesError: the description is not one V could have sent, with the reason.
    """
    if description.get("kind") != "turing-machine":
        return None  # an oracle machine: its spec is resolved again
    spec = description["spec"]
    t, space, origin = (_positive(description, k) for k in ("steps", "space", "origin"))
    max_steps = description.get("max_steps")
    if max_steps is not None:
        _positive(description, "max_steps")
    text = _program_text(spec)[0]
    check_tm_steps(t, max_steps)
    if description.get("program") != parse_tm(text).text:
        raise ProofgamesError(f"the hello's program is not the one {spec!r} names")
    if space > t + 1 or origin >= space:
        raise ProofgamesError(
            f"the hello's tape window (space {space}, origin {origin}) is not the window of "
            f"a run of T = {t:,} steps (at most T + 1 cells, the origin inside)"
        )
    window = recorded_window(parse_tm(text).text, t)
    if window is not None and (space, origin) != (window[1] - window[0] + 1, -window[0]):
        raise ProofgamesError(
            f"the hello's tape window (space {space}, origin {origin}) is not {spec}'s "
            f"recorded window at T = {t:,} (space {window[1] - window[0] + 1}, "
            f"origin {-window[0]})"
        )
    tm = TuringMachine(text, space, origin, name=None if spec.startswith("tm:") else spec)
    tm.known_output = None if window is None else 1
    return _turing_instance(kind, spec, tm, t, max_steps)


def _positive(description: dict[str, Any], key: str) -> int:
    """``description[key]`` as an int, refused unless it is one (``origin`` may be 0)."""
    value, least = description.get(key), 0 if key == "origin" else 1
    if type(value) is not int or value < least:
        raise ProofgamesError(f"the hello's {key} must be an integer >= {least}, got {value!r}")
    return value


def _sat(spec: str, max_sat_work: int | None = None) -> Instance:
    from .machines.sat import MAX_SAT_WORK, resolve_sat

    problem = resolve_sat(spec, MAX_SAT_WORK if max_sat_work is None else max_sat_work)
    truth = int(problem.solve() is not None)
    desc: dict[str, Any] = {"kind": "sat", "spec": spec}
    if max_sat_work is not None:
        desc["max_sat_work"] = max_sat_work
    return Instance(spec, problem.name, "witness", problem, problem.steps, truth, description=desc)


def _stochastic(spec: str, max_steps: int | None = None) -> Instance:
    from .stochastic.machines import make_stochastic_machine

    return _stochastic_instance(make_stochastic_machine(spec, max_steps=max_steps), spec, max_steps)


def _stochastic_instance(m: Any, spec: str, max_steps: int | None = None) -> Instance:
    p1 = m.p_accept
    truth = None if p1 is None else 1 if p1 >= 2 / 3 else 0 if p1 <= 1 / 3 else None
    desc: dict[str, Any] = {"kind": "stochastic", "spec": spec}
    if max_steps is not None:
        desc["max_steps"] = max_steps
    return Instance(spec, m.name, "stochastic", m, m.length, truth, p_accept=p1, description=desc)


def _panel(spec: str, max_steps: int | None = None) -> Instance:
    from .stochastic.problems import PanelChoice
    from .strategies import parse_strategy

    name, args = parse_strategy(spec)
    if name != "panel-choice" or "p" not in args:
        raise ProofgamesError(
            f"stochastic-witness debates a panel-choice problem, e.g. "
            f"'panel-choice:p=0.2;0.9;0.4' -- got {spec!r}"
        )
    unknown = set(args) - {"p", "votes"}
    if unknown:
        raise ProofgamesError(f"panel-choice takes p and votes, not {sorted(unknown)}")
    try:
        probs = tuple(float(x) for x in str(args["p"]).split(";"))
    except ValueError:
        raise ProofgamesError(f"bad item probabilities {args['p']!r}") from None
    votes = args.get("votes", 3)
    if type(votes) is not int or votes <= 0:
        raise ProofgamesError(f"votes must be a positive integer, got {votes!r}")
    problem = PanelChoice(probs, votes=votes, name=spec, max_steps=max_steps)
    best = max(problem.machine(w).p_accept or 0.0 for w in problem.candidates())
    truth = 1 if best >= 2 / 3 else 0 if best <= 1 / 3 else None
    desc: dict[str, Any] = {"kind": "panel-choice", "spec": spec}
    if max_steps is not None:
        desc["max_steps"] = max_steps
    return Instance(
        spec, spec, "stochastic-witness", problem, problem.steps, truth, p_accept=best,
        description=desc,
    )  # fmt: skip


for _kind in (
    InstanceKind(
        "configuration",
        partial(_turing, "configuration"),
        ("steps", "max_steps"),
        rebuild=partial(_rebuild_turing, "configuration"),
    ),
    InstanceKind(
        "transcript",
        partial(_turing, "transcript"),
        ("steps", "max_steps"),
        rebuild=partial(_rebuild_turing, "transcript"),
    ),
    InstanceKind("witness", _sat, ("max_sat_work",)),
    InstanceKind(
        "stochastic", _stochastic, ("max_steps",), lambda m: _stochastic_instance(m, m.name)
    ),
    InstanceKind("stochastic-witness", _panel, ("max_steps",)),
):
    register_instance_kind(_kind)
