"""A seeded fuzzer of every reader, through the command line: hostile and broken inputs must
end in exit 0 or 2 (1 where a command documents it), one bounded message, no traceback.

Each case takes a valid input of one reader (TREC qrels and runs, RAG queries and
results, topics, z-scores, check references, bench queries and replayed runs, click logs
in every layout, history databases), mutates it (byte flips, truncation, huge numbers,
deep nesting, invalid UTF-8, lone surrogates, long lines, NUL bytes, compressed variants,
damaged database cells, ...) and runs the command that reads it, in this process, with
its output captured. A case is a pure function of (seed, index), so a failure found
among thousands is replayed alone with ``--only INDEX``.

The cases run in a child process (``--child``) so that a segmentation fault is a
finding, not the end of the run: the parent restarts the child after the case that
killed it. Used by ``tests/test_fuzz.py`` (a few hundred cases in CI) and by hand:

    .venv/bin/python -m tests.support.fuzzing --cases 3000 --seed 1 --findings /tmp/fuzz-findings
"""

from __future__ import annotations

import argparse
import bz2
import contextlib
import gzip
import io
import json
import lzma
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "data"
STDERR_LIMIT = 4096   # bytes of stderr a failing input may produce (one message, a few lines)
DEEP = 100_000        # nesting depth of the deep-nesting mutation


# ---------------------------------------------------------------- valid inputs


def _write(path: Path, data) -> Path:
    path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
    return path


def _click_events(log: list[dict]) -> list[dict]:
    rows = []
    for i, imp in enumerate(log):
        rows += [{"session_id": f"s{i}", "query": imp["consulta"], "action": "impression", "doc_id": doc,
                  "position": p, "timestamp": 1_700_000_000 + i * 60} for p, doc in enumerate(imp["resultados"], 1)]
        rows += [{"session_id": f"s{i}", "query": imp["consulta"], "action": "click", "doc_id": doc,
                  "timestamp": 1_700_000_005 + i * 60} for doc in imp["clicks"]]
    return rows


def _expected_ids(query: dict) -> list[str]:
    return list(query.get("relevant_ids") or query.get("expected_modules") or query.get("qrels") or [])


