"""A click log's bytes as text: opened decompressed, read line by line as UTF-8, each JSON
line decoded with its line number, and messages' excerpts kept short."""

from __future__ import annotations

import json
import re

from evaltool.errors import ParseError
from evaltool.io import jsontext

PARQUET_MAGIC = b"PAR1"


def short(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def opener(path: str):
    """The file's magic bytes, and a function returning a fresh binary stream of its content
    (decompressed as every reader does, :func:`evaltool.io.common.reading`: a broken compressed
    stream is a ParseError wherever it is read; Parquet as stored)."""
    from evaltool.io.common import read_head, reading

    magic = read_head(path, 4)
    if magic == PARQUET_MAGIC:
        return magic, lambda: open(path, "rb")
    return magic, lambda: reading(path)


def lines(path: str, opener):
    """(line number, text) of each non-blank line; a line that is not UTF-8 is a ParseError (Arrow,
    which holds the ids, takes nothing else)."""
    with opener() as raw:
        try:
            for number, data in enumerate(raw, 1):
                text = utf8(path, number, data).rstrip("\r\n")
                if text.strip():
                    yield number, text
        except (OSError, EOFError) as exc:
            raise ParseError(path, None, None, f"a readable file ({exc})") from None


def utf8(path: str, line: int, data: bytes) -> str:
    """``data`` (line ``line`` on, of ``path``) as text; invalid UTF-8 is a ParseError naming its line."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line += data.count(b"\n", 0, exc.start)
        start = data.rfind(b"\n", 0, exc.start) + 1
        raise ParseError(
            path,
            line,
            short(data[start : exc.start + 40].decode("utf-8", "replace").split("\n")[0]),
            f"UTF-8 text ({exc.reason} at byte {exc.start - start + 1} of the line)",
        ) from None


SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")  # \ud800 to \udfff: half of a UTF-16 pair


def check_surrogates(path: str, line, text: str, obj) -> None:
    """Refuse a string with half a surrogate pair ("\\ud800" alone): it has no UTF-8 spelling."""
    try:
        json.dumps(obj, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise ParseError(
            path,
            line,
            short(text),
            "text with whole characters (a \\ud800-\\udfff escape "
            "is half of a surrogate pair, and its other half is missing)",
        ) from None


def json_lines(path: str, opener):
    """(line number, text, value) of each non-blank JSON line; a line that is not JSON, or holds
    half a surrogate pair, is a ParseError naming it."""
    for number, text in lines(path, opener):
        try:
            obj = jsontext.loads(text)
        except json.JSONDecodeError as exc:
            raise ParseError(path, number, short(text), f"a JSON object on each line ({exc.msg})") from None
        if "\\u" in text and SURROGATE_ESCAPE.search(text):
            check_surrogates(path, number, text, obj)
        yield number, text, obj
