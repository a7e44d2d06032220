"""Sweeps that fan out: work items on local processes or Dask, and resumable stores.

* :mod:`~proofgames.sweeps.executors`: one seam (:func:`~proofgames.sweeps.executors.map_items`)
  for local process pools and Dask distributed; the numbers do not depend on where an
  item runs;
* :mod:`~proofgames.sweeps._store`: a JSON-lines store of finished items, so a sweep
  started again with the same arguments continues where it stopped.
"""
