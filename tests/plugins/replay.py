"""``replay``: a toy protocol in one file, to show and test how a protocol is added.

Rules (configuration machine M, T steps): A sends the configuration it claims M reaches
after T steps, whose output must be the claim. B reviews it: ``"agree"`` or
``"object"``. V then runs M itself for T steps and accepts iff A's configuration is the
one it reached. B's word is recorded and changes nothing.

Bounds: completeness 1 and soundness 0, trivially: V checks everything itself, at a cost
of T steps -- the opposite of doubly-efficient debate. The point is the seam: this file
declares the roles, plays V over the shared driver, registers the protocol and three
strategies per role, and nothing else in the package or the tests names it.

Example:
    >>> from proofgames import play
    >>> play("replay", "tm:1RB1LB_1LA1RZ", steps=6, claim=1).winner
    'A'
"""

from __future__ import annotations

from typing import Protocol

from proofgames import Configuration, ConfigurationMachine
from proofgames.protocols import (
    Debate,
    Defaults,
    Forfeit,
    GameContext,
    Instance,
    Options,
    Outcome,
    ProtocolInfo,
    register_protocol,
)
from proofgames.protocols.roles import CONFIGURATION, CONTEXT, Method, Role
from proofgames.strategies import Player, register_strategy
from proofgames.wire import as_choice, as_configuration

NAME = "replay"
REVIEWS = ("agree", "object")


class ReplayA(Protocol):
    """A's role: the configuration after T steps."""

    def final(self, ctx: GameContext) -> object:
        """The claimed configuration after ``ctx.steps`` steps."""
        ...


class ReplayB(Protocol):
    """B's role: a review of A's configuration."""

    def review(self, ctx: GameContext, final: Configuration) -> object:
        """``"agree"`` or ``"object"``."""
        ...


def play_replay(
    machine: ConfigurationMachine,
    steps: int,
    claim: int,
    prover_a: object,
    prover_b: object,
    *,
    seed: int | None = 0,
    timeout: float | None = None,
    oracle: object = None,
) -> Outcome:
    """Play one replay debate and return its record."""
    d = Debate(NAME, prover_a, prover_b, oracle, seed, timeout)  # type: ignore[arg-type]
    ctx_a = d.context("A", machine, steps, claim, None)
    ctx_b = d.context("B", machine, steps, claim, None)
    simulated = 0
    try:
        final = d.parties["A"].call(
            "final configuration", "final", ctx_a,
            parse=lambda raw: machine.validate(as_configuration(raw, "configuration")),
        )  # fmt: skip
        if machine.accepts(final) != claim:
            d.forfeit("A", f"A's configuration has output {machine.accepts(final)}, not {claim}")
        d.say(0, "A", "final", {"state": final.state, "head": final.head})
        shown = Configuration(final.state, final.head, final.tape)
        word = d.parties["B"].call(
            "review", "review", ctx_b, shown,
            parse=lambda raw: as_choice(raw, REVIEWS, "review"),
        )  # fmt: skip
        d.say(0, "B", "review", word)
        reached = machine.advance(machine.initial(), steps, d.ledger.view("V"), d.rng["V"])
        simulated = steps
        same = reached == final
        verdict = int(same)
        reason = "V reached A's configuration" if same else "V reached another configuration"
    except Forfeit:
        verdict, reason = d.loss()
    return d.outcome(
        machine.name, steps, claim, verdict, reason, rounds=1, reads=2,
        unit="configurations", bits=2 * machine.config_bits(), verifier_steps=simulated,
        b_reads=1,
    )  # fmt: skip


def _run(inst: Instance, claim: int, a: object, b: object, opts: Options) -> Outcome:
    return play_replay(
        inst.target, inst.steps, claim, a, b, seed=opts.seed, timeout=opts.timeout,
        oracle=inst.oracle,
    )  # fmt: skip


INFO = register_protocol(
    ProtocolInfo(
        name=NAME,
        figure="Figure: none (a toy protocol for the extension seam)",
        theorem="Theorem: none needed (V re-runs the machine)",
        instance="configuration",
        completeness=1.0,
        soundness=0.0,
        verifier_cost="T steps: V re-runs the machine",
        play=play_replay,
        defaults=Defaults("bb3", liar_a="lie-output", disputer_b="object"),
        run=_run,
        roles={
            "A": Role(ReplayA, (Method("final", (CONTEXT,), "conf: the configuration at T"),)),
            "B": Role(
                ReplayB,
                (
                    Method(
                        "review", (CONTEXT, CONFIGURATION.renamed("final")), '"agree" or "object"'
                    ),
                ),
            ),
        },
    )
)


class _Honest(Player):
    """Runs the machine and answers truthfully."""

    def __init__(self, lie: bool = False, garble: bool = False) -> None:
        self._lie, self._garble = lie, garble

    def _run(self, ctx: GameContext) -> Configuration:
        self.work = ctx.steps
        m = ctx.machine
        return m.advance(m.initial(), ctx.steps, ctx.oracle, ctx.rng)

    def final(self, ctx: GameContext) -> object:
        if self._garble:
            return {"state": "not a state"}
        config = self._run(ctx)
        if self._lie and ctx.machine.accepts(config) != ctx.claim:
            halt = ctx.machine.program.halt
            return Configuration(halt if ctx.claim else 0, config.head, config.tape)
        return config

    def review(self, ctx: GameContext, final: Configuration) -> object:
        return "agree" if self._run(ctx) == final else "object"


class _Fixed(Player):
    """Says the same thing whatever it is shown."""

    def __init__(self, word: str) -> None:
        self._word = word

    def review(self, ctx: GameContext, final: Configuration) -> object:
        return self._word


@register_strategy(NAME, "A", "honest", honest=True)
def honest_a() -> _Honest:
    """Runs M and sends the configuration it reaches."""
    return _Honest()


@register_strategy(NAME, "A", "lie-output")
def lie_output_a() -> _Honest:
    """Sends the true configuration with its state changed to show the claim."""
    return _Honest(lie=True)


@register_strategy(NAME, "A", "garbage")
def garbage_a() -> _Honest:
    """Sends something that is not a configuration (its forfeit)."""
    return _Honest(garble=True)


@register_strategy(NAME, "B", "honest", honest=True)
def honest_b() -> _Honest:
    """Runs M and objects iff A's configuration is not the one it reaches."""
    return _Honest()


@register_strategy(NAME, "B", "agree")
def agree_b() -> _Fixed:
    """Always agrees."""
    return _Fixed("agree")


@register_strategy(NAME, "B", "object")
def object_b() -> _Fixed:
    """Always objects."""
    return _Fixed("object")
