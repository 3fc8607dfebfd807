"""Reading an HTTP answer only as far as the run needs it.

A service may answer with millions of hits of which a run keeps ``--limit``.
``json.loads`` would build all of them in one C call that holds the GIL: about 3 s of
CPU for 100 MB, during which the event loop is stuck (other queries' timeouts, Ctrl-C
and SIGTERM wait for it), and some 10 bytes of Python objects per byte of answer.
Instead:

* :class:`AnswerText` decodes the bytes piece by piece as they arrive (in the declared
  charset, which must be a text encoding, else UTF-8/16/32 as JSON allows), so an
  invalid byte anywhere fails the answer and is named, no step holds the loop for long,
  and the text is held to ``--max-response-bytes`` characters as the bytes are;
* :func:`read_answer` walks the text with the :mod:`json` module's own scanner (in C)
  for every value it passes: the keys and list indexes of ``--response-path`` are found
  by stepping over the members and elements before them, and the list under a ``*``
  (or the list the path ends at) is parsed one element at a time, when
  :func:`~evaltool.bench.backends.normalize` asks for the next one. The pieces are
  joined only as far as the walk has got (doubling).

So the work on an answer is what precedes its hits plus the hits that are read; what
follows the ``--limit``-th id is neither parsed nor checked, and an object with a
repeated key is searched up to its first occurrence (``json.loads`` keeps the last).
"""

from __future__ import annotations

import codecs
import json
import re
from json.decoder import scanstring

_DECODER = json.JSONDecoder()
_SPACE = re.compile(r"[ \t\n\r]*")  # JSON's whitespace
_INDEX = re.compile(r"-?\d+")
_FIRST_JOIN = 64 * 1024  # characters joined for the walk at first


class BackendResultError(Exception):
    """A backend answered with something that is not a ranking (never retried)."""


class ResponseTooLarge(Exception):
    """The answer is longer than ``--max-response-bytes``, as bytes or as decoded text (never retried)."""


def text_codec(charset: str) -> str:
    """The codec of a declared ``charset``, which must be a text encoding (bytes to text).

    Python's codec registry also holds bytes-to-bytes and text-to-text transforms
    (``bz2``, ``zlib``, ``base64``, ``hex``, ``rot13``...): as a charset, ``bz2`` would
    inflate 402 bytes into 512 MiB of "text". They are refused, as ``bytes.decode`` refuses them.

    >>> text_codec("ISO-8859-1"), text_codec("utf8")
    ('iso8859-1', 'utf-8')
    >>> text_codec("bz2")
    Traceback (most recent call last):
    ...
    evaltool.bench.answers.BackendResultError: the response declares charset=bz2, which is not a text encoding (a compression or transform codec); expected a text encoding such as utf-8
    """
    try:
        name = codecs.lookup(charset).name
    except LookupError:
        raise BackendResultError(f"the response declares charset={charset}, which is not a known encoding") from None
    try:
        b"\0".decode(name)
    except LookupError:
        raise BackendResultError(
            f"the response declares charset={charset}, which is not a text encoding "
            "(a compression or transform codec); expected a text encoding such as utf-8"
        ) from None
    except UnicodeError:
        pass  # a text encoding in which a lone NUL byte is incomplete or invalid (UTF-16, say)
    return name


