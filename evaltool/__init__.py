"""evaltool: ranked retrieval evaluation that reproduces trec_eval, fast.

Importing the package is cheap: the names below are loaded on first use, so the
command line's ``--help`` never pays for numpy.

>>> from evaltool import evaluate
>>> evaluate({"q": {"a": 1}}, {"q": {"a": 1.0, "b": 0.5}}, ["recip_rank"]).summary
{'recip_rank': 1.0}
"""

from __future__ import annotations

import importlib

from evaltool.version import __version__ as __version__

# public name: the module that defines it (imported on first use)
_EXPORTS = {
    "EvalResult": "evaltool.evaluation.result",
    "evaluate": "evaltool.evaluation",
    "Evaluator": "evaltool.evaluation",
    "EvalPlan": "evaltool.evaluation.plan",
    "compare_runs": "evaltool.compare",
    "Comparison": "evaltool.compare",
    "fuse": "evaltool.fusion",
    "optimize_fusion": "evaltool.fusion",
    "FusedRun": "evaltool.fusion",
    "power_analysis": "evaltool.power",
    "reproduce": "evaltool.reproducibility",
    "EvaltoolError": "evaltool.errors",
    "EvaltoolWarning": "evaltool.errors",
    "InputError": "evaltool.errors",
    "MeasureError": "evaltool.errors",
    "ParseError": "evaltool.errors",
    "parse_measures": "evaltool.names",
    "read_qrels": "evaltool.io",
    "read_run": "evaltool.io",
}

__all__ = sorted([*_EXPORTS, "__version__"])


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module 'evaltool' has no attribute {name!r}")
    value = getattr(importlib.import_module(_EXPORTS[name]), name)
    globals()[name] = value
    return value


def __dir__():
    return __all__
