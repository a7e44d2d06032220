"""Plugins the test session registers: each module here is imported by ``tests/conftest.py``.

A module here is a protocol (with its strategies) written the way a user outside
proofgames writes one. The registry-driven suites (conformance, goldens, isolation) pick
it up with no edit elsewhere.
"""
