"""From several raters' grades to one grade per pair: the qrels a judgment set gives.

* ``majority``: the grade most raters gave; a tie goes to the lowest of the tied grades (a pair
  two raters split on is not counted relevant on one rater's word).
* ``median``: the median grade; with an even number of raters, the lower of the two middle
  grades (so the result is always a grade the scale has).
* a rater's name (an adjudicator): that rater's grade wherever they gave one; elsewhere the
  grade every rater agreed on. A pair the raters disagree on and the adjudicator did not
  grade is left out and listed as ``unresolved``.
* ``rater=NAME`` instead keeps that one rater's grades.

>>> from evaltool.judgments.sets import Judgment
>>> grades = [Judgment("q1", "d1", "ana", 2), Judgment("q1", "d1", "ben", 3), Judgment("q1", "d1", "eva", 3),
...           Judgment("q1", "d2", "ana", 0), Judgment("q1", "d2", "ben", 1)]
>>> consensus(grades, "majority").qrels
{'q1': {'d1': 3, 'd2': 0}}
>>> consensus(grades, "median").qrels
{'q1': {'d1': 3, 'd2': 0}}
>>> c = consensus([*grades, Judgment("q1", "d1", "chief", 1)], "chief")
>>> c.qrels, c.unresolved
({'q1': {'d1': 1}}, [('q1', 'd2')])
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field

from evaltool.errors import EvaltoolError

METHODS = ("majority", "median")


@dataclass
class Consensus:
    """One grade per pair (``qrels``: query -> document -> grade, both sorted) and the pairs left out."""

    qrels: dict[str, dict[str, int]]
    unresolved: list[tuple[str, str]] = field(default_factory=list)

    def pairs(self) -> int:
        return sum(len(docs) for docs in self.qrels.values())


def by_pair(judgments) -> dict[tuple[str, str], dict[str, int]]:
    """(query, document) -> {rater: grade}, pairs sorted."""
    pairs: dict[tuple[str, str], dict[str, int]] = defaultdict(dict)
    for jd in judgments:
        pairs[(jd.query_id, jd.doc_id)][jd.rater] = jd.grade
    return dict(sorted(pairs.items()))


def _majority(grades: list[int]) -> int:
    counts = Counter(grades)
    top = max(counts.values())
    return min(g for g, n in counts.items() if n == top)


def _median(grades: list[int]) -> int:
    ordered = sorted(grades)
    return ordered[(len(ordered) - 1) // 2]


def consensus(judgments, method: str = "majority", *, rater: str | None = None) -> Consensus:
    """The consensus of ``judgments`` (:class:`~evaltool.judgments.sets.Judgment` s) by ``method``:
    ``majority``, ``median`` or an adjudicator's name; ``rater`` keeps one rater's grades instead."""
    pairs = by_pair(judgments)
    out: dict[str, dict[str, int]] = defaultdict(dict)
    unresolved: list[tuple[str, str]] = []
    if rater is not None:
        if not any(rater in grades for grades in pairs.values()):
            known = sorted({r for grades in pairs.values() for r in grades})
            raise EvaltoolError(f"no judgment by the rater {rater!r} (raters: {', '.join(known) or 'none'})")
        for (query, doc), grades in pairs.items():
            if rater in grades:
                out[query][doc] = grades[rater]
        return Consensus(dict(out))
    if method not in METHODS:
        adjudicators = {r for grades in pairs.values() for r in grades}
        if method not in adjudicators:
            raise EvaltoolError(
                f"--consensus {method!r}: expected majority, median or the name of a rater who "
                f"adjudicated (raters: {', '.join(sorted(adjudicators)) or 'none'})"
            )
    for (query, doc), grades in pairs.items():
        if method == "majority":
            out[query][doc] = _majority(list(grades.values()))
        elif method == "median":
            out[query][doc] = _median(list(grades.values()))
        elif method in grades:
            out[query][doc] = grades[method]
        elif len(set(grades.values())) == 1:
            out[query][doc] = next(iter(grades.values()))
        else:
            unresolved.append((query, doc))
    return Consensus(dict(out), unresolved)
