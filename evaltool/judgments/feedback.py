"""Explicit feedback from production: users' ratings of results, as judgments.

A rating event names a query, a document, the rating a user gave and when: ``query`` (or
``query_id``), ``doc_id``, ``rating``, ``user`` and ``timestamp``, in a JSON list, JSONL, CSV
with a header row, or Parquet. A declared mapping turns ratings into grades:

* ``thumbs``: a "Useful / Not useful" button: ``up``, ``1``, ``true``, ``yes``, ``useful``,
  ``útil`` are 1; ``down``, ``0``, ``-1``, ``false``, ``no``, ``not_useful``, ``no útil`` are 0;
* ``stars``: 1 to 5 stars as grades 0, 0, 1, 2, 3 (one or two stars: not relevant);
* ``graded``: the grade itself, 0 to 3;
* ``labels:RATING=GRADE,...``: any other, declared.

Each user is a rater: a user's later rating of a pair replaces their earlier one (events are
taken in timestamp order). A query given as text is used as its id with its spaces as ``_``
(qrels ids are single words). Each problem names the file, the line (the row) and what was
expected.

>>> events = [{"query": "q1", "doc_id": "d1", "rating": "up", "user": "u1", "timestamp": "2025-01-01T10:00:00Z"},
...           {"query": "q1", "doc_id": "d1", "rating": "down", "user": "u1", "timestamp": "2025-01-01T09:00:00Z"}]
>>> [(j["query_id"], j["doc_id"], j["rater"], j["grade"]) for j in ratings_as_judgments(events, mapping("thumbs"), "log")]
[('q1', 'd1', 'u1', 0), ('q1', 'd1', 'u1', 1)]
"""

from __future__ import annotations

import csv
import io
import os
import re
from dataclasses import dataclass

from evaltool.errors import EvaltoolError, ParseError, quote
from evaltool.judgments.scales import Scale

THUMBS_UP = ("up", "1", "+1", "true", "yes", "useful", "útil", "util", "👍")
THUMBS_DOWN = ("down", "0", "-1", "false", "no", "not_useful", "no útil", "no util", "👎")
STARS = "labels:1=0,2=0,3=1,4=2,5=3"
FIELDS = "query (or query_id), doc_id, rating, user, timestamp"


@dataclass(frozen=True)
class Mapping:
    """How ratings become grades: the set's scale and the rating texts each grade takes."""

    name: str
    scale: Scale
    grades: dict[str, int]  # a rating's text (lower case) -> grade


def mapping(text: str) -> Mapping:
    """``thumbs``, ``stars``, ``graded`` or ``labels:RATING=GRADE,...`` (see the module)."""
    if text == "thumbs":
        return Mapping("thumbs", Scale.binary(), {**dict.fromkeys(THUMBS_UP, 1), **dict.fromkeys(THUMBS_DOWN, 0)})
    if text == "graded":
        return Mapping("graded", Scale.graded(), {str(g): g for g in range(4)})
    scale = Scale.parse(STARS if text == "stars" else text)
    if scale.kind != "labels":
        raise EvaltoolError(f"--mapping {quote(text)}: expected thumbs, stars, graded or labels:RATING=GRADE,...")
    return Mapping("stars" if text == "stars" else "labels", scale, {name.lower(): g for name, g in scale.labels})


def read_events(path) -> list[tuple[int, dict, str]]:
    """(line or row number, event, its text) of a ratings log: JSON list, JSONL, CSV or Parquet (by content
    and name)."""
    import json

    path = os.fspath(path)
    if path.lower().endswith(".parquet"):
        try:
            import pyarrow.parquet as pq
        except ImportError:
            raise EvaltoolError("a Parquet ratings log needs pyarrow: pip install pyarrow") from None
        try:
            rows = pq.read_table(path).to_pylist()
        except Exception as exc:  # pyarrow's own errors: not a Parquet file, damaged
            raise EvaltoolError(f"{path}: not a readable Parquet file ({str(exc).splitlines()[0][:200]})") from None
        return [(i, row, json.dumps(row, default=str, ensure_ascii=False)) for i, row in enumerate(rows, 1)]
    try:
        with open(path, encoding="utf-8-sig") as handle:
            text = handle.read()
    except OSError as exc:
        raise EvaltoolError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    except UnicodeDecodeError as exc:
        raise EvaltoolError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    start = text.lstrip()[:1]
    if start == "[":
        from evaltool.io.jsontext import loads

        try:
            data = loads(text)
        except ValueError as exc:
            at = text.count("\n", 0, getattr(exc, "pos", 0)) + 1
            raise ParseError(
                path, at, text.splitlines()[at - 1] if text.splitlines() else "", "a JSON list of rating events"
            ) from None
        if not isinstance(data, list):
            raise ParseError(path, 1, text.splitlines()[0], "a JSON list of rating events")
        return [(i, item, json.dumps(item, ensure_ascii=False)) for i, item in enumerate(data, 1)]
    if start == "{":
        from evaltool.io.jsontext import loads

        out: list[tuple[int, dict, str]] = []
        for number, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    out.append((number, loads(line), line))
                except ValueError:
                    raise ParseError(path, number, line, f"a JSON object with {FIELDS}") from None
        return out
    lines = text.splitlines()
    reader = csv.DictReader(io.StringIO(text))
    return [
        (reader.line_num, row, lines[reader.line_num - 1] if reader.line_num <= len(lines) else "") for row in reader
    ]


