"""The evaluation plan: every choice of an evaluation except its inputs, checked once.

:func:`evaltool.evaluate`'s keyword options, :class:`evaltool.Evaluator`'s and the command
line's all become one frozen :class:`EvalPlan`: the measure requests, the ranking options
(``-l -M -J -c -N``), the ``-Z`` table, how inputs are read, how queries are judged
(``relevance``), how results are grouped and labelled, and which engine scores. Building
the plan is where a misspelt measure, a negative ``-l`` or an unknown engine is refused,
before any input is read; the rest of the evaluation reads the plan and never checks again.

The options and their defaults are declared once, in :data:`OPTIONS`.

>>> plan = EvalPlan.build(["P.5", "nDCG@10"], relevance_level=2, complete=True)
>>> plan.scoring.output_names, plan.ranking.relevance_level, plan.ranking.complete, plan.cutoffs
(['P_5', 'nDCG@10'], 2, True, [5, 10])
>>> EvalPlan.build(["map"], engine="spark")
Traceback (most recent call last):
...
evaltool.errors.EvaltoolError: unknown engine 'spark'; expected one of local, dask
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property

from evaltool.engines import ENGINES
from evaltool.errors import EvaltoolError
from evaltool.evaluation.labels import check_thresholds, threshold_request
from evaltool.evaluation.scoring import Scoring
from evaltool.measures.base import Params
from evaltool.names import parse_measures
from evaltool.ranking import RankOptions

F1_TOTALS = ("retrieved", "top-k")  # token F1's relevant items: found among all items, or in the top K

OPTIONS: Mapping[str, object] = {
    # ranking (trec_eval's -l, -c, -M, -J, -N) and -Z
    "relevance_level": 1,
    "complete": False,
    "max_ret": None,
    "judged_only": False,
    "num_docs_in_coll": 0,
    "zscores": None,
    # reading the inputs
    "on_duplicate": "error",
    "runid": None,
    "stream": False,
    # judging queries without qrels (evaltool.relevance)
    "relevance": "auto",
    "packs": None,
    "f1_threshold": 0.3,
    "f1_total": "retrieved",
    "qrels_format": None,
    "run_format": None,
    # where the scoring runs
    "engine": "local",
    "scheduler": None,
    "partitions": None,
    # after the kernels
    "group_by": (),
    "topics": None,
    "thresholds": None,
    "jobs": None,
}
"""Every keyword option of :func:`evaltool.evaluate` and :class:`evaltool.Evaluator`, with its default."""


@dataclass(frozen=True)
class InputSettings:
    """How the inputs are read: duplicate (query, document) rows, the run tag to report,
    forced formats, reader threads."""

    on_duplicate: str = "error"
    runid: str | None = None
    qrels_format: str | None = None
    run_format: str | None = None
    jobs: int | None = None


@dataclass(frozen=True)
class RelevanceSettings:
    """How a query without qrels is judged (:mod:`evaltool.relevance`): ``mode`` allows one
    source or all (``auto``); ``f1_depth`` is K under ``f1_total="top-k"``, else None."""

    mode: str = "auto"
    packs: object = None
    f1_threshold: float = 0.3
    f1_total: str = "retrieved"
    f1_depth: int | None = None


@dataclass(frozen=True)
class GroupingSettings:
    """What is added after the kernels: groups by ``fields`` of ``topics`` (a path, mapping,
    :class:`~evaltool.io.topics.Topics` or None: a queries file's own fields), and labels
    under ``thresholds`` (None: no labels; ``given``: the names the user set explicitly)."""

    fields: tuple[str, ...] = ()
    topics: object = None
    thresholds: Mapping[str, float] | None = None
    given: tuple[str, ...] = ()


@dataclass(frozen=True)
class EngineSettings:
    """Where the scoring runs: ``local`` (the whole run, or chunk by chunk with ``stream``) or
    ``dask`` (``scheduler`` address, ``partitions`` by query)."""

    name: str = "local"
    stream: bool = False
    scheduler: str | None = None
    partitions: int | None = None


@dataclass(frozen=True)
class EvalPlan:
    """One evaluation's choices, validated: build it with :meth:`build`.

    ``scoring`` is what the kernels need (:class:`~evaltool.evaluation.scoring.Scoring`),
    ``zscores`` the ``-Z`` file it was read from; the other parts say how inputs are
    read, how queries are judged, what is added after the kernels and where scoring runs.
    """

    scoring: Scoring
    zscores: str | None = None
    inputs: InputSettings = InputSettings()
    relevance: RelevanceSettings = RelevanceSettings()
    grouping: GroupingSettings = GroupingSettings()
    engine: EngineSettings = EngineSettings()

    @classmethod
    def build(cls, measures=None, **options) -> EvalPlan:
        """The plan of ``evaluate(qrels, run, measures, **options)``; see :data:`OPTIONS`.

        Raises :class:`TypeError` for an option that does not exist and
        :class:`~evaltool.errors.EvaltoolError` for a value that cannot be used.
        """
        unknown = sorted(set(options) - set(OPTIONS))
        if unknown:
            raise TypeError(
                f"unexpected evaluation option(s) {', '.join(unknown)}; expected some of: {', '.join(sorted(OPTIONS))}"
            )
        o = {**OPTIONS, **options}
        specs = [measures] if isinstance(measures, str) else measures
        specs = None if specs is None else tuple(specs)
        requests = tuple(parse_measures(specs))
        in_force, given = threshold_request(o["thresholds"])
        if in_force is not None:
            check_thresholds(in_force, [name for r in requests for name in r.names], given)
        ranking = RankOptions(o["relevance_level"], o["max_ret"], o["judged_only"], o["complete"])
        _check_ranking(ranking)
        relevance = _relevance(o, requests)
        zscores = o["zscores"]
        ztable = None
        if zscores:
            from evaltool.io.zscores import read_zscores

            ztable = read_zscores(zscores)
        if o["engine"] not in ENGINES:
            raise EvaltoolError(f"unknown engine {o['engine']!r}; expected one of {', '.join(ENGINES)}")
        scoring = Scoring(specs, requests, ranking, o["num_docs_in_coll"], ztable)
        group_by = o["group_by"]
        fields = (group_by,) if isinstance(group_by, str) else tuple(group_by or ())
        return cls(
            scoring=scoring,
            zscores=zscores,
            inputs=InputSettings(o["on_duplicate"], o["runid"], o["qrels_format"], o["run_format"], o["jobs"]),
            relevance=relevance,
            grouping=GroupingSettings(fields, o["topics"], in_force, tuple(given)),
            engine=EngineSettings(o["engine"], bool(o["stream"]), o["scheduler"], o["partitions"]),
        )

    @property
    def requests(self) -> tuple:
        return self.scoring.requests

    @property
    def ranking(self) -> RankOptions:
        return self.scoring.ranking

    @cached_property
    def subtopics(self) -> bool:
        """Whether a diversity measure is asked for (the judgments are then subtopic qrels)."""
        return any(r.measure.subtopics for r in self.requests)

    @property
    def cutoffs(self) -> list[int]:
        """The rank cutoffs asked for (``P.5,10``: 5 and 10; ``nDCG@10``: 10), for ``meta.relevance.k``."""
        return list(self._cutoffs)

    @cached_property
    def _cutoffs(self) -> tuple[int, ...]:  # a plan is read-only: found once, for every run it scores
        return tuple(cutoffs(self.requests))

    def options_meta(self) -> dict:
        """``meta["options"]`` of a result: the ranking options as trec_eval names them."""
        ranking = self.ranking
        return {
            "relevance_level": ranking.relevance_level,
            "complete": ranking.complete,
            "max_ret": ranking.max_ret,
            "judged_only": ranking.judged_only,
            "num_docs_in_coll": self.scoring.num_docs_in_coll,
            "zscores": self.zscores,
            "on_duplicate": self.inputs.on_duplicate,
        }


def cutoffs(requests) -> list[int]:
    """The rank cutoffs of ``requests``: a cutoff measure's values, a named measure's ``@k``."""
    found = set()
    for request in requests:
        m = request.measure
        if m.params is Params.CUTOFFS:
            found.update(request.values)
        elif m.params is Params.NAMED and m.at_option is not None:
            k = dict(request.values).get(m.at_option.name)
            if k is not None:
                found.add(int(k))
    return sorted(found)


def _check_ranking(ranking: RankOptions) -> None:
    if ranking.relevance_level < 0:
        raise EvaltoolError(
            f"relevance level (-l) {ranking.relevance_level}: expected 0 or more (negative grades mean "
            "'in the pool but unjudged' and never count as relevant)"
        )
    if ranking.max_ret is not None and ranking.max_ret < 0:
        raise EvaltoolError(f"maximum documents per query (-M) {ranking.max_ret}: expected 0 or more")


def _relevance(o: Mapping, requests) -> RelevanceSettings:
    from evaltool.relevance.resolve import check_options

    check_options(o["relevance"], o["f1_threshold"])
    f1_total = o["f1_total"]
    if f1_total not in F1_TOTALS:
        raise EvaltoolError(f"f1_total {f1_total!r}: expected one of {', '.join(F1_TOTALS)}")
    f1_depth = None
    if f1_total == "top-k":
        found = cutoffs(requests)
        if not found:
            raise EvaltoolError(
                "--f1-total top-k judges the top K items; give a measure with a cutoff "
                "(such as ndcg@10 or recall.5) to say K"
            )
        f1_depth = max(found)
    return RelevanceSettings(o["relevance"], o["packs"], o["f1_threshold"], f1_total, f1_depth)