class AnswerText:
    """An answer's text, decoded piece by piece as its bytes arrive; at most ``max_chars`` characters.

    >>> text = AnswerText("iso-8859-1"); text.feed('["caf\u00e9"'.encode("iso-8859-1")); text.feed(b"]")
    >>> text.finish()
    ['["café"', ']']
    >>> text = AnswerText(None); text.feed(b'["ok", "caf'); text.feed(b'\\xe9"]')
    Traceback (most recent call last):
    ...
    evaltool.bench.answers.BackendResultError: the response is not valid utf-8 (no charset declared): byte 0xe9 at offset 11
    """

    def __init__(self, charset: str | None, max_chars: int | None = None):
        self.charset = charset
        self.max_chars = max_chars
        self.chars = 0
        self.pieces: list[str] = []
        self._decoder = None
        self._encoding = ""
        self._head = b""  # JSON's encoding is told by the first 4 bytes
        self._fed = 0

    def feed(self, piece: bytes, final: bool = False) -> None:
        if self._decoder is None:
            self._head += piece
            if len(self._head) < 4 and not final:
                return
            piece, self._head = self._head, b""
            self._encoding = text_codec(self.charset) if self.charset else json.detect_encoding(piece)
            self._decoder = codecs.getincrementaldecoder(self._encoding)()
        pending = len(self._decoder.getstate()[0])  # bytes of a character cut between pieces
        try:
            text = self._decoder.decode(piece, final)
        except UnicodeDecodeError as exc:
            declared = "" if self.charset else " (no charset declared)"
            raise BackendResultError(
                f"the response is not valid {self._encoding}{declared}: byte "
                f"0x{exc.object[exc.start]:02x} at offset {self._fed - pending + exc.start}"
            ) from None
        self._fed += len(piece)
        self.chars += len(text)
        if self.max_chars is not None and self.chars > self.max_chars:
            raise ResponseTooLarge(f"the decoded response exceeds --max-response-bytes ({self.max_chars} characters)")
        if text:
            self.pieces.append(text)

    def finish(self) -> list[str]:
        """The text, in pieces (a character cut off at the end is an invalid byte)."""
        self.feed(b"", final=True)
        return self.pieces


def read_answer(pieces: list[str], path: str | None):
    """The items at ``path`` (dotted keys, list indexes, ``*`` for every element) of a JSON answer's text.

    A list comes as an iterator that parses its elements as they are asked for (see the
    module docstring); anything else as its value.

    >>> answer = ['{"took": 3, "hits": [{"id": "a"}, {"i', 'd": "b"}, {"id": "c"}]}']
    >>> list(read_answer(answer, "hits.*.id")), read_answer(answer, "hits.1.id")
    (['a', 'b', 'c'], 'b')
    >>> items = read_answer(['["a", "b", not JSON'], None)
    >>> next(items), next(items)
    ('a', 'b')
    >>> next(items)
    Traceback (most recent call last):
    ...
    evaltool.bench.answers.BackendResultError: the response is not JSON: '["a", "b", not JSON'
    >>> list(read_answer(['{"results": []}'], "hits.*.id"))
    Traceback (most recent call last):
    ...
    evaltool.bench.answers.BackendResultError: the response has no 'hits' at the top level (found {"results": []})
    """
    text = _Prefix(pieces)
    parts = path.split(".") if path else []
    items = _reported(text, _walk(text, text.space(0), parts, []))
    return items if "*" in parts else next(items)


class _Prefix:
    """The start of an answer's text, joined from its pieces as far as the walk needs.

    It only grows, so a position in it stays valid. Each read makes sure that what it
    found is complete: a value counts once a ``,``, ``]`` or ``}`` follows it (a number
    cut at the end of the prefix would look whole), or once the prefix is the whole text.
    """

    def __init__(self, pieces: list[str]):
        self.pieces = pieces
        self.used = 0
        self.s = ""
        self.grow()

    def grow(self) -> None:
        wanted, taken = max(len(self.s), _FIRST_JOIN), []
        while self.used < len(self.pieces) and wanted > 0:
            taken.append(self.pieces[self.used])
            wanted -= len(taken[-1])
            self.used += 1
        self.s += "".join(taken)
        self.whole = self.used == len(self.pieces)

    def space(self, at: int) -> int:
        """Where the first character after the whitespace at ``at`` is."""
        while True:
            end = _SPACE.match(self.s, at).end()
            if end < len(self.s) or self.whole:
                return end
            self.grow()

    def char(self, at: int) -> str:
        while at >= len(self.s) and not self.whole:
            self.grow()
        return self.s[at : at + 1]

    def key(self, at: int) -> tuple[str, int]:
        """The string whose opening quote is at ``at``, and where it ends."""
        while True:
            try:
                return scanstring(self.s, at + 1)
            except json.JSONDecodeError:
                if self.whole:
                    raise
            self.grow()

    def value(self, at: int):
        """The value that starts at ``at``, and where it ends."""
        while True:
            try:
                value, end = _DECODER.raw_decode(self.s, at)
            except json.JSONDecodeError:
                if self.whole:
                    raise
            else:
                follows = _SPACE.match(self.s, end).end()
                if self.whole or self.s[follows : follows + 1] in (",", "]", "}"):
                    return value, end
            self.grow()


