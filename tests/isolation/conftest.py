"""The isolation tests' collection: the hostile plugin is never imported into the session.

``hostile_party.py`` registers bisection B strategies that end their process, write to
every descriptor or sleep; it is loaded only by the subprocess V of the party-server tests
(``PROOFGAMES_PLUGINS``). Collected here (``--doctest-modules`` imports every module under
the test paths), it would register them in the test session too, where the conformance
suite plays every registered B in process: ``crash`` ends the test run itself.
"""

collect_ignore = ["hostile_party.py"]