def make_seeds(folder: Path) -> dict[str, Path]:
    """Valid inputs for every reader, written into ``folder``."""
    seeds = {
        "qrels": _write(folder / "qrels.txt", (DATA / "qrels.txt").read_bytes()),
        "run": _write(folder / "run.txt", (DATA / "run.txt").read_bytes()),
        "rag_queries": _write(folder / "queries.jsonl", (DATA / "rag" / "queries.jsonl").read_bytes()),
        "rag_results": _write(folder / "results.jsonl", (DATA / "rag" / "results.jsonl").read_bytes()),
        "bench_queries": _write(folder / "bench_queries.json", (DATA / "bench_queries.json").read_bytes()),
    }
    rag = [json.loads(line) for line in seeds["rag_queries"].read_text("utf-8").splitlines() if line.strip()]
    seeds["rag_queries_json"] = _write(folder / "queries.json", json.dumps(rag, indent=1))
    bench = json.loads(seeds["bench_queries"].read_text("utf-8"))
    seeds["bench_queries_jsonl"] = _write(folder / "bench_queries.jsonl",
                                          "".join(json.dumps(q) + "\n" for q in bench))
    seeds["bench_run"] = _write(folder / "bench_run.txt", "".join(
        f"{q['id']} Q0 {doc} {rank} {10 - rank} replay\n"
        for q in bench for rank, doc in enumerate(_expected_ids(q) + ["other-doc"], 1)))
    qids = ["q1", "q2", "q3", "q4", "q5"]
    seeds["topics_tsv"] = _write(folder / "topics.tsv", "qid\tcategory\tdifficulty\n" + "".join(
        f"{q}\t{'ab'[i % 2]}\t{'easy' if i < 2 else 'hard'}\n" for i, q in enumerate(qids)))
    seeds["topics_json"] = _write(folder / "topics.json", json.dumps(
        {q: {"category": "ab"[i % 2], "difficulty": "easy"} for i, q in enumerate(qids)}))
    seeds["topics_jsonl"] = _write(folder / "topics.jsonl", "".join(
        json.dumps({"qid": q, "category": "ab"[i % 2]}) + "\n" for i, q in enumerate(qids)))
    seeds["zscores"] = _write(folder / "zscores.txt", "".join(
        f"{q} {m} 0.{i + 3} 0.1{i}\n" for i, q in enumerate(qids) for m in ("map", "P_5")))
    seeds["reference_txt"] = _write(folder / "reference.txt",
                                    "measure qid value\nmap all 0.4907\nP_5 all 0.2667\nmap q1 0.7222\n")
    seeds["reference_json"] = _write(folder / "reference.json", json.dumps({
        "measures": ["map", "P_5"], "summary": {"map": 0.49074074074074076, "P_5": 0.26666666666666666},
        "per_query": {"q1": {"map": 0.7222222222222222, "P_5": 0.4}},
        "meta": {"options": {"relevance_level": 1, "complete": False}}}))
    log = json.loads((DATA / "clicks" / "log.json").read_text("utf-8"))
    seeds["clicks_json"] = _write(folder / "log.json", json.dumps(log, ensure_ascii=False, indent=1))
    seeds["clicks_jsonl"] = _write(folder / "log.jsonl", "".join(
        json.dumps(imp, ensure_ascii=False) + "\n" for imp in log))
    events = _click_events(log)
    seeds["events_jsonl"] = _write(folder / "events.jsonl", "".join(
        json.dumps(row, ensure_ascii=False) + "\n" for row in events))
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    table = pa.table({name: [row.get(name) for row in events]
                      for name in ("session_id", "query", "action", "doc_id", "position", "timestamp")})
    pacsv.write_csv(table, folder / "events.csv")
    pq.write_table(table, folder / "events.parquet")
    seeds["events_csv"] = folder / "events.csv"
    seeds["events_parquet"] = folder / "events.parquet"
    seeds["history"] = make_history(folder)
    return seeds


def make_history(folder: Path) -> Path:
    """A history with three executions (two of one name, tags, per-query values)."""
    db = folder / "history.sqlite"
    common = [str(DATA / "qrels.txt"), str(DATA / "run.txt"), "-m", "map", "-m", "P.5", "-m", "recip_rank",
              "--record", "--db", str(db)]
    for extra in (["--name", "bm25", "--at", "2025-01-28T09:30:00Z", "--tag", "model=bm25"],
                  ["--name", "bm25", "--at", "2025-02-01T10:00:00Z", "--note", "second"],
                  ["--name", "other", "--at", "2025-02-02T10:00:00Z"]):
        outcome = run_cli(common + extra)
        if outcome.code != 0:
            raise RuntimeError(f"could not record the seed history: {outcome.stderr}")
    return db


# ---------------------------------------------------------------- targets


@dataclass(frozen=True)
class Target:
    """A reader and the command line that reads it; ``{X}`` is the mutated file, ``{OUT}`` a fresh folder."""

    name: str
    seed: str
    args: tuple[str, ...]
    kind: str = "text"             # text | json | sqlite | parquet
    allowed: tuple[int, ...] = (0, 2)


