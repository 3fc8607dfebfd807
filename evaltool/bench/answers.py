"""Reading an HTTP answer only as far as the run needs it.

A service may answer with millions of hits of which a run keeps ``--limit``.
``json.loads`` would build all of them in one C call that holds the GIL: about a second
per 100 MB, during which the event loop is stuck (other queries' timeouts, Ctrl-C and
SIGTERM wait for it), and some 10 bytes of Python objects per byte of answer.
:func:`read_answer` walks the text instead, with the :mod:`json` module's own scanner
(in C) for every value it passes: the keys and list indexes of ``--response-path`` are
found by stepping over the members and elements before them, and the list under a
``*`` (or the list the path ends at) is parsed one element at a time, when
:func:`~evaltool.bench.backends.normalize` asks for the next one. So the work on an
answer is what precedes its hits plus the hits that are read; what follows the
``--limit``-th id is neither parsed nor checked, and an object with a repeated key
is searched up to its first occurrence (``json.loads`` keeps the last).

The bytes are decoded whole first (in the declared charset, else UTF-8/16/32 as JSON
allows), so an invalid byte anywhere fails the answer and is named.
"""

from __future__ import annotations

import json
import re
from json.decoder import scanstring

_DECODER = json.JSONDecoder()
_SPACE = re.compile(r"[ \t\n\r]*")  # JSON's whitespace
_INDEX = re.compile(r"-?\d+")


class BackendResultError(Exception):
    """A backend answered with something that is not a ranking (never retried)."""


def decode_text(payload: bytes, charset: str | None) -> str:
    """The text of an answer's bytes in its declared ``charset`` (else UTF-8/16/32 as JSON allows).

    >>> decode_text('["caf\u00e9"]'.encode("iso-8859-1"), "iso-8859-1")
    '["café"]'
    >>> decode_text(b'["caf\\xe9"]', None)
    Traceback (most recent call last):
    ...
    evaltool.bench.answers.BackendResultError: the response is not valid utf-8 (no charset declared): byte 0xe9 at offset 5
    """
    encoding = charset or json.detect_encoding(payload)
    declared = "" if charset else " (no charset declared)"
    try:
        return payload.decode(encoding)
    except LookupError:
        raise BackendResultError(f"the response declares charset={charset}, which is not a known encoding") from None
    except UnicodeDecodeError as exc:
        raise BackendResultError(f"the response is not valid {encoding}{declared}: byte 0x{payload[exc.start]:02x} "
                                 f"at offset {exc.start}") from None


def read_answer(payload: bytes, charset: str | None, path: str | None):
    """The items at ``path`` (dotted keys, list indexes, ``*`` for every element) of a JSON answer.

    A list comes as an iterator that parses its elements as they are asked for (see the
    module docstring); anything else as its value.

    >>> answer = b'{"took": 3, "hits": [{"id": "a"}, {"id": "b"}, {"id": "c"}]}'
    >>> list(read_answer(answer, None, "hits.*.id")), read_answer(answer, None, "hits.1.id")
    (['a', 'b', 'c'], 'b')
    >>> items = read_answer(b'["a", "b", not JSON', None, None)
    >>> next(items), next(items)
    ('a', 'b')
    >>> next(items)
    Traceback (most recent call last):
    ...
    evaltool.bench.answers.BackendResultError: the response is not JSON: '["a", "b", not JSON'
    >>> list(read_answer(b'{"results": []}', None, "hits.*.id"))
    Traceback (most recent call last):
    ...
    evaltool.bench.answers.BackendResultError: the response has no 'hits' at the top level (found {"results": []})
    """
    text = decode_text(payload, charset)
    parts = path.split(".") if path else []
    items = _reported(text, _walk(text, _SPACE.match(text).end(), parts, []))
    return items if "*" in parts else next(items)


def _reported(text: str, items):
    """``items``, with a JSON syntax error turned into the failure the report shows."""
    try:
        yield from items
    except json.JSONDecodeError:
        raise BackendResultError(f"the response is not JSON: {text[:80]!r}") from None


