"""What the fields of a click log hold: their names, ids, timestamps and positions as values."""

from __future__ import annotations

import math
from datetime import datetime, timezone

QUERY_KEYS = ("consulta", "query")
QUERY_ID_KEYS = ("query_id", "qid")
RESULT_KEYS = ("resultados", "results")
ACTIONS = ("impression", "click")
EVENT_ID_COLUMNS = ("impression_id", "session_id")
RESERVED = {
    *QUERY_KEYS,
    *QUERY_ID_KEYS,
    *RESULT_KEYS,
    "clicks",
    "timestamp",
    "action",
    "doc_id",
    "position",
    "impression_id",
}


def id_text(value) -> str | None:
    """A document or query id as text: strings as they are, integers written out; else None."""
    if isinstance(value, str):
        return value if value.strip() else None
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return None


def seconds_of(value) -> float | None:
    """A timestamp as seconds: a number, or an ISO 8601 text (naive times are UTC); None if neither."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    if isinstance(value, str):
        try:
            stamp = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            return None
        if stamp.tzinfo is None:
            stamp = stamp.replace(tzinfo=timezone.utc)
        return stamp.timestamp()
    return None


POSITION_MAX = 2**31 - 1  # positions are stored as int32


def position_of(value) -> int | None:
    """A 1-based position: a positive integer (or its text) up to POSITION_MAX; None when it is not one.

    >>> position_of(3), position_of("+3"), position_of(3.0), position_of("9" * 5000), position_of(2**40), position_of(0)
    (3, 3, 3, None, None, None)
    """
    if isinstance(value, str):
        digits = value.strip().lstrip("+")
        value = int(digits) if digits.isascii() and digits.isdigit() and len(digits) <= 10 else None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= POSITION_MAX:
        return value
    return None


POSITION_EXPECTED = "a position that is a whole number of 1 or more (1 = the top result)"
CLICK_ID_EXPECTED = "a click that names its impression (an impression_id, or a session_id with query_id or query)"
