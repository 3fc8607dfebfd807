"""A suite's content: its queries with their ground truth, as read from a queries file and as stored.

Separate from :mod:`evaltool.history.suites` (the suites' life in the history) so that the schema
upgrade that reads version-2 suites' files in (:mod:`evaltool.history.migrations`) needs neither the
history store nor the query helpers: data flows one way, files -> content -> history.

A queries file is a benchmark queries file (:mod:`evaltool.bench.queries`: a JSON list, JSONL) or a
CSV with a header row, validated by the same rules, every problem with its line.

>>> [(q.query_id, q.judgments) for q in queries_from_objects([{"id": "q1", "query": "flat tyre",
...                                                           "qrels": {"bike-puncture": 2}}])]
[('q1', {'bike-puncture': 2})]
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
from dataclasses import asdict, dataclass, field
from typing import Any

from evaltool.errors import HistoryError

MAX_QUERIES = 10_000  # per suite: a controlled test is read, edited and shown whole

_LIST_SEPARATOR = re.compile(r"[\s;]+")


@dataclass
class SuiteQuery:
    """One query of a suite: what the runner sends and the ground truth it is scored against."""

    query_id: str
    text: str
    category: str | None = None
    difficulty: str | None = None
    expected_field: str = "relevant_ids"  # how the file gave the ground truth: relevant_ids | expected_modules | qrels
    judgments: dict[str, int] = field(default_factory=dict)  # doc id -> grade, in the order given
    fields: dict = field(default_factory=dict)  # every other field (version, metadata)

    def to_dict(self) -> dict:
        return asdict(self)

    def to_bench(self) -> dict:
        """The query as an object of a benchmark queries file."""
        out: dict[str, Any] = {"id": self.query_id, "query": self.text}
        for name in ("category", "difficulty"):
            if getattr(self, name) is not None:
                out[name] = getattr(self, name)
        out[self.expected_field] = dict(self.judgments) if self.expected_field == "qrels" else list(self.judgments)
        out.update(self.fields)
        return out


def _query(bench) -> SuiteQuery:
    known = {"category", "difficulty"}
    return SuiteQuery(
        bench.qid,
        bench.text,
        bench.category,
        bench.difficulty,
        bench.expected_field,
        dict(bench.judgments),
        {
            **({"version": bench.version} if bench.version is not None else {}),
            **{k: v for k, v in bench.fields.items() if k not in known},
        },
    )


def check_queries(where: str, entries) -> list[SuiteQuery]:
    """Validate (line, object) entries as a benchmark file's queries (every problem with its line)."""
    from evaltool.bench.queries import check_entries

    queries = [_query(q) for q in check_entries(where, list(entries))]
    if len(queries) > MAX_QUERIES:
        raise HistoryError(f"{where}: {len(queries)} queries; a suite holds at most {MAX_QUERIES}")
    return queries


def _csv_entries(where: str, text: str) -> list[tuple[int, dict]]:
    """The rows of a queries CSV as (line, object): a header row naming the columns (``id``, ``query``,
    ``relevant_ids`` or ``expected_modules`` as ids separated by spaces or ``;``, ``qrels`` as
    ``id:grade`` pairs, ``category``, ``difficulty``, anything else as metadata); empty cells are left out."""
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader)
    except StopIteration:
        return []
    except csv.Error as exc:
        raise HistoryError(f"{where}:1: not CSV ({exc})") from None
    header = [name.strip().lstrip("\ufeff") for name in header]
    entries = []
    try:
        for row in reader:
            line = reader.line_num
            if not any(cell.strip() for cell in row):
                continue
            if len(row) > len(header):
                raise HistoryError(
                    f"{where}:{line}: {len(row)} cells, the header names {len(header)}: {','.join(row)[:200]!r}"
                )
            obj: dict = {}
            for name, cell in zip(header, row):
                cell = cell.strip()
                if not cell:
                    continue
                if name in ("relevant_ids", "expected_modules"):
                    obj[name] = [part for part in _LIST_SEPARATOR.split(cell) if part]
                elif name == "qrels":
                    obj[name] = _csv_grades(where, line, cell)
                else:
                    obj[name] = cell
            entries.append((line, obj))
    except csv.Error as exc:
        raise HistoryError(f"{where}:{reader.line_num}: not CSV ({exc})") from None
    return entries


def _csv_grades(where: str, line: int, cell: str) -> dict[str, int]:
    grades = {}
    for part in _LIST_SEPARATOR.split(cell):
        if not part:
            continue
        doc, sep, grade = part.rpartition(":")
        if not sep or not doc or not re.fullmatch(r"-?\d+", grade):
            raise HistoryError(
                f"{where}:{line}: qrels cell {cell[:200]!r}: expected id:grade pairs such as 'doc-1:2 doc-7:1'"
            )
        grades[doc] = int(grade)
    return grades


def parse_queries_file(where: str, data: bytes) -> list[SuiteQuery]:
    """The queries of a file's bytes: CSV when ``where`` ends in ``.csv``, else JSON or JSONL."""
    if where.lower().endswith(".csv"):
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            line = data[: exc.start].count(b"\n") + 1
            raise HistoryError(f"{where}:{line}: not UTF-8 text (byte 0x{data[exc.start]:02x})") from None
        return check_queries(where, _csv_entries(where, text))
    from evaltool.io.jsonl import query_entries
    from evaltool.io.kinds import sniff

    _, entries = query_entries(where, data, sniff(data, "judgments"), objects_only=False)
    return check_queries(where, entries)


def read_queries_file(path) -> list[SuiteQuery]:
    """The queries of a file (JSON, JSONL, CSV; compressed or not)."""
    from evaltool.io.common import read_bytes

    name, data = read_bytes(os.fspath(path))
    return parse_queries_file(name, data)


def queries_from_objects(objects, where: str = "queries") -> list[SuiteQuery]:
    """Queries from objects of a queries file (dicts), numbered from 1 in messages."""
    return check_queries(where, list(enumerate(objects, 1)))


def write_version(conn, name: str, version: int, queries: list[SuiteQuery], at: str, author, change: dict):
    """Store ``queries`` as version ``version`` of suite ``name`` (made at ``at`` by ``author``; ``change`` says
    what changed, as the suite's history shows it), on the open transaction ``conn``."""
    from evaltool.history import schema

    conn.execute(
        schema.suite_versions.insert().values(
            suite=name, version=version, created_at=at, author=author, change=json.dumps(change)[:2000]
        )
    )
    if queries:
        conn.execute(
            schema.suite_queries.insert(),
            [
                {
                    "suite": name,
                    "version": version,
                    "position": i,
                    "query_id": q.query_id,
                    "text": q.text,
                    "category": q.category,
                    "difficulty": q.difficulty,
                    "expected_field": q.expected_field,
                    "judgments": json.dumps(q.judgments),
                    "fields": json.dumps(q.fields, sort_keys=True),
                }
                for i, q in enumerate(queries)
            ],
        )
