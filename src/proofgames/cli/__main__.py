"""``python -m proofgames.cli``: the same command line as the ``proofgames`` script."""

from . import main

if __name__ == "__main__":
    main()
