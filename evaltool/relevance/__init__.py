"""Relevance resolution: explicit qrels, then pack-owned judgments, then token F1.

Pack authors need :class:`Query` and :class:`Item` (what ``is_relevant`` receives);
:func:`resolve` turns a queries file and results into ordinary qrels.
"""

from evaltool.inputs import Item, Query
from evaltool.relevance.resolve import MODES, STRATEGIES, Resolution, resolve

__all__ = ["Item", "MODES", "Query", "Resolution", "STRATEGIES", "resolve"]
