"""Readers: TREC text files, and adapters for dicts and DataFrames.

What an input is, :mod:`evaltool.io.kinds` decides; :mod:`evaltool.io.load` hands each input
to its reader.
"""

from evaltool.io.load import read_qrels, read_run

__all__ = ["read_qrels", "read_run"]
