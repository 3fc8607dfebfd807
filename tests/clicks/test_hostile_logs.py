"""Broken and hostile click logs: one message naming the file (and the line where there is one),
exit 2, never a traceback and never the "interrupted" exit (130) that a truncated gzip gave.
Found by the fuzzer (tests/support/fuzzing.py)."""

from __future__ import annotations

import gzip
import json

import pytest

from tests.support.helpers import assert_fails, invoke, write

IMPRESSIONS = [{"consulta": "a", "resultados": ["d1", "d2"], "clicks": ["d1"]},
               {"consulta": "b", "resultados": ["d3"], "clicks": []}]
EVENTS = [{"session_id": "s1", "query": "a", "action": "impression", "doc_id": "d1", "position": 1},
          {"session_id": "s1", "query": "a", "action": "impression", "doc_id": "d2", "position": 2},
          {"session_id": "s1", "query": "a", "action": "click", "doc_id": "d1"}]


def _jsonl(rows) -> str:
    return "".join(json.dumps(row) + "\n" for row in rows)


def _csv(rows) -> str:
    names = ["session_id", "query", "action", "doc_id", "position"]
    return ",".join(names) + "\n" + "".join(",".join(str(row.get(n, "")) for n in names) + "\n" for row in rows)


def _clicks(log, *more):
    return invoke("clicks", log, "-m", "ctr", "--resamples", "10", *more)


@pytest.mark.parametrize("layout", ["json", "jsonl", "events.jsonl", "events.csv"])
def test_a_truncated_gzip_log_is_a_broken_stream_not_an_interruption(tmp_path, layout):
    text = {"json": json.dumps(IMPRESSIONS * 50), "jsonl": _jsonl(IMPRESSIONS * 50),
            "events.jsonl": _jsonl(EVENTS * 50), "events.csv": _csv(EVENTS * 50)}[layout]
    data = gzip.compress(text.encode())
    log = write(tmp_path / f"log.{layout}.gz", data[:len(data) * 2 // 3])
    assert_fails(_clicks(log), log, "expected a readable", "Compressed file ended before the end-of-stream marker")
    damaged = bytearray(data)
    damaged[len(data) // 2] ^= 0xFF
    log = write(tmp_path / f"damaged.{layout}.gz", bytes(damaged))
    assert_fails(_clicks(log), log, "expected a readable")


@pytest.mark.parametrize("position", ["9" * 5000, 2**40, "99999999999", "٣"])
def test_positions_beyond_what_is_stored(tmp_path, position):
    rows = [*EVENTS[:1], dict(EVENTS[1], position=position), EVENTS[2]]
    text = _jsonl(rows)
    if position == "9" * 5000:   # a JSON number of 5000 digits, not a text
        text = text.replace(json.dumps(position), position)
    log = write(tmp_path / "events.jsonl", text)
    message = assert_fails(_clicks(log), f"{log}:2")
    assert ("a position that is a whole number of 1 or more" in message
            or "a number of more than 4300 digits" in message), message
    assert len(message) < 600


def test_invalid_utf8_in_a_jsonl_log_names_its_line(tmp_path):
    for rows, name in ((EVENTS, "events.jsonl"), (IMPRESSIONS, "log.jsonl")):
        data = _jsonl(rows).encode().replace(b'"d2"', b'"d\xff2"', 1)
        log = write(tmp_path / name, data)
        assert_fails(_clicks(log, "--judgments", tmp_path / "j.qrels"), f"{log}:{2 if rows is EVENTS else 1}",
                     "expected UTF-8 text (invalid start byte at byte")
    log = write(tmp_path / "log.json", json.dumps(IMPRESSIONS, indent=1).encode().replace(b'"d3"', b'"d\xed\xa0\x803"'))
    assert_fails(_clicks(log), f"{log}:", "expected UTF-8 text")


@pytest.mark.parametrize("name, text", [
    ("log.jsonl", _jsonl(IMPRESSIONS).replace('"d2"', '"d\\ud800"')),
    ("log.json", json.dumps(IMPRESSIONS, indent=1).replace('"d3"', '"\\udfff"')),
    ("events.jsonl", _jsonl(EVENTS).replace('"query": "a"', '"query": "\\ud800a"', 1)),
])
def test_half_a_surrogate_pair_names_its_line(tmp_path, name, text):
    log = write(tmp_path / name, text)
    assert_fails(_clicks(log), log, "half of a surrogate pair")
    whole = write(tmp_path / f"whole-{name}", text.replace("\\ud800", "\\ud83d\\ude00").replace("\\udfff", "x"))
    assert _clicks(whole).exit_code == 0


def test_a_csv_field_over_128_kb(tmp_path):
    big = "x" * 200_000
    log = write(tmp_path / "events.csv", _csv([*EVENTS[:2], dict(EVENTS[2], query=big), dict(EVENTS[2], query=big)]))
    result = _clicks(log, "-q")
    assert result.exit_code == 0, result.stderr
    broken = write(tmp_path / "broken.csv", _csv([dict(EVENTS[0], query=big), *EVENTS[1:]]) + "s1,a,click\n")
    assert_fails(_clicks(broken), broken, "comma-separated fields as in the header")
    header = write(tmp_path / "header.csv", 'session_id,query\r,"action\n' + _csv(EVENTS).split("\n", 1)[1])
    assert_fails(_clicks(header), f"{header}:1", "a header line")


def test_a_damaged_parquet_log(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "events.parquet"
    pq.write_table(pa.table({k: [row.get(k) for row in EVENTS * 200] for k in EVENTS[0]}), path)
    data = bytearray(path.read_bytes())
    for offset in range(len(data) // 4, len(data) // 2):
        data[offset] ^= 0x55
    log = write(tmp_path / "damaged.parquet", bytes(data))
    assert_fails(_clicks(log), log, "a readable Parquet file")


def test_integer_timestamps_beyond_two_to_the_53(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [dict(row, timestamp=2**62 + i) for i, row in enumerate(EVENTS)]
    pq.write_table(pa.table({k: [row.get(k) for row in rows] for k in rows[0]}), tmp_path / "events.parquet")
    result = _clicks(tmp_path / "events.parquet")
    assert result.exit_code == 0, result.stderr
