"""Click logs: what users were shown and what they clicked, read as a stream into compact arrays.

Two layouts are read, impression objects (:mod:`~evaltool.io.clicks.objects`) and events tables
(:mod:`~evaltool.io.clicks.events`, as CSV, JSONL or Parquet); the content (and, for Parquet,
the file name) decides which (:func:`evaltool.io.kinds.click_layout`):

* **Impression objects**, what a search application logs per result page (the Spanish keys
  ``consulta`` and ``resultados`` are read as ``query`` and ``results``): a JSON array, or JSONL
  with one object per line. Each object is one impression — a result list shown for a query:
  ``consulta`` or ``query`` (the query text), optional ``query_id`` / ``qid`` (otherwise the
  text is the query's id), ``resultados`` or ``results`` (the document ids in the order shown,
  position 1 first), ``clicks`` (clicked document ids in log order; an entry may also be an
  object ``{"doc_id": ..., "timestamp": ...}``), optional ``session_id`` and ``timestamp``.
* **An events table**, one row per shown document or click, as CSV (with a header), JSONL
  or Parquet: ``action`` (``impression`` or ``click``), ``query_id`` and/or ``query``,
  ``doc_id``, ``position`` (1 = top), ``timestamp``, and the impression's identity:
  ``impression_id``, or else ``session_id`` together with the query. Rows of one
  impression need not be adjacent. A click row names its document by ``doc_id`` (its rank
  is the document's top-most shown position) or, without one, by ``position``.

Timestamps are seconds (numbers) or ISO 8601 texts. Any other field of an impression
(``device``, ``category``...) can be kept for grouping (``fields=``).

Decided edge cases (see also :mod:`evaltool.clicks`):

* a click on a document the impression did not show is ignored and counted
  (``clicks_not_shown``); so is a click whose impression has no shown document;
* a document clicked again within one impression counts once (``repeated_clicks``);
* an impression with an empty result list is kept apart (``empty_impressions``) and
  enters no metric;
* in an events table, a second document given for a position already filled is ignored
  and counted (``duplicate_positions``).

Memory grows with the number of shown documents (13 bytes each while reading, 12 in the
result), clicks (21 bytes) and distinct ids (their bytes and ~40 more: impressions, queries,
and in an events table only the document ids longer than 8 bytes: a shorter one is its own
exact 64-bit key, :class:`~evaltool.io.clicks.ids.DocKeys`), never with the bytes of the file:
text is read line by line or in Arrow record batches of bounded size, and rows are kept in
fixed-size blocks.
Bad input raises :class:`~evaltool.errors.ParseError` with the file and line (Parquet:
the row), the text found and what was expected; nothing is returned half-read.

>>> import json, os, tempfile
>>> log = [{"consulta": "envíos a Quito", "resultados": ["HAW001", "HAW002", "HAW003"], "clicks": ["HAW002"]},
...        {"consulta": "tarifas", "resultados": ["HAW004", "HAW005"], "clicks": []}]
>>> with tempfile.TemporaryDirectory() as folder:
...     path = os.path.join(folder, "log.json")
...     with open(path, "w") as f:
...         _ = f.write(json.dumps(log))
...     clicks = read_click_log(path)
>>> clicks.format, clicks.n_impressions, clicks.query_ids, clicks.click_rank.tolist()
('json', 2, ['envíos a Quito', 'tarifas'], [2])
"""

from __future__ import annotations

import os

from evaltool.errors import EvaltoolError, ParseError
from evaltool.io.clicks.log import ClickLog

__all__ = ["ClickLog", "read_click_log"]


def read_click_log(log, fields: tuple[str, ...] | list[str] = ()) -> ClickLog:
    """Read a click log file (any layout of the module docstring), or a list of impression dicts.

    ``fields`` names impression fields to keep (for grouping). See the module docstring
    for the layouts and the edge-case rules.
    """
    from evaltool.io.clicks import events_jsonl, objects
    from evaltool.io.clicks.builder import Builder
    from evaltool.io.clicks.text import opener

    fields = tuple(fields)
    if isinstance(log, ClickLog):
        return log
    if isinstance(log, (list, tuple)):
        builder = Builder("<list>", "records", fields)
        objects.read_records(log, builder)
        return builder.finish()
    if not isinstance(log, (str, os.PathLike)):
        raise EvaltoolError(f"a click log is a path or a list of impression dicts, not {type(log).__name__}")
    from evaltool.io.kinds import click_layout

    path = os.fspath(log)
    layout = click_layout(path)
    _, open_log = opener(path)
    builder = Builder(path, layout, fields)
    if layout == "events-parquet":
        from evaltool.io.clicks.events_parquet import read_events_parquet
        from evaltool.io.clicks.ids import NotUtf8

        try:
            read_events_parquet(path, builder)
        except NotUtf8 as exc:
            raise ParseError(path, None, None, str(exc)) from None
    elif layout == "events-csv":
        from evaltool.io.clicks.events_csv import read_events_csv

        read_events_csv(path, open_log, builder)
    elif layout == "json":
        objects.read_json(path, open_log, builder)
    elif layout == "events-jsonl":
        import pyarrow as pa

        try:
            events_jsonl.read_arrow(open_log, builder)
        except (EvaltoolError, pa.ArrowException, UnicodeError):  # the line reader decides, and names the line
            builder = Builder(path, layout, fields)
            events_jsonl.read_lines(path, open_log, builder)
    else:
        objects.read_jsonl(path, open_log, builder)
    return builder.finish()
