"""The benchmark queries file: read, validate, and turn into judgments.

The file is a queries file as evaluation reads it (:func:`evaltool.io.jsonl.query_entries`:
a JSON list of objects, an object whose ``queries`` key holds that list, or JSONL, one
object per line)::

    [{"id": 1, "query": "electronic invoicing Spain", "version": "16.0",
      "category": "localization", "difficulty": "easy",
      "expected_modules": ["l10n_es_facturae", "l10n_es_aeat"]}]

Fields: ``id`` (or ``qid``, ``query_id``; an integer or a string without whitespace,
unique), ``query`` (non-empty string), optionally ``category`` and ``difficulty``
(non-empty strings), and exactly one way to give the expected ids: ``expected_modules``
or ``relevant_ids`` (a non-empty list of distinct ids, each relevant with grade 1) or
``qrels`` (``{id: integer grade}`` with at least one grade above 0). ``version`` (string
or number) is optional; any other field is kept and passed on (to a backend that asks
for it by name, and into the report).

Every problem in the file is reported at once, each with its line, before anything runs.

>>> import json, tempfile, os
>>> path = os.path.join(tempfile.mkdtemp(), "q.json")
>>> _ = open(path, "w").write(json.dumps([{"id": 1, "query": "q", "category": "c",
...     "difficulty": "easy", "relevant_ids": ["a", "b"]}]))
>>> [(q.qid, q.judgments) for q in load_queries(path)]
[('1', {'a': 1, 'b': 1})]
"""

from __future__ import annotations

import json
import numbers
import re
from dataclasses import dataclass, field, replace

from evaltool.errors import EvaltoolError, quote

EXPECTED_FIELDS = ("expected_modules", "relevant_ids", "qrels")
ID_FIELDS = ("id", "qid", "query_id")
REQUIRED_TEXT = ("query",)
OPTIONAL_TEXT = ("category", "difficulty")
KNOWN_FIELDS = (*ID_FIELDS, *REQUIRED_TEXT, *OPTIONAL_TEXT, "version", *EXPECTED_FIELDS)
MAX_PROBLEMS = 20
_WHITESPACE = re.compile(r"\s")


class QueriesError(EvaltoolError):
    """The queries file is not a valid benchmark; the message lists every problem found."""


@dataclass(frozen=True)
class BenchQuery:
    """One benchmark query. ``qid`` is ``id`` as text (the TREC query id)."""

    id: int | str
    qid: str
    text: str
    category: str | None
    difficulty: str | None
    expected_field: str
    expected: list | dict
    judgments: dict[str, int]
    version: str | int | float | None = None
    fields: dict = field(default_factory=dict)
    line: int | None = None

    @property
    def returned_field(self) -> str:
        """The report's key for the returned ids: ``returned_modules`` beside ``expected_modules`` (a code-search
        benchmark's names), else ``returned_ids``."""
        return "returned_modules" if self.expected_field == "expected_modules" else "returned_ids"

    def backend_fields(self) -> dict:
        """Fields a backend may ask for by parameter name: everything but the expected ids."""
        out = {"id": self.id, "category": self.category, "difficulty": self.difficulty, **self.fields}
        if self.version is not None:
            out["version"] = self.version
        return out


ID_SHOWN = 80  # characters of an id a problem quotes (a file's 100 KB id must not make a 100 KB message)


def _file_id_problem(value, what: str) -> str | None:
    """Why ``value`` cannot be a query or expected id of a queries file, or None: :func:`id_problem`'s
    reasons, and half a surrogate pair (a JSON escape '\\ud800' alone), which the TREC files
    written from the queries cannot hold (a backend's ids get their own message)."""
    problem = id_problem(value, what)
    if problem is None and isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return (
                f"{what} {quote(value, ID_SHOWN)} must be text with whole characters (a \\ud800-\\udfff "
                "escape is half of a surrogate pair; the TREC files written from it take UTF-8 only)"
            )
    return problem


def _kind(value) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number"
    )


def id_problem(value, what: str) -> str | None:
    """Why ``value`` cannot be an id in a TREC file, or None."""
    if isinstance(value, bool) or not isinstance(value, (numbers.Integral, str)):
        return f"{what} must be a string or an integer, not {_kind(value)} ({json.dumps(value)[:40]})"
    if isinstance(value, str) and (not value or _WHITESPACE.search(value)):
        return (
            f"{what} {quote(value, ID_SHOWN)} must be non-empty without whitespace (TREC files separate fields by it)"
        )
    return None


