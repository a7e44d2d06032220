"""Session-wide pytest configuration: skip optional subpackages' doctests without their extras."""

import importlib.util

collect_ignore_glob = [] if importlib.util.find_spec("torch") else ["src/proofgames/pvg/*"]
if not importlib.util.find_spec("inspect_ai"):  # the 'language' extra
    collect_ignore_glob += [
        f"src/proofgames/language/{m}.py"
        for m in (
            "model_judge",
            "model_provers",
            "inspect_tasks",
            "local_model",
            "_inspect_registry",
        )
    ]
