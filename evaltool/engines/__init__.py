"""Where an evaluation runs: ``local`` (this process, the default) or ``dask`` (a Dask cluster).

Both score with the same kernels and aggregate with the same code, so their outputs are
byte-identical; :mod:`evaltool.engines.dask` partitions the run by query over the cluster.
"""

ENGINES = ("local", "dask")
