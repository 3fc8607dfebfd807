"""Dates of executions: ISO-8601 in, UTC text of one fixed width out (``2025-01-28T09:30:00Z``).

A date without a time is midnight UTC when it is a recording date or the start of a
range, and the whole day when it ends a range (both ends are inclusive). A time
without an offset is UTC; one with an offset is converted. Stored dates are compared
as text, so every one has four digits of year (``0999-06-01T00:00:00Z``, never
``999-06-01...``, which sorts after every date of this millennium).

Any date lies between :data:`FIRST_DAY` and :data:`LAST_DAY` (UTC): at the calendar's
edges a time zone or a day's end would leave it (``0001-01-01T00:00:00+01:00``), and
nothing is recorded there; outside is one message. A recording date (``--at``) lies
between :data:`EARLIEST` and a day from now: one outside, a typo such as 0999 for 1999
or 2205 for 2025, would sort before or after every real execution, and as the newest
become what ``history check`` compares.

>>> stamp(parse_when("2025-01-28"))
'2025-01-28T00:00:00Z'
>>> stamp(parse_when("2025-01-28T10:15:00+02:00")), stamp(parse_when("1000-06-01"))
('2025-01-28T08:15:00Z', '1000-06-01T00:00:00Z')
>>> range_bounds("2025-01-01", "2025-01-31")
('2025-01-01T00:00:00Z', '2025-01-31T23:59:59Z')
"""

from __future__ import annotations

import re
from datetime import date, datetime, time, timedelta, timezone

from evaltool.errors import HistoryError, quote

FIRST_DAY, LAST_DAY = date(1000, 1, 1), date(9999, 12, 30)  # the dates a history takes (UTC)
OUTSIDE = f"outside the dates the history holds; expected a date from {FIRST_DAY} to {LAST_DAY}"
EARLIEST = datetime(1970, 1, 1, tzinfo=timezone.utc)  # the earliest recording date
FUTURE = timedelta(days=1)  # how far ahead of this machine's clock a recording date may be (clocks differ)
DATE_ONLY = re.compile(r"^\d{4}-\d{2}-\d{2}$")
EXPECTED = "an ISO-8601 date or time such as 2025-01-28, 2025-01-28T09:30 or 2025-01-28T09:30:00Z"


def _is_day(value) -> bool:
    return (isinstance(value, date) and not isinstance(value, datetime)) or (
        isinstance(value, str) and bool(DATE_ONLY.match(value.strip()))
    )


class OutsideDates(HistoryError):
    """A date that reads, but outside :data:`FIRST_DAY` .. :data:`LAST_DAY`."""


def parse_when(value, what: str = "date") -> datetime:
    """A datetime in UTC from ISO-8601 text, a date or a datetime (naive means UTC), between
    :data:`FIRST_DAY` and :data:`LAST_DAY`."""
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
            raise HistoryError(f"{what} {quote(value, 60)}: expected {EXPECTED}") from None
    else:
        raise HistoryError(f"{what} {quote(str(value), 60)}: expected {EXPECTED}")
    try:
        moment = moment.replace(tzinfo=timezone.utc) if moment.tzinfo is None else moment.astimezone(timezone.utc)
    except OverflowError:  # a moment whose UTC time falls off the calendar
        raise OutsideDates(f"{what} {quote(str(value), 60)}: {OUTSIDE}") from None
    if not FIRST_DAY <= moment.date() <= LAST_DAY:
        raise OutsideDates(f"{what} {quote(str(value), 60)}: {OUTSIDE}")
    return moment


def recording_date(value, what: str = "--at") -> datetime:
    """When an execution happened, from what :func:`parse_when` reads, between :data:`EARLIEST` and a
    day from now (see the module)."""
    try:
        moment = parse_when(value, what)
    except OutsideDates:
        moment = None
    latest = now() + FUTURE
    if moment is None or not EARLIEST <= moment <= latest:
        raise HistoryError(
            f"{what} {quote(str(value), 60)}: a recording date lies between "
            f"{stamp(EARLIEST)[:10]} and {stamp(latest)[:10]} (UTC); check the year"
        )
    return moment


def stamp(moment: datetime) -> str:
    """The stored form: UTC to the second, four digits of year whatever the C library pads."""
    m = moment.astimezone(timezone.utc)
    return f"{m.year:04d}-{m.month:02d}-{m.day:02d}T{m.hour:02d}:{m.minute:02d}:{m.second:02d}Z"


def now() -> datetime:
    return datetime.now(timezone.utc)


def range_bounds(date_from=None, date_to=None, names=("--from", "--to")) -> tuple[str | None, str | None]:
    """Inclusive stored-form bounds of ``--from`` / ``--to`` (a day as ``--to`` is the whole day);
    ``names`` are what messages call them."""
    low = stamp(parse_when(date_from, names[0])) if date_from is not None else None
    high = None
    if date_to is not None:
        end = parse_when(date_to, names[1])
        if _is_day(date_to):
            end = end.replace(hour=23, minute=59, second=59)
        high = stamp(end)
    if low is not None and high is not None and low > high:
        raise HistoryError(f"{names[0]} {date_from} is after {names[1]} {date_to}: the range is empty; swap them")
    return low, high
