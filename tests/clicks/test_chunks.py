"""Click logs read in pieces (issue 13, bounded memory): Parquet row groups and record batches,
JSONL blocks gathered into batches, rows kept in fixed-size blocks, the id hash table growing.

The pieces are made tiny so that impressions straddle every kind of boundary; the values must
be those of the seed's MRR function and of the generated lists themselves.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from evaltool.io.clicks import buffers, events, events_jsonl
from evaltool.clicks import evaluate, read_click_log
from tests.support.clicklogs import MEASURES, generated_log, interleaved_rows
from tests.support.helpers import calcular_mrr_con_clicks

@pytest.fixture
def tiny_pieces(monkeypatch):
    monkeypatch.setattr(events, "TABLE_BATCH_ROWS", 50)
    monkeypatch.setattr(events_jsonl, "JSON_BLOCK_BYTES", 1024)
    monkeypatch.setattr(buffers.Blocks, "BLOCK", 7)

    def no_line_reader(*args):
        raise AssertionError("the Arrow JSON reader failed and the line reader took over")

    monkeypatch.setattr(events_jsonl, "read_lines", no_line_reader)


@pytest.mark.parametrize("layout", ["events-parquet", "events-jsonl"])
def test_impressions_straddling_batches_blocks_and_row_groups(tmp_path, tiny_pieces, layout):
    log = generated_log()
    rows = interleaved_rows(log)
    if layout == "events-parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        path = tmp_path / "events.parquet"
        table = pa.table({name: [row.get(name) for row in rows]
                          for name in ("session_id", "query", "action", "doc_id", "position")})
        pq.write_table(table, path, row_group_size=97)          # row groups cut across batches of 50
        assert pq.ParquetFile(path).num_row_groups > 10
    else:
        path = tmp_path / "events.jsonl"
        path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")

    clicks = read_click_log(str(path))
    assert clicks.format == layout
    assert len(clicks.doc_ids) > 2048
    # every impression's shown list and its clicks (each document once, in log order), id for id
    shown = clicks.doc_ids.take(clicks.shown_doc).to_pylist()
    clicked = clicks.doc_ids.take(clicks.click_doc).to_pylist()
    for i, imp in enumerate(log):
        assert shown[clicks.shown_offsets[i]:clicks.shown_offsets[i + 1]] == imp["resultados"]
        assert clicked[clicks.click_offsets[i]:clicks.click_offsets[i + 1]] == list(dict.fromkeys(imp["clicks"]))
    assert clicks.counts["events"] == len(rows)
    assert clicks.counts["repeated_clicks"] == sum(len(imp["clicks"]) - len(set(imp["clicks"])) for imp in log)

    result = evaluate(clicks, MEASURES, per_query=True)
    assert result.summary["click_mrr"] == pytest.approx(calcular_mrr_con_clicks(log), abs=1e-12)
    reference = evaluate(log, MEASURES, per_query=True)             # the impression-object reader
    assert result.summary == pytest.approx(reference.summary)
    assert result.per_query.keys() == reference.per_query.keys()
    for query, values in reference.per_query.items():
        assert result.per_query[query] == pytest.approx(values, nan_ok=True)


def test_blocks_join_in_order_across_block_edges():
    column = buffers.Blocks(np.int32)
    column.BLOCK = 4
    pieces = [np.arange(0, 3), np.arange(3, 3), np.arange(3, 12), np.arange(12, 13)]
    for piece in pieces:
        column.extend(piece)
    assert column.release().tolist() == list(range(13))
    assert column.release().tolist() == []


def test_narrow_blocks_widen_when_a_value_does_not_fit():
    column = buffers.Blocks(np.int32, narrow=np.uint8)
    column.BLOCK = 4
    for piece in ([1, 2, 3], [255, 1, 2], [300, 7], [9], [70000, 5, 6, 2, 1]):
        column.extend(np.array(piece, np.int32))
    assert [block.dtype for block in column.blocks] == [np.uint8, np.int32, np.int32, np.int32]
    assert column.release().tolist() == [1, 2, 3, 255, 1, 2, 300, 7, 9, 70000, 5, 6, 2, 1]
