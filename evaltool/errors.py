"""Exceptions raised beneath the CLI. The CLI alone turns them into exit codes."""

from __future__ import annotations


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
        found = f": found {text!r}" if text is not None else ""
        super().__init__(f"{where}{found}; expected {expected}")


class MeasureError(EvaltoolError):
    """A measure name or its parameters cannot be understood."""


class InputError(EvaltoolError):
    """Inputs parse but cannot be evaluated together (no common queries, ...)."""


class PackError(EvaltoolError):
    """A relevance pack could not be loaded, raised an exception or answered something unusable."""


class HistoryError(EvaltoolError):
    """The evaluation history cannot be opened, read or written as asked (evaltool.history)."""


class EvaltoolWarning(UserWarning):
    """Something the user should know about an evaluation that still ran (queries skipped, ...).

    The same messages are on the result (``EvalResult.warnings``); the command line prints
    those and silences this category.
    """
