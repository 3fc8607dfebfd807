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
from tests.support.clicklogs import MEASURES, generated_log, interleaved_rows

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


def test_pair_codes_number_pairs_in_first_seen_order_exactly():
    """Impressions are (key, query code) pairs coded in a hash table probed a batch at a time:
    codes must be a dictionary's, through duplicates in a batch, repeats across batches and
    the table growing."""
    from evaltool.io.clicks.ids import PairCodes

    rng = np.random.default_rng(3)
    table, reference = PairCodes(), {}
    for _ in range(150):
        n = int(rng.integers(0, 3000))
        first = rng.integers(0, 60, n).astype(np.uint64) * np.uint64(2**40) + rng.integers(0, 3, n).astype(np.uint64)
        second = rng.integers(-2, 40, n).astype(np.int32)
        want = [reference.setdefault((int(a), int(b)), len(reference)) for a, b in zip(first, second)]
        assert table.codes(first, second).tolist() == want
    assert len(table) == len(reference) > 4096


def _tricky_rows():
    """Events with ids of every shape: blank (ASCII and Unicode spaces), multi-byte, exactly 8
    bytes, longer than 8 (a vocabulary code rather than a packed key), one session with
    several queries, rows of impressions interleaved, clicks before their impression."""
    rows = interleaved_rows(generated_log(n_impressions=400, seed=5), width=4)
    for i, row in enumerate(rows):
        row["query_id"] = row.pop("query")
        if i % 7 == 0:
            row["session_id"] = "sesión-larga-" + row["session_id"]  # > 8 bytes
        elif i % 11 == 0:
            row["session_id"] = row["session_id"].ljust(8, "_")[:8]
        row["timestamp"] = float(i)
    clicks = [row for row in rows if row["action"] == "click"]
    clicks[2]["doc_id"], clicks[2]["position"] = "\u3000", 2  # a blank document id: a click by position
    rows.insert(0, dict(rows[5], action="click", doc_id="zz"))
    return rows


@pytest.mark.parametrize("variant", ["plain", "impression_id", "query_and_query_id", "unordered_dictionary"])
def test_parquet_ids_read_as_dictionaries_equal_the_line_reader(tmp_path, monkeypatch, variant):
    """Parquet's id columns are read as dictionaries and coded a dictionary entry at a time;
    the JSONL line reader reads the same rows id by id. Same log, array for array."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    monkeypatch.setattr(events, "TABLE_BATCH_ROWS", 256)
    rows = _tricky_rows()
    if variant == "impression_id":
        for row in rows:
            row["impression_id"] = row.pop("session_id") + "/" + row["query_id"]
    elif variant == "query_and_query_id":
        for i, row in enumerate(rows):
            row["query"] = "texto " + row["query_id"]
            if i % 3 == 0:
                row["query_id"] = None
    names = list(dict.fromkeys(k for row in rows for k in row))
    columns = {name: [row.get(name) for row in rows] for name in names}
    table = pa.table(columns)
    if variant == "unordered_dictionary":  # as pandas categoricals store them: sorted, with unused entries
        for name in ("session_id", "query_id", "action"):
            values = sorted(set(columns[name]) | {"never-used"}, reverse=True)
            indices = pa.array([values.index(v) for v in columns[name]], pa.int32())
            table = table.set_column(names.index(name), name, pa.DictionaryArray.from_arrays(indices, values))
    parquet = tmp_path / "events.parquet"
    pq.write_table(table, parquet, row_group_size=700)
    jsonl = tmp_path / "events.jsonl"
    jsonl.write_text("".join(json.dumps({k: v for k, v in row.items() if v is not None}) + "\n" for row in rows),
                     encoding="utf-8")

    from evaltool.clicks import read_click_log

    got = read_click_log(str(parquet))
    _, open_log = opener(str(jsonl))
    by_line = Builder(str(jsonl), "events-jsonl", ())
    events_jsonl.read_lines(str(jsonl), open_log, by_line)
    want = by_line.finish()
    assert got.counts["clicks_not_shown"] >= 1
    assert_same_log(got, want)
    a, b = evaluate(got, MEASURES, per_query=True), evaluate(want, MEASURES, per_query=True)
    assert a.summary == b.summary and a.meta["clicks"] == b.meta["clicks"]
    assert repr(a.per_query) == repr(b.per_query)