def _reported(text: _Prefix, items):
    """``items``, with a JSON syntax error turned into the failure the report shows."""
    try:
        yield from items
    except json.JSONDecodeError:
        text.char(80)  # the quote shows the first 80 characters, however few the walk needed
        raise BackendResultError(f"the response is not JSON: {text.s[:80]!r}") from None


def _walk(text: _Prefix, at: int, parts: list[str], trail: list[str]):
    """The items at ``parts`` below the value that starts at ``at`` (see :func:`read_answer`)."""
    for index, part in enumerate(parts):
        opener = text.char(at)
        if opener == "[" and part == "*":
            rest, below = parts[index + 1 :], [*trail, part]
            for element in _elements(text, at):
                yield from spread(element, rest, below)
            return
        if opener == "[" and _INDEX.fullmatch(part) and part.startswith("-"):
            # counting from the end needs the whole list
            yield from spread(text.value(at)[0], parts[index:], trail)
            return
        if opener == "{":
            found = next((start for key, start in _members(text, at) if key == part), None)
        elif opener == "[" and _INDEX.fullmatch(part):
            found = next((start for n, start in enumerate(_element_starts(text, at)) if n == int(part)), None)
        else:
            text.value(at)  # a scalar, or not JSON at all
            found = None
        if found is None:
            text.char(at + 200)
            raise _missing(part, trail, " ".join(text.s[at : at + 200].split())[:80])
        at, trail = found, [*trail, part]
    if text.char(at) == "[" and "*" not in parts:  # the ranking itself
        yield _reported(text, _elements(text, at))
    else:
        yield text.value(at)[0]


def _members(text: _Prefix, at: int):
    """(key, where its value starts) of each member of the object at ``at``, in order.

    A value is stepped over (parsed by the json scanner) only when the next member is asked for.
    """
    at = text.space(at + 1)
    if text.char(at) == "}":
        return
    while True:
        if text.char(at) != '"':
            raise json.JSONDecodeError("Expecting property name enclosed in double quotes", text.s, at)
        key, at = text.key(at)
        at = text.space(at)
        if text.char(at) != ":":
            raise json.JSONDecodeError("Expecting ':' delimiter", text.s, at)
        at = text.space(at + 1)
        yield key, at
        at = _after(text, text.value(at)[1], "}")
        if at is None:
            return


def _element_starts(text: _Prefix, at: int):
    """Where each element of the list at ``at`` starts; an element is stepped over when the next is asked for."""
    at = text.space(at + 1)
    if text.char(at) == "]":
        return
    while at is not None:
        yield at
        at = _after(text, text.value(at)[1], "]")


def _elements(text: _Prefix, at: int):
    """The elements of the list at ``at``, each parsed when it is asked for."""
    at = text.space(at + 1)
    if text.char(at) == "]":
        return
    while at is not None:
        element, end = text.value(at)
        yield element
        at = _after(text, end, "]")


def _after(text: _Prefix, end: int, closer: str) -> int | None:
    """Where the next member or element starts after a value that ends at ``end``; None at ``closer``."""
    at = text.space(end)
    if text.char(at) == ",":
        return text.space(at + 1)
    if text.char(at) == closer:
        return None
    raise json.JSONDecodeError("Expecting ',' delimiter", text.s, at)


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
            rest, below = parts[index + 1 :], [*trail, part]
            for element in value:
                yield from spread(element, rest, below)
            return
        value = _step(value, part, trail)
        trail = [*trail, part]
    yield value
