"""Plugins found through entry points load when a registry first needs them, not at start.

Each test runs a fresh interpreter with a folder on ``PYTHONPATH`` holding a plugin module
and a distribution's metadata that declares it in the ``proofgames.plugins`` group: what an
installed plugin package looks like to :mod:`importlib.metadata`.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

PLUGIN = '''
from proofgames.strategies import make_strategy, register_strategy

@register_strategy("bisection", "B", "plugged-first")
def plugged_first():
    """Disputes the first half, from a plugin."""
    return make_strategy("bisection", "B", "first")
'''


def _installed(tmp_path: Path, body: str) -> dict[str, str]:
    """An environment whose ``PYTHONPATH`` holds the plugin ``lazyplug`` and its entry point."""
    (tmp_path / "lazyplug.py").write_text(textwrap.dedent(body))
    dist = tmp_path / "lazyplug-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: lazyplug\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[proofgames.plugins]\nlazyplug = lazyplug\n")
    env = {k: v for k, v in os.environ.items() if k != "PROOFGAMES_PLUGINS"}
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), env.get("PYTHONPATH", "")])
    return env


def _run(code: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], env=env, capture_output=True, text=True
    )


def test_a_debate_of_built_ins_does_not_scan_the_entry_points(tmp_path):
    env = _installed(tmp_path, PLUGIN)
    res = _run(
        """
        import sys
        from proofgames import play
        out = play("bisection", "bb2", claim=0, a="honest", b="first")
        print("importlib.metadata" in sys.modules, "lazyplug" in sys.modules)
        """,
        env,
    )
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["False", "False"]


def test_built_ins_are_not_plugins_so_isolated_children_scan_nothing():
    # The built-in instance kinds register functools.partial objects, whose __module__ is
    # "functools": once noted as a plugin, every isolated prover's process was told to
    # import it (PROOFGAMES_PLUGINS=functools, the standard library's folder put first on
    # PYTHONPATH) and scanned every installed distribution's entry points (8-10 ms a child).
    env = {k: v for k, v in os.environ.items() if k != "PROOFGAMES_PLUGINS"}
    res = _run(
        """
        from proofgames import plugins
        from proofgames.isolation import server
        from proofgames.isolation._served import launcher  # noqa: F401
        server.warm_up()  # every protocol, strategy and instance kind, and two debates
        print(plugins.registered(), sorted(plugins.child_environment({})))
        """,
        env,
    )
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "[] ['PROOFGAMES_PLUGINS']"


def test_a_name_only_a_plugin_registers_loads_the_plugins_and_is_found(tmp_path):
    env = _installed(tmp_path, PLUGIN)
    res = _run(
        """
        import sys
        from proofgames import play, strategy_names
        built_in = play("bisection", "bb2", claim=0, a="honest", b="first")
        print("lazyplug" in sys.modules)
        out = play("bisection", "bb2", claim=0, a="honest", b="plugged-first")
        print(out.prover_b.name, "lazyplug" in sys.modules, out.winner == built_in.winner)
        print("plugged-first" in strategy_names("bisection", "B"))
        """,
        env,
    )
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["False", "plugged-first", "True", "True", "True"]


def test_listing_a_registry_includes_the_plugins(tmp_path):
    env = _installed(tmp_path, PLUGIN)
    res = _run(
        """
        from proofgames.strategies import strategy_names
        print(" ".join(strategy_names("bisection", "B")))
        """,
        env,
    )
    assert res.returncode == 0, res.stderr
    assert "plugged-first" in res.stdout.split()


@pytest.mark.parametrize(
    "code",
    [
        'from proofgames import play; play("bisection", "bb2", claim=0, b="no-such-b")',
        'from proofgames.cli import main; main(["strategies", "bisection"])',
    ],
)
def test_a_broken_entry_point_plugin_is_a_clear_error_at_the_lookup_that_needs_it(tmp_path, code):
    env = _installed(tmp_path, "raise RuntimeError('this plugin is broken')\n")
    res = _run(code, env)
    assert res.returncode != 0
    assert "plugin 'lazyplug'" in res.stderr and "this plugin is broken" in res.stderr
    if "cli" in code:  # the command line says it in one line
        assert res.returncode == 2 and "Traceback" not in res.stderr


def test_the_command_line_still_names_a_broken_plugin_of_proofgames_plugins_at_once(tmp_path):
    env = _installed(tmp_path, PLUGIN)
    env["PROOFGAMES_PLUGINS"] = "no_such_plugin_module"
    res = _run('from proofgames.cli import main; main(["examples"])', env)
    assert res.returncode == 2
    assert "plugin 'no_such_plugin_module'" in res.stderr and "Traceback" not in res.stderr


def test_threads_that_look_up_a_plugins_name_at_once_all_find_it(tmp_path):
    """The first lookup loads the plugins; one that comes meanwhile waits for them, rather
    than missing a name whose module is still being imported."""
    slow = "import time\ntime.sleep(0.5)\n" + PLUGIN
    env = _installed(tmp_path, slow)
    res = _run(
        """
        import threading
        from proofgames.strategies import make_strategy
        found, errors = [], []
        def look():
            try:
                found.append(make_strategy("bisection", "B", "plugged-first").spec.name)
            except Exception as exc:
                errors.append(repr(exc))
        threads = [threading.Thread(target=look) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        print(len(found), len(errors), errors[:1])
        """,
        env,
    )
    assert res.returncode == 0, res.stderr
    assert res.stdout.split()[:2] == ["4", "0"], res.stdout