def _targets(seeds: dict[str, Path]) -> list[Target]:
    s = {k: str(v) for k, v in seeds.items()}
    eval_run = ("-m", "map", "-m", "P.5", "-m", "ndcg_cut.10")
    history = [
        ("list",), ("list", "-o", "json"), ("report",), ("report", "--labels"), ("show", "1"), ("show", "2", "-q"),
        ("check", "--name", "bm25"), ("diff", "1", "2"), ("export",),
    ]
    targets = [
        Target("qrels", "qrels", ("{X}", s["run"], *eval_run, "-q")),
        Target("qrels-columnar", "qrels", ("{X}", s["run"], s["run"], *eval_run, "-o", "table")),
        Target("run", "run", (s["qrels"], "{X}", *eval_run, "-o", "json")),
        Target("run-stream", "run", (s["qrels"], "{X}", "--stream", *eval_run)),
        Target("run-columnar", "run", (s["qrels"], "{X}", s["run"], *eval_run, "-o", "csv")),
        Target("run-compare", "run", ("compare", s["qrels"], s["run"], "{X}", "-m", "map")),
        Target("rag-queries", "rag_queries", ("{X}", s["rag_results"], "-m", "recall.5", "-m", "recip_rank"), "json"),
        Target("rag-queries-json", "rag_queries_json", ("{X}", s["rag_results"], "-m", "ndcg_cut.5"), "json"),
        Target("rag-results", "rag_results", (s["rag_queries"], "{X}", "-m", "recall.5", "-q"), "json"),
        Target("topics-tsv", "topics_tsv", (s["qrels"], s["run"], "--group-by", "category", "--topics", "{X}")),
        Target("topics-json", "topics_json", (s["qrels"], s["run"], "--group-by", "category", "--topics", "{X}"),
               "json"),
        Target("topics-jsonl", "topics_jsonl", (s["qrels"], s["run"], "--group-by", "category", "--topics", "{X}"),
               "json"),
        Target("zscores", "zscores", (s["qrels"], s["run"], "-Z", "{X}", "-m", "map", "-m", "P.5")),
        Target("reference-txt", "reference_txt", ("check", "{X}", s["qrels"], s["run"]), allowed=(0, 1, 2)),
        Target("reference-json", "reference_json", ("check", "{X}", s["qrels"], s["run"], "--per-query"), "json",
               allowed=(0, 1, 2)),
        Target("bench-queries", "bench_queries", ("bench", "{X}", "--backend", s["bench_run"], "--out", "{OUT}"),
               "json", allowed=(0, 1, 2)),
        Target("bench-queries-jsonl", "bench_queries_jsonl",
               ("bench", "{X}", "--backend", s["bench_run"], "--out", "{OUT}"), "json", allowed=(0, 1, 2)),
        Target("bench-backend-run", "bench_run", ("bench", s["bench_queries"], "--backend", "{X}", "--out", "{OUT}"),
               allowed=(0, 1, 2)),
        Target("clicks-json", "clicks_json", ("clicks", "{X}", "--resamples", "20", "-q"), "json"),
        Target("clicks-jsonl", "clicks_jsonl", ("clicks", "{X}", "--resamples", "20", "--judgments", "{OUT}/j.qrels"),
               "json"),
        Target("events-jsonl", "events_jsonl", ("clicks", "{X}", "--resamples", "20", "-o", "json"), "json"),
        Target("events-csv", "events_csv", ("clicks", "{X}", "--resamples", "20", "--by", "session_id")),
        Target("events-parquet", "events_parquet", ("clicks", "{X}", "--resamples", "20"), "parquet"),
    ]
    for args in history:
        allowed = (0, 1, 2) if args[0] == "check" else (0, 2)
        targets.append(Target(f"history-{args[0]}", "history", ("history", *args, "--db", "{X}"), "sqlite", allowed))
    return targets


# ---------------------------------------------------------------- mutations


HUGE = ["9" * 5000, "-" + "9" * 5000, "1e999", "-1e999", "nan", "inf", "-inf", "1" + "0" * 400 + ".5",
        "9223372036854775808", "-9223372036854775809", "18446744073709551616", "0x1F", "1_000", "１２", "٣",
        "1e-400", "-0", "+7", ".", "-", "e5"]
