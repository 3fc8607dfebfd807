"""Topics files: fields per query id (category, difficulty, ...), for grouping queries.

A topics file maps query ids to fields, in one of three layouts:

* TSV with a header line; the query id column is named ``qid``, ``query_id``, ``topic``
  or ``id`` (else it is the first column); ``#`` lines are comments.
* JSON: ``{"q1": {"category": "a", ...}, ...}`` or ``[{"qid": "q1", "category": "a"}, ...]``.
* JSONL: one object per line with a ``qid`` (or ``query_id``, ``topic``, ``id``) key.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass

from evaltool.errors import EvaltoolError, InputError, ParseError
from evaltool.io import jsontext

ID_FIELDS = ("qid", "query_id", "topic", "id")


@dataclass
class Topics:
    """Fields of each query id, in the file's order."""

    path: str
    fields: list[str]
    rows: dict[str, dict[str, str]]

    def check_field(self, field: str) -> None:
        if field not in self.fields:
            raise InputError(
                f"{self.path}: no field {field!r} to group by; the file has "
                f"{', '.join(repr(f) for f in self.fields) or 'none'}"
            )


def _text(value) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def _id_field(keys) -> str | None:
    lowered = {k.lower(): k for k in keys}
    return next((lowered[name] for name in ID_FIELDS if name in lowered), None)


def _from_objects(path: str, objects, line_of) -> Topics:
    rows: dict[str, dict[str, str]] = {}
    fields: list[str] = []
    for i, obj in enumerate(objects):
        if not isinstance(obj, dict):
            raise ParseError(path, line_of(i), None, "a JSON object of fields for each query")
        key = _id_field(obj)
        if key is None:
            raise ParseError(path, line_of(i), json.dumps(obj)[:80], f"a query id field ({', '.join(ID_FIELDS)})")
        _add(path, rows, fields, _text(obj[key]), {k: v for k, v in obj.items() if k != key}, line_of(i))
    return Topics(path, fields, rows)


def _add(path, rows, fields, qid, values: dict, line) -> None:
    if qid in rows:
        raise ParseError(path, line, qid, "each query id once")
    rows[qid] = {k: _text(v) for k, v in values.items() if v is not None}
    for name in values:
        if name not in fields:
            fields.append(name)


def _read_json(path: str, text: str) -> Topics:
    try:
        data = jsontext.loads(text)
    except json.JSONDecodeError:
        return _read_jsonl(path, text)
    if isinstance(data, list):
        return _from_objects(path, data, lambda i: None)
    if isinstance(data, dict) and _id_field(data) is None:
        rows: dict[str, dict[str, str]] = {}
        fields: list[str] = []
        for qid, values in data.items():
            if not isinstance(values, dict):
                raise ParseError(
                    path, None, f"{qid}: {json.dumps(values)[:60]}", "an object of fields for each query id"
                )
            _add(path, rows, fields, qid, values, None)
        return Topics(path, fields, rows)
    return _read_jsonl(path, text)


def _read_jsonl(path: str, text: str) -> Topics:
    objects, lines = [], []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            objects.append(jsontext.loads(line))
        except json.JSONDecodeError as exc:
            raise ParseError(path, number, line[:80], f"a JSON object ({exc.msg})") from None
        lines.append(number)
    return _from_objects(path, objects, lambda i: lines[i])


def _read_tsv(path: str, text: str) -> Topics:
    header = None
    rows: dict[str, dict[str, str]] = {}
    fields: list[str] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        cells = [c.strip() for c in line.rstrip("\r").split("\t")]
        if header is None:
            header = cells
            if len(set(header)) != len(header) or not all(header):
                raise ParseError(path, number, line, "a header line of distinct, non-empty tab-separated names")
            key = header.index(_id_field(header)) if _id_field(header) else 0
            fields = [h for i, h in enumerate(header) if i != key]
            continue
        if len(cells) != len(header):
            raise ParseError(path, number, line, f"{len(header)} tab-separated fields as in the header")
        values = {h: c for i, (h, c) in enumerate(zip(header, cells)) if i != key and c != ""}
        _add(path, rows, [], cells[key], values, number)
    if header is None:
        raise ParseError(path, None, None, "a header line and one line per query")
    return Topics(path, fields, rows)


def topics_from_mapping(rows, path: str = "<topics>") -> Topics:
    """``{qid: {field: value}}`` as Topics (values that are not text become JSON text)."""
    fields: list[str] = []
    table: dict[str, dict[str, str]] = {}
    for qid, values in rows.items():
        if not isinstance(values, dict):
            raise InputError(f"{path}: the fields of query {qid!r} must be a mapping, not {type(values).__name__}")
        _add(path, table, fields, str(qid), values, None)
    return Topics(path, fields, table)


def topics_of_queries(queries) -> Topics | None:
    """The fields of a queries file's queries (``category``, ``difficulty``, any other top-level
    text or number, then ``metadata`` entries it does not shadow); None for anything else."""
    from evaltool.io.jsonl import Queries

    if not isinstance(queries, Queries):
        return None
    rows = {}
    for query in queries.queries:
        fields = {k: v for k, v in query.metadata.items() if isinstance(v, (str, int, float, bool))}
        fields.update({k: v for k, v in query.fields.items() if isinstance(v, (str, int, float, bool))})
        fields.update({k: v for k, v in (("category", query.category), ("difficulty", query.difficulty)) if v})
        rows[query.qid] = fields
    return topics_from_mapping(rows, queries.path)


def read_topics(path) -> Topics:
    """Read a topics file (TSV with a header, JSON or JSONL); see the module docstring."""
    from evaltool.io.textfiles import read_text

    name, text = read_text(path)
    if text.lstrip().startswith(("{", "[")):
        return _read_json(name, text)
    return _read_tsv(name, text)


def resolve_topics(group_by, topics, judgments=None):
    """``(fields, Topics)`` from ``evaluate``'s arguments; a queries file is its own topics.

    ``topics`` is a path, a :class:`~evaltool.io.topics.Topics` or ``{qid: {field: value}}``;
    None with a queries file as judgments uses the file's fields (``category``, ...).
    """
    fields = [group_by] if isinstance(group_by, str) else list(group_by or ())
    if not fields:
        if topics is not None:
            raise EvaltoolError("--topics needs --group-by FIELD (group_by=) to say which field groups the queries")
        return [], None
    if topics is None:
        topics = topics_of_queries(judgments)
        if topics is None:
            raise EvaltoolError(
                "--group-by needs --topics FILE (a TSV, JSON or JSONL of query id -> fields), "
                "unless QRELS is a queries file that has the field"
            )
    elif isinstance(topics, Mapping):
        topics = topics_from_mapping(topics)
    elif isinstance(topics, (str, os.PathLike)):
        topics = read_topics(topics)
    for name in fields:
        topics.check_field(name)
    return fields, topics
