"""A protocol is one file plus its registration: ``tests/plugins/replay.py`` shows it.

The toy protocol there is written as a user outside proofgames would write one. Nothing
in the package names it, yet the harness plays it in process and in separate processes,
and the registry-driven suites (conformance, goldens, isolation) include it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from proofgames import get_protocol, play, play_batch, protocol_names, strategy_names
from proofgames.plugins import registered

ROOT = Path(__file__).resolve().parents[2]
TOY = "replay"


def test_the_toy_protocol_is_registered_from_its_own_file():
    info = get_protocol(TOY)
    assert TOY in protocol_names()
    assert info.play.__module__ == "tests.plugins.replay"
    assert "tests.plugins.replay" in registered()  # a plugin: isolated parties import it
    assert strategy_names(TOY, "A")[0] == "honest" and strategy_names(TOY, "B")[0] == "honest"
    assert info.role_methods() == {"A": ("final",), "B": ("review",)}


def test_nothing_in_the_package_names_the_toy():
    named = [f'"{TOY}"', f"'{TOY}'", "tests.plugins"]
    for path in (ROOT / "src" / "proofgames").rglob("*.py"):
        text = path.read_text()
        assert not any(n in text for n in named), path


@pytest.mark.parametrize(
    "isolation", ["in-process", pytest.param("process", marks=pytest.mark.slow)]
)
def test_the_harness_plays_the_toy_in_process_and_isolated(isolation):
    kw = {"steps": 21, "isolation": isolation, "seed": 4}
    truth = play(TOY, "tm:1RB1RZ_1LB0RC_1LC1LA", claim=1, a="honest", b="object", **kw)
    assert (truth.winner, truth.forfeit, truth.isolation) == ("A", None, isolation)
    assert [m.kind for m in truth.messages] == ["final", "review", "verdict"]
    lie = play(TOY, "tm:1RB1RZ_1LB0RC_1LC1LA", claim=0, a="lie-output", b="honest", **kw)
    assert (lie.winner, lie.reason) == ("B", "V reached another configuration")
    garbage = play(TOY, "tm:1RB1RZ_1LB0RC_1LC1LA", claim=1, a="garbage", b="agree", **kw)
    assert garbage.forfeit == "A" and "malformed final configuration" in garbage.reason


def test_the_toy_plays_batches_like_any_protocol():
    batch = play_batch(TOY, "bb3", claim=1, a="honest", b="agree", debates=3, seed=1)
    assert batch.verdicts.tolist() == [1, 1, 1]


def test_an_isolated_party_needs_the_plugin_and_says_so_without_it(monkeypatch):
    """Without the plugin, a party's process does not know the protocol: a clear refusal."""
    import proofgames.plugins as plugins

    monkeypatch.setattr(plugins, "_REGISTERED", {})
    out = play(TOY, "bb3", claim=1, a="honest", b="agree", isolation="process")
    assert out.forfeit == "A" and "refused the game" in out.reason
    assert "protocol must be one of" in out.reason and "got 'replay'" in out.reason


def test_a_plugin_that_cannot_be_imported_is_a_clear_error(tmp_path):
    code = "import proofgames.plugins as p; p.load({'PROOFGAMES_PLUGINS': 'no_such_module_x'})"
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert res.returncode == 1
    assert "plugin 'no_such_module_x'" in res.stderr and "could not be imported" in res.stderr