BAD_UTF8 = [b"\xff", b"\xfe\xff", b"\xc3", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\x80\x80", b"\xe2\x82", b"\xc0\xaf"]
ODD_TEXT = ["\\ud800", "\\udfff", "\\u0000", "\\ud800\\udc00", "\u202e", "\ufeff", "\x1b[2J", "\r", "\x0b", "\u2028",
            "'", '"', "\\", "%s%n", "{0}", "\t\t", "  "]


def _positions(data: bytes, rng: random.Random, count: int = 1) -> list[int]:
    return [rng.randrange(len(data) + 1) for _ in range(count)]


def flip(data, rng):
    if not data:
        return b"\x00"
    out = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        i = rng.randrange(len(out))
        out[i] ^= 1 << rng.randrange(8)
    return bytes(out)


def random_bytes(data, rng):
    if not data:
        return bytes(rng.randrange(256) for _ in range(16))
    out = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        i = rng.randrange(len(out))
        out[i:i + 1] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
    return bytes(out)


def truncate(data, rng):
    return data[:rng.randrange(len(data) + 1)] if data else data


def huge_number(data, rng):
    import re

    numbers = list(re.finditer(rb"-?\d+(\.\d+)?", data))
    replacement = rng.choice(HUGE).encode()
    if not numbers:
        i = _positions(data, rng)[0]
        return data[:i] + replacement + data[i:]
    match = rng.choice(numbers)
    return data[:match.start()] + replacement + data[match.end():]


def deep_nesting(data, rng):
    depth = rng.choice([DEEP, 3000, 1001])
    opener, closer = rng.choice([(b"[", b"]"), (b'{"a":', b"}"), (b'[{"x":', b"}]")])
    nested = opener * depth + b"1" + closer * (depth if rng.random() < 0.7 else 0)
    choice = rng.random()
    if choice < 0.4:   # as a value after a key
        colons = [i for i in range(len(data)) if data[i:i + 1] == b":"]
        if colons:
            i = rng.choice(colons) + 1
            end = i
            while end < len(data) and data[end:end + 1] not in b",}\n":
                end += 1
            return data[:i] + nested + data[end:]
    if choice < 0.8:   # as a line of its own
        lines = data.split(b"\n")
        lines.insert(rng.randrange(len(lines) + 1), nested)
        return b"\n".join(lines)
    return nested


def invalid_utf8(data, rng):
    i = _positions(data, rng)[0]
    return data[:i] + rng.choice(BAD_UTF8) + data[i:]


def odd_text(data, rng):
    quotes = [i for i in range(len(data)) if data[i:i + 1] == b'"']
    i = rng.choice(quotes) + 1 if quotes and rng.random() < 0.8 else _positions(data, rng)[0]
    return data[:i] + rng.choice(ODD_TEXT).encode("utf-8", "surrogatepass") + data[i:]


def long_line(data, rng):
    i = _positions(data, rng)[0]
    size = rng.choice([200_000, 140_000, 70_000, 1_100_000])
    filler = rng.choice([b"x", b"9", b" ", b"\t", b'"', b"a,"]) * (size // 2)
    return data[:i] + filler + data[i:]


def nul(data, rng):
    i = _positions(data, rng)[0]
    return data[:i] + b"\0" * rng.randint(1, 3) + data[i:]


def bom(data, rng):
    return b"\xef\xbb\xbf" + data


def crlf(data, rng):
    return data.replace(b"\n", rng.choice([b"\r\n", b"\r", b"\n\n", b"\x85"]))


def lines_shuffle(data, rng):
    lines = data.split(b"\n")
    operation = rng.randrange(4)
    if operation == 0 and lines:
        del lines[rng.randrange(len(lines))]
    elif operation == 1 and lines:
        i = rng.randrange(len(lines))
        lines.insert(i, lines[i])
    elif operation == 2:
        rng.shuffle(lines)
    else:
        lines = [b" ".join(reversed(line.split())) if rng.random() < 0.3 else line for line in lines]
    return b"\n".join(lines)


def fields(data, rng):
    lines = data.split(b"\n")
    if not lines:
        return data
    i = rng.randrange(len(lines))
    parts = lines[i].split()
    operation = rng.randrange(4)
    if operation == 0 and parts:
        del parts[rng.randrange(len(parts))]
    elif operation == 1:
        parts.insert(rng.randrange(len(parts) + 1), rng.choice([b"x", b"1", b"-1", b"", b"#", b"Q0", b"nan"]))
    elif operation == 2 and parts:
        parts[rng.randrange(len(parts))] = rng.choice(HUGE).encode()
    else:
        parts = [parts[0]] * 9 if parts else parts
    lines[i] = rng.choice([b" ", b"\t", b",", b"  "]).join(parts)
    return b"\n".join(lines)


JSON_VALUES = [b"null", b"true", b"false", b"[]", b"{}", b'""', b"1e400", b"-1", b"1.5", b"[null]", b'{"":null}',
               b'"\\ud800"', b"[[]]", b"0", b'"' + b"y" * 150_000 + b'"', b"[" + b"1," * 50_000 + b"1]",
               b"NaN", b"Infinity", b"-Infinity", b'"\xff"']


def json_value(data, rng):
    """Replace a JSON value (after a ':' or inside a list) with one of another type."""
    starts = [i + 1 for i in range(len(data)) if data[i:i + 1] in (b":", b"[", b",")]
    if not starts:
        return data
    i = rng.choice(starts)
    while i < len(data) and data[i:i + 1] == b" ":
        i += 1
    end = i
    if data[i:i + 1] == b'"':
        end = data.find(b'"', i + 1)
        end = len(data) if end < 0 else end + 1
    else:
        while end < len(data) and data[end:end + 1] not in b",}]\n":
            end += 1
    return data[:i] + rng.choice(JSON_VALUES) + data[end:]


def empty(data, rng):
    return rng.choice([b"", b"\n", b" \n\t\n", b"#\n", b"[]", b"{}", b"null", b"\xef\xbb\xbf", b"[", b"{"])


def many_lines(data, rng):
    return data * rng.choice([50, 400])


TEXT_MUTATIONS = [flip, random_bytes, truncate, huge_number, deep_nesting, invalid_utf8, odd_text, long_line, nul, bom,
                  crlf, lines_shuffle, fields, json_value, empty, many_lines]
WEIGHTS = {"text": {json_value: 0.3, deep_nesting: 0.6},
           "json": {fields: 0.4, json_value: 3.0, deep_nesting: 1.5, odd_text: 2.0}}


def compressed(data: bytes, rng: random.Random) -> bytes:
    kind = rng.choice(["gzip", "bz2", "xz", "zstd", "gzip-concat"])
    if kind == "gzip":
        out = gzip.compress(data, mtime=0)
    elif kind == "gzip-concat":
        out = gzip.compress(data[:len(data) // 2], mtime=0) + gzip.compress(data[len(data) // 2:], mtime=0)
    elif kind == "bz2":
        out = bz2.compress(data)
    elif kind == "xz":
        out = lzma.compress(data)
    else:
        try:
            import zstandard
        except ImportError:
            return gzip.compress(data, mtime=0)
        out = zstandard.ZstdCompressor().compress(data)
    damage = rng.random()
    if damage < 0.3:
        out = out[:rng.randrange(len(out))]                     # truncated stream
    elif damage < 0.45:
        out = flip(out[:10], rng) + out[10:] if rng.random() < 0.2 else out[:10] + flip(out[10:], rng)
    elif damage < 0.55:
        out += bytes(rng.randrange(256) for _ in range(rng.randint(1, 40)))   # trailing garbage
    return out


def mutate_text(data: bytes, kind: str, rng: random.Random) -> tuple[bytes, list[str]]:
    weights = WEIGHTS.get(kind, {})
    chosen = rng.choices(TEXT_MUTATIONS, [weights.get(m, 1.0) for m in TEXT_MUTATIONS], k=rng.choice([1, 1, 2, 3]))
    names = []
    for mutation in chosen:
        data = mutation(data, rng)
        names.append(mutation.__name__)
    if rng.random() < 0.2:
        data = compressed(data, rng)
        names.append("compressed")
    return data, names


def mutate_parquet(data: bytes, rng: random.Random, folder: Path) -> tuple[bytes, list[str]]:
    """A damaged Parquet file (bytes) or a valid one holding hostile values."""
    if rng.random() < 0.5:
        mutation = rng.choice([flip, random_bytes, truncate])
        return mutation(data, rng), [mutation.__name__]
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pq.read_table(io.BytesIO(data))
    columns = {name: table.column(name).to_pylist() for name in table.column_names}
    name = rng.choice(list(columns))
    row = rng.randrange(len(columns[name]))
    value = rng.choice([None, "\ud800", "x" * 200_000, 2**62, -(2**62), 1e308, float("nan"), float("inf"), "",
                        "9" * 5000, b"\xff\xfe", True, [1, 2], {"a": 1}])
    names = [f"parquet-value:{name}={str(value)[:20]!r}"]
    column = columns[name]
    try:
        column[row] = value
        arrays = {k: pa.array(v) if k != name else pa.array(column) for k, v in columns.items()}
    except (pa.ArrowException, TypeError, ValueError, OverflowError, UnicodeEncodeError):
        if isinstance(value, str) and "\ud800" in value:
            return data, names + ["unwritable"]
        arrays = {k: pa.array([None if x is None else str(x) for x in v]) if k == name else pa.array(v)
                  for k, v in columns.items()}
        names.append("as-text")
    if rng.random() < 0.2:
        arrays.pop(rng.choice(list(arrays)))
        names.append("column-dropped")
    buffer = io.BytesIO()
    try:
        pq.write_table(pa.table(arrays), buffer)
    except (pa.ArrowException, UnicodeEncodeError) as exc:
        return data, names + [f"unwritable:{type(exc).__name__}"]
    return buffer.getvalue(), names


SQLITE_VALUES = [None, 0, -1, 2**63 - 1, "abc", "", "{", "[1,", '{"a": [', "null", "[]", '"x"', "1e999", "NaN",
                 "9" * 5000, "2025-13-45", "0999-06-01", "\ud800", "x" * 100_000, 1.5, float("nan"), b"\xff\x00",
                 "[" * 100_000, '{"k": ' * 50_000]


def mutate_sqlite(path: Path, rng: random.Random) -> list[str]:
    """Damage a history database in place: cells, schema version, tables, or its bytes."""
    choice = rng.random()
    if choice < 0.15:
        data = path.read_bytes()
        mutation = rng.choice([flip, random_bytes, truncate])
        path.write_bytes(mutation(data, rng))
        return [f"bytes:{mutation.__name__}"]
    names = []
    with contextlib.closing(sqlite3.connect(path)) as conn:
        conn.execute("PRAGMA foreign_keys=OFF")
        tables = [row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        for _ in range(rng.choice([1, 1, 2, 3])):
            try:
                names += _damage(conn, tables, rng)
            except sqlite3.DatabaseError as exc:   # a constraint: that damage cannot be written
                names.append(f"refused:{exc}")
            if not tables:
                break
        conn.commit()
    return names


def _damage(conn, tables: list[str], rng: random.Random) -> list[str]:
    """One damage to an open history database (``tables`` is kept up to date)."""
    operation = rng.random()
    if operation < 0.15:
        value = rng.choice([0, -1, 99, "abc", None, 1.5, 2**63 - 1])
        conn.execute("UPDATE evaltool_schema SET version = ?", (value,))
        return [f"schema-version={value!r}"]
    if operation < 0.2:
        table = rng.choice(tables)
        conn.execute(f'DROP TABLE "{table}"')
        tables.remove(table)
        return [f"drop-table:{table}"]
    if operation < 0.25:
        conn.execute("DELETE FROM evaltool_schema" if rng.random() < 0.5
                     else "INSERT INTO evaltool_schema VALUES (2)")
        return ["schema-rows"]
    table = rng.choice(tables)
    columns = [row[1] for row in conn.execute(f'PRAGMA table_info("{table}")')]
    rows = [row[0] for row in conn.execute(f'SELECT rowid FROM "{table}"')]
    if not rows or not columns:
        return []
    column = rng.choice(columns)
    value = rng.choice(SQLITE_VALUES)
    if isinstance(value, str):
        value = value.encode("utf-8", "surrogatepass").decode("utf-8", "replace") \
            if "\ud800" not in value else value.encode("utf-8", "surrogatepass")
    target = rng.choice(rows) if rng.random() < 0.8 else None
    where = "" if target is None else f" WHERE rowid = {target}"
    conn.execute(f'UPDATE "{table}" SET "{column}" = ?{where}', (value,))
    return [f"cell:{table}.{column}={str(value)[:24]!r}{'' if target else ' (all rows)'}"]


# ---------------------------------------------------------------- running one case


@dataclass
class Outcome:
    code: int | None
    stdout: bytes
    stderr: bytes
    exception: str | None = None
    seconds: float = 0.0


class _Captured(io.TextIOWrapper):
    def __init__(self):
        super().__init__(io.BytesIO(), encoding="utf-8", errors="backslashreplace", write_through=True)

    def isatty(self):
        return False

    def value(self) -> bytes:
        self.flush()
        return self.buffer.getvalue()


def run_cli(args: list[str], stdin: bytes = b"") -> Outcome:
    """``evaltool ARGS`` in this process, as the console script runs it; output captured."""
    from evaltool.cli.app import run

    saved = sys.stdin, sys.stdout, sys.stderr
    out, err = _Captured(), _Captured()
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin))
    sys.stdout, sys.stderr = out, err
    code, exception = None, None
    start = time.perf_counter()
    try:
        run(args)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException as exc:   # what the console script would print as a traceback
        exception = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved
    return Outcome(code, out.value(), err.value(), exception, time.perf_counter() - start)


def problems_of(outcome: Outcome, target: Target) -> list[str]:
    """What is wrong with an outcome: the promises of the command line on bad input."""
    found = []
    if outcome.exception:
        found.append("traceback: " + outcome.exception.strip().splitlines()[-1][:300])
    elif outcome.code not in target.allowed:
        found.append(f"exit {outcome.code}")
    if b"Traceback" in outcome.stderr:
        found.append("'Traceback' in stderr")
    if len(outcome.stderr) > STDERR_LIMIT:
        found.append(f"stderr of {len(outcome.stderr)} bytes")
    if outcome.code == 2 and not outcome.stderr.strip():
        found.append("exit 2 without a message")
    return found


def case(index: int, seed: int, seeds: dict[str, Path], targets: list[Target], work: Path, only_targets=None):
    """Build case ``index``: (target, mutations, command line)."""
    rng = random.Random(f"{seed}:{index}")
    pool = [t for t in targets if only_targets is None or t.name in only_targets]
    target = rng.choice(pool)
    source = seeds[target.seed]
    suffix = "".join(source.suffixes) or ".txt"
    path = work / f"case{index}{suffix}"
    out_dir = work / f"out{index}"
    if target.kind == "sqlite":
        shutil.copyfile(source, path)
        names = mutate_sqlite(path, rng)
    elif target.kind == "parquet":
        data, names = mutate_parquet(source.read_bytes(), rng, work)
        path.write_bytes(data)
    else:
        data, names = mutate_text(source.read_bytes(), target.kind, rng)
        path.write_bytes(data)
    args = [a.replace("{X}", str(path)).replace("{OUT}", str(out_dir)) for a in target.args]
    return target, names, args, path


# ---------------------------------------------------------------- child and parent


def child(seed: int, start: int, stop: int, work: Path, results: Path, only_targets) -> None:
    import faulthandler

    faulthandler.enable()
    os.chdir(work)
    os.environ.pop("EVALTOOL_DB", None)
    seeds = make_seeds(work)
    targets = _targets(seeds)
    with open(results, "a", encoding="utf-8") as log:
        for index in range(start, stop):
            target, names, args, path = case(index, seed, seeds, targets, work, only_targets)
            log.write(json.dumps({"index": index, "started": True, "target": target.name, "mutations": names}) + "\n")
            log.flush()
            outcome = run_cli(args)
            found = problems_of(outcome, target)
            record = {"index": index, "target": target.name, "mutations": names, "code": outcome.code,
                      "seconds": round(outcome.seconds, 3), "problems": found,
                      "stderr": outcome.stderr[-600:].decode("utf-8", "replace")}
            if outcome.exception:
                record["exception"] = outcome.exception[-3000:]
            log.write(json.dumps(record) + "\n")
            log.flush()
            if not found:
                with contextlib.suppress(OSError):
                    path.unlink()
                shutil.rmtree(work / f"out{index}", ignore_errors=True)


def _records(results: Path) -> list[dict]:
    if not results.exists():
        return []
    with open(results, encoding="utf-8") as lines:
        return [json.loads(line) for line in lines]


def fuzz(cases: int, seed: int = 0, start: int = 0, only_targets=None, findings: Path | None = None,
         timeout: float | None = None) -> list[dict]:
    """Run cases ``start .. start + cases`` in child processes; return the failures.

    A child that dies (a signal, an abort) leaves its case as a failure with the signal,
    and a new child goes on with the next case.
    """
    work = Path(tempfile.mkdtemp(prefix="evaltool-fuzz-"))
    results = work / "fuzz-log.jsonl"
    failures = []
    index, stop = start, start + cases
    try:
        while index < stop:
            command = [sys.executable, "-m", "tests.support.fuzzing", "--child", "--seed", str(seed), "--start", str(index),
                       "--stop", str(stop), "--work", str(work), "--results", str(results)]
            if only_targets:
                command += ["--targets", ",".join(only_targets)]
            child_process = subprocess.run(command, cwd=ROOT, capture_output=True, timeout=timeout)
            records = _records(results)
            done = {r["index"] for r in records if "started" not in r}
            last_started = max((r["index"] for r in records if "started" in r), default=index - 1)
            if child_process.returncode != 0:
                if last_started in done or last_started < index:
                    raise RuntimeError(f"the fuzzing child failed outside a case (exit {child_process.returncode}):\n"
                                       + child_process.stderr.decode("utf-8", "replace")[-3000:])
                started = next(r for r in records if r.get("started") and r["index"] == last_started)
                crash = {"index": last_started, "target": started["target"], "mutations": started["mutations"],
                         "code": child_process.returncode, "problems": [f"process died: exit {child_process.returncode}"],
                         "stderr": child_process.stderr.decode("utf-8", "replace")[-1500:]}
                with open(results, "a", encoding="utf-8") as log:
                    log.write(json.dumps(crash) + "\n")
                index = last_started + 1
            else:
                index = stop
        records = _records(results)
        failures = [r for r in records if r.get("problems")]
        if findings is not None:
            findings.mkdir(parents=True, exist_ok=True)
            for failure in failures:
                for leftover in work.glob(f"case{failure['index']}.*"):
                    shutil.copy(leftover, findings / leftover.name)
            shutil.copy(results, findings / f"results-{seed}-{start}.jsonl")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return failures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=500)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--start", type=int, default=0)
    parser.add_argument("--stop", type=int)
    parser.add_argument("--targets", default=None, help="comma-separated target names (default: all)")
    parser.add_argument("--findings", type=Path, default=None, help="copy failing inputs and the log here")
    parser.add_argument("--only", type=int, default=None, help="run this one case and print its outcome")
    parser.add_argument("--child", action="store_true")
    parser.add_argument("--work", type=Path)
    parser.add_argument("--results", type=Path)
    options = parser.parse_args()
    only_targets = options.targets.split(",") if options.targets else None
    if options.child:
        child(options.seed, options.start, options.stop, options.work, options.results, only_targets)
        return
    if options.only is not None:
        work = Path(tempfile.mkdtemp(prefix="evaltool-fuzz-"))
        os.chdir(work)
        seeds = make_seeds(work)
        target, names, args, path = case(options.only, options.seed, seeds, _targets(seeds), work, only_targets)
        print("target:", target.name, "mutations:", names, "\nevaltool", " ".join(a[:200] for a in args))
        outcome = run_cli(args)
        print("exit", outcome.code, f"{outcome.seconds:.2f}s", "problems:", problems_of(outcome, target))
        print("stderr:", outcome.stderr[:3000].decode("utf-8", "replace"))
        if outcome.exception:
            print(outcome.exception)
        print("input kept in", path)
        return
    started = time.perf_counter()
    failures = fuzz(options.cases, options.seed, options.start, only_targets, options.findings)
    by_kind: dict[str, list[int]] = {}
    for failure in failures:
        for problem in failure["problems"]:
            key = f"{failure['target']}: {problem[:160]}"
            by_kind.setdefault(key, []).append(failure["index"])
    for key, indices in sorted(by_kind.items(), key=lambda item: -len(item[1])):
        print(f"{len(indices):5d}  {key}   e.g. --only {indices[0]}")
    print(f"{len(failures)} failing of {options.cases} cases (seed {options.seed}) in "
          f"{time.perf_counter() - started:.0f}s")


if __name__ == "__main__":
    main()
