"""Experiments over many debates: Monte Carlo estimates, and the stochastic and params reports.

This layer sits above the protocols and the harness: every batch of debates it plays goes
through :func:`proofgames.harness.play_batch`, the one batch path, in work items an
executor can spread over processes or a Dask cluster (:mod:`proofgames.sweeps.executors`).

* :mod:`~proofgames.experiments.montecarlo`: acceptance estimates with exact intervals,
  sweeps over cells, resumable stores;
* :mod:`~proofgames.experiments.stochastic_report`: ``proofgames report``, Figure 1
  measured against the theorem (``reports/stochastic``);
* :mod:`~proofgames.experiments.params_report`: ``proofgames params report``, human
  judgements per parameter tier (``reports/params``).

The stochastic *model* these experiments measure (machines, Lipschitz constants,
parameters, exact optimal adversaries) is :mod:`proofgames.stochastic`, below the
protocols.
"""
