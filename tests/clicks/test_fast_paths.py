"""The fast paths of the events-table readers give exactly what the plain paths give.

Arrow's JSON reader parses blocks in its threads, ahead of the batch being encoded; the
line reader (Python's json, a line at a time) is the reference. Every array of the log
as read, every count, and the metrics with their intervals must be equal, on a log whose
impressions straddle many blocks and batches.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from evaltool.clicks import evaluate
from evaltool.io.clicks import events, events_jsonl
from evaltool.io.clicks.builder import Builder
from evaltool.io.clicks.text import opener
from tests.clicks.test_chunks import MEASURES, generated_log, interleaved_rows

ARRAYS = ("imp_query", "imp_time", "shown_offsets", "shown_key", "shown_pos", "click_offsets", "click_key",
          "click_rank", "click_time")


def assert_same_log(got, want) -> None:
    """Two click logs as read are the same, array for array (nan equal to nan)."""
    assert got.query_ids == want.query_ids
    assert got.counts == want.counts
    for name in ARRAYS:
        np.testing.assert_array_equal(getattr(got, name), getattr(want, name), err_msg=name)
    assert got.doc_ids.to_pylist() == want.doc_ids.to_pylist()


def test_jsonl_parsed_in_threads_equals_the_line_reader(tmp_path, monkeypatch):
    monkeypatch.setattr(events, "TABLE_BATCH_ROWS", 300)
    monkeypatch.setattr(events_jsonl, "JSON_BLOCK_BYTES", 2048)  # dozens of blocks parsed at once
    log = generated_log(n_impressions=1500)
    rows = interleaved_rows(log, width=5)
    for i, row in enumerate(rows):
        row["timestamp"] = 1_700_000_000 + i * 0.5
    path = tmp_path / "events.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")

    _, open_log = opener(str(path))
    threaded = Builder(str(path), "events-jsonl", ())
    events_jsonl.read_arrow(open_log, threaded)
    by_line = Builder(str(path), "events-jsonl", ())
    events_jsonl.read_lines(str(path), open_log, by_line)
    got, want = threaded.finish(), by_line.finish()
    assert got.counts["events"] == len(rows)
    assert_same_log(got, want)
    a, b = evaluate(got, MEASURES, per_query=True), evaluate(want, MEASURES, per_query=True)
    assert a.summary == b.summary and a.meta["clicks"] == b.meta["clicks"]
    assert repr(a.per_query) == repr(b.per_query)  # value for value, nan where undefined


def test_a_damaged_row_group_decoded_ahead_is_named_by_its_first_row(tmp_path):
    """Row groups are decoded one ahead, in a thread: a damaged one still stops the reading at
    its own first row, after the row groups before it, with the same message."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from evaltool.clicks import read_click_log
    from evaltool.errors import ParseError

    rows = interleaved_rows(generated_log(n_impressions=120))
    path = tmp_path / "events.parquet"
    pq.write_table(pa.table({name: [row.get(name) for row in rows]
                             for name in ("session_id", "query", "action", "doc_id", "position")}),
                   path, row_group_size=100, compression="none")
    chunk = pq.ParquetFile(path).metadata.row_group(3).column(3)  # doc_id of rows 301..400
    data = bytearray(path.read_bytes())
    start = chunk.data_page_offset
    for offset in range(start, start + chunk.total_compressed_size):
        data[offset] = 0xFF
    damaged = tmp_path / "damaged.parquet"
    damaged.write_bytes(bytes(data))
    with pytest.raises(ParseError) as caught:
        read_click_log(str(damaged))
    assert caught.value.path == str(damaged)
    assert caught.value.line == "row 301"
    assert "a readable Parquet file" in str(caught.value)
