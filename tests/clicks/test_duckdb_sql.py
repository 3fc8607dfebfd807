"""The harness's SQL baseline (benchmarks/clicks.py) computes evaltool's click metrics, value for value.

``make bench`` times ``evaltool clicks`` against the same three metrics written as one DuckDB
query; the ratio means something only if the query computes what evaltool computes. Here
both run on events tables with every decided edge case of ``evaltool.io.clicks`` (repeated
clicks, clicks on documents not shown, a position given twice, a document shown twice,
impressions without clicks, rows out of order, clicks before their impression rows, a
session with several queries, results below position 10, a click key without impression
rows), as Parquet and as JSONL, and must agree exactly (both sum with an exact or
compensated sum).
"""

from __future__ import annotations

import functools
import importlib.util
import json
import random
import sys
from pathlib import Path

import duckdb
import pytest

from evaltool.clicks import evaluate

ROOT = Path(__file__).resolve().parents[2]


@functools.cache
def _benchmarks_clicks():
    spec = importlib.util.spec_from_file_location("bench_clicks", ROOT / "benchmarks" / "clicks.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def _row(session, query, action, doc, position=None):
    return {"session_id": session, "query_id": query, "action": action, "doc_id": doc, "position": position,
            "timestamp": 1.0}


def tricky_rows() -> list[dict]:
    """Hand-made impressions, one per edge case (values worked out in test_hand_values)."""
    rows = []
    # s1/q1: clicks d3 (rank 3) then d1 (rank 1): log-order first click rank 3; d3 clicked twice
    rows += [_row("s1", "q1", "impression", f"d{p}", p) for p in (1, 2, 3, 4)]
    rows += [_row("s1", "q1", "click", "d3"), _row("s1", "q1", "click", "d1"), _row("s1", "q1", "click", "d3")]
    # s1/q2: the same session, another query: no click
    rows += [_row("s1", "q2", "impression", f"e{p}", p) for p in (1, 2)]
    # s2/q1: a click on a document not shown, then on d9, shown at positions 2 and 5 (rank 2);
    # position 2 given twice (the first document in log order stays)
    rows += [_row("s2", "q1", "click", "zz"), _row("s2", "q1", "impression", "d9", 2),
             _row("s2", "q1", "impression", "d8", 1), _row("s2", "q1", "impression", "dx", 2),
             _row("s2", "q1", "impression", "d9", 5), _row("s2", "q1", "click", "d9")]
    # s3/q3: twelve results, one click at rank 12: ctr@10 counts no click out of ten shown
    rows += [_row("s3", "q3", "impression", f"f{p}", p) for p in range(12, 0, -1)]
    rows += [_row("s3", "q3", "click", "f12")]
    # s4/q3: results only below position 10: undefined for ctr@10; a click at rank 11
    rows += [_row("s4", "q3", "impression", "g11", 11), _row("s4", "q3", "impression", "g12", 12),
             _row("s4", "q3", "click", "g11")]
    # s5/q4: click rows only (no impression rows): enters no metric
    rows += [_row("s5", "q4", "click", "h1")]
    return rows


def random_rows(seed: int) -> list[dict]:
    """Many small impressions from few documents, shuffled: repeats, duplicates and strays by chance."""
    rng = random.Random(seed)
    rows = []
    for i in range(300):
        session, query = f"s{rng.randrange(120)}", f"q{rng.randrange(15)}"
        depth = rng.randint(1, 14)
        for p in range(1, depth + 1):
            rows.append(_row(session, query, "impression", f"d{rng.randrange(25)}", rng.choice([p, p, p, 1])))
        for _ in range(rng.randint(0, 4)):
            rows.append(_row(session, query, "click", f"d{rng.randrange(30)}"))
    rng.shuffle(rows)
    return rows


def _write(folder: Path, rows: list[dict]) -> dict[str, Path]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    jsonl, parquet = folder / "events.jsonl", folder / "events.parquet"
    jsonl.write_text("".join(json.dumps({k: v for k, v in row.items() if v is not None}) + "\n" for row in rows))
    columns = {name: [row[name] for row in rows] for name in rows[0]}
    pq.write_table(pa.table(columns), parquet, row_group_size=64)
    return {"jsonl": jsonl, "parquet": parquet}


def _duckdb_values(path: Path, layout: str) -> dict:
    sql = _benchmarks_clicks().duckdb_sql(str(path), layout)
    cursor = duckdb.connect().execute(sql)
    names = [column[0] for column in cursor.description]
    return dict(zip(names, cursor.fetchall()[0]))


MEASURES = ["click_mrr", "ctr", "ctr@10"]


@pytest.mark.parametrize("layout", ["parquet", "jsonl"])
@pytest.mark.parametrize("case", ["tricky", "random-1", "random-2"])
def test_duckdb_query_gives_evaltools_values(tmp_path, case, layout):
    rows = tricky_rows() if case == "tricky" else random_rows(int(case.split("-")[1]))
    path = _write(tmp_path, rows)[layout]
    mine = evaluate(str(path), MEASURES).summary
    assert _duckdb_values(path, layout) == mine


def test_hand_values(tmp_path):
    """The tricky log's values by hand: s1/q1 (rr 1/3, ctr 2/4), s1/q2 (0, 0), s2/q1 (shown d8, d9, d9
    at 1, 2, 5: rr 1/2, ctr 1/3), s3/q3 (rr 1/12, ctr 1/12, ctr@10 0/10), s4/q3 (rr 1/11, ctr 1/2,
    ctr@10 undefined); s5/q4 has no impression rows."""
    path = _write(tmp_path, tricky_rows())["parquet"]
    expected = {
        "click_mrr": (1 / 3 + 0 + 1 / 2 + 1 / 12 + 1 / 11) / 5,
        "ctr": (2 / 4 + 0 + 1 / 3 + 1 / 12 + 1 / 2) / 5,
        "ctr@10": (2 / 4 + 0 + 1 / 3 + 0) / 4,
    }
    for values in (evaluate(str(path), MEASURES).summary, _duckdb_values(path, "parquet")):
        assert values == pytest.approx(expected, rel=1e-15)
