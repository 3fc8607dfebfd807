"""Exceptions raised beneath the CLI. The CLI alone turns them into exit codes."""

from __future__ import annotations


QUOTE_LIMIT = 200  # characters of offending text a message shows


def quote(text: str, limit: int = QUOTE_LIMIT) -> str:
    """``text`` quoted for a message, cut to ``limit`` characters when longer (a 100 KB line
    must not become a 100 KB message).

    >>> quote("q1 0 d1 x")
    "'q1 0 d1 x'"
    >>> quote("x" * 1000, limit=5)
    "'xxxxx'... (1000 characters)"
    """
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}... ({len(text)} characters)"


def clip(text: str, limit: int = QUOTE_LIMIT) -> str:
    """``text`` as it is, cut to ``limit`` characters when longer: :func:`quote` without the
    quotes, for ids listed in a message (``skipped: q1, q2``).

    >>> clip("q1"), clip("Q" * 1000, limit=5)
    ('q1', 'QQQQQ... (1000 characters)')
    """
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


class EvaltoolError(Exception):
    """Base class: bad input or an impossible request, reported without a traceback."""


class ParseError(EvaltoolError):
    """A line of an input file is not what its format expects.

    The message names the file, the line number, the text found and what was expected.
    """

    def __init__(self, path: str, line: int | None, text: str | None, expected: str):
        self.path = path
        self.line = line
        self.text = text
        self.expected = expected
        where = f"{path}:{line}" if line is not None else path
        found = f": found {quote(text)}" if text is not None else ""
        super().__init__(f"{where}{found}; expected {expected}")


class MeasureError(EvaltoolError):
    """A measure name or its parameters cannot be understood."""


class InputError(EvaltoolError):
    """Inputs parse but cannot be evaluated together (no common queries, ...)."""


class PackError(EvaltoolError):
    """A relevance pack could not be loaded, raised an exception or answered something unusable."""


class HistoryError(EvaltoolError):
    """The evaluation history cannot be opened, read or written as asked (evaltool.history)."""


class NotFoundError(HistoryError):
    """The history has no execution with the id asked for (the dashboard answers HTTP 404)."""


class EvaltoolWarning(UserWarning):
    """A result was computed, but the inputs deserve a second look (issued with ``warnings.warn``).

    The command line prints each one on stderr; library callers can filter, record or
    escalate them with the :mod:`warnings` module, e.g. make every one an error:

    >>> import warnings
    >>> from evaltool import evaluate
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("error", EvaltoolWarning)
    ...     evaluate({"q1": {"a": 1}, "q2": {"b": 1}}, {"q1": {"a": 1.0}}, ["map"])  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    QueriesSkippedWarning: warning: 1 of the 2 qrels queries have no results ...
    """


class QueriesSkippedWarning(EvaltoolWarning):
    """Judged queries without results in the run were left out of the mean (no ``-c``).

    >>> import warnings
    >>> from evaltool import evaluate
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     _ = evaluate({"q1": {"a": 1}, "q2": {"b": 1}}, {"q1": {"a": 1.0}}, ["map"])
    >>> [type(w.message).__name__ for w in caught]
    ['QueriesSkippedWarning']
    """
