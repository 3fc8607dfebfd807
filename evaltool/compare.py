"""Paired comparison of runs: significance tests, multiple-testing corrections, intervals.

Every run is scored by :func:`evaltool.evaluate.evaluate` with the same options (measures
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

import os
import warnings
from dataclasses import dataclass, field

import numpy as np

from evaltool.aggregate import summarize
from evaltool.errors import EvaltoolError, InputError, MeasureError
from evaltool.measures.base import Agg

TESTS = {
    "t": "paired t-test",
    "wilcoxon": "Wilcoxon signed-rank test",
    "randomization": "Fisher's randomization test",
    "bootstrap": "paired bootstrap test",
}
CORRECTIONS = {
    "holm": "Holm",
    "bonferroni": "Bonferroni",
    "bh": "Benjamini-Hochberg",
    "none": "no correction",
}
DEFAULT_MEASURES = ("map", "ndcg_cut.10", "P.10", "recip_rank")
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
        result = _stats().bootstrap((d,), np.mean, n_resamples=trials, confidence_level=level,
                                    method="BCa", rng=np.random.default_rng(seed), vectorized=True)
    centred = np.abs(result.bootstrap_distribution - mean)
    extreme = int(np.count_nonzero(centred >= abs(mean) - _slack(d)))
    ci = result.confidence_interval
    return _counted_p(extreme, trials), (float(ci.low), float(ci.high))


def paired_test(d: np.ndarray, test: str, *, trials: int = 10000, seed: int = 0,
                level: float = 0.95) -> tuple[float, tuple[float, float]]:
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
        return {"mean": self.mean, "delta": self.delta, "p_value": self.p_value, "p_adjusted": self.p_adjusted,
                "ci": list(self.ci), "wins": self.wins, "ties": self.ties, "losses": self.losses}


@dataclass
class Comparison:
    """Runs scored on the same queries, the first as baseline, with a cell per run and measure."""

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

    @property
    def baseline(self) -> str:
        return self.names[0]

    def significant(self, name: str, measure: str) -> bool:
        p = self.cells[name][measure].p_adjusted
        return p is not None and not np.isnan(p) and p < self.alpha

    def to_dict(self) -> dict:
        """``{"baseline", "test", "correction", "queries", "runs": {name: {measure: cell}}}``."""
        return {
            "baseline": self.baseline,
            "test": self.test,
            "correction": self.correction,
            "queries": len(self.qids),
            "runs": {name: {m: self.cells[name][m].to_dict() for m in self.measures} for name in self.names},
        }


def run_names(runs) -> list[str]:
    """File names, or the paths as given where two file names collide; ``runN`` for objects."""
    paths = [os.fspath(r) if isinstance(r, (str, os.PathLike)) else None for r in runs]
    names = [os.path.basename(p) if p is not None else f"run{i + 1}" for i, p in enumerate(paths)]
    return [path if names.count(name) > 1 else name for name, path in zip(names, paths)]


def _comparable(result) -> tuple[list, list[str]]:
    """Columns with a per-query value averaged into the summary; the names of the others."""
    keep, ignored = [], []
    for column in result.columns:
        m = column.measure
        if m.agg is Agg.MEAN and m.per_query and not isinstance(column.values, list):
            keep.append(column)
        else:
            ignored.append(column.name)
    return keep, ignored


def compare_runs(qrels, runs, names=None, measures=None, *, test: str = "t", correction: str = "holm",
                 alpha: float = 0.05, trials: int = 10000, seed: int = 0, **options) -> Comparison:
    """Score every run with the same options and compare each with the first.

    ``options`` are :func:`evaltool.evaluate.evaluate`'s keywords (``complete``,
    ``relevance_level``, ``max_ret``, ``judged_only``, ...).
    """
    from evaltool.evaluate import evaluate
    from evaltool.io.load import load_qrels

    runs = list(runs)
    if len(runs) < 2:
        raise InputError(f"compare needs at least 2 runs (a baseline and one to compare), got {len(runs)}")
    if test not in TESTS:
        raise EvaltoolError(f"unknown test {test!r}; expected one of {', '.join(TESTS)}")
    if correction not in CORRECTIONS:
        raise EvaltoolError(f"unknown correction {correction!r}; expected one of {', '.join(CORRECTIONS)}")
    if not 0 < alpha < 1:
        raise EvaltoolError(f"alpha must be between 0 and 1, not {alpha}")
    if trials < 1:
        raise EvaltoolError(f"trials must be at least 1, not {trials}")
    names = list(names) if names else run_names(runs)
    if len(names) != len(runs):
        raise InputError(f"{len(names)} names for {len(runs)} runs")
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise InputError(f"run {repeated[0]!r} is given twice; name the runs apart")

    qrels_t = load_qrels(qrels, options.get("on_duplicate", "error"))
    results = [evaluate(qrels_t, run, list(measures or DEFAULT_MEASURES), **options) for run in runs]
    columns, ignored = _comparable(results[0])
    if not columns:
        raise MeasureError(f"none of the measures ({', '.join(ignored)}) has per-query values averaged "
                           "into its summary; compare needs such a measure (map, ndcg_cut.10, P.10, ...)")
    shared = set(results[0].qids)
    for result in results[1:]:
        shared &= set(result.qids)
    qids = [q for q in results[0].qids if q in shared]
    if len(qids) < 2:
        raise InputError(f"the runs share {len(qids)} evaluated quer{'y' if len(qids) == 1 else 'ies'}; "
                         "a paired comparison needs at least 2")
    left_out = {name: [q for q in result.qids if q not in shared] for name, result in zip(names, results)}

    measure_names = [c.name for c in columns]
    values: dict[str, dict[str, np.ndarray]] = {}
    cells: dict[str, dict[str, Cell]] = {}
    for name, result in zip(names, results):
        position = {q: i for i, q in enumerate(result.qids)}
        index = np.array([position[q] for q in qids])
        by_name = {c.name: c for c in result.columns}
        values[name] = {m: np.asarray(by_name[m].values, dtype=np.float64)[index] for m in measure_names}
        cells[name] = {m: Cell(summarize(Agg.MEAN, values[name][m], len(qids))) for m in measure_names}

    level = 1 - alpha
    family = []
    for name in names[1:]:
        for m in measure_names:
            base, other = values[names[0]][m], values[name][m]
            paired = ~(np.isnan(base) | np.isnan(other))
            d = other[paired] - base[paired]
            cell = cells[name][m]
            cell.delta = cell.mean - cells[names[0]][m].mean
            cell.wins, cell.ties, cell.losses = (int(np.count_nonzero(d > 0)), int(np.count_nonzero(d == 0)),
                                                 int(np.count_nonzero(d < 0)))
            cell.pairs = len(d)
            if len(d) >= 2:
                cell.p_value, cell.ci = paired_test(d, test, trials=trials, seed=seed, level=level)
            else:
                cell.p_value, cell.ci = float("nan"), (float("nan"), float("nan"))
            family.append(cell)
    for cell, p in zip(family, adjust([c.p_value for c in family], correction)):
        cell.p_adjusted = float(p)

    return Comparison(names, measure_names, test, correction, alpha, trials, seed, qids, values, cells, results,
                      qrels=qrels_t.path, complete=bool(options.get("complete")), left_out=left_out,
                      ignored_measures=ignored)
