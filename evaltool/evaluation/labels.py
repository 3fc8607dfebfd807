"""Labels: ``good``, ``fair`` or ``poor`` per row, from thresholds on a few measures.

A threshold names a *measure*, in any spelling: ``recip_rank``, ``RR`` and ``mrr`` are
one measure; so are ``ndcg_cut_10``, ``ndcg_cut.10``, ``nDCG@10`` and ``ndcg@10``
(:func:`evaltool.names.measure_identity`).

Labels: a measure holds when its value reaches its threshold; a row is ``good`` when
every thresholded measure it has holds, ``fair`` when at least half hold, ``poor``
otherwise. The defaults are the comparative report's (MRR >= 0.7, nDCG@10 >= 0.6,
Precision@5 >= 0.5): there, 0.69 / 0.66 / 0.53 (two of three hold) reads as the middle
band, 0.25 / 0.41 / 0.20 as the lowest.

>>> label({"recip_rank": 0.69, "ndcg_cut_10": 0.66, "P_5": 0.53})
'fair'
>>> label({"mrr": 0.833, "ndcg@10": 0.72, "precision@5": 0.60}), label({"RR": 0.25, "P@5": 0.2})
('good', 'poor')
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache

from evaltool.errors import EvaltoolError

SUMMARY_ROW = "all"
LABELS = ("good", "fair", "poor")
DEFAULT_THRESHOLDS = {"recip_rank": 0.7, "ndcg_cut_10": 0.6, "P_5": 0.5}


@lru_cache(maxsize=4096)
def _identity(name: str) -> str:
    from evaltool.names import measure_identity

    return measure_identity(name) or name


def parse_thresholds(specs: Iterable[str], base: Mapping[str, float] = DEFAULT_THRESHOLDS) -> dict[str, float]:
    """``NAME=VALUE`` sets a threshold, ``NAME=off`` drops one; NAME is any spelling of the measure.

    A threshold for a measure already thresholded under another spelling replaces it.

    >>> parse_thresholds(["map=0.3", "P@5=off"])
    {'recip_rank': 0.7, 'ndcg_cut_10': 0.6, 'map': 0.3}
    >>> parse_thresholds(["ndcg_cut.10=0.65"])
    {'recip_rank': 0.7, 'P_5': 0.5, 'ndcg_cut.10': 0.65}
    """
    from evaltool.names import finite_float

    thresholds = dict(base)
    for spec in specs:
        name, sep, text = spec.partition("=")
        name = name.strip()
        if not sep or not name:
            raise EvaltoolError(f"threshold {spec!r}: expected NAME=VALUE such as ndcg_cut_10=0.6 (or NAME=off)")
        for known in [k for k in thresholds if _identity(k) == _identity(name)]:
            del thresholds[known]
        if text.strip().lower() == "off":
            continue
        value = finite_float(text)
        if value is None:
            raise EvaltoolError(f"threshold {spec!r}: {text!r} is not a number")
        thresholds[name] = value
    return thresholds


# the words of each label: a row (an evaluation, a query) and a summary over several rows,
# in the comparative report's own vocabulary (Spanish) and in English
SUMMARY_LABELS = {"good": "efficient", "fair": "acceptable", "poor": "needs improvement"}
VOCABULARY = {
    "en": {"row": {"good": "good", "fair": "fair", "poor": "poor"}, "summary": SUMMARY_LABELS},
    "es": {
        "row": {"good": "Bueno", "fair": "Regular", "poor": "Mejorable"},
        "summary": {"good": "Eficiente", "fair": "Aceptable", "poor": "Mejorable"},
    },
}


def label_word(key: str | None, lang: str = "en", summary: bool = False) -> str | None:
    """The word for a label in ``lang`` (``en``, ``es``), for a row or for a summary.

    >>> label_word("fair", "es", summary=True), label_word("good", "es"), label_word("poor", summary=True)
    ('Aceptable', 'Bueno', 'needs improvement')
    """
    if lang not in VOCABULARY:
        raise EvaltoolError(f"--lang {lang!r}: expected one of {', '.join(VOCABULARY)}")
    return None if key is None else VOCABULARY[lang]["summary" if summary else "row"][key]


def _thresholded(values: Mapping, thresholds: Mapping[str, float]) -> list[tuple[object, float]]:
    """(value, threshold) for each threshold whose measure is among ``values`` (by identity)."""
    by_identity: dict[str, object] = {}
    for name, value in values.items():
        by_identity.setdefault(_identity(name), value)
    return [
        (by_identity[_identity(name)], limit) for name, limit in thresholds.items() if _identity(name) in by_identity
    ]


def label(values: Mapping[str, float], thresholds: Mapping[str, float] = DEFAULT_THRESHOLDS) -> str | None:
    """The label of one row of values; None when no thresholded measure is among them."""
    present = _thresholded(values, thresholds)
    if not present:
        return None
    held = sum(
        1
        for value, limit in present
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= limit
    )
    if held == len(present):
        return "good"
    return "fair" if 2 * held >= len(present) else "poor"


def check_thresholds(thresholds: Mapping[str, float], measures: Sequence[str], given: Iterable[str] = ()) -> None:
    """Refuse labels that cannot be computed: no thresholded measure, or a given one not evaluated."""
    evaluated = {_identity(m) for m in measures}
    for name in given:
        if name in thresholds and _identity(name) not in evaluated:
            raise EvaltoolError(
                f"threshold for {name}: {name} is not among the measures evaluated "
                f"({', '.join(measures)}); add it with -m"
            )
    if not any(_identity(name) in evaluated for name in thresholds):
        wanted = ", ".join(f"{k} >= {v:g}" for k, v in thresholds.items()) or "none left"
        raise EvaltoolError(
            f"--labels: none of the measures evaluated ({', '.join(measures)}) has a threshold "
            f"({wanted}); evaluate one of them or give --threshold NAME=VALUE"
        )


def threshold_request(thresholds) -> tuple[dict[str, float] | None, list[str]]:
    """``(thresholds in force, names given explicitly)`` from a ``thresholds`` argument.

    None: no labels. True: the defaults. A mapping: exactly those. Strings ``NAME=VALUE``
    / ``NAME=off``: the defaults changed as the command line's ``--threshold`` does.
    """
    if thresholds is None or thresholds is False:
        return None, []
    if thresholds is True:
        return dict(DEFAULT_THRESHOLDS), []
    if isinstance(thresholds, Mapping):
        from evaltool.names import finite_float

        out = {}
        for name, value in thresholds.items():
            number = finite_float(str(value))
            if number is None or isinstance(value, bool):
                raise EvaltoolError(f"threshold for {name}: {value!r} is not a number")
            out[str(name)] = number
        return out, []
    specs = [thresholds] if isinstance(thresholds, str) else list(thresholds)
    given = [s.partition("=")[0].strip() for s in specs if s.partition("=")[2].strip().lower() != "off"]
    return parse_thresholds(specs), given


def row_labels(result, thresholds: Mapping[str, float]) -> dict[str, str | None]:
    """``{row: label}``: the summary ``all``, every query, every group ``FIELD=VALUE``."""
    labels = {SUMMARY_ROW: label(result.summary, thresholds)}
    labels.update({qid: label(values, thresholds) for qid, values in result.per_query.items()})
    for name, entries in result.groups.items():
        labels.update({f"{name}={value}": label(entry, thresholds) for value, entry in entries.items()})
    return labels
