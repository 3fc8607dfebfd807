"""Which format a judgments or results file is in, from its first bytes.

A first non-blank character ``[`` is a JSON document; ``{`` is JSONL when the first line
is a complete JSON object by itself (and not a ``{"queries": [...]}`` wrapper), else a
JSON document; anything else is TREC. Apart from the JSON readers
(:mod:`evaltool.io.jsonl`), so that reading a TREC file imports neither them nor
:mod:`json`.
"""

from __future__ import annotations

import os

from evaltool.io.common import head

QID_KEYS = ("qid", "query_id", "id")  # the spellings of a query object's id


def _first_char(head: bytes) -> str:
    text = head.lstrip(b"\xef\xbb\xbf").lstrip()
    return text[:1].decode("latin-1")


def head_of(path, size: int = 1 << 16) -> bytes:
    """The first bytes of a file (decompressed), for :func:`sniff`.

    A compressed stream that cannot be read gives no bytes: the reader of the format then
    reports what is wrong with it.
    """
    return head(os.fspath(path), size)


def sniff(head: bytes, kind: str) -> str:
    """``trec``, ``json`` or ``jsonl``: what ``head`` (the start of a file) looks like.

    ``kind`` is ``judgments`` (the first input) or ``results`` (the second).

    >>> sniff(b"q1 0 d1 1\\n", "judgments"), sniff(b'[{"qid": "q1"}]', "judgments")
    ('trec', 'json')
    >>> sniff(b'{"qid": "q1"}\\n{"qid": "q2"}\\n', "judgments"), sniff(b'{"qid": "q1", "docid": "d"}', "results")
    ('jsonl', 'jsonl')
    """
    first = _first_char(head)
    if first == "[":
        return "json"
    if first != "{":
        return "trec"
    if kind == "results":
        return "jsonl"
    import json

    line = head.lstrip(b"\xef\xbb\xbf").lstrip().split(b"\n", 1)[0]
    try:
        obj = json.loads(line)
    except RecursionError:   # a line nested too deep: the JSONL reader names it
        return "jsonl"
    except (json.JSONDecodeError, UnicodeDecodeError):
        return "json"
    return "json" if isinstance(obj, dict) and "queries" in obj and not any(k in obj for k in QID_KEYS) else "jsonl"
