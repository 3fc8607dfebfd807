"""Paired comparison of runs: significance tests, multiple-testing corrections, intervals.

Every run is scored by :func:`evaltool.evaluation.evaluate` with the same options (measures
are never computed here). The statistics work on the per-query values of the queries
that every run was evaluated on, paired by query id; the first run is the baseline.

Tests (two-sided), on the per-query differences ``d = run - baseline``:

* ``t``: paired t-test (``scipy.stats.ttest_rel``); interval: the t interval of mean(d).
* ``wilcoxon``: Wilcoxon signed-rank test (``scipy.stats.wilcoxon``, zero differences
  dropped, exact distribution for small samples without ties as scipy decides).
* ``randomization``: Fisher's randomization test: under the null hypothesis the sign of
  every difference is a fair coin, so ``p = (c + 1) / (trials + 1)`` where ``c`` counts
  the random sign vectors ``s`` with ``|sum(s*d)| >= |sum(d)|`` (Smucker, Allan and
  Carterette, CIKM 2007; the +1 keeps the Monte Carlo p-value valid, Phipson and Smyth 2010).
* ``bootstrap``: paired bootstrap test: ``p = (c + 1) / (trials + 1)`` where ``c`` counts
  resampled means of the centred differences at least as far from 0 as mean(d)
  (Efron and Tibshirani 1993, 16.4; Sakai, SIGIR 2006).

For all but ``t`` the interval is the paired bootstrap BCa interval of mean(d)
(``scipy.stats.bootstrap`` with ``trials`` resamples). Randomness is seeded: every cell
draws from ``numpy.random.default_rng(seed)``, so a cell's numbers do not depend on
which other runs or measures are compared.

Identical runs (every difference 0) get p = 1 and the interval [0, 0]; scipy would say
nan for the t-test.

Corrections over the family of all (run, measure) cells: Holm's step-down (default),
Bonferroni, Benjamini-Hochberg (``scipy.stats.false_discovery_control``), or none.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from evaltool.aggregate import summarize
from evaltool.errors import EvaltoolError, EvaltoolWarning, InputError, MeasureError, QueriesSkippedWarning
from evaltool.evaluation.groups import Series, field_order, field_values, group_queries, group_summaries, ungrouped_note
from evaltool.evaluation.labels import check_thresholds, label
from evaltool.evaluation.warnings import shown, warn
from evaltool.measures import DEFAULT_SETS
from evaltool.measures.base import Agg, Better

if TYPE_CHECKING:
    from evaltool.evaluation.result import EvalResult
    from evaltool.multiple import AllPairs

TESTS = {
    "t": "paired t-test",
    "wilcoxon": "Wilcoxon signed-rank test",
    "randomization": "Fisher's randomization test",
    "bootstrap": "paired bootstrap test",
}
# tests of many runs at once (evaltool.multiple): family-wise over the pairs of runs of a measure already
MANY_TESTS = {
    "tukey": "randomised Tukey HSD test",
    "hsd": "Tukey's HSD test (two-way ANOVA residual variance)",
}
CORRECTIONS = {
    "holm": "Holm",
    "bonferroni": "Bonferroni",
    "bh": "Benjamini-Hochberg",
    "none": "no correction",
}
# sign vectors drawn at once by the randomization test: bounds memory to ~8 MB of signs
SIGN_BLOCK_CELLS = 1 << 23


def _stats():
    try:
        import scipy.stats
    except ImportError:
        raise EvaltoolError("comparing runs needs scipy: pip install scipy") from None
    return scipy.stats


def _counted_p(extreme: int, trials: int) -> float:
    return (extreme + 1) / (trials + 1)


def _slack(d: np.ndarray) -> float:
    """Rounding room for 'at least as extreme': sums of the same numbers in another order."""
    return 1e-12 * max(1.0, float(np.abs(d).sum()))


def t_test(d: np.ndarray, level: float) -> tuple[float, tuple[float, float]]:
    """Paired t-test p-value and t interval of mean(d) (``d`` = run - baseline per query)."""
    if not d.any():
        return 1.0, (0.0, 0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        result = _stats().ttest_1samp(d, 0.0)
        ci = result.confidence_interval(level)
    return float(result.pvalue), (float(ci.low), float(ci.high))


def wilcoxon_test(d: np.ndarray) -> float:
    """Wilcoxon signed-rank p-value of the differences (zero differences dropped)."""
    if not d.any():
        return 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return float(_stats().wilcoxon(d).pvalue)


def randomization_test(d: np.ndarray, trials: int, seed: int) -> float:
    """Fisher's randomization test with ``trials`` random sign flips, vectorised in blocks."""
    observed = abs(float(d.sum())) - _slack(d)
    rng = np.random.default_rng(seed)
    block = max(1, SIGN_BLOCK_CELLS // max(len(d), 1))
    extreme = done = 0
    while done < trials:
        k = min(block, trials - done)
        signs = rng.integers(0, 2, size=(k, len(d)), dtype=np.int8)
        signs = 2 * signs - 1
        extreme += int(np.count_nonzero(np.abs(signs @ d) >= observed))
        done += k
    return _counted_p(extreme, trials)


def bootstrap_test(d: np.ndarray, trials: int, seed: int, level: float) -> tuple[float, tuple[float, float]]:
    """Paired bootstrap: p-value of the centred-resample test and the BCa interval of mean(d)."""
    mean = float(d.mean())
    if np.ptp(d) == 0:  # every resample is d itself; BCa is undefined
        return (1.0 if mean == 0 else _counted_p(0, trials)), (mean, mean)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = _stats().bootstrap(
            (d,),
            np.mean,
            n_resamples=trials,
            confidence_level=level,
            method="BCa",
            rng=np.random.default_rng(seed),
            vectorized=True,
        )
    centred = np.abs(result.bootstrap_distribution - mean)
    extreme = int(np.count_nonzero(centred >= abs(mean) - _slack(d)))
    ci = result.confidence_interval
    return _counted_p(extreme, trials), (float(ci.low), float(ci.high))


def paired_test(
    d: np.ndarray, test: str, *, trials: int = 10000, seed: int = 0, level: float = 0.95
) -> tuple[float, tuple[float, float]]:
    """p-value of ``test`` and the confidence interval of mean(d) that goes with it."""
    if test not in TESTS:
        raise EvaltoolError(f"unknown test {test!r}; expected one of {', '.join(TESTS)}")
    if test == "t":
        return t_test(d, level)
    boot_p, ci = bootstrap_test(d, trials, seed, level)
    if test == "bootstrap":
        return boot_p, ci
    if test == "wilcoxon":
        return wilcoxon_test(d), ci
    return randomization_test(d, trials, seed), ci


def adjust(pvalues, method: str) -> np.ndarray:
    """Adjusted p-values for one family of tests; nan entries stay nan and do not count.

    >>> adjust([0.01, 0.04, 0.03], "holm").round(4).tolist()
    [0.03, 0.06, 0.06]
    """
    if method not in CORRECTIONS:
        raise EvaltoolError(f"unknown correction {method!r}; expected one of {', '.join(CORRECTIONS)}")
    p = np.asarray(pvalues, dtype=np.float64)
    out = np.full(p.shape, np.nan)
    known = ~np.isnan(p)
    q = p[known]
    m = len(q)
    if m == 0 or method == "none":
        out[known] = q
        return out
    if method == "bonferroni":
        out[known] = np.minimum(1.0, q * m)
    elif method == "holm":
        order = np.argsort(q, kind="stable")
        stepped = np.maximum.accumulate((m - np.arange(m)) * q[order])
        adjusted = np.empty(m)
        adjusted[order] = np.minimum(1.0, stepped)
        out[known] = adjusted
    else:
        out[known] = _stats().false_discovery_control(q, method="bh")
    return out


@dataclass
class Cell:
    """One run and measure: its mean and, for a run other than the baseline, the paired statistics."""

    mean: float
    delta: float | None = None
    p_value: float | None = None
    p_adjusted: float | None = None
    ci: tuple[float, float] | None = None
    wins: int | None = None
    ties: int | None = None
    losses: int | None = None
    pairs: int | None = None

    def to_dict(self) -> dict:
        if self.delta is None:
            return {"mean": self.mean}
        return {
            "mean": self.mean,
            "delta": self.delta,
            "p_value": self.p_value,
            "p_adjusted": self.p_adjusted,
            "ci": list(self.ci),
            "wins": self.wins,
            "ties": self.ties,
            "losses": self.losses,
        }


# the columns of Comparison.rows(): a tidy row per (group, run, measure)
ROW_FIELDS = (
    "group",
    "run",
    "measure",
    "queries",
    "mean",
    "delta",
    "p_value",
    "p_adjusted",
    "significant",
    "ci_low",
    "ci_high",
    "wins",
    "ties",
    "losses",
)


@dataclass
class Comparison:
    """Runs scored on the same queries, the first as baseline, with a cell per run and measure.

    Plain data for formatters: ``names`` (runs, baseline first), ``measures``, ``qids``
    (the queries compared), ``cells[run][measure]`` (:class:`Cell`), ``values[run][measure]``
    (per-query values aligned with ``qids``), ``left_out`` (per run, the evaluated queries
    not compared), and, when asked for, ``groups`` ({field: {value: {"count": n, "runs":
    {run: {measure: mean}}}}}), ``thresholds`` and ``labels`` ({run: label of its means}).
    ``warnings`` lists what the comparison left out; ``results`` holds each run's
    :class:`~evaltool.evaluation.result.EvalResult`.
    """

    names: list[str]
    measures: list[str]
    test: str
    correction: str
    alpha: float
    trials: int
    seed: int
    qids: list[str]
    values: dict[str, dict[str, np.ndarray]]
    cells: dict[str, dict[str, Cell]]
    results: list = field(repr=False)
    qrels: str = ""
    complete: bool = False
    left_out: dict[str, list[str]] = field(default_factory=dict)
    ignored_measures: list[str] = field(default_factory=list)
    groups: dict = field(default_factory=dict)
    thresholds: dict | None = None
    labels: dict = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    pairs: AllPairs | None = None

    @property
    def baseline(self) -> str:
        return self.names[0]

    @property
    def test_name(self) -> str:
        """The test in words (``paired t-test``)."""
        return TESTS.get(self.test) or MANY_TESTS[self.test]

    @property
    def correction_name(self) -> str:
        """The correction in words (``Holm``)."""
        return CORRECTIONS[self.correction]

    def significant(self, name: str, measure: str) -> bool:
        p = self.cells[name][measure].p_adjusted
        return p is not None and not np.isnan(p) and p < self.alpha

    def to_dict(self) -> dict:
        """``{"baseline", "test", "correction", "queries", "runs": {name: {measure: cell}}}``, plus
        ``groups``, and ``labels`` with their ``thresholds``, when computed."""
        out = {
            "baseline": self.baseline,
            "test": self.test,
            "correction": self.correction,
            "queries": len(self.qids),
            "runs": {name: {m: self.cells[name][m].to_dict() for m in self.measures} for name in self.names},
        }
        if self.groups:
            out["groups"] = self.groups
        if self.thresholds is not None:
            out["labels"] = self.labels
            out["thresholds"] = self.thresholds
        if self.pairs is not None:
            out["all_pairs"] = self.pairs.to_dict()
        return out

    def to_json(self) -> str:
        """The JSON of ``evaltool compare ... -o json`` exactly (nan is ``null``)."""
        from evaltool.report.json import dump_json

        return dump_json(self.to_dict())

    def rows(self) -> list[dict]:
        """A tidy row per (group, run, measure) with :data:`ROW_FIELDS` (and ``label`` with labels).

        ``group`` is empty for all the queries compared, ``FIELD=VALUE`` for a group (whose
        rows have a mean and its difference from the baseline's, no test).
        """
        out = []
        for name in self.names:
            for m in self.measures:
                c = self.cells[name][m]
                stats = (
                    [None] * 9
                    if c.delta is None
                    else [
                        c.delta,
                        c.p_value,
                        c.p_adjusted,
                        int(self.significant(name, m)),
                        c.ci[0],
                        c.ci[1],
                        c.wins,
                        c.ties,
                        c.losses,
                    ]
                )
                row = dict(zip(ROW_FIELDS, ["", name, m, len(self.qids), c.mean, *stats]))
                if self.thresholds is not None:
                    row["label"] = self.labels[name]
                out.append(row)
        for group_field, entries in self.groups.items():
            for value, entry in entries.items():
                for name in self.names:
                    for m in self.measures:
                        mean = entry["runs"][name][m]
                        delta = None if name == self.baseline else mean - entry["runs"][self.baseline][m]
                        row = dict(
                            zip(
                                ROW_FIELDS,
                                [f"{group_field}={value}", name, m, entry["count"], mean, delta, *[None] * 8],
                            )
                        )
                        if self.thresholds is not None:
                            row["label"] = None
                        out.append(row)
        return out

    def _repr_html_(self) -> str:
        """The table of ``evaltool compare`` (``-o latex`` writes the same cells) as a notebook shows it:
        each run's mean with its difference from the baseline, ``*`` when the adjusted p is below
        ``alpha``; with all pairs, the means with their letters (runs sharing a letter do not differ)."""
        from evaltool.report.html import notebook_html
        from evaltool.report.layouts import compare_report

        return notebook_html(compare_report(self))

    def to_frame(self):
        """:meth:`rows` as a pandas DataFrame (the table of ``-o csv``)."""
        from evaltool.evaluation.result import require_pandas

        pd = require_pandas("to_frame()")
        rows = self.rows()
        return pd.DataFrame(rows, columns=list(rows[0]) if rows else list(ROW_FIELDS))


def paired_cell(
    base: np.ndarray,
    other: np.ndarray,
    test: str = "t",
    *,
    trials: int = 10000,
    seed: int = 0,
    level: float = 0.95,
    better=None,
    agg: Agg = Agg.MEAN,
) -> Cell:
    """``other``'s cell against ``base``: per-query values of the same queries in the same order.

    The means are over all the queries (``agg`` :attr:`Agg.MEAN_DEFINED`: over those with a
    value, as the measure's summary is); the test, the interval and the wins, ties and
    losses are over the pairs where neither value is nan. Fewer than 2 pairs: p is nan.
    A win is a query where ``other`` does better, as the measure's ``better``
    (:class:`~evaltool.measures.base.Better`, default higher) says: lower for FirstRelPos
    and ARP; a count has no wins or losses (None), only ties and changes.
    ``p_adjusted`` is left for :func:`adjust_cells`.

    >>> cell = paired_cell(np.array([1.0, 2.0, 3.0]), np.array([2.0, 2.0, 1.0]), better=Better.LOWER)
    >>> cell.wins, cell.ties, cell.losses
    (1, 1, 1)
    >>> cell = paired_cell(np.array([1.0, 2.0, 3.0]), np.array([2.0, 4.0, 1.0]), better=Better.LOWER)
    >>> cell.wins, cell.losses
    (1, 2)
    """
    better = better or Better.HIGHER
    paired = ~(np.isnan(base) | np.isnan(other))
    d = other[paired] - base[paired]
    cell = Cell(summarize(agg, other, len(other)))
    cell.delta = cell.mean - summarize(agg, base, len(base))
    cell.ties = int(np.count_nonzero(d == 0))
    if better is not Better.NEITHER:
        gains = d if better is Better.HIGHER else -d
        cell.wins, cell.losses = int(np.count_nonzero(gains > 0)), int(np.count_nonzero(gains < 0))
    cell.pairs = len(d)
    if len(d) >= 2:
        cell.p_value, cell.ci = paired_test(d, test, trials=trials, seed=seed, level=level)
    else:
        cell.p_value, cell.ci = float("nan"), (float("nan"), float("nan"))
    return cell


def adjust_cells(family: list[Cell], correction: str) -> None:
    """Set ``p_adjusted`` of every cell of one family of tests."""
    for cell, p in zip(family, adjust([c.p_value for c in family], correction)):
        cell.p_adjusted = float(p)


def _comparable(result) -> tuple[list, list[str]]:
    """Columns with a per-query value averaged into the summary (over every query, or over those with a
    value, as FirstRelPos); the names of the others."""
    keep, ignored = [], []
    for column in result.columns:
        m = column.measure
        if m.agg in (Agg.MEAN, Agg.MEAN_DEFINED) and m.per_query and not isinstance(column.values, list):
            keep.append(column)
        else:
            ignored.append(column.name)
    return keep, ignored


def in_order_given(columns: list, measures) -> list:
    """``columns`` in the order their measures were asked for (``-m``), not trec_eval's print order.

    A nickname (``official``) keeps its members in trec_eval's order, at its place.

    >>> from types import SimpleNamespace as C
    >>> [c.name for c in in_order_given([C(name="map"), C(name="P_5"), C(name="recip_rank")],
    ...                                 ["recip_rank", "P.5", "map"])]
    ['recip_rank', 'P_5', 'map']
    """
    if not measures:
        return columns
    from evaltool.names import parse_measures

    place: dict[str, int] = {}
    for index, spec in enumerate(measures):
        for request in parse_measures([spec]):
            for name in request.names:
                place.setdefault(name, index)
    return sorted(columns, key=lambda column: place.get(column.name, len(measures)))


def compare_runs(
    qrels,
    runs,
    names=None,
    measures=None,
    *,
    test: str = "t",
    correction: str = "holm",
    alpha: float = 0.05,
    trials: int = 10000,
    seed: int = 0,
    group_by=(),
    topics=None,
    thresholds=None,
    all_pairs: bool = False,
    **options,
) -> Comparison:
    """Score every run with the same options and compare each with the first.

    ``all_pairs`` compares every pair of runs instead (:func:`evaltool.multiple.all_pairs`:
    the two-way ANOVA, effect sizes, margins of error and compact letters come with it);
    ``test`` may then also be ``tukey`` (randomised Tukey HSD) or ``hsd`` (Tukey's HSD),
    which compare the baseline with each run on their own as well.

    ``qrels`` and each run take whatever :func:`evaltool.evaluate` takes (files,
    a queries file and JSONL results, dicts, DataFrames); ``runs`` is a list or a
    ``{name: run}`` mapping. ``options`` are ``evaluate``'s keywords (``complete``,
    ``relevance_level``, ``max_ret``, ``relevance``...). ``group_by``, ``topics`` and
    ``thresholds`` are ``evaluate``'s: the means per group of queries, and a label per run.

    Parameters
    ----------
    qrels : path, dict, DataFrame or queries file
        The judgments, as :func:`evaltool.evaluate` takes them.
    runs : list or mapping of runs
        Two or more runs (paths, dicts, DataFrames); a ``{name: run}`` mapping names them.
    names : list of str, optional
        One name per run of a list (default: the file names, or ``run1``, ``run2``...).
    measures : list of str, optional
        Measure names (default: trec_eval's set).
    test : {"t", "wilcoxon", "randomization", "bootstrap", "tukey", "hsd"}
        The paired test (``tukey`` and ``hsd`` with ``all_pairs`` only).
    correction : {"holm", "bonferroni", "bh", "none"}
        The correction over the runs x measures compared.
    alpha : float
        The significance level: ``*`` marks an adjusted p below it.
    trials, seed : int
        Resamples and seed of the randomization and bootstrap tests.
    group_by, topics, thresholds : optional
        Means per group of queries and a label per run, as :func:`evaltool.evaluate` takes them.
    all_pairs : bool
        Compare every pair of runs instead of each run with the first.
    **options
        :func:`evaltool.evaluate`'s keyword options, applied to every run.

    Returns
    -------
    Comparison
        The means, the paired statistics per run and measure, groups and labels; in a
        notebook it shows the table of ``evaltool compare``.

    Raises
    ------
    InputError
        Fewer than two runs, or names given beside a mapping.
    EvaltoolError
        An unknown test or correction.

    Examples
    --------
    >>> qrels = {"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 1}}
    >>> runs = {"base": {"q1": {"a": 1.0, "x": 2.0}, "q2": {"b": 1.0}, "q3": {"y": 1.0}},
    ...         "new": {"q1": {"a": 2.0}, "q2": {"b": 1.0}, "q3": {"c": 1.0}}}
    >>> cmp = compare_runs(qrels, runs, measures=["recip_rank"], thresholds=True)
    >>> round(cmp.cells["new"]["recip_rank"].delta, 4), cmp.labels
    (0.5, {'base': 'poor', 'new': 'good'})
    """
    from evaltool.evaluation import evaluate
    from evaltool.io.load import load_judgments
    from evaltool.names import parse_measures
    from evaltool.evaluation.labels import threshold_request
    from evaltool.io.topics import resolve_topics

    if isinstance(runs, Mapping):
        if names is not None:
            raise InputError("runs given as a {name: run} mapping take their names from it; leave names out")
        names, runs = [str(n) for n in runs], list(runs.values())
    runs = list(runs)
    if len(runs) < 2:
        raise InputError(f"compare needs at least 2 runs (a baseline and one to compare), got {len(runs)}")
    if test not in TESTS and test not in MANY_TESTS:
        raise EvaltoolError(f"unknown test {test!r}; expected one of {', '.join([*TESTS, *MANY_TESTS])}")
    if correction not in CORRECTIONS:
        raise EvaltoolError(f"unknown correction {correction!r}; expected one of {', '.join(CORRECTIONS)}")
    if not 0 < alpha < 1:
        raise EvaltoolError(f"alpha must be between 0 and 1, not {alpha}")
    if trials < 1:
        raise EvaltoolError(f"trials must be at least 1, not {trials}")
    from evaltool.run_names import run_names

    names = list(names) if names else run_names(runs)
    if len(names) != len(runs):
        raise InputError(f"{len(names)} names for {len(runs)} runs")
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise InputError(f"run {repeated[0]!r} is given twice; name the runs apart")
    in_force, given = threshold_request(thresholds)

    asked = list(measures or ())  # -m as written: their order is the report's; the default set keeps trec_eval's
    measures = asked or list(DEFAULT_SETS["compare"])
    judgments, _ = load_judgments(
        qrels,
        options.get("on_duplicate", "error"),
        options.get("qrels_format"),
        subtopics=any(r.measure.subtopics for r in parse_measures(measures)),
    )
    fields, table = resolve_topics(group_by, topics, judgments)
    results, caught = [], []
    for run in runs:  # each run's warnings are said once by the comparison (finish_comparison)
        with warnings.catch_warnings(record=True) as records:
            warnings.simplefilter("always", EvaltoolWarning)
            results.append(evaluate(judgments, run, measures, **options))
        caught.append([r for r in records if issubclass(r.category, EvaltoolWarning)])
        for record in records:  # anything else is not ours to word: pass it on
            if not issubclass(record.category, EvaltoolWarning):
                warnings.warn_explicit(record.message, record.category, record.filename, record.lineno)
    columns, ignored = _comparable(results[0])
    columns = in_order_given(columns, asked)
    if not columns:
        raise MeasureError(
            f"none of the measures ({', '.join(ignored)}) has per-query values averaged "
            "into its summary; compare needs such a measure (map, ndcg_cut.10, P.10, ...)"
        )
    qids, left_out = compare_queries(names, results)
    if len(qids) < 2:
        raise InputError(
            f"the runs share {len(qids)} evaluated quer{'y' if len(qids) == 1 else 'ies'}; "
            "a paired comparison needs at least 2"
        )

    measure_names = [c.name for c in columns]
    by_measure = {c.name: c.measure.better for c in columns}
    aggregate = {c.name: c.measure.agg for c in columns}
    values: dict[str, dict[str, np.ndarray]] = {}
    cells: dict[str, dict[str, Cell]] = {}
    for name, result in zip(names, results):
        position = {q: i for i, q in enumerate(result.qids)}
        index = np.array([position[q] for q in qids])
        by_name = {c.name: c for c in result.columns}
        values[name] = {m: np.asarray(by_name[m].values, dtype=np.float64)[index] for m in measure_names}
        cells[name] = {m: Cell(summarize(aggregate[m], values[name][m], len(qids))) for m in measure_names}

    pairs = None
    if all_pairs or test in MANY_TESTS:
        pairs = pairwise(
            names,
            measure_names,
            values,
            test=test,
            correction=correction,
            alpha=alpha,
            trials=trials,
            seed=seed,
            better=by_measure,
        )
        correction = pairs.correction
    if not all_pairs:
        family = []
        for name in names[1:]:
            for m in measure_names:
                cells[name][m] = paired_cell(
                    values[names[0]][m],
                    values[name][m],
                    "t" if test in MANY_TESTS else test,
                    trials=trials,
                    seed=seed,
                    level=1 - alpha,
                    better=by_measure[m],
                    agg=aggregate[m],
                )
                family.append(cells[name][m])
        if pairs is None:
            adjust_cells(family, correction)
        else:  # the pair's Tukey p-value and simultaneous interval
            for pair in pairs.pairs:
                if pair.a == names[0]:
                    cell = cells[pair.b][pair.measure]
                    cell.p_value, cell.p_adjusted, cell.ci = pair.p_value, pair.p_adjusted, pair.ci
            pairs = None

    cmp = Comparison(
        names,
        measure_names,
        test,
        correction,
        alpha,
        trials,
        seed,
        qids,
        values,
        cells,
        results,
        qrels=results[0].meta["qrels"],
        complete=bool(options.get("complete")),
        left_out=left_out,
        ignored_measures=ignored,
        pairs=pairs,
    )
    return finish_comparison(cmp, fields=fields, topics=table, thresholds=in_force, given=given, caught=caught)


def pairwise(
    names: list[str],
    measures: list[str],
    values: dict[str, dict[str, np.ndarray]],
    *,
    test: str = "t",
    correction: str = "holm",
    alpha: float = 0.05,
    trials: int = 10000,
    seed: int = 0,
    better: dict | None = None,
) -> AllPairs:
    """Every pair ``(a, b)`` of ``names`` (``a`` before ``b``) on every measure (:mod:`evaltool.multiple`).

    ``values[run][measure]`` are per-query values aligned over the same queries. ``test`` is a
    paired test of :data:`TESTS` (corrected over all pairs x measures by
    ``correction``), ``tukey`` (randomised Tukey HSD, family-wise over the pairs of a measure:
    not corrected further) or ``hsd`` (Tukey's HSD with the ANOVA's residual variance, the same).
    Topics where some run has no value (nan) are left out of that measure's analysis.
    """
    from evaltool.multiple import (
        AllPairs,
        Pair,
        compact_letters,
        effect_sizes,
        randomised_tukey,
        tukey_hsd,
        two_way_anova,
    )

    if test not in TESTS and test not in MANY_TESTS:
        raise EvaltoolError(f"unknown test {test!r}; expected one of {', '.join([*TESTS, *MANY_TESTS])}")
    better = better or {}
    pairs: list[Pair] = []
    anovas, moes, letters, topics = {}, {}, {}, {}
    for m in measures:
        x = np.column_stack([values[name][m] for name in names])
        x = x[~np.isnan(x).any(axis=1)]
        topics[m] = len(x)
        anova = two_way_anova(x)
        hsd_p, moe = tukey_hsd(x, alpha)
        anovas[m], moes[m] = anova, moe
        tukey_p = randomised_tukey(x, trials, seed) if test == "tukey" else hsd_p
        means = x.mean(axis=0)
        for i in range(len(names)):
            for j in range(i + 1, len(names)):
                cell = paired_cell(
                    x[:, i],
                    x[:, j],
                    "t" if test in MANY_TESTS else test,
                    trials=trials,
                    seed=seed,
                    level=1 - alpha,
                    better=better.get(m),
                )
                es, cohen = effect_sizes(x, i, j, anova.residual_variance)
                p, ci = cell.p_value, cell.ci
                if test in MANY_TESTS:
                    delta = float(means[j] - means[i])
                    p, ci = float(tukey_p[i, j]), (delta - moe, delta + moe)
                pairs.append(
                    Pair(
                        m,
                        names[i],
                        names[j],
                        float(means[i]),
                        float(means[j]),
                        cell.delta,
                        p,
                        p,
                        ci,
                        es,
                        cohen,
                        cell.wins,
                        cell.ties,
                        cell.losses,
                    )
                )
    if test not in MANY_TESTS:
        for pair, q in zip(pairs, adjust([p.p_value for p in pairs], correction)):
            pair.p_adjusted = float(q)
    result = AllPairs(
        list(names),
        list(measures),
        test,
        "none" if test in MANY_TESTS else correction,
        alpha,
        pairs,
        anovas,
        moes,
        letters,
        topics,
    )
    for m in measures:
        own = [p for p in pairs if p.measure == m]
        means = {p.a: p.mean_a for p in own} | {p.b: p.mean_b for p in own}
        letters[m] = compact_letters(
            names,
            [means[n] for n in names],
            {frozenset((p.a, p.b)): result.significant(p) for p in own},
            lower_better=better.get(m) is Better.LOWER,
        )
    return result


# ---------------------------------------------------------------- the query set, groups, labels and warnings


def compare_queries(names: Sequence[str], results: Sequence[EvalResult]) -> tuple[list[str], dict[str, list[str]]]:
    """The query-set policy of a comparison: the queries every run was evaluated on.

    With ``-c`` every run is scored on every qrels query, so that is all of them; without
    it, a qrels query some run has no results for is left out of every run. Returns the
    queries compared (in the first run's order) and, per run, its queries left out.
    """
    shared = set(results[0].qids)
    for result in results[1:]:
        shared &= set(result.qids)
    qids = [q for q in results[0].qids if q in shared]
    left_out = {name: [q for q in result.qids if q not in shared] for name, result in zip(names, results)}
    return qids, left_out


def comparison_warning(cmp) -> str | None:
    """Judged queries some run has no results for (without ``-c``): left out of the comparison."""
    left = {q for result in cmp.results for q in result.meta["skipped_queries"]}
    left.update(q for qids in cmp.left_out.values() for q in qids)
    if not left:
        return None
    n = len(left)
    return (
        f"warning: {n} judged quer{'y' if n == 1 else 'ies'} left out of the comparison, as not every run has "
        f"results for {'it' if n == 1 else 'them'} ({shown(sorted(left))}); use -c to score them as "
        "trec_eval does"
    )


def run_warnings(names: Sequence[str], caught: Sequence[Sequence[warnings.WarningMessage]]) -> list[str]:
    """The warnings the runs of a comparison raised, once each: a message every run raised as it
    is, another with the runs it concerns. Skipped queries are left out: the comparison words
    them for all runs at once (:func:`comparison_warning`)."""
    runs_of: dict[str, list[str]] = {}
    for name, records in zip(names, caught):
        for record in records:
            if issubclass(record.category, EvaltoolWarning) and not issubclass(record.category, QueriesSkippedWarning):
                runs_of.setdefault(str(record.message), []).append(name)
    return [
        message if len(runs) == len(names) else f"{message} (run {', '.join(dict.fromkeys(runs))})"
        for message, runs in runs_of.items()
    ]


def finish_comparison(
    cmp,
    *,
    fields: Sequence[str] = (),
    topics=None,
    thresholds: Mapping[str, float] | None = None,
    given: Sequence[str] = (),
    caught: Sequence[Sequence] = (),
):
    """Add the groups (means per group and run), the run labels and the warnings to a comparison.

    ``caught`` holds the warnings each run's evaluation raised (``warnings.catch_warnings(record=True)``).
    """
    for message in run_warnings(cmp.names, caught):
        warn(cmp.warnings, message)
    skipped = comparison_warning(cmp)
    if skipped:
        warn(cmp.warnings, skipped, QueriesSkippedWarning)
    if topics is not None:
        for name in fields:
            groups = group_queries(cmp.qids, field_values(topics, name), field_order(topics, name))
            per_run = {
                run: group_summaries([Series(m, cmp.values[run][m]) for m in cmp.measures], groups) for run in cmp.names
            }
            cmp.groups[name] = {
                value: {
                    "count": len(positions),
                    "runs": {run: {m: per_run[run][value][m] for m in cmp.measures} for run in cmp.names},
                }
                for value, positions in groups.items()
            }
            note = ungrouped_note(topics, name, cmp.qids, groups)
            if note:
                warn(cmp.warnings, note)
    if thresholds is not None:
        check_thresholds(thresholds, cmp.measures, given)
        cmp.thresholds = dict(thresholds)
        cmp.labels = {run: label({m: cmp.cells[run][m].mean for m in cmp.measures}, thresholds) for run in cmp.names}
    return cmp
