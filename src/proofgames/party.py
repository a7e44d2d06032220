"""The party runner's old path, ``python -m proofgames.party SPEC`` (deprecated).

The runner is :mod:`proofgames.isolation.party` now; this entry point goes in the next
release.
"""

import sys

from .isolation.party import main

if __name__ == "__main__":
    sys.exit(main())
