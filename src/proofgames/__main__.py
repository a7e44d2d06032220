"""``python -m proofgames``: the same command line as the ``proofgames`` script."""

from ._entry import main

if __name__ == "__main__":
    main()
