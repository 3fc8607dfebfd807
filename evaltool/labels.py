"""Interpretation labels: good, fair or poor, from thresholds on a few measures.

A measure holds when its value reaches its threshold. A row (a query, a run, a summary)
is ``good`` when every thresholded measure it has holds, ``fair`` when at least half
hold, ``poor`` otherwise. The defaults are the ones of the comparative report this
follows (MRR >= 0.7, nDCG@10 >= 0.6, Precision@5 >= 0.5): there, 0.69 / 0.66 / 0.53
(two of three hold) reads as the middle band, 0.25 / 0.41 / 0.20 as the lowest.

>>> label({"recip_rank": 0.69, "ndcg_cut_10": 0.66, "P_5": 0.53})
'fair'
>>> label({"recip_rank": 0.833, "ndcg_cut_10": 0.72, "P_5": 0.60}), label({"recip_rank": 0.25, "P_5": 0.2})
('good', 'poor')
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from evaltool.errors import EvaltoolError
from evaltool.names import finite_float

DEFAULT_THRESHOLDS = {"recip_rank": 0.7, "ndcg_cut_10": 0.6, "P_5": 0.5}
LABELS = ("good", "fair", "poor")


def parse_thresholds(specs: Iterable[str], base: Mapping[str, float] = DEFAULT_THRESHOLDS) -> dict[str, float]:
    """``NAME=VALUE`` (an output name such as ``ndcg_cut_10``) sets a threshold, ``NAME=off`` drops one.

    >>> parse_thresholds(["map=0.3", "P_5=off"])
    {'recip_rank': 0.7, 'ndcg_cut_10': 0.6, 'map': 0.3}
    """
    thresholds = dict(base)
    for spec in specs:
        name, sep, text = spec.partition("=")
        name = name.strip()
        if not sep or not name:
            raise EvaltoolError(f"threshold {spec!r}: expected NAME=VALUE such as ndcg_cut_10=0.6 (or NAME=off)")
        if text.strip().lower() == "off":
            thresholds.pop(name, None)
            continue
        value = finite_float(text)
        if value is None:
            raise EvaltoolError(f"threshold {spec!r}: {text!r} is not a number")
        thresholds[name] = value
    return thresholds


def label(values: Mapping[str, float], thresholds: Mapping[str, float] = DEFAULT_THRESHOLDS) -> str | None:
    """The label of one row of values; None when no thresholded measure is among them."""
    present = [name for name in thresholds if name in values]
    if not present:
        return None
    held = sum(1 for name in present
               if isinstance(values[name], (int, float)) and values[name] >= thresholds[name])
    if held == len(present):
        return "good"
    return "fair" if 2 * held >= len(present) else "poor"


def check_thresholds(thresholds: Mapping[str, float], measures: list[str], given: Iterable[str] = ()) -> None:
    """Refuse labels that cannot be computed: no thresholded measure, or a given one not evaluated."""
    for spec in given:
        name = spec.partition("=")[0].strip()
        if name in thresholds and name not in measures:
            raise EvaltoolError(f"threshold for {name}: {name} is not among the measures evaluated "
                                f"({', '.join(measures)}); add it with -m")
    if not any(name in measures for name in thresholds):
        wanted = ", ".join(f"{k} >= {v:g}" for k, v in thresholds.items()) or "none left"
        raise EvaltoolError(f"--labels: none of the measures evaluated ({', '.join(measures)}) has a threshold "
                            f"({wanted}); evaluate one of them or give --threshold NAME=VALUE")


# the words of each label: a row (an evaluation, a query) and a summary over several rows,
# in the comparative report's own vocabulary (Spanish) and in English
SUMMARY_LABELS = {"good": "efficient", "fair": "acceptable", "poor": "needs improvement"}
VOCABULARY = {
    "en": {"row": {"good": "good", "fair": "fair", "poor": "poor"}, "summary": SUMMARY_LABELS},
    "es": {"row": {"good": "Bueno", "fair": "Regular", "poor": "Mejorable"},
           "summary": {"good": "Eficiente", "fair": "Aceptable", "poor": "Mejorable"}},
}


def label_word(key: str | None, lang: str = "en", summary: bool = False) -> str | None:
    """The word for a label in ``lang`` (``en``, ``es``), for a row or for a summary.

    >>> label_word("fair", "es", summary=True), label_word("good", "es"), label_word("poor", summary=True)
    ('Aceptable', 'Bueno', 'needs improvement')
    """
    if lang not in VOCABULARY:
        raise EvaltoolError(f"--lang {lang!r}: expected one of {', '.join(VOCABULARY)}")
    return None if key is None else VOCABULARY[lang]["summary" if summary else "row"][key]
