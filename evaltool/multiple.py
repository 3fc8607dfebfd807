"""Many runs compared at once: every pair, Tukey's HSD, two-way ANOVA, effect sizes, letters.

The input of every function is a topic-by-system matrix ``x`` (``n`` topics, ``m`` runs;
one measure's per-query values, the topics every run was scored on).

* :func:`two_way_anova`: ANOVA without replication, system x topic:
  ``SS_sys = n * sum_j (mean_j - mean)^2``, ``SS_topic = m * sum_i (mean_i - mean)^2``,
  ``SS_res = SS_total - SS_sys - SS_topic`` on ``(m - 1)(n - 1)`` degrees of freedom;
  ``V_E = SS_res / ((m - 1)(n - 1))`` is the residual variance.
* :func:`tukey_hsd`: Tukey's HSD with that residual variance: ``p_ij`` is the studentized
  range survival function at ``|mean_i - mean_j| / sqrt(V_E / n)`` (``m`` groups, the
  residual degrees of freedom), and the margin of error of every difference is
  ``MOE = q(1 - alpha; m, (m - 1)(n - 1)) * sqrt(V_E / n)`` (Sakai, *Laboratory Experiments
  in Information Retrieval*, 2018, ch. 4 and 5).
* :func:`randomised_tukey`: the randomised Tukey HSD test (Carterette, TOIS 2012; Sakai
  2018, 4.5): each trial shuffles the runs' values within every topic and records the
  range ``max_j mean_j - min_j mean_j`` of the shuffled means; ``p_ij = (c + 1) / (trials + 1)``
  where ``c`` counts the trials whose range is at least ``|mean_i - mean_j|``. One null
  distribution serves every pair, which makes the p-values family-wise over the pairs.
* Effect sizes of a pair: ``ES_E = (mean_j - mean_i) / sqrt(V_E)`` (Sakai's standardised
  mean difference with the residual standard deviation of the ANOVA) and the paired
  Cohen's d ``mean(d) / sd(d)`` (``d = x_j - x_i``, ``sd`` with ``n - 1``; 0 when every
  difference is 0, nan when they are all equal but not 0).
* :func:`compact_letters`: a letter per group of runs that do not differ significantly
  (Piepho's insert-and-absorb, *J. Comput. Graph. Stat.* 2004): two runs share a letter
  exactly when no test separates them; ``a`` goes to the group of the best run.

>>> x = np.array([[0.5, 0.6, 0.9], [0.4, 0.5, 0.8], [0.6, 0.6, 0.9], [0.3, 0.4, 0.8]])
>>> anova = two_way_anova(x)
>>> round(anova.f_system, 2), anova.df_residual
(93.0, 6)
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np

from evaltool.errors import EvaltoolError

CELL_BLOCK = 1 << 23  # values shuffled at once by the randomised Tukey test (~64 MB of floats)


def _stats():
    try:
        import scipy.stats
    except ImportError:
        raise EvaltoolError("comparing runs needs scipy: pip install scipy") from None
    return scipy.stats


@dataclass
class Anova:
    """Two-way ANOVA without replication (system x topic) of one measure."""

    topics: int
    systems: int
    ss_system: float
    ss_topic: float
    ss_residual: float
    f_system: float
    p_system: float
    f_topic: float
    p_topic: float

    @property
    def df_system(self) -> int:
        return self.systems - 1

    @property
    def df_topic(self) -> int:
        return self.topics - 1

    @property
    def df_residual(self) -> int:
        return (self.systems - 1) * (self.topics - 1)

    @property
    def residual_variance(self) -> float:
        """``V_E``: the residual mean square."""
        return self.ss_residual / self.df_residual

    def rows(self) -> list[list]:
        """The ANOVA table: source, sum of squares, df, mean square, F, p."""
        ms = {"system": self.ss_system / self.df_system, "topic": self.ss_topic / self.df_topic}
        return [
            ["system", self.ss_system, self.df_system, ms["system"], self.f_system, self.p_system],
            ["topic", self.ss_topic, self.df_topic, ms["topic"], self.f_topic, self.p_topic],
            ["residual", self.ss_residual, self.df_residual, self.residual_variance, None, None],
        ]

    def to_dict(self) -> dict:
        return {
            "ss_system": self.ss_system,
            "ss_topic": self.ss_topic,
            "ss_residual": self.ss_residual,
            "df_system": self.df_system,
            "df_topic": self.df_topic,
            "df_residual": self.df_residual,
            "f_system": self.f_system,
            "p_system": self.p_system,
            "f_topic": self.f_topic,
            "p_topic": self.p_topic,
            "residual_variance": self.residual_variance,
        }


def _check_matrix(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 2 or x.shape[0] < 2 or x.shape[1] < 2:
        raise EvaltoolError(f"an analysis of many runs needs at least 2 topics and 2 runs, got {x.shape}")
    if np.isnan(x).any():
        raise EvaltoolError("a per-query value is undefined (nan): leave those topics out first")
    return x


def two_way_anova(x) -> Anova:
    """Two-way ANOVA without replication of the topic-by-system matrix ``x`` (see the module's doc).

    A residual sum of squares of 0 (every run differs from another by a constant) gives F = inf
    where the effect is not 0, nan where it is.
    """
    x = _check_matrix(x)
    n, m = x.shape
    grand = x.mean()
    ss_sys = float(n * ((x.mean(axis=0) - grand) ** 2).sum())
    ss_topic = float(m * ((x.mean(axis=1) - grand) ** 2).sum())
    ss_res = max(float(((x - grand) ** 2).sum()) - ss_sys - ss_topic, 0.0)
    df_res = (m - 1) * (n - 1)
    stats = _stats()
    residual = np.float64(ss_res / df_res)
    with np.errstate(divide="ignore", invalid="ignore"):
        f_sys = np.float64(ss_sys / (m - 1)) / residual
        f_topic = np.float64(ss_topic / (n - 1)) / residual
    return Anova(
        n,
        m,
        ss_sys,
        ss_topic,
        ss_res,
        float(f_sys),
        float(stats.f.sf(f_sys, m - 1, df_res)),
        float(f_topic),
        float(stats.f.sf(f_topic, n - 1, df_res)),
    )


def tukey_hsd(x, alpha: float = 0.05) -> tuple[np.ndarray, float]:
    """Tukey's HSD p-value of every pair (an ``m`` x ``m`` matrix) and the margin of error of a difference.

    >>> p, moe = tukey_hsd(np.array([[0.5, 0.6, 0.9], [0.4, 0.5, 0.8], [0.6, 0.6, 0.9], [0.3, 0.4, 0.8]]))
    >>> bool(p[0, 2] < 0.001), bool(p[0, 1] > 0.05), round(moe, 4)
    (True, True, 0.0957)
    """
    x = _check_matrix(x)
    n, m = x.shape
    anova = two_way_anova(x)
    stats = _stats()
    scale = np.sqrt(anova.residual_variance / n)
    means = x.mean(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.abs(means[:, None] - means[None, :]) / scale
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        p = stats.studentized_range.sf(q, m, anova.df_residual)
        moe = float(stats.studentized_range.ppf(1 - alpha, m, anova.df_residual) * scale)
    p = np.where(np.isnan(q), 1.0, p)  # V_E = 0 and no difference
    np.fill_diagonal(p, 1.0)
    return p, moe


def randomised_tukey(x, trials: int = 10000, seed: int = 0) -> np.ndarray:
    """The randomised Tukey HSD p-value of every pair (``m`` x ``m``; see the module's doc).

    >>> p = randomised_tukey(np.array([[0.1, 0.9], [0.2, 0.8], [0.3, 0.9]]), trials=2000)
    >>> round(float(p[0, 1]), 2)  # 2 of the 8 sign patterns are as extreme as the data
    0.25
    """
    x = _check_matrix(x)
    n, m = x.shape
    means = x.mean(axis=0)
    observed = np.abs(means[:, None] - means[None, :])
    slack = 1e-12 * max(1.0, float(np.abs(x).sum()))
    rng = np.random.default_rng(seed)
    block = max(1, CELL_BLOCK // (n * m))
    ranges = np.empty(trials)
    done = 0
    while done < trials:
        k = min(block, trials - done)
        shuffled = rng.permuted(np.broadcast_to(x, (k, n, m)), axis=2)
        trial_means = shuffled.mean(axis=1)
        ranges[done : done + k] = trial_means.max(axis=1) - trial_means.min(axis=1)
        done += k
    ranges.sort()
    extreme = trials - np.searchsorted(ranges, observed - slack, side="left")
    p = (extreme + 1) / (trials + 1)
    np.fill_diagonal(p, 1.0)
    return p


def effect_sizes(x, i: int, j: int, residual_variance: float) -> tuple[float, float]:
    """``(ES_E, Cohen's d)`` of run ``j`` against run ``i`` (see the module's doc).

    >>> es, d = effect_sizes(np.array([[0.2, 0.4], [0.4, 0.5], [0.3, 0.6]]), 0, 1, 0.01)  # d: 0.2, 0.1, 0.3
    >>> round(es, 12), round(d, 12)   # 0.2 / sqrt(0.01), 0.2 / 0.1
    (2.0, 2.0)
    """
    x = np.asarray(x, dtype=np.float64)
    d = x[:, j] - x[:, i]
    mean = float(d.mean())
    with np.errstate(divide="ignore", invalid="ignore"):
        es = mean / np.sqrt(residual_variance) if residual_variance > 0 else (0.0 if mean == 0 else np.nan)
        sd = float(d.std(ddof=1))
        cohen = 0.0 if not d.any() else (mean / sd if sd > 0 else np.nan)
    return float(es), float(cohen)


def compact_letters(
    names: list[str], means, significant: dict[frozenset, bool], lower_better: bool = False
) -> dict[str, str]:
    """A letter string per run: runs that share a letter do not differ significantly.

    ``significant[frozenset((a, b))]`` says whether runs ``a`` and ``b`` differ. Runs are
    ranked by mean (best first); letters are given to the groups in the order of their best run.

    >>> names = ["A", "B", "C", "D"]
    >>> sig = {frozenset(p): s for p, s in [(("A", "B"), False), (("A", "C"), True), (("A", "D"), True),
    ...                                     (("B", "C"), False), (("B", "D"), True), (("C", "D"), False)]}
    >>> compact_letters(names, [0.9, 0.8, 0.7, 0.6], sig)
    {'A': 'a', 'B': 'ab', 'C': 'bc', 'D': 'c'}
    """
    means = np.asarray(means, dtype=np.float64)
    order = sorted(range(len(names)), key=lambda k: (means[k] if lower_better else -means[k], k))
    columns: list[set[int]] = [set(range(len(names)))]
    for a_pos, a in enumerate(order):
        for b in order[a_pos + 1 :]:
            if not significant.get(frozenset((names[a], names[b])), False):
                continue
            split: list[set[int]] = []
            for column in columns:
                if a in column and b in column:
                    split += [column - {a}, column - {b}]
                else:
                    split.append(column)
            columns = [
                c
                for k, c in enumerate(split)
                if not any((c < other) or (c == other and k2 < k) for k2, other in enumerate(split) if k2 != k)
            ]
    rank = {run: place for place, run in enumerate(order)}
    columns.sort(key=lambda c: sorted(rank[r] for r in c))
    letters = _letter_names(len(columns))
    return {names[r]: "".join(letters[k] for k, c in enumerate(columns) if r in c) for r in range(len(names))}


def _letter_names(count: int) -> list[str]:
    """a ... z, then aa, ab, ..."""
    alphabet = "abcdefghijklmnopqrstuvwxyz"
    out = list(alphabet[:count])
    k = 0
    while len(out) < count:
        out.append(alphabet[k // 26] + alphabet[k % 26])
        k += 1
    return out


# ---------------------------------------------------------------- all pairs of runs


@dataclass
class Pair:
    """Run ``b`` against run ``a`` on one measure (``delta = mean_b - mean_a``)."""

    measure: str
    a: str
    b: str
    mean_a: float
    mean_b: float
    delta: float
    p_value: float
    p_adjusted: float
    ci: tuple[float, float]
    effect_size: float
    cohens_d: float
    wins: int | None
    ties: int | None
    losses: int | None

    def to_dict(self) -> dict:
        return {
            "measure": self.measure,
            "a": self.a,
            "b": self.b,
            "mean_a": self.mean_a,
            "mean_b": self.mean_b,
            "delta": self.delta,
            "p_value": self.p_value,
            "p_adjusted": self.p_adjusted,
            "ci": list(self.ci),
            "effect_size": self.effect_size,
            "cohens_d": self.cohens_d,
            "wins": self.wins,
            "ties": self.ties,
            "losses": self.losses,
        }


PAIR_FIELDS = (
    "measure",
    "a",
    "b",
    "mean_a",
    "mean_b",
    "delta",
    "p_value",
    "p_adjusted",
    "significant",
    "ci_low",
    "ci_high",
    "effect_size",
    "cohens_d",
    "wins",
    "ties",
    "losses",
)


@dataclass
class AllPairs:
    """Every pair of runs on every measure, with the ANOVA, the HSD margin of error and the letters per measure.

    ``topics[measure]`` counts the topics analysed (those where every run has a value).
    """

    names: list[str]
    measures: list[str]
    test: str
    correction: str
    alpha: float
    pairs: list[Pair]
    anova: dict[str, Anova]
    moe: dict[str, float]
    letters: dict[str, dict[str, str]]
    topics: dict[str, int] = field(default_factory=dict)

    @property
    def family_wise(self) -> bool:
        """Whether the p-values are family-wise over the pairs of a measure by themselves (Tukey's tests)."""
        return self.test in ("tukey", "hsd")

    def significant(self, pair: Pair) -> bool:
        return not np.isnan(pair.p_adjusted) and pair.p_adjusted < self.alpha

    def rows(self) -> list[dict]:
        """A tidy row per (measure, pair) with :data:`PAIR_FIELDS`."""
        return [
            dict(
                zip(
                    PAIR_FIELDS,
                    [
                        p.measure,
                        p.a,
                        p.b,
                        p.mean_a,
                        p.mean_b,
                        p.delta,
                        p.p_value,
                        p.p_adjusted,
                        int(self.significant(p)),
                        p.ci[0],
                        p.ci[1],
                        p.effect_size,
                        p.cohens_d,
                        p.wins,
                        p.ties,
                        p.losses,
                    ],
                )
            )
            for p in self.pairs
        ]

    def to_dict(self) -> dict:
        return {
            "test": self.test,
            "correction": self.correction,
            "alpha": self.alpha,
            "pairs": [p.to_dict() for p in self.pairs],
            "anova": {
                m: {**a.to_dict(), "topics": self.topics.get(m), "moe": self.moe[m]} for m, a in self.anova.items()
            },
            "letters": self.letters,
        }

    def _repr_html_(self) -> str:
        """The means with their letters, the pairs (``*``: adjusted p below ``alpha``) and the ANOVA,
        as a notebook shows them (the tables of ``evaltool compare --all-pairs``)."""
        from evaltool.report.html import notebook_html
        from evaltool.report.layouts import pairs_report

        return notebook_html(pairs_report(self))

    def to_frame(self):
        """:meth:`rows` as a pandas DataFrame."""
        from evaltool.evaluation.result import require_pandas

        return require_pandas("to_frame()").DataFrame(self.rows(), columns=list(PAIR_FIELDS))
