"""Statistical power of the paired t-test and topic set size design (Sakai).

For ``n`` topics, a true mean difference ``delta`` between two runs and a standard deviation
``sd`` of the per-topic differences, the two-sided paired t-test at level ``alpha`` rejects
with probability (its power)::

    power = P(T' >= t_c) + P(T' <= -t_c),   T' ~ noncentral t(df = n - 1, nc = sqrt(n) * delta / sd)

where ``t_c`` is the ``1 - alpha/2`` quantile of the central t with ``n - 1`` df. From it:

* :func:`topics_needed`: the smallest ``n`` (at least 2) whose power reaches ``1 - beta``
  for a minimum detectable difference ``min_delta`` (Sakai, "Topic set size design",
  *Information Retrieval Journal* 19, 2016, section 4, after Nagata; exact noncentral t
  here where the Excel tool uses Nagata's normal approximation, which can differ by a topic).
* :func:`detectable_difference`: the smallest ``delta`` detected with power ``1 - beta`` by
  ``n`` topics.
* :func:`paired_power`: the power itself (the achieved power of an observed comparison when
  ``delta`` and ``sd`` are its observed mean and standard deviation of differences).

The variance of the differences of a future pair of runs is estimated from pilot runs as
Sakai does: ``sd^2 = 2 * V_E``, ``V_E`` the residual variance of the two-way ANOVA
(system x topic) of their topic-by-run matrix (with two runs, exactly the sample variance
of their differences).

>>> topics_needed(0.5, 1.0)        # effect size 0.5, alpha 0.05, power 0.8: G*Power's 34
34
>>> round(paired_power(34, 0.5, 1.0), 4)
0.8078
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from evaltool.errors import EvaltoolError

MAX_TOPICS = 10_000_000


def _stats():
    try:
        import scipy.stats
    except ImportError:
        raise EvaltoolError("power analysis needs scipy: pip install scipy") from None
    return scipy.stats


def _check(alpha: float, beta: float | None = None) -> None:
    if not 0 < alpha < 1:
        raise EvaltoolError(f"alpha must be between 0 and 1, not {alpha:g}")
    if beta is not None and not 0 < beta < 1:
        raise EvaltoolError(f"beta must be between 0 and 1, not {beta:g}")


def paired_power(n: int, delta: float, sd: float, alpha: float = 0.05) -> float:
    """Power of the two-sided paired t-test with ``n`` topics (see the module's doc).

    ``sd`` = 0: 1 when ``delta`` is not 0 (every topic shows it), ``alpha`` when it is.
    """
    _check(alpha)
    if n < 2:
        raise EvaltoolError(f"a paired t-test needs at least 2 topics, not {n}")
    if sd == 0:
        return 1.0 if delta != 0 else alpha
    stats = _stats()
    df = n - 1
    critical = stats.t.ppf(1 - alpha / 2, df)
    nc = math.sqrt(n) * abs(delta) / sd
    return float(stats.nct.sf(critical, df, nc) + stats.nct.cdf(-critical, df, nc))


def topics_needed(min_delta: float, sd: float, alpha: float = 0.05, beta: float = 0.2) -> int:
    """The fewest topics whose paired t-test detects ``min_delta`` with power ``1 - beta``.

    >>> topics_needed(0.2, 1.0), topics_needed(0.8, 1.0)   # G*Power: 199 and 15
    (199, 15)
    """
    _check(alpha, beta)
    if min_delta <= 0:
        raise EvaltoolError(f"the minimum detectable difference must be above 0, not {min_delta:g}")
    if sd == 0:
        return 2
    z = _stats().norm.ppf
    effect = min_delta / sd
    start = max(2, math.ceil(((z(1 - alpha / 2) + z(1 - beta)) / effect) ** 2 + z(1 - alpha / 2) ** 2 / 2))
    if start > MAX_TOPICS:
        raise EvaltoolError(f"detecting {min_delta:g} would take more than {MAX_TOPICS} topics (sd {sd:g})")
    n = start
    while n > 2 and paired_power(n - 1, min_delta, sd, alpha) >= 1 - beta:
        n -= 1
    while paired_power(n, min_delta, sd, alpha) < 1 - beta:
        n += 1
    return n


def detectable_difference(n: int, sd: float, alpha: float = 0.05, beta: float = 0.2) -> float:
    """The smallest true difference ``n`` topics detect with power ``1 - beta``.

    >>> round(detectable_difference(34, 1.0), 3)
    0.495
    """
    _check(alpha, beta)
    if sd == 0:
        return 0.0
    from scipy.optimize import brentq

    high = sd
    while paired_power(n, high, sd, alpha) < 1 - beta:
        high *= 2
    return float(brentq(lambda d: paired_power(n, d, sd, alpha) - (1 - beta), 0.0, high, xtol=1e-14, rtol=1e-12))


@dataclass
class MeasurePower:
    """One measure's design numbers: the variance estimate and what it implies."""

    measure: str
    topics: int
    residual_variance: float
    needed: dict[float, int]  # min_delta -> topics needed
    detectable: float  # with the present topics

    @property
    def sd(self) -> float:
        """The standard deviation of a pair's differences: ``sqrt(2 V_E)``."""
        return math.sqrt(2 * self.residual_variance)


@dataclass
class PairPower:
    """The achieved power of one observed comparison (``b - a``)."""

    measure: str
    a: str
    b: str
    delta: float
    sd: float
    power: float


@dataclass
class PowerAnalysis:
    """``evaltool power``: per measure the topics needed and the detectable difference; per pair its power."""

    names: list[str]
    alpha: float
    beta: float
    min_deltas: list[float]
    measures: list[MeasurePower]
    pairs: list[PairPower]
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {
            "alpha": self.alpha,
            "beta": self.beta,
            "runs": self.names,
            "measures": {
                m.measure: {
                    "topics": m.topics,
                    "residual_variance": m.residual_variance,
                    "sd": m.sd,
                    "topics_needed": {f"{d:g}": n for d, n in m.needed.items()},
                    "detectable_difference": m.detectable,
                }
                for m in self.measures
            },
            "pairs": [
                {"measure": p.measure, "a": p.a, "b": p.b, "delta": p.delta, "sd": p.sd, "power": p.power}
                for p in self.pairs
            ],
        }

    def rows(self) -> list[dict]:
        """A row per (measure, minimum difference): the design table."""
        return [
            {
                "measure": m.measure,
                "topics": m.topics,
                "residual_variance": m.residual_variance,
                "sd": m.sd,
                "min_delta": d,
                "topics_needed": n,
                "detectable_difference": m.detectable,
            }
            for m in self.measures
            for d, n in m.needed.items()
        ]

    def to_frame(self):
        from evaltool.evaluation.result import require_pandas

        return require_pandas("to_frame()").DataFrame(self.rows())


def analyse(
    names: list[str],
    measures: list[str],
    values: dict[str, dict[str, np.ndarray]],
    *,
    alpha: float = 0.05,
    beta: float = 0.2,
    min_deltas=(0.05,),
) -> PowerAnalysis:
    """The design numbers of ``values[run][measure]`` (per-query values aligned over the same queries)."""
    from evaltool.multiple import two_way_anova

    _check(alpha, beta)
    min_deltas = [float(d) for d in min_deltas]
    out_measures, pairs = [], []
    for m in measures:
        x = np.column_stack([values[name][m] for name in names])
        x = x[~np.isnan(x).any(axis=1)]
        anova = two_way_anova(x)
        n = len(x)
        sd = math.sqrt(2 * anova.residual_variance)
        out_measures.append(
            MeasurePower(
                m,
                n,
                anova.residual_variance,
                {d: topics_needed(d, sd, alpha, beta) for d in min_deltas},
                detectable_difference(n, sd, alpha, beta),
            )
        )
        for i in range(len(names)):
            for j in range(i + 1, len(names)):
                d = x[:, j] - x[:, i]
                observed_sd = float(d.std(ddof=1))
                pairs.append(
                    PairPower(
                        m,
                        names[i],
                        names[j],
                        float(d.mean()),
                        observed_sd,
                        paired_power(n, float(d.mean()), observed_sd, alpha),
                    )
                )
    return PowerAnalysis(list(names), alpha, beta, min_deltas, out_measures, pairs)


def power_analysis(
    qrels, runs, names=None, measures=None, *, alpha: float = 0.05, beta: float = 0.2, min_deltas=(0.05,), **options
) -> PowerAnalysis:
    """Score the runs (as :func:`evaltool.compare_runs` does, same options) and :func:`analyse` them.

    Parameters
    ----------
    qrels : path, dict or DataFrame
        The judgments, as :func:`evaltool.evaluate` takes them.
    runs : list or mapping of runs
        Two or more runs; their paired differences give the variance.
    names : list of str, optional
        One name per run of a list.
    measures : list of str, optional
        Measure names (default: trec_eval's set).
    alpha, beta : float
        The significance level and the miss rate (power ``1 - beta``).
    min_deltas : sequence of float
        The differences of means to detect.
    **options
        :func:`evaltool.evaluate`'s keyword options.

    Returns
    -------
    PowerAnalysis
        Per measure, the residual variance, the smallest detectable difference with these
        topics, and the topics needed for each of ``min_deltas``.

    Raises
    ------
    InputError
        Fewer than two runs, or inputs that cannot be read.
    EvaltoolError
        ``alpha`` or ``beta`` outside (0, 1).

    Examples
    --------
    >>> qrels = {"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 1}}
    >>> runs = {"x": {"q1": {"a": 1.0}, "q2": {"z": 1.0, "b": 0.5}, "q3": {"c": 1.0}},
    ...         "y": {"q1": {"z": 1.0, "a": 0.5}, "q2": {"b": 1.0}, "q3": {"z": 1.0}}}
    >>> analysis = power_analysis(qrels, runs, measures=["recip_rank"], min_deltas=[0.1])
    >>> analysis.measures[0].needed   # differences -0.5, 0.5, -1: sd 0.764, so 0.1 is an effect of 0.13
    {0.1: 460}
    """
    from evaltool.compare import compare_runs

    if any(d <= 0 for d in min_deltas):
        raise EvaltoolError(f"--min-delta must be above 0, not {min(min_deltas):g}")
    cmp = compare_runs(qrels, runs, names, measures, alpha=alpha, **options)
    analysis = analyse(cmp.names, cmp.measures, cmp.values, alpha=alpha, beta=beta, min_deltas=min_deltas)
    analysis.warnings = list(cmp.warnings)
    return analysis
