"""The table of built-in protocols and strategies (:mod:`proofgames._builtins`).

Each module registers what the table says it does, and nothing else; a lookup imports only
the module that registers the name; a listing is in the table's order whatever was looked
up first.  Each check runs in a fresh interpreter, where nothing is registered yet.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from proofgames import _builtins


def _fresh(code: str) -> object:
    out = subprocess.run(
        [sys.executable, "-c", "import json, sys\n" + code],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


#: Each table: how the fresh interpreter reads the protocols its modules registered.
REGISTERED = {
    "protocols": (
        "from proofgames.protocols import _catalog",
        "sorted(_catalog._PROTOCOLS._items)",
    ),
    "strategies": (
        "from proofgames import _registry",
        "sorted({k[0] for k in _registry._ABOUT})",
    ),
}


@pytest.mark.parametrize("table", sorted(REGISTERED))
def test_each_module_registers_for_its_own_protocol_only(table: str) -> None:
    """A protocol's module may import another it builds on (stochastic-witness imports
    stochastic), but registers nothing outside the table."""
    declared = getattr(_builtins, table.upper())
    for protocol, module in declared.items():
        registry, read = REGISTERED[table]
        found = _fresh(f"{registry}\nimport {module}\nprint(json.dumps({read}))\n")
        assert isinstance(found, list) and protocol in found, (protocol, module, found)
        assert set(found) <= set(declared), found
    assert set(_builtins.STRATEGIES) == set(_builtins.PROTOCOLS)


def test_a_lookup_imports_only_the_module_it_needs() -> None:
    loaded = _fresh(
        "from proofgames.protocols import get_protocol\n"
        "from proofgames.strategies import make_strategy\n"
        "get_protocol('bisection'); make_strategy('bisection', 'A', 'flip-step')\n"
        f"print(json.dumps([m for m in {sorted(_builtins.PROTOCOLS.values())!r} "
        f"+ {sorted(_builtins.STRATEGIES.values())!r} if m in sys.modules]))\n"
    )
    assert loaded == ["proofgames.protocols.bisection", "proofgames.strategies.bisection"]


def test_listings_follow_the_table_whatever_was_loaded_first() -> None:
    listed = _fresh(
        "from proofgames.protocols import get_protocol, protocol_names\n"
        "from proofgames.strategies import strategy_names\n"
        "get_protocol('witness'); get_protocol('stochastic-witness')\n"
        "print(json.dumps([protocol_names(), strategy_names('stochastic-witness', 'B')]))\n"
    )
    assert isinstance(listed, list)
    assert listed[0] == list(_builtins.PROTOCOLS)
    from proofgames.strategies import strategy_names

    assert listed[1] == strategy_names("stochastic-witness", "B")  # as in this process


def test_an_unknown_name_lists_every_built_in() -> None:
    message = _fresh(
        "from proofgames.errors import RegistryError\n"
        "from proofgames.protocols import get_protocol\n"
        "try:\n    get_protocol('no-such')\nexcept RegistryError as exc:\n"
        "    print(json.dumps(str(exc)))\n"
    )
    assert isinstance(message, str)
    assert message.startswith("unknown protocol 'no-such'; registered: ")
    assert all(name in message for name in _builtins.PROTOCOLS)


def test_a_plugin_cannot_take_a_built_in_name_before_it_loads() -> None:
    """Registered first, a plugin's ``bisection`` (or bisection's B ``honest``) would shadow
    the built-in; the built-in's module is loaded first, so the plugin's is refused."""
    said = _fresh(
        "from proofgames.errors import RegistryError\n"
        "from proofgames.protocols import _catalog\n"
        "from proofgames.strategies import register_strategy, strategy_names\n"
        "out = []\n"
        "try:\n"
        "    _catalog._PROTOCOLS.add('bisection', 'impostor')\n"
        "except RegistryError as exc:\n"
        "    out.append(str(exc))\n"
        "try:\n"
        "    register_strategy('bisection', 'B', 'honest')(lambda: None)\n"
        "except RegistryError as exc:\n"
        "    out.append(str(exc))\n"
        "register_strategy('bisection', 'B', 'mine')(lambda: None)  # a new name: taken\n"
        "out.append(type(_catalog.get_protocol('bisection')).__name__)\n"
        "out.append(strategy_names('bisection', 'B'))\n"
        "print(json.dumps(out))\n"
    )
    assert said == [
        "protocol 'bisection' is already registered",
        "strategy 'honest' is already registered for bisection B",
        "ProtocolInfo",
        ["honest", "first", "mine", "random", "second"],
    ]
