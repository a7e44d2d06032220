"""Session-wide pytest configuration: skip the PyTorch subpackage's doctests without torch."""

import importlib.util

collect_ignore_glob = [] if importlib.util.find_spec("torch") else ["src/proofgames/pvg/*"]
