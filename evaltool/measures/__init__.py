"""The measure registry: every measure declared once, in trec_eval's output order.

The order and the named sets are data in :mod:`evaltool.measures.sets` (no numpy);
the kernels register themselves when a family module is imported. ``MEASURES`` (trec_eval
names, in trec_eval's order) and ``NAMED_MEASURES`` (ir_measures' names and evaltool's
own, in the documented order) are built on first use, so importing this package for its
named sets costs nothing. Nothing else maps names to kernels.
"""

from __future__ import annotations

import importlib

from evaltool.measures.sets import DEFAULT_SETS, NAMED_ORDER, NICKNAMES, TREC_ORDER

FAMILIES = ("ap", "counts", "cwl", "dcg", "diversity", "err", "gain", "iprec", "ordering", "precision", "rr",
            "strings")
_FROM_BASE = ("Agg", "Measure", "Params", "Request")


def _registries() -> dict:
    for family in FAMILIES:
        importlib.import_module(f"evaltool.measures.{family}")
    from evaltool.measures.base import NAMED_REGISTRY, REGISTRY

    if set(TREC_ORDER) != set(REGISTRY):
        raise RuntimeError(f"TREC_ORDER and the registry disagree: {set(TREC_ORDER) ^ set(REGISTRY)}")
    if set(NAMED_ORDER) != set(NAMED_REGISTRY):
        raise RuntimeError(f"NAMED_ORDER and the registry disagree: {set(NAMED_ORDER) ^ set(NAMED_REGISTRY)}")
    return {"MEASURES": {name: REGISTRY[name] for name in TREC_ORDER},
            "NAMED_MEASURES": {name: NAMED_REGISTRY[name] for name in NAMED_ORDER}}


def __getattr__(name: str):
    if name in ("MEASURES", "NAMED_MEASURES"):
        globals().update(_registries())
        return globals()[name]
    if name in _FROM_BASE:
        value = getattr(importlib.import_module("evaltool.measures.base"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'evaltool.measures' has no attribute {name!r}")


__all__ = ["DEFAULT_SETS", "MEASURES", "NAMED_MEASURES", "NAMED_ORDER", "NICKNAMES", "TREC_ORDER", "Agg", "Measure", "Params",
           "Request"]
