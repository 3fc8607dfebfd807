"""JSON text parsed by the standard library, with what it cannot take reported as a syntax error.

Python's parser recurses once per level of nesting and gives up with a ``RecursionError``
near 1,000 levels (the interpreter's recursion limit, less the frames already in use).
Every reader of JSON in evaltool parses through :func:`loads` or :func:`raw_decode`, which
turn that into a :class:`json.JSONDecodeError` pointing at the first character of the
deepest level, so each reader reports it as it reports any other bad JSON: the file,
the line, the text, what was expected.

>>> loads('{"a": [1, 2]}')
{'a': [1, 2]}
>>> try:
...     loads("[" * 100_000)
... except json.JSONDecodeError as exc:
...     print(exc.msg, exc.colno)
JSON nested 100000 levels deep (Python's parser stops near 1000) 100000
"""

from __future__ import annotations

import json
import re
import sys

_OPENERS, _CLOSERS = "[{", "]}"


def too_deep(doc: str, start: int = 0) -> json.JSONDecodeError:
    """The error for a value at ``start`` of ``doc`` nested beyond what the parser follows."""
    depth, deepest, where, in_string, escaped = 0, 0, start, False, False
    for index in range(start, len(doc)):
        char = doc[index]
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in _OPENERS:
            depth += 1
            if depth > deepest:
                deepest, where = depth, index
        elif char in _CLOSERS:
            depth -= 1
            if depth <= 0:
                break
    message = f"JSON nested {deepest} levels deep (Python's parser stops near {sys.getrecursionlimit()})"
    return json.JSONDecodeError(message, doc, where)


def too_long(doc: str, start: int = 0) -> json.JSONDecodeError:
    """The error for an integer of more digits than Python converts (``sys.get_int_max_str_digits()``)."""
    limit = sys.get_int_max_str_digits()
    found = re.compile(rf"\d{{{limit + 1},}}").search(doc, start)
    return json.JSONDecodeError(f"a number of more than {limit} digits", doc, found.start() if found else start)


def loads(text: str):
    """``json.loads(text)``; nesting too deep for the parser, or an integer of more than 4300
    digits (Python's limit on converting text to int), raise :class:`json.JSONDecodeError`."""
    try:
        return json.loads(text)
    except RecursionError:
        raise too_deep(text) from None
    except ValueError as exc:
        if isinstance(exc, json.JSONDecodeError) or "digits" not in str(exc):
            raise
        raise too_long(text) from None


def raw_decode(decoder: json.JSONDecoder, text: str, pos: int):
    """``decoder.raw_decode(text, pos)``; nesting too deep, or a number too long, raise
    :class:`json.JSONDecodeError`."""
    try:
        return decoder.raw_decode(text, pos)
    except RecursionError:
        raise too_deep(text, pos) from None
    except ValueError as exc:
        if isinstance(exc, json.JSONDecodeError) or "digits" not in str(exc):
            raise
        raise too_long(text, pos) from None
