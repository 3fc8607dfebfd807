"""Queries (benchmark) files and JSONL results files, and telling them from TREC files.

A **queries file** is JSON (an array of query objects, or an object whose ``queries`` key
holds that array) or JSONL (one query object per line). A query object has

* ``qid`` (or ``query_id``, ``id``): a string or an integer, once per file;
* ``query``: the query text (optional);
* ``relevant_ids``: a list of document ids, each relevant with grade 1 (also spelled
  ``expected_modules``, or as memorybench writes it ``relevantIds`` / ``relevantChunkIds``,
  at the top level or in ``metadata``), or ``qrels``: ``{doc_id: integer grade}``
  (optional; one of them);
* ``answer`` (a string, a number or a list of them) and/or ``expected_text``: the
  expected answer, for token-F1 judgments (optional);
* ``category``, ``difficulty``: strings or numbers (optional); ``metadata``: an object
  (optional). Other keys are kept in :attr:`~evaltool.inputs.Query.fields` for packs.

A **results file** is JSONL, one retrieved item per line: ``qid``, ``docid`` (or
``doc_id``), ``score`` and/or ``rank``, optional ``text`` and ``metadata``. Items are
ordered by score; a file that gives only ranks is ordered by rank (score = -rank), and
ties fall to the document id rule of :mod:`evaltool.ranking` either way.

Which format a file is in, :func:`evaltool.io.kinds.sniff` decides (kept apart so a TREC
file is read without this module); the readers here are told. Every error names the file, the line, the text
and what the format expects.

>>> queries = parse_queries("q.jsonl", b'{"qid": "q1", "relevant_ids": ["d1"], "answer": "Paris"}\\n', "jsonl")
>>> queries.queries[0].relevant, queries.queries[0].answers
({'d1': 1}, ('Paris',))
>>> results = parse_results("r.jsonl", b'{"qid": "q1", "docid": "d1", "rank": 1, "text": "Paris"}\\n')
>>> results.run.scores.tolist(), results.items[0].text
([-1.0], 'Paris')
"""

from __future__ import annotations

import json
import math
import numbers
import os
from dataclasses import dataclass

import numpy as np

from evaltool.inputs import Item, Query, Run
from evaltool.errors import ParseError, quote
from evaltool.io.common import QID_KEYS, Encoder, check_policy, read_bytes, resolve_duplicates
from evaltool.io import jsontext

JUDGMENT_FORMATS = ("trec", "json", "jsonl")
RESULT_FORMATS = ("trec", "jsonl")
LABELS = {"json": "queries file, JSON", "jsonl": "queries file, JSONL", "results": "results file, JSONL"}
# lists of relevant ids: ours, the benchmark files', and memorybench's (also inside 'metadata')
RELEVANT_ID_KEYS = ("relevant_ids", "expected_modules", "relevantIds", "relevantChunkIds")
DOCID_KEYS = ("docid", "doc_id")
BOM = "\ufeff"


@dataclass
class Queries:
    """The queries of a queries file, in the file's order."""

    path: str
    format: str
    queries: list[Query]


@dataclass
class Results:
    """A results file: the run it ranks, and the item behind every row of that run."""

    run: Run
    items: list[Item]


# ---------------------------------------------------------------- values


def _clip(text: str, width: int = 80) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def _shown(obj) -> str:
    return _clip(json.dumps(obj, ensure_ascii=False))


class _Lines:
    """Raises ParseError for one object of one file: path, line, the object, what was expected."""

    def __init__(self, path: str, label: str):
        self.path, self.label = path, label

    def fail(self, line: int | None, obj, expected: str):
        raise ParseError(self.path, line, None if obj is None else _shown(obj), f"{expected} ({self.label})")

    def ident(self, line, obj, keys) -> str:
        key = next((k for k in keys if k in obj), None)
        value = obj.get(key) if key else None
        if isinstance(value, bool) or not isinstance(value, (str, numbers.Integral)) or value == "":
            self.fail(line, obj, f"a non-empty string or an integer in '{keys[0]}'")
        return str(value)

    def optional(self, line, obj, key, types, expected):
        value = obj.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, types)):
            self.fail(line, obj, f"'{key}' as {expected}")
        return value

    def scalar_text(self, line, obj, key) -> str | None:
        value = self.optional(line, obj, key, (str, numbers.Real), "a string or a number")
        return None if value is None else str(value)


