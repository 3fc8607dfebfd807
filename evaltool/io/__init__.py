"""Readers: TREC text files, and adapters for dicts and DataFrames."""

from evaltool.io.trec import read_qrels, read_run

__all__ = ["read_qrels", "read_run"]