def _expected(obj: dict) -> tuple[str | None, list[str], dict[str, int]]:
    """(field used, problems, judgments) of the expected ids of one query."""
    given = [name for name in EXPECTED_FIELDS if name in obj]
    if not given:
        return None, [f"missing field: one of {', '.join(map(repr, EXPECTED_FIELDS))}"], {}
    if len(given) > 1:
        return None, [f"gives {' and '.join(map(repr, given))}; give exactly one"], {}
    name = given[0]
    value = obj[name]
    problems: list[str] = []
    judgments: dict[str, int] = {}
    if name == "qrels":
        if not isinstance(value, dict):
            return name, [f"'qrels' must be an object {{id: grade}}, not {_kind(value)}"], {}
        for doc, grade in value.items():
            problem = _file_id_problem(doc, "'qrels' id")
            if problem is None and (isinstance(grade, bool) or not isinstance(grade, int)):
                problem = (
                    f"'qrels' grade of {quote(str(doc), ID_SHOWN)} must be an integer, not {_kind(grade)} "
                    f"({json.dumps(grade)[:40]})"
                )
            if problem:
                problems.append(problem)
            else:
                judgments[doc] = grade
        if not problems and not any(g > 0 for g in judgments.values()):
            problems.append("'qrels' has no id with a grade above 0: nothing is relevant")
        return name, problems, judgments
    if not isinstance(value, list):
        return name, [f"{name!r} must be a list of ids, not {_kind(value)}"], {}
    if not value:
        return name, [f"{name!r} is empty: a query needs at least one expected id"], {}
    for item in value:
        problem = _file_id_problem(item, f"{name!r} item")
        if problem:
            problems.append(problem)
        elif str(item) in judgments:
            problems.append(f"{name!r} lists {quote(str(item), ID_SHOWN)} twice")
        else:
            judgments[str(item)] = 1
    return name, problems, judgments


def _id_field(obj: dict) -> str | None:
    return next((name for name in ID_FIELDS if name in obj), None)


def _check(obj) -> tuple[list[str], BenchQuery | None]:
    if not isinstance(obj, dict):
        return [f"must be an object, not {_kind(obj)}"], None
    problems = []
    id_field = _id_field(obj)
    if id_field is None:
        problems.append("missing field 'id'")
    else:
        problem = _file_id_problem(obj[id_field], f"{id_field!r}")
        if problem:
            problems.append(problem)
    for name in (*REQUIRED_TEXT, *OPTIONAL_TEXT):
        if name not in obj:
            if name in REQUIRED_TEXT:
                problems.append(f"missing field {name!r}")
        elif not isinstance(obj[name], str):
            problems.append(f"{name!r} must be a string, not {_kind(obj[name])} ({json.dumps(obj[name])[:40]})")
        elif not obj[name].strip():
            problems.append(f"{name!r} is empty")
    version = obj.get("version")
    if isinstance(version, bool) or not isinstance(version, (str, int, float, type(None))):
        problems.append(f"'version' must be a string or a number, not {_kind(version)}")
    expected_field, expected_problems, judgments = _expected(obj)
    problems += expected_problems
    if problems:
        return problems, None
    fields = {k: v for k, v in obj.items() if k not in KNOWN_FIELDS}
    query = BenchQuery(
        obj[id_field],
        str(obj[id_field]),
        obj["query"],
        obj.get("category"),
        obj.get("difficulty"),
        expected_field,
        obj[expected_field],
        judgments,
        version,
        fields,
    )
    return [], query


def parse_queries(path: str, data: bytes) -> list[BenchQuery]:
    """Validate the content of a queries file; raise :class:`QueriesError` listing every problem."""
    from evaltool.io.jsonl import query_entries
    from evaltool.io.kinds import sniff

    _, entries = query_entries(path, data, sniff(data, "judgments"), objects_only=False)
    return check_entries(path, entries)


def check_entries(path: str, entries: list[tuple[int, object]]) -> list[BenchQuery]:
    """Validate (line, object) entries read from ``path`` (any format: JSON, JSONL, a CSV's rows, a
    form's fields); raise :class:`QueriesError` listing every problem with its line."""
    if not entries:
        raise QueriesError(f"{path}: the file has no queries")
    problems, queries, first_line = [], [], {}
    for position, (line, obj) in enumerate(entries):
        where = f"{path}:{line}"
        id_field = _id_field(obj) if isinstance(obj, dict) else None
        label = f"query {position + 1}" + (f" (id {json.dumps(obj[id_field])[:40]})" if id_field else "")
        found, query = _check(obj)
        if id_field and _file_id_problem(obj[id_field], "") is None:
            qid = str(obj[id_field])
            if qid in first_line:
                found.append(f"duplicate id: query {first_line[qid]} has the same id")
            first_line.setdefault(qid, position + 1)
        problems += [f"{where}: {label}: {p}" for p in found]
        if not found:
            queries.append(replace(query, line=line))
    if problems:
        shown = problems[:MAX_PROBLEMS]
        more = len(problems) - len(shown)
        head = f"{path}: {len(problems)} problems in the queries file:\n  " if len(problems) > 1 else ""
        raise QueriesError(head + "\n  ".join(shown) + (f"\n  ... and {more} more" if more else ""))
    return queries


def load_queries(path) -> list[BenchQuery]:
    """Read and validate a queries file (JSON or JSONL, compressed or not); see the module docstring."""
    from evaltool.io.common import read_bytes

    name, data = read_bytes(path)
    return parse_queries(name, data)
