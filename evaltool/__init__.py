"""evaltool: ranked retrieval evaluation that reproduces trec_eval, fast.

>>> from evaltool import evaluate
>>> evaluate({"q": {"a": 1}}, {"q": {"a": 1.0, "b": 0.5}}, ["recip_rank"]).summary
{'recip_rank': 1.0}
"""

from evaltool.errors import EvaltoolError, InputError, MeasureError, ParseError
from evaltool.evaluate import EvalResult, evaluate
from evaltool.io import read_qrels, read_run
from evaltool.names import parse_measures

__version__ = "0.1.0"

__all__ = [
    "EvalResult", "EvaltoolError", "InputError", "MeasureError", "ParseError",
    "evaluate", "parse_measures", "read_qrels", "read_run", "__version__",
]