def _decode(name: str, data: bytes, label: str) -> str:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise ParseError(name, line, None, f"UTF-8 text ({exc.reason} at byte {exc.start}) ({label})") from None
    return text[1:] if text.startswith(BOM) else text


def _jsonl_objects(name: str, text: str, label: str, objects_only: bool = True):
    """(line number, object) for every non-blank line (any JSON value unless ``objects_only``)."""
    for number, raw in enumerate(text.split("\n"), 1):
        line = raw.strip()
        if not line:
            continue
        try:
            obj = jsontext.loads(line)
        except json.JSONDecodeError as exc:
            raise ParseError(
                name, number, _clip(line), f"one JSON object per line ({exc.msg} at column {exc.colno}) ({label})"
            ) from None
        if objects_only and not isinstance(obj, dict):
            raise ParseError(name, number, _clip(line), f"a JSON object, not {type(obj).__name__} ({label})")
        yield number, obj


# ---------------------------------------------------------------- JSON documents with line numbers


def _skip(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\r\n":
        pos += 1
    return pos


def _expect(text: str, pos: int, chars: str, message: str) -> str:
    if pos >= len(text) or text[pos] not in chars:
        raise json.JSONDecodeError(message, text, pos)
    return text[pos]


def _array(decoder, text: str, pos: int):
    """The elements of the JSON array at ``pos`` with the line each starts on, and the end."""
    out, line, counted = [], 1, 0
    pos = _skip(text, pos + 1)
    if text[pos : pos + 1] == "]":
        return out, pos + 1
    while True:
        value, end = jsontext.raw_decode(decoder, text, pos)
        line += text.count("\n", counted, pos)
        counted = pos
        out.append((line, value))
        pos = _skip(text, end)
        if _expect(text, pos, ",]", "Expecting ',' delimiter") == "]":
            return out, pos + 1
        pos = _skip(text, pos + 1)


def _wrapped_array(decoder, text: str, pos: int):
    """``{"queries": [...], ...}``: the elements of its ``queries`` array (None if absent), and the end."""
    found = None
    pos = _skip(text, pos + 1)
    if text[pos : pos + 1] == "}":
        return found, pos + 1
    while True:
        _expect(text, pos, '"', "Expecting property name enclosed in double quotes")
        key, pos = jsontext.raw_decode(decoder, text, pos)
        pos = _skip(text, pos)
        _expect(text, pos, ":", "Expecting ':' delimiter")
        pos = _skip(text, pos + 1)
        if key == "queries" and text[pos : pos + 1] == "[":
            found, pos = _array(decoder, text, pos)
        else:
            _, pos = jsontext.raw_decode(decoder, text, pos)
        pos = _skip(text, pos)
        if _expect(text, pos, ",}", "Expecting ',' delimiter") == "}":
            return found, pos + 1
        pos = _skip(text, pos + 1)


def _json_objects(name: str, text: str, label: str, objects_only: bool = True):
    decoder = json.JSONDecoder()
    pos = _skip(text, 0)
    try:
        if text[pos : pos + 1] == "[":
            elements, end = _array(decoder, text, pos)
        elif text[pos : pos + 1] == "{":
            elements, end = _wrapped_array(decoder, text, pos)
        else:
            raise json.JSONDecodeError("Expecting '[' or '{'", text, pos)
        end = _skip(text, end)
        if end < len(text):
            raise json.JSONDecodeError("Extra data", text, end)
    except json.JSONDecodeError as exc:
        found = text.split("\n")[exc.lineno - 1] if text else ""
        raise ParseError(
            name, exc.lineno, _clip(found.strip()), f"valid JSON ({exc.msg} at column {exc.colno}) ({label})"
        ) from None
    if elements is None:
        raise ParseError(name, 1, None, f"an array of query objects, or an object with a 'queries' array ({label})")
    for line, obj in elements:
        if objects_only and not isinstance(obj, dict):
            raise ParseError(name, line, _shown(obj), f"a JSON object for each query ({label})")
        yield line, obj


# ---------------------------------------------------------------- queries


def _grade(check: _Lines, line, obj, docid, value) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        check.fail(line, obj, f"an integer grade for document {quote(docid)} in 'qrels'")
    return int(value)


def _relevant(check: _Lines, line, obj) -> dict[str, int] | None:
    """The query's explicit judgments: one list of relevant ids (grade 1) or one graded ``qrels``."""
    metadata = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    given = [(key, obj[key]) for key in RELEVANT_ID_KEYS if obj.get(key) is not None]
    given += [(f"metadata.{key}", metadata[key]) for key in RELEVANT_ID_KEYS[2:] if metadata.get(key) is not None]
    graded = obj.get("qrels")
    if graded is not None:
        given.append(("qrels", graded))
    if len(given) > 1:
        names = [f"'{k}'" for k, _ in given]
        check.fail(line, obj, f"either {' or '.join(names)}, not {'both' if len(names) == 2 else 'several'}")
    if not given:
        return None
    key, value = given[0]
    if key == "qrels":
        if not isinstance(value, dict):
            check.fail(line, obj, "'qrels' as an object {doc_id: integer grade}")
        return {str(d): _grade(check, line, obj, d, g) for d, g in value.items()}
    if not isinstance(value, list) or any(
        isinstance(d, bool) or not isinstance(d, (str, numbers.Integral)) for d in value
    ):
        check.fail(line, obj, f"'{key}' as a list of document ids (strings or integers)")
    return {str(d): 1 for d in value}


def _answers(check: _Lines, line, obj) -> tuple[str, ...]:
    found = []
    for key in ("answer", "expected_text"):
        value = obj.get(key)
        values = value if isinstance(value, list) else [] if value is None else [value]
        for v in values:
            if isinstance(v, bool) or not isinstance(v, (str, numbers.Real)):
                check.fail(line, obj, f"'{key}' as a string, a number or a list of them")
            found.append(str(v))
    return tuple(found)


def _query(check: _Lines, line: int, obj: dict) -> Query:
    metadata = check.optional(line, obj, "metadata", dict, "an object")
    return Query(
        qid=check.ident(line, obj, QID_KEYS),
        text=check.optional(line, obj, "query", str, "a string"),
        relevant=_relevant(check, line, obj),
        answers=_answers(check, line, obj),
        category=check.scalar_text(line, obj, "category"),
        difficulty=check.scalar_text(line, obj, "difficulty"),
        metadata=metadata or {},
        fields=obj,
        line=line,
    )


def query_entries(name: str, data: bytes, fmt: str, objects_only: bool = True):
    """``(format, entries)`` of a queries file's content: every entry of its JSON array (or of
    the ``queries`` array of its JSON object), or every JSONL line, as ``(line, value)``.

    The one reader of queries files: evaluation takes the entries as :class:`Query`
    objects (:func:`parse_queries`), the benchmark command checks them all at once
    (:mod:`evaltool.bench.queries`); ``objects_only=False`` leaves entries that are not
    objects to the caller.

    >>> query_entries("q.json", b'{"queries": [\\n  {"id": 1},\\n  {"id": 2}]}', "json")
    ('json', [(2, {'id': 1}), (3, {'id': 2})])
    """
    if fmt not in ("json", "jsonl"):
        raise ParseError(name, None, None, "a queries file: a JSON array of query objects or JSONL")
    label = LABELS[fmt]
    text = _decode(name, data, label)
    return fmt, list((_json_objects if fmt == "json" else _jsonl_objects)(name, text, label, objects_only))


def parse_queries(name: str, data: bytes, fmt: str) -> Queries:
    """A queries file's content (``fmt`` json or jsonl, as :func:`evaltool.io.kinds.sniff` tells)."""
    fmt, objects = query_entries(name, data, fmt)
    label = LABELS[fmt]
    check = _Lines(name, label)
    queries, seen = [], {}
    for line, obj in objects:
        query = _query(check, line, obj)
        if query.qid in seen:
            check.fail(line, obj, f"each qid once; {quote(query.qid)} was already given at line {seen[query.qid]}")
        seen[query.qid] = line
        queries.append(query)
    if not queries:
        raise ParseError(name, None, None, f"at least one query object ({label})")
    return Queries(name, fmt, queries)


# ---------------------------------------------------------------- results


def _run_tag(name: str) -> str:
    base = os.path.basename(name)
    for suffix in (".gz", ".jsonl", ".json"):
        base = base[: -len(suffix)] if base.endswith(suffix) else base
    return base or "run"


def _item(check: _Lines, line: int, obj: dict) -> Item:
    score = check.optional(line, obj, "score", numbers.Real, "a finite number")
    if score is not None and not math.isfinite(score):
        check.fail(line, obj, "'score' as a finite number")
    rank = check.optional(line, obj, "rank", numbers.Integral, "a whole number of 0 or more")
    if rank is not None and rank < 0:
        check.fail(line, obj, "'rank' as a whole number of 0 or more")
    if score is None and rank is None:
        check.fail(line, obj, "a 'score' or a 'rank' for each item")
    return Item(
        qid=check.ident(line, obj, QID_KEYS),
        docid=check.ident(line, obj, DOCID_KEYS),
        score=None if score is None else float(score),
        rank=None if rank is None else int(rank),
        text=check.optional(line, obj, "text", str, "a string"),
        metadata=check.optional(line, obj, "metadata", dict, "an object") or {},
        line=line,
    )


def _scores(check: _Lines, items: list[Item]) -> np.ndarray:
    """Every item's score; when some item gives only a rank, every item's -rank."""
    if all(item.score is not None for item in items):
        return np.array([item.score for item in items], dtype=np.float64)
    ranked_only = next(item for item in items if item.score is None)
    for item in items:
        if item.rank is None:
            check.fail(
                item.line,
                None,
                f"a 'rank' on every line: line {ranked_only.line} gives only a rank, so items are ordered by rank",
            )
    return -np.array([item.rank for item in items], dtype=np.float64)


def parse_results(name: str, data: bytes, on_duplicate: str = "error") -> Results:
    """A JSONL results file's content: the run (one row per item) and its items."""
    check_policy(on_duplicate)
    label = LABELS["results"]
    check = _Lines(name, label)
    items = [_item(check, line, obj) for line, obj in _jsonl_objects(name, _decode(name, data, label), label)]
    if not items:
        raise ParseError(name, None, None, f"at least one result line ({label})")
    qids, docs = Encoder(), Encoder()
    qid_codes = np.array([qids(item.qid) for item in items], dtype=np.int64)
    doc_codes = np.array([docs(item.docid) for item in items], dtype=np.int64)
    scores = _scores(check, items)
    lines = np.array([item.line for item in items], dtype=np.int64)

    def duplicate(first: int, repeated: int) -> None:
        check.fail(
            items[repeated].line,
            None,
            f"each (query, document) pair once; query {quote(items[first].qid)} document {quote(items[first].docid)} "
            f"was already given at line {items[first].line} (use --on-duplicate first|max to accept duplicates)",
        )

    keep, dropped = resolve_duplicates(on_duplicate, qid_codes, doc_codes, scores, len(docs.vocab), duplicate)
    run = Run(
        qids.vocab,
        qid_codes[keep],
        docs.vocab,
        doc_codes[keep],
        scores[keep],
        lines[keep],
        runid=_run_tag(name),
        path=name,
        duplicates_resolved=dropped,
    )
    return Results(run, [items[i] for i in keep])


def read_results(path, on_duplicate: str = "error") -> Results:
    """Read a JSONL results file (compressed allowed; ``-`` is stdin)."""
    name, data = read_bytes(path, allow_stdin=True)
    return parse_results(name, data, on_duplicate)
