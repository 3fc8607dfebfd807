"""evaltool as an ir_measures provider, so ir_measures (and PyTerrier through it) get
evaltool's numbers, speed and trec_eval's tie rule.

Importing this module registers a provider named ``evaltool`` in ir_measures' registry:

>>> import ir_measures
>>> import evaltool.integrations.ir_measures as integration
>>> provider = ir_measures.providers.registry["evaltool"]
>>> qrels = [ir_measures.Qrel("q1", "d1", 1), ir_measures.Qrel("q1", "d2", 0)]
>>> run = [ir_measures.ScoredDoc("q1", "d1", 1.0), ir_measures.ScoredDoc("q1", "d2", 2.0)]
>>> provider.calc_aggregate([ir_measures.P@1, ir_measures.AP], qrels, run)
{P@1: 0.0, AP: 0.5}

ir_measures 0.4 has no ``provider=`` argument on its module-level functions; call the
provider itself (as above, or ``provider.evaluator(measures, qrels)`` for many runs), or
make it the first provider ir_measures' default pipeline asks, which is what
``ir_measures.calc_aggregate`` and PyTerrier's ``pt.Experiment`` use::

    integration.use_by_default()

A measure is supported when evaltool's measure grammar reads ir_measures' spelling of
it (``str(measure)``: ``nDCG@10``, ``P(rel=2)@5``, ``RR@10``…). As with every provider,
a query of the qrels without results gets the measure's default (0) from ir_measures,
while evaltool on the command line leaves such queries out unless ``-c``.
"""

from __future__ import annotations

from collections.abc import Iterable

try:
    import ir_measures
    from ir_measures.providers import Evaluator, Provider
except ImportError:  # pragma: no cover - the module is only imported by ir_measures users
    raise ImportError("evaltool.integrations.ir_measures needs ir_measures: pip install ir-measures") from None

from evaltool.errors import EvaltoolError


class EvaltoolEvaluator(Evaluator):
    """Scores runs for fixed measures and qrels (the qrels are converted once)."""

    def __init__(self, measures, qrels: dict):
        super().__init__(measures, qrels.keys())
        self.qrels = qrels
        self.names = {str(m): m for m in measures}

    def _iter_calc(self, run):
        from evaltool.evaluation import evaluate

        run = ir_measures.util.RunConverter(run).as_dict_of_dict()
        if not run:
            return
        try:
            result = evaluate(self.qrels, run, list(self.names), per_query=True)
        except EvaltoolError as exc:
            if "has judgments in" in str(exc):  # no run query is judged: every query takes the default
                return
            raise
        # every column, also those evaltool prints as a summary only (NumQ is 1 for each query)
        for column in result.columns:
            measure = self.names[column.name]
            for qid, value in zip(result.qids, column.values):
                yield ir_measures.Metric(query_id=qid, measure=measure, value=float(value))


class EvaltoolProvider(Provider):
    """evaltool (trec_eval 10 semantics: score descending, then document id descending)."""

    NAME = "evaltool"

    def supports(self, measure) -> bool:
        from evaltool.errors import MeasureError
        from evaltool.names import parse_measures

        try:
            parse_measures([str(measure)])
        except MeasureError:
            return False
        return True

    def _evaluator(self, measures: Iterable, qrels):
        qrels = ir_measures.util.QrelsConverter(qrels).as_dict_of_dict()
        return EvaltoolEvaluator(list(measures), qrels)

    def install_instructions(self) -> str:
        return "pip install evaltool"


PROVIDER = ir_measures.providers.register(EvaltoolProvider())


def use_by_default() -> None:
    """Make evaltool the first provider of ir_measures' default pipeline (``ir_measures.calc_aggregate``,
    ``ir_measures.iter_calc``, PyTerrier's ``pt.Experiment``); measures it does not read fall through
    to the other providers as before."""
    pipeline = ir_measures.DefaultPipeline.providers
    if PROVIDER not in pipeline:
        pipeline.insert(0, PROVIDER)