def _when(value, path: str, number: int, line: str) -> str:
    from evaltool.history.dates import parse_when, stamp

    if isinstance(value, (int, float)) and not isinstance(value, bool):
        from datetime import datetime, timezone

        return stamp(datetime.fromtimestamp(value, timezone.utc))
    try:
        return stamp(parse_when(value, "timestamp"))
    except EvaltoolError:
        raise ParseError(path, number, line, "a timestamp: ISO-8601 text or seconds since 1970") from None


def ratings_as_judgments(events, chosen: Mapping, path: str = "<ratings>") -> list[dict]:
    """Judgment dicts (for :func:`~evaltool.judgments.sets.add_judgments`) of rating events, in
    timestamp order (so a user's last rating of a pair is the one kept)."""
    out = []
    numbered = events if events and isinstance(events[0], tuple) else [(i, e, str(e)) for i, e in enumerate(events, 1)]
    for number, event, line in numbered:
        if not isinstance(event, dict):
            raise ParseError(path, number, line, f"a rating event with {FIELDS}")
        query = event.get("query_id", event.get("query"))
        doc, rating, user = event.get("doc_id"), event.get("rating"), event.get("user")
        if isinstance(query, (int, float)) and not isinstance(query, bool):
            query = str(query)
        if isinstance(doc, (int, float)) and not isinstance(doc, bool):
            doc = str(doc)
        if (
            not all(isinstance(v, str) and v.strip() for v in (query, doc))
            or user in (None, "")
            or rating in (None, "")
        ):
            raise ParseError(path, number, line, f"a rating event with {FIELDS}")
        key = str(rating).strip().lower()
        if isinstance(rating, bool):
            key = "true" if rating else "false"
        elif isinstance(rating, float) and rating.is_integer():
            key = str(int(rating))
        if key not in chosen.grades:
            shown = ", ".join(sorted(chosen.grades))
            raise ParseError(path, number, line, f"a rating of the {chosen.name} mapping ({shown})")
        out.append(
            {
                "query_id": re.sub(r"\s+", "_", str(query).strip()),
                "doc_id": str(doc).strip(),
                "rater": str(user).strip(),
                "grade": chosen.grades[key],
                "at": _when(event.get("timestamp"), path, number, line),
            }
        )
    out.sort(key=lambda j: str(j["at"]))
    return out


def user_agreement(judgments, method: str = "median") -> list[dict]:
    """Per user: ratings given, and the share of them equal to the consensus of all users on the pair
    (``agrees``; pairs only they rated left out of the share: ``shared``)."""
    from evaltool.judgments.adjudication import by_pair, consensus

    agreed = consensus(judgments, method).qrels
    pairs = by_pair(judgments)
    users: dict[str, dict] = {}
    for (query, doc), grades in pairs.items():
        for user, grade in grades.items():
            entry = users.setdefault(user, {"user": user, "ratings": 0, "shared": 0, "same": 0})
            entry["ratings"] += 1
            if len(grades) > 1:
                entry["shared"] += 1
                entry["same"] += grade == agreed[query][doc]
    return [
        {
            "user": u["user"],
            "ratings": u["ratings"],
            "shared": u["shared"],
            "agrees": u["same"] / u["shared"] if u["shared"] else None,
        }
        for u in sorted(users.values(), key=lambda u: u["user"])
    ]


def feedback_report(
    db, path, set_name: str, mapping_text: str = "thumbs", *, run=None, depth: int = 10, method: str = "median"
) -> dict:
    """Read a ratings log into judgment set ``set_name`` (made on the mapping's scale when new) and
    report: ``events``, ``set``, ``version``, ``users`` (:func:`user_agreement`), ``agreement`` (the
    set's figures, :func:`~evaltool.judgments.reliability.set_agreement`) and, with ``run`` (a TREC
    run), ``ndcg``: ``{"k", "mean", "per_query"}`` of nDCG@k from the consensus of the ratings, over
    the queries that have ratings."""
    from evaltool.judgments.reliability import set_agreement
    from evaltool.judgments.sets import add_judgments, create_set, list_sets, read_judgments

    chosen = mapping(mapping_text)
    path = os.fspath(path)
    try:
        known = {s.name: s for s in list_sets(db)}
    except EvaltoolError:
        known = {}
    if set_name in known and known[set_name].scale != chosen.scale:
        raise EvaltoolError(
            f"--set {set_name} is on the scale {known[set_name].scale.describe()}, not the "
            f"{chosen.name} mapping's ({chosen.scale.describe()})"
        )
    items = ratings_as_judgments(read_events(path), chosen, path)
    if set_name not in known:
        create_set(db, set_name, chosen.scale)
    saved = add_judgments(
        db, set_name, items, change={"what": "feedback", "file": os.path.abspath(path), "events": len(items)}
    )
    judged = read_judgments(db, set_name)
    out = {
        "set": set_name,
        "version": saved.version,
        "events": len(items),
        "users": user_agreement(judged, method),
        "agreement": set_agreement(db, set_name),
        "ndcg": None,
    }
    if run is not None:
        out["ndcg"] = _ndcg(judged, run, depth, method)
    return out


def _ndcg(judged, run, depth: int, method: str) -> dict:
    import warnings

    from evaltool.errors import EvaltoolWarning
    from evaltool.evaluation import evaluate
    from evaltool.judgments.adjudication import consensus

    qrels = consensus(judged, method).qrels
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EvaltoolWarning)
        result = evaluate(qrels, run, [f"ndcg_cut.{depth}"], per_query=True)
    name = f"ndcg_cut_{depth}"
    return {
        "k": depth,
        "mean": result.summary[name],
        "per_query": {q: values[name] for q, values in result.per_query.items()},
    }
