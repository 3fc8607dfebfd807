"""The documents' text a rater reads: a corpus JSONL ``{"id", "title", "text"}`` per line.

``evaltool serve --corpus FILE`` reads it once at start; the judging pages show each pooled
document's title and text from it (else the title and snippet the search backend returned, kept
with the execution). Texts longer than :data:`MAX_TEXT` characters are cut for the page. A line
that is not such an object is a ParseError naming the file and line; an id given twice keeps
the first.

>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "corpus.jsonl")
>>> _ = open(path, "w").write('{"id": "d1", "title": "Flat tyre", "text": "Find the puncture..."}\\n')
>>> read_corpus(path)["d1"]
('Flat tyre', 'Find the puncture...')
"""

from __future__ import annotations

import os

from evaltool.errors import EvaltoolError, ParseError

MAX_TEXT = 20_000  # characters of a document's text shown to a rater
EXPECTED = 'an object {"id": ..., "title": ..., "text": ...} (title optional)'


def read_corpus(path) -> dict[str, tuple[str | None, str]]:
    """id -> (title, text) of every line of a corpus JSONL file."""
    from evaltool.io.jsontext import loads

    path = os.fspath(path)
    corpus: dict[str, tuple[str | None, str]] = {}
    try:
        handle = open(path, encoding="utf-8-sig")
    except OSError as exc:
        raise EvaltoolError(f"--corpus {path}: cannot be read ({exc.strerror or exc})") from None
    with handle:
        try:
            for number, line in enumerate(handle, 1):
                if not line.strip():
                    continue
                try:
                    item = loads(line)
                except ValueError:
                    raise ParseError(path, number, line.rstrip("\r\n"), EXPECTED) from None
                doc, title, text = (
                    (item.get(k) for k in ("id", "title", "text")) if isinstance(item, dict) else (None, None, None)
                )
                if isinstance(doc, int) and not isinstance(doc, bool):
                    doc = str(doc)
                if (
                    not isinstance(doc, str)
                    or not doc
                    or not isinstance(text, str)
                    or not (title is None or isinstance(title, str))
                ):
                    raise ParseError(path, number, line.rstrip("\r\n"), EXPECTED)
                corpus.setdefault(doc, (title, text[:MAX_TEXT]))
        except UnicodeDecodeError as exc:
            raise EvaltoolError(f"--corpus {path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    return corpus
