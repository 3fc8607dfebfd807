"""Judgments in and out of files: TREC qrels and JSONL.

Reading (``judgments import``): a TREC qrels file (``query_id iteration doc_id grade``, read by
evaltool's qrels reader, every grade checked against the set's scale) or JSONL, one object per
line: ``{"query_id", "doc_id", "grade"}`` (or ``"label"``), optional ``"rater"`` (else the one
given), ``"note"`` and ``"at"``. A problem names the file, the line and what was expected.

Writing (``judgments export``): TREC qrels (``query_id 0 doc_id grade``, one grade per pair: a
consensus or one rater's), or JSONL: with a consensus or a rater, ``{"query_id", "doc_id",
"grade"}`` per pair; without, every rater's judgment as stored (``query_id``, ``doc_id``,
``rater``, ``grade``, ``label``, ``at``, ``note``).

>>> from evaltool.judgments.adjudication import Consensus
>>> qrels_text(Consensus({"q1": {"d1": 2, "d2": 0}}))
'q1 0 d1 2\\nq1 0 d2 0\\n'
"""

from __future__ import annotations

import json
import os

from evaltool.errors import EvaltoolError, ParseError
from evaltool.judgments.scales import Scale

FORMATS = ("trec", "jsonl")


def _find(path: str, query: str, doc: str, grade: int) -> tuple[int | None, str | None]:
    """The line of a qrels file judging ``doc`` for ``query`` with ``grade``: (number, text)."""
    try:
        with open(path, "rb") as handle:
            for number, raw in enumerate(handle, 1):
                text = raw.decode("utf-8", "replace").rstrip("\r\n")
                fields = text.split()
                if len(fields) >= 4 and fields[0] == query and fields[2] == doc and fields[3].lstrip("+") == str(grade):
                    return number, text
    except OSError:
        pass
    return None, None


def read_file(path, scale: Scale, rater: str | None, fmt: str | None = None) -> list[dict]:
    """The judgments of ``path`` as dicts for :func:`~evaltool.judgments.sets.add_judgments`, every
    grade checked against ``scale``; ``fmt`` trec | jsonl (None: JSONL when the first non-blank
    character is ``{``)."""
    path = os.fspath(path)
    if fmt is None:
        fmt = _sniff(path)
    if fmt == "jsonl":
        return _read_jsonl(path, scale, rater)
    if fmt != "trec":
        raise EvaltoolError(f"--format {fmt!r}: expected trec or jsonl")
    if not rater:
        raise EvaltoolError(f"{path}: TREC qrels do not say who judged; give --rater NAME")
    from evaltool.io.trec import read_qrels

    qrels = read_qrels(path)
    out = []
    for q, d, grade in zip(qrels.qid_codes.tolist(), qrels.doc_codes.tolist(), qrels.grades.tolist()):
        query, doc = qrels.qid_vocab[q], qrels.doc_vocab[d]
        if grade not in scale.grades:
            number, text = _find(path, query, doc, grade)
            raise ParseError(
                path, number, text, f"a grade of the {scale.kind} scale ({', '.join(map(str, scale.grades))})"
            )
        out.append({"query_id": query, "doc_id": doc, "grade": grade, "rater": rater})
    return out


def _sniff(path: str) -> str:
    try:
        with open(path, "rb") as handle:
            head = handle.read(4096)
    except OSError as exc:
        raise EvaltoolError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    return "jsonl" if head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"{") else "trec"


def _read_jsonl(path: str, scale: Scale, rater: str | None) -> list[dict]:
    from evaltool.io.jsontext import loads
    from evaltool.judgments.sets import checked_judgment

    out = []
    expected = 'an object {"query_id", "doc_id", "grade" or "label"[, "rater", "note", "at"]}'
    try:
        handle = open(path, encoding="utf-8-sig")
    except OSError as exc:
        raise EvaltoolError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    with handle:
        try:
            for number, text in enumerate(handle, 1):
                if not text.strip():
                    continue
                try:
                    item = loads(text)
                except ValueError:
                    raise ParseError(path, number, text.rstrip("\r\n"), expected) from None
                if not isinstance(item, dict):
                    raise ParseError(path, number, text.rstrip("\r\n"), expected)
                item = {**item, "rater": item.get("rater") or rater}
                if not item["rater"]:
                    raise ParseError(path, number, text.rstrip("\r\n"), f"{expected}; no rater there nor --rater")
                try:
                    checked_judgment(item, scale, "")
                except EvaltoolError as exc:
                    raise ParseError(path, number, text.rstrip("\r\n"), str(exc)) from None
                out.append(item)
        except UnicodeDecodeError as exc:
            raise EvaltoolError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    return out


def qrels_text(consensus) -> str:
    """TREC qrels of a :class:`~evaltool.judgments.adjudication.Consensus`."""
    return "".join(
        f"{query} 0 {doc} {grade}\n" for query, docs in consensus.qrels.items() for doc, grade in docs.items()
    )


def jsonl_text(consensus=None, judgments=None) -> str:
    """JSONL: a consensus's pairs, or (``judgments``) every stored judgment."""
    if consensus is not None:
        rows = [
            {"query_id": q, "doc_id": d, "grade": g} for q, docs in consensus.qrels.items() for d, g in docs.items()
        ]
    else:
        rows = [jd.to_dict() for jd in judgments]
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
