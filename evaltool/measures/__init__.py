"""The measure registry: every measure declared once, in trec_eval's output order.

The order and the named sets are data in :mod:`evaltool.measures.sets` (no numpy);
the kernels register themselves when a family module is imported. ``MEASURES`` (trec_eval
names, in trec_eval's order) and ``NAMED_MEASURES`` (ir_measures' names and evaltool's
own, in the documented order) import every family on first use, so importing this package
for its named sets costs nothing; :func:`trec_measure` and :func:`named_measure` import only
the family that declares the one measure asked for (:data:`~evaltool.measures.sets.FAMILIES`).
Nothing else maps names to kernels.

>>> trec_measure("ndcg_cut").family, named_measure("RR").family, trec_measure("nDCG"), named_measure("map")
('dcg', 'rr', None, None)
"""

from __future__ import annotations

import importlib

from evaltool.measures.sets import DEFAULT_SETS, FAMILIES, NAMED_ORDER, NICKNAMES, TREC_ORDER

_FROM_BASE = ("Agg", "Measure", "Params", "Request")
FAMILY_OF = {name: family for family, names in FAMILIES.items() for name in names}


def _family_registries(name: str):
    """The module holding the registries, once the family that declares ``name`` is imported; None
    if no family does."""
    family = FAMILY_OF.get(name)
    if family is None:
        return None
    importlib.import_module(f"evaltool.measures.{family}")
    return importlib.import_module("evaltool.measures.base")


def trec_measure(name: str):
    """The trec_eval measure ``name`` (``map``, ``ndcg_cut``), or None; imports its family only."""
    base = _family_registries(name)
    return base.REGISTRY.get(name) if base else None


def named_measure(name: str):
    """The named-parameter measure of canonical name ``name`` (``nDCG``, ``RR``), or None; imports its family only."""
    base = _family_registries(name)
    return base.NAMED_REGISTRY.get(name) if base else None


def _registries() -> dict:
    for family in FAMILIES:
        importlib.import_module(f"evaltool.measures.{family}")
    from evaltool.measures.base import NAMED_REGISTRY, REGISTRY

    if set(TREC_ORDER) != set(REGISTRY):
        raise RuntimeError(f"TREC_ORDER and the registry disagree: {set(TREC_ORDER) ^ set(REGISTRY)}")
    if set(NAMED_ORDER) != set(NAMED_REGISTRY):
        raise RuntimeError(f"NAMED_ORDER and the registry disagree: {set(NAMED_ORDER) ^ set(NAMED_REGISTRY)}")
    declared = {m.name: m.family for m in (*REGISTRY.values(), *NAMED_REGISTRY.values())}
    if declared != FAMILY_OF:
        wrong = sorted(n for n in set(declared) | set(FAMILY_OF) if declared.get(n) != FAMILY_OF.get(n))
        raise RuntimeError(f"FAMILIES and the modules that declare the measures disagree on {', '.join(wrong)}")
    return {
        "MEASURES": {name: REGISTRY[name] for name in TREC_ORDER},
        "NAMED_MEASURES": {name: NAMED_REGISTRY[name] for name in NAMED_ORDER},
    }


def __getattr__(name: str):
    if name in ("MEASURES", "NAMED_MEASURES"):
        globals().update(_registries())
        return globals()[name]
    if name in _FROM_BASE:
        value = getattr(importlib.import_module("evaltool.measures.base"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'evaltool.measures' has no attribute {name!r}")


__all__ = [
    "DEFAULT_SETS",
    "FAMILIES",
    "MEASURES",
    "NAMED_MEASURES",
    "NAMED_ORDER",
    "NICKNAMES",
    "TREC_ORDER",
    "Agg",
    "Measure",
    "Params",
    "Request",
    "named_measure",
    "trec_measure",
]
