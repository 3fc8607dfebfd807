"""Reading a click log imports no pandas: pyarrow's ``pa.array`` and ``pa.scalar`` (and so every
compute call handed a Python value) import it, a third of a second, to ask whether they were
handed a pandas object; the click readers build their Arrow values from buffers instead."""

from __future__ import annotations

import json
import subprocess
import sys

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

ROWS = [
    {"session_id": "s1", "query": "q", "action": "impression", "doc_id": "d1", "position": 1},
    {"session_id": "s1", "query": "q", "action": "impression", "doc_id": "a-long-document-id", "position": 2},
    {"session_id": "s1", "query": "q", "action": "impression", "doc_id": " ", "position": 3},
    {"session_id": "s1", "query": "q", "action": "click", "doc_id": "a-long-document-id"},
    {"session_id": "s1", "query": "q", "action": "click", "position": "1"},
]


@pytest.mark.parametrize("layout", ["parquet", "jsonl", "csv"])
def test_reading_an_events_table_imports_no_pandas(tmp_path, layout):
    rows = [dict(row, doc_id="d3") if row["doc_id" if "doc_id" in row else "action"] == " " else row for row in ROWS]
    path = tmp_path / f"events.{layout}"
    names = ["session_id", "query", "action", "doc_id", "position"]
    if layout == "parquet":
        pq.write_table(pa.table({n: [None if r.get(n) is None else str(r.get(n)) for r in rows] for n in names}), path)
    elif layout == "jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    else:
        path.write_text(",".join(names) + "\n" + "".join(",".join(str(r.get(n, "")) for n in names) + "\n" for r in rows))
    code = (
        "import sys\n"
        "from evaltool.clicks import evaluate\n"
        f"result = evaluate({str(path)!r}, ['click_mrr', 'ctr'])\n"
        "print(result.summary['click_mrr'], 'pandas' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["0.5", "False"]
