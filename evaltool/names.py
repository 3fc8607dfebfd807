"""Measure names as users write them, resolved against the registry.

trec_eval syntax: ``name`` or ``name.params`` (``P.5,10``, ``ndcg.1=3,2=9``,
``iprec_at_recall.0.1,0.5``) or a nickname (``official``, ``all_trec``, ``set``).

One deliberate difference from trec_eval: several ``-m`` for the same cutoff measure
take the union of their cutoffs (``-m P.5 -m P.10`` gives P_5 and P_10); explicit
parameters still replace the defaults a nickname brings.

>>> [r.names for r in parse_measures(["P.10,5", "map", "P.5,20"])]
[['map'], ['P_5', 'P_10', 'P_20']]
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Iterable

from evaltool.errors import MeasureError
from evaltool.measures import MEASURES, NICKNAMES, TREC_ORDER
from evaltool.measures.base import Params, Request

DEFAULT_MEASURES = ("official",)


def _number(text: str, measure: str, whole: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise MeasureError(f"measure '{whole}': parameter {text!r} of {measure} is not a finite number")
    return value


def _parse_values(measure, text: str, whole: str):
    items = text.split(",")
    kind = measure.params
    if kind is Params.CUTOFFS:
        numbers = [_number(item, measure.name, whole) for item in items]
        if not all(v >= 1 for v in numbers):
            raise MeasureError(f"measure '{whole}': cutoffs of {measure.name} must be positive integers")
        return [int(v) for v in numbers]
    if kind is Params.FRACTIONS:
        return [_number(item, measure.name, whole) for item in items]
    if kind is Params.NUMBERS:
        if measure.arity is not None and len(items) != measure.arity:
            raise MeasureError(f"measure '{whole}': {measure.name} takes {measure.arity} "
                               f"parameter{'s' if measure.arity > 1 else ''}, got {len(items)}")
        return [_number(item, measure.name, whole) for item in items]
    pairs = []
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise MeasureError(f"measure '{whole}': {measure.name} takes name=value pairs such as 1=3,2=9 or p=0.8")
        pairs.append((key, _number(value, measure.name, whole)))
    return pairs


def suggest(name: str) -> str:
    known = list(MEASURES) + list(NICKNAMES)
    close = difflib.get_close_matches(name, known, n=3, cutoff=0.6)
    return f"; did you mean {' or '.join(close)}?" if close else "; 'evaltool measures' lists them"


def parse_measures(specs: Iterable[str] | None) -> list[Request]:
    """Resolve ``-m`` arguments to requests in trec_eval's output order."""
    specs = list(specs) if specs else list(DEFAULT_MEASURES)
    marked: set[str] = set()
    explicit: dict[str, list] = {}
    for whole in specs:
        name, dot, text = whole.partition(".")
        if name in NICKNAMES:
            if dot:
                raise MeasureError(f"measure '{whole}': the nickname {name} takes no parameters")
            marked.update(NICKNAMES[name])
            continue
        measure = MEASURES.get(name)
        if measure is None:
            raise MeasureError(f"unknown measure '{whole}'{suggest(name)}")
        marked.add(name)
        if not dot:
            continue
        if text == "":
            raise MeasureError(f"measure '{whole}': nothing after the '.'; give parameters or drop the dot")
        if measure.params is Params.NONE:
            raise MeasureError(f"measure '{whole}': {name} takes no parameters")
        explicit.setdefault(name, []).append((text, _parse_values(measure, text, whole)))

    requests = []
    for name in TREC_ORDER:
        if name not in marked:
            continue
        measure = MEASURES[name]
        given = explicit.get(name)
        if measure.params in (Params.CUTOFFS, Params.FRACTIONS):
            values = sorted({v for _, vs in given for v in vs}) if given else sorted(measure.default)
            requests.append(Request(measure, tuple(values)))
        elif measure.params in (Params.NUMBERS, Params.PAIRS):
            if not given:
                requests.append(Request(measure, measure.default))
            seen = set()
            for text, values in given or ():
                if text not in seen:
                    seen.add(text)
                    requests.append(Request(measure, tuple(values), text))
        else:
            requests.append(Request(measure))
    return requests
