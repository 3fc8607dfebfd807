"""How well reproduced runs reproduce the original ones (Breuer et al., SIGIR 2020, "How to
measure the reproducibility of system-oriented IR experiments"; the measures of repro_eval).

Runs come in pairs, an original and its reproduction, ranked by trec_eval's rule (score
descending, then document id descending). Per pair:

* Kendall's tau union (KTU), per topic, as repro_eval computes it: each ranking cut to its
  top ``depth`` documents, every document replaced by its position in the sorted union of
  both cuts, and Kendall's tau-b between the two sequences (position by position). Rankings of
  different lengths are compared over the shorter length (repro_eval refuses them).
* Rank-biased overlap (RBO), per topic, truncated at ``depth`` and normalised:
  ``sum_{i<depth} p^i * |O_i| / (i + 1) / sum_{i<depth} p^i`` with ``O_i`` the documents the
  two rankings share in their top ``i + 1`` (Webber, Moffat and Zobel, TOIS 2010, without
  the extrapolation, as repro_eval has it; ``p`` 0.95, ``depth`` 1000 by default).
* RMSE of the per-topic scores of each measure: ``sqrt(mean((orig - rep)^2))``.
* The p-value of the paired t-test between the original and the reproduced per-topic
  scores (1 when they are identical).

For a baseline pair ``b`` and an advanced pair ``a`` (the first pair and each of the others):

* effect ratio ``ER = mean(rep_a - rep_b) / mean(orig_a - orig_b)`` (1: the improvement is
  reproduced in full; inf or nan when the original shows none);
* delta relative improvement ``DeltaRI = RI_orig - RI_rep`` with ``RI = (mean_a - mean_b) / mean_b``
  (0: the relative improvement is reproduced).

Scores are those of :func:`evaltool.compare_runs` on the queries every run was scored on.

>>> round(kendall_tau_union(["a", "b", "c"], ["a", "c", "b"]), 4)   # positions 0 1 2 against 0 2 1
0.3333
>>> round(rank_biased_overlap(["a", "b"], ["a", "c"], p=0.5, depth=2), 4)  # (1 + 0.5 * 1/2) / 1.5
0.8333
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field

import numpy as np

from evaltool.errors import EvaltoolError, InputError


def kendall_tau_union(original: list[str], reproduced: list[str], depth: int | None = None) -> float:
    """Kendall's tau union of two rankings (document ids, best first); see the module's doc."""
    original, reproduced = list(original[:depth]), list(reproduced[:depth])
    length = min(len(original), len(reproduced))
    original, reproduced = original[:length], reproduced[:length]
    position = {doc: i for i, doc in enumerate(sorted(set(original) | set(reproduced)))}
    import scipy.stats

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        tau = scipy.stats.kendalltau([position[d] for d in original], [position[d] for d in reproduced])
    return float(tau.statistic)


def rank_biased_overlap(reproduced: list[str], original: list[str], p: float = 0.95, depth: int = 1000) -> float:
    """Truncated, normalised RBO of two rankings (see the module's doc)."""
    if not 0 < p < 1:
        raise EvaltoolError(f"RBO's p must be between 0 and 1, not {p:g}")
    seen_a: set[str] = set()
    seen_b: set[str] = set()
    overlap = 0
    score = norm = 0.0
    weight = 1.0
    for i in range(depth):
        for doc, own, other in (
            (reproduced[i] if i < len(reproduced) else None, seen_a, seen_b),
            (original[i] if i < len(original) else None, seen_b, seen_a),
        ):
            if doc is not None and doc not in own:
                own.add(doc)
                overlap += doc in other
        score += weight * overlap / (i + 1)
        norm += weight
        weight *= p
    return score / norm


@dataclass
class PairReproduction:
    """One original run and its reproduction."""

    original: str
    reproduced: str
    ktu: dict[str, float]  # per topic
    rbo: dict[str, float]  # per topic
    rmse: dict[str, float]  # per measure
    p_value: dict[str, float]  # per measure: paired t-test original vs reproduced
    mean_original: dict[str, float]
    mean_reproduced: dict[str, float]

    @property
    def ktu_mean(self) -> float:
        return float(np.mean(list(self.ktu.values()))) if self.ktu else math.nan

    @property
    def rbo_mean(self) -> float:
        return float(np.mean(list(self.rbo.values()))) if self.rbo else math.nan

    def to_dict(self, per_topic: bool = False) -> dict:
        out = {
            "original": self.original,
            "reproduced": self.reproduced,
            "ktu": self.ktu_mean,
            "rbo": self.rbo_mean,
            "rmse": self.rmse,
            "p_value": self.p_value,
            "mean_original": self.mean_original,
            "mean_reproduced": self.mean_reproduced,
        }
        if per_topic:
            out["per_topic"] = {"ktu": self.ktu, "rbo": self.rbo}
        return out


@dataclass
class EffectReproduction:
    """The improvement of an advanced pair over the baseline pair, original against reproduced."""

    baseline: str
    advanced: str
    effect_ratio: dict[str, float]
    delta_ri: dict[str, float]

    def to_dict(self) -> dict:
        return {
            "baseline": self.baseline,
            "advanced": self.advanced,
            "effect_ratio": self.effect_ratio,
            "delta_ri": self.delta_ri,
        }


@dataclass
class Reproduction:
    """``evaltool reproduce``: a :class:`PairReproduction` per pair, an :class:`EffectReproduction` per advanced pair."""

    measures: list[str]
    queries: int
    p: float
    depth: int
    pairs: list[PairReproduction]
    effects: list[EffectReproduction]
    warnings: list[str] = field(default_factory=list)

    def to_dict(self, per_topic: bool = False) -> dict:
        return {
            "measures": self.measures,
            "queries": self.queries,
            "rbo_p": self.p,
            "depth": self.depth,
            "pairs": [p.to_dict(per_topic) for p in self.pairs],
            "effects": [e.to_dict() for e in self.effects],
        }

    def rows(self) -> list[dict]:
        """A row per (pair, measure): KTU, RBO, the means, RMSE, p, and ER / DeltaRI against the baseline pair."""
        by_advanced = {e.advanced: e for e in self.effects}
        out = []
        for pair in self.pairs:
            effect = by_advanced.get(pair.original)
            for m in self.measures:
                out.append(
                    {
                        "original": pair.original,
                        "reproduced": pair.reproduced,
                        "measure": m,
                        "ktu": pair.ktu_mean,
                        "rbo": pair.rbo_mean,
                        "mean_original": pair.mean_original[m],
                        "mean_reproduced": pair.mean_reproduced[m],
                        "rmse": pair.rmse[m],
                        "p_value": pair.p_value[m],
                        "effect_ratio": effect.effect_ratio[m] if effect else None,
                        "delta_ri": effect.delta_ri[m] if effect else None,
                    }
                )
        return out

    def to_frame(self):
        from evaltool.evaluation.result import require_pandas

        return require_pandas("to_frame()").DataFrame(self.rows())


def _ratio(numerator: float, denominator: float) -> float:
    if denominator == 0:
        return math.nan if numerator == 0 else math.copysign(math.inf, numerator)
    return numerator / denominator


def reproduce(
    qrels, originals, reproductions, measures=None, *, names=None, p: float = 0.95, depth: int = 1000, **options
) -> Reproduction:
    """Compare each original run with its reproduction (same order); the first pair is the baseline.

    ``names`` (one per run: originals, then reproductions) default to the file names (a
    reproduction named as an original gets `` (reproduced)`` after its name);
    ``options`` are :func:`evaltool.evaluate`'s.

    Parameters
    ----------
    qrels : path, dict or DataFrame
        The judgments, as :func:`evaltool.evaluate` takes them.
    originals, reproductions : list of runs
        The original runs and their reproductions, in the same order.
    measures : list of str, optional
        Measure names (default: trec_eval's set).
    names : list of str, optional
        One per run: the originals', then the reproductions'.
    p : float
        The rank-biased overlap's persistence.
    depth : int
        The ranks compared per query (Kendall's tau, RBO).
    **options
        :func:`evaltool.evaluate`'s keyword options.

    Returns
    -------
    Reproduction
        Per pair: the ordering agreement (Kendall's tau union, RBO), the means, RMSE and
        p-values; per advanced pair, the effect ratio and delta relative improvement against the
        baseline pair.

    Raises
    ------
    InputError
        Originals and reproductions of different lengths, or inputs that cannot be read.
    EvaltoolError
        ``p`` outside (0, 1) or ``depth`` below 1.
    """
    from evaltool.compare import compare_runs, t_test
    from evaltool.fusion import pool_runs

    originals, reproductions = list(originals), list(reproductions)
    if not originals or len(originals) != len(reproductions):
        raise InputError(
            f"give as many reproduced runs as original ones, in the same order: {len(originals)} "
            f"original and {len(reproductions)} reproduced"
        )
    if depth < 1:
        raise EvaltoolError(f"depth must be at least 1, not {depth}")
    runs = originals + reproductions
    if names is None:
        from evaltool.run_names import run_names

        first, second = run_names(originals), run_names(reproductions)
        if set(first) & set(second):  # a run reproduced by the same file: tell the two apart
            second = [f"{name} (reproduced)" for name in second]
        names = first + second
    cmp = compare_runs(qrels, runs, list(names), measures, **options)
    pool = pool_runs(runs, cmp.names, on_duplicate=options.get("on_duplicate", "error"))
    rankings = _rankings(pool)
    k = len(originals)
    pairs = []
    for i in range(k):
        a, b = cmp.names[i], cmp.names[k + i]
        shared = [q for q in rankings[k + i] if q in rankings[i]]
        ktu = {q: kendall_tau_union(rankings[i][q], rankings[k + i][q], depth) for q in shared}
        rbo = {q: rank_biased_overlap(rankings[k + i][q], rankings[i][q], p, depth) for q in shared}
        rmse, p_value, mean_a, mean_b = {}, {}, {}, {}
        for m in cmp.measures:
            x, y = cmp.values[a][m], cmp.values[b][m]
            rmse[m] = float(np.sqrt(np.mean((x - y) ** 2)))
            p_value[m] = t_test(x - y, 0.95)[0]
            mean_a[m], mean_b[m] = float(x.mean()), float(y.mean())
        pairs.append(PairReproduction(a, b, ktu, rbo, rmse, p_value, mean_a, mean_b))
    effects = []
    for i in range(1, k):
        er, dri = {}, {}
        for m in cmp.measures:
            v = cmp.values
            orig_gain = float(np.mean(v[cmp.names[i]][m] - v[cmp.names[0]][m]))
            rep_gain = float(np.mean(v[cmp.names[k + i]][m] - v[cmp.names[k]][m]))
            er[m] = _ratio(rep_gain, orig_gain)
            ri_orig = _ratio(pairs[i].mean_original[m] - pairs[0].mean_original[m], pairs[0].mean_original[m])
            ri_rep = _ratio(pairs[i].mean_reproduced[m] - pairs[0].mean_reproduced[m], pairs[0].mean_reproduced[m])
            dri[m] = ri_orig - ri_rep
        effects.append(EffectReproduction(cmp.names[0], cmp.names[i], er, dri))
    return Reproduction(list(cmp.measures), len(cmp.qids), p, depth, pairs, effects, list(cmp.warnings))


def _rankings(pool) -> list[dict[str, list[str]]]:
    """Each run's ranking per query (document ids in trec_eval's order)."""
    out: list[dict[str, list[str]]] = [{} for _ in pool.names]
    ends = np.append(pool.block_start[1:], len(pool.rank))
    docs = pool.key_doc[pool.slot]
    for start, end, q, r in zip(
        pool.block_start.tolist(), ends.tolist(), pool.block_query.tolist(), pool.block_run.tolist()
    ):
        out[r][pool.qids[q]] = [pool.docids[d] for d in docs[start:end].tolist()]
    return out
