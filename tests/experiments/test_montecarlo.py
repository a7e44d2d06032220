"""Oracle machines of the deterministic model debated stochastically; harness plumbing."""

from __future__ import annotations

import numpy as np
import pytest

from proofgames import MachineFormatError, TranscriptBuilder, gates
from proofgames.experiments.montecarlo import estimate_acceptance, sweep, write_results
from proofgames.machines.screening import screening_transcript
from proofgames.stochastic.lipschitz import acceptance_probability
from proofgames.stochastic.machines import make_stochastic_machine
from proofgames.stochastic.model import from_transcript_machine
from proofgames.stochastic.optimal import step_influence
from proofgames.strategies import make_strategy


def test_a_deterministic_model_machine_becomes_a_stochastic_one():
    items = [bytes([1, 0]), bytes([0, 1]), bytes([1, 1])]
    probs = {items[0]: 0.2, items[1]: 0.5, items[2]: 0.9}
    m = from_transcript_machine(screening_transcript(items, 1), probs, name="panel")
    exact = acceptance_probability(m)
    assert exact == pytest.approx(1 - 0.8 * 0.5 * 0.1)
    rng = np.random.default_rng(0)
    y = np.zeros((20000, m.length), dtype=np.int64)
    for t in range(m.length):
        y[:, t] = m.step_batch(t, y[:, list(m.relevant(t))], None, rng)
    assert abs(y[:, -1].mean() - exact) < 0.01


def test_non_binary_or_unlisted_queries_are_clear_errors():
    with pytest.raises(MachineFormatError, match="alphabet 3"):
        from_transcript_machine(screening_transcript([b"\x01", b"\x00"], 2), {b"\x01": 0.5})
    b = TranscriptBuilder(inputs=bytes([1]))
    b.query(lambda v: bytes(v.tolist()), inputs=[0])
    b.gate(gates.COPY, relevant=[0])
    m = from_transcript_machine(b.build("one"), {b"\x00": 0.5})
    with pytest.raises(MachineFormatError, match="unlisted query"):
        m.probability_batch(0, np.zeros((1, 0), dtype=np.int64))


def test_registered_panel_machine_has_exact_probability_and_k():
    m = make_stochastic_machine("screening-panel:n=3,p=0.4")
    assert m.p_accept == pytest.approx(acceptance_probability(m))
    assert m.lipschitz is not None and m.lipschitz > 0 and m.lipschitz_exact


def test_estimates_do_not_depend_on_the_number_of_worker_processes():
    args = ("majority:n=3,p=0.3", "lean", 1, "evade", "honest")
    one = estimate_acceptance(*args, debates=6000, seed=4, workers=1, chunk=2000)
    two = estimate_acceptance(*args, debates=6000, seed=4, workers=2, chunk=2000)
    assert one.accepted == two.accepted and one.queries == two.queries


def test_sweeps_write_csv_and_json(tmp_path):
    rows = sweep(
        ["single-query:p=0.8"], ["lean", "paper"], [("honest", "honest")], debates=500, seed=1
    )
    csv_path, json_path = write_results(rows, tmp_path / "sweep")
    assert len(csv_path.read_text().splitlines()) == 3
    assert json_path.read_text().count('"acceptance"') == 2


def test_lie_at_picks_the_most_influential_step():
    m = make_stochastic_machine("screening:n=3,k=1,p=0.3")
    player = make_strategy("stochastic", "A", "lie-at")
    influence = step_influence(m)
    from proofgames.protocols import play_stochastic_batch
    from proofgames.stochastic import lean_params

    play_stochastic_batch(
        m,
        lean_params(m.lipschitz, m.length),
        1,
        player,
        make_strategy("stochastic", "B", "honest"),
        debates=10,
    )
    assert player.step == int(np.argmax(influence))
