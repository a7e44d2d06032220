"""The Prover-Verifier Game tasks: each one file written against :mod:`proofgames.pvg.task`.

* :mod:`~proofgames.pvg.tasks.bec`: the Binary Erasure Channel (the paper's Section 5.1);
* :mod:`~proofgames.pvg.tasks.find_the_plus`: FindThePlus, the visual search (Section
  5.2), with its verifier in :mod:`~proofgames.pvg.tasks.plus_verifier`;
* :mod:`~proofgames.pvg.tasks.needle`: FindTheNeedle (not in the paper), the smallest
  witness task and the template for new ones.

Each is registered by name, with the paper's training settings for it, in
:mod:`proofgames.pvg.registry`; importing this package registers nothing by itself.

Example:
    >>> from proofgames.pvg.tasks.needle import FindTheNeedle
    >>> FindTheNeedle().message_dim
    16
"""
