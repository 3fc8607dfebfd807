"""Small text files people write by hand (reference numbers, topics): read as UTF-8."""

from __future__ import annotations

from evaltool.errors import ParseError


def read_text(path) -> tuple[str, str]:
    """(display name, text) of a UTF-8 file; gzip is found by its magic bytes."""
    from evaltool.io.common import read_bytes

    name, data = read_bytes(path)
    try:
        return name, data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ParseError(name, None, None, f"UTF-8 text ({exc.reason} at byte {exc.start})") from None
