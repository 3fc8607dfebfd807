"""Where an evaluation's scoring runs: ``local`` (this process, the default) or ``dask`` (a Dask cluster).

An engine is a module with one function, ``score(plan, judgments, run)``: it reads ``run``,
ranks and scores it against ``judgments`` under the :class:`~evaltool.evaluation.plan.EvalPlan`
and returns the scored pieces (:class:`~evaltool.evaluation.scoring.Scored`). Engines use
only :mod:`evaltool.evaluation.scoring` of the evaluation stage, so every engine ranks with
the same tie rule, scores with the same kernels and, merged by the caller, gives
byte-identical output. :mod:`evaltool.engines.local` scores the whole run at once or
chunk by chunk; :mod:`evaltool.engines.dask` partitions the run by query over the cluster.
"""

from __future__ import annotations

import importlib

ENGINES = ("local", "dask")


def engine(name: str):
    """The engine module called ``name`` (one of :data:`ENGINES`); Dask is imported only when asked for."""
    from evaltool.errors import EvaltoolError

    if name not in ENGINES:
        raise EvaltoolError(f"unknown engine {name!r}; expected one of {', '.join(ENGINES)}")
    return importlib.import_module(f"evaltool.engines.{name}")
