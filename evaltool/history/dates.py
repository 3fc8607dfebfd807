"""Dates of executions: ISO-8601 in, UTC text of one fixed width out (``2025-01-28T09:30:00Z``).

A date without a time is midnight UTC when it is a recording date or the start of a
range, and the whole day when it ends a range (both ends are inclusive). A time
without an offset is UTC; one with an offset is converted.

>>> stamp(parse_when("2025-01-28"))
'2025-01-28T00:00:00Z'
>>> stamp(parse_when("2025-01-28T10:15:00+02:00"))
'2025-01-28T08:15:00Z'
>>> range_bounds("2025-01-01", "2025-01-31")
('2025-01-01T00:00:00Z', '2025-01-31T23:59:59Z')
"""

from __future__ import annotations

import re
from datetime import date, datetime, time, timedelta, timezone

from evaltool.errors import HistoryError

STAMP = "%Y-%m-%dT%H:%M:%SZ"
DATE_ONLY = re.compile(r"^\d{4}-\d{2}-\d{2}$")
EXPECTED = "an ISO-8601 date or time such as 2025-01-28, 2025-01-28T09:30 or 2025-01-28T09:30:00Z"


def _is_day(value) -> bool:
    return (isinstance(value, date) and not isinstance(value, datetime)) or (
        isinstance(value, str) and bool(DATE_ONLY.match(value.strip())))


def parse_when(value, what: str = "date") -> datetime:
    """A datetime in UTC from ISO-8601 text, a date or a datetime (naive means UTC)."""
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, date):
        moment = datetime.combine(value, time())
    elif isinstance(value, str):
        text = value.strip()
        if text.endswith(("Z", "z")):
            text = text[:-1] + "+00:00"
        try:
            moment = datetime.fromisoformat(text)
        except ValueError:
            raise HistoryError(f"{what} {value!r}: expected {EXPECTED}") from None
    else:
        raise HistoryError(f"{what} {value!r}: expected {EXPECTED}")
    if moment.tzinfo is None:
        return moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc)


def stamp(moment: datetime) -> str:
    """The stored form: UTC to the second."""
    return moment.astimezone(timezone.utc).strftime(STAMP)


def now() -> datetime:
    return datetime.now(timezone.utc)


def range_bounds(date_from=None, date_to=None) -> tuple[str | None, str | None]:
    """Inclusive stored-form bounds of ``--from`` / ``--to`` (a day as ``--to`` is the whole day)."""
    low = stamp(parse_when(date_from, "--from")) if date_from is not None else None
    high = None
    if date_to is not None:
        end = parse_when(date_to, "--to")
        if _is_day(date_to):
            end = end + timedelta(days=1) - timedelta(seconds=1)
        high = stamp(end)
    if low is not None and high is not None and low > high:
        raise HistoryError(f"--from {date_from} is after --to {date_to}: the range is empty; swap them")
    return low, high
