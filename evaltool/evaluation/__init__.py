"""Evaluation: one plan in, one result out.

* :mod:`~evaltool.evaluation.plan`: :class:`EvalPlan`, every choice of an evaluation, checked once;
* :mod:`~evaltool.evaluation.orchestration`: :func:`evaluate` and :class:`Evaluator`, which
  read the inputs, hand the run to an engine (:mod:`evaltool.engines`) and finish the result;
* :mod:`~evaltool.evaluation.scoring`: ranking and the measure kernels over pieces of whole
  queries, the only part of this package the engines use;
* :mod:`~evaltool.evaluation.result`: :class:`EvalResult` and its one JSON contract;
* :mod:`~evaltool.evaluation.groups`, :mod:`~evaltool.evaluation.labels`,
  :mod:`~evaltool.evaluation.zscores`, :mod:`~evaltool.evaluation.warnings`: what is
  computed after the kernels.

The names below are loaded on first use, so that an engine importing the scoring module
does not load the rest.

>>> from evaltool.evaluation import evaluate
>>> evaluate({"q1": {"d1": 1}}, {"q1": {"d1": 1.0}}, ["P.1"]).summary
{'P_1': 1.0}
"""

from __future__ import annotations

import importlib

_EXPORTS = {
    "evaluate": "evaltool.evaluation.orchestration",
    "Evaluator": "evaltool.evaluation.orchestration",
    "EvalPlan": "evaltool.evaluation.plan",
    "EvalResult": "evaltool.evaluation.result",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module 'evaltool.evaluation' has no attribute {name!r}")
    value = getattr(importlib.import_module(_EXPORTS[name]), name)
    globals()[name] = value
    return value


def __dir__():
    return __all__
