"""Rows ``(query id, document id, value)`` as every input evaltool takes: dicts, pandas
DataFrames, pyarrow tables and record batches, polars DataFrames, TREC files."""

from __future__ import annotations


def as_dicts(rows) -> dict:
    """``{query id: {document id: value}}``; a repeated pair keeps its last value."""
    out: dict = {}
    for q, d, v in rows:
        out.setdefault(q, {})[d] = v
    return out


def frame(rows, value: str, index=None):
    """A pandas DataFrame ``query_id, doc_id, VALUE`` (``index``: its row labels)."""
    import pandas as pd

    return pd.DataFrame(rows, columns=["query_id", "doc_id", value], index=index)