def _walk(text: str, at: int, parts: list[str], trail: list[str]):
    """The items at ``parts`` below the value that starts at ``text[at]`` (see :func:`read_answer`)."""
    for index, part in enumerate(parts):
        opener = text[at:at + 1]
        if opener == "[" and part == "*":
            rest, below = parts[index + 1:], [*trail, part]
            for element in _elements(text, at):
                yield from spread(element, rest, below)
            return
        if opener == "[" and _INDEX.fullmatch(part) and part.startswith("-"):
            # counting from the end needs the whole list
            yield from spread(_DECODER.raw_decode(text, at)[0], parts[index:], trail)
            return
        if opener == "{":
            found = next((start for key, start in _members(text, at) if key == part), None)
        elif opener == "[" and _INDEX.fullmatch(part):
            found = next((start for n, start in enumerate(_element_starts(text, at)) if n == int(part)), None)
        else:
            _DECODER.raw_decode(text, at)  # a scalar, or not JSON at all
            found = None
        if found is None:
            raise _missing(part, trail, " ".join(text[at:at + 200].split())[:80])
        at, trail = found, [*trail, part]
    if text.startswith("[", at) and "*" not in parts:  # the ranking itself
        yield _reported(text, _elements(text, at))
    else:
        yield _DECODER.raw_decode(text, at)[0]


def _members(text: str, at: int):
    """(key, where its value starts) of each member of the object at ``text[at]``, in order.

    A value is stepped over (parsed by the json scanner) only when the next member is asked for.
    """
    at = _SPACE.match(text, at + 1).end()
    if text.startswith("}", at):
        return
    while True:
        if not text.startswith('"', at):
            raise json.JSONDecodeError("Expecting property name enclosed in double quotes", text, at)
        key, at = scanstring(text, at + 1)
        at = _SPACE.match(text, at).end()
        if not text.startswith(":", at):
            raise json.JSONDecodeError("Expecting ':' delimiter", text, at)
        at = _SPACE.match(text, at + 1).end()
        yield key, at
        at = _after(text, _DECODER.raw_decode(text, at)[1], "}")
        if at is None:
            return


def _element_starts(text: str, at: int):
    """Where each element of the list at ``text[at]`` starts; an element is stepped over when the next is asked for."""
    at = _SPACE.match(text, at + 1).end()
    if text.startswith("]", at):
        return
    while at is not None:
        yield at
        at = _after(text, _DECODER.raw_decode(text, at)[1], "]")


def _elements(text: str, at: int):
    """The elements of the list at ``text[at]``, each parsed when it is asked for."""
    at = _SPACE.match(text, at + 1).end()
    if text.startswith("]", at):
        return
    while at is not None:
        element, end = _DECODER.raw_decode(text, at)
        yield element
        at = _after(text, end, "]")


def _after(text: str, end: int, closer: str) -> int | None:
    """Where the next member or element starts after a value that ends at ``end``; None at ``closer``."""
    at = _SPACE.match(text, end).end()
    if text.startswith(",", at):
        return _SPACE.match(text, at + 1).end()
    if text.startswith(closer, at):
        return None
    raise json.JSONDecodeError("Expecting ',' delimiter", text, at)


def _missing(part: str, trail: list[str], shown: str) -> BackendResultError:
    where = ".".join(trail) or "the top level"
    return BackendResultError(f"the response has no {part!r} at {where} (found {shown})")


def _step(value, part: str, trail: list[str]):
    """``value[part]`` for a dict key or a list index; a BackendResultError naming where it is missing."""
    if isinstance(value, list) and _INDEX.fullmatch(part) and -len(value) <= int(part) < len(value):
        return value[int(part)]
    if isinstance(value, dict) and part in value:
        return value[part]
    raise _missing(part, trail, json.dumps(value, ensure_ascii=False)[:80])


def spread(value, parts: list[str], trail: list[str]):
    """The items at ``parts`` below a parsed ``value``, one at a time (a ``*`` walks a list lazily).

    >>> list(spread({"hits": [{"id": "a"}, {"id": "b"}]}, ["hits", "*", "id"], []))
    ['a', 'b']
    >>> next(spread([["x", "y"]], ["-1", "0"], []))
    'x'
    """
    for index, part in enumerate(parts):
        if part == "*" and isinstance(value, list):
            rest, below = parts[index + 1:], [*trail, part]
            for element in value:
                yield from spread(element, rest, below)
            return
        value = _step(value, part, trail)
        trail = [*trail, part]
    yield value
