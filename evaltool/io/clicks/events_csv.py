"""An events table as CSV with a header line, read by Arrow's streaming CSV reader; a bad row
is found again by Python's csv module to name its line."""

from __future__ import annotations

import csv
import io

from evaltool.errors import EvaltoolError, ParseError
from evaltool.io.clicks.builder import Builder
from evaltool.io.clicks.events import EventBatches
from evaltool.io.clicks.text import short, utf8

CSV_BLOCK_BYTES = 1 << 24


def _csv_line_of(path: str, opener):
    """Line number (and text) of a CSV data row, found again by a plain reader only when a row is bad."""

    def line_of(row):
        if row is None:
            return 1, None
        with opener() as raw:
            text = io.TextIOWrapper(raw, encoding="utf-8", errors="surrogateescape", newline="")
            reader = csv.reader(text)
            seen = -1
            try:
                next(reader, None)
                for cells in reader:
                    if not any(cells):
                        continue
                    seen += 1
                    if seen == row:
                        return reader.line_num, short(",".join(cells))
            except csv.Error:  # Python's csv module reads less than Arrow's (fields up to 128 KB)
                return None, None
            return reader.line_num, None

    return line_of


def read_events_csv(path: str, opener, builder: Builder) -> None:
    import pyarrow as pa
    import pyarrow.csv as pacsv

    line_of = _csv_line_of(path, opener)
    with opener() as raw:
        try:
            header_line = utf8(path, 1, raw.readline()).strip()
        except OSError as exc:
            raise EvaltoolError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        columns = [c.strip() for c in next(csv.reader([header_line]), [])]
    except csv.Error as exc:
        raise ParseError(path, 1, short(header_line), f"a header line of column names ({exc})") from None
    if len(set(columns)) != len(columns) or not all(columns):
        raise ParseError(path, 1, short(header_line), "a header line of distinct column names")
    events = EventBatches(builder, columns, line_of)
    types = {c: pa.string() for c in columns}
    with opener() as raw:
        try:
            reader = pacsv.open_csv(
                raw,
                read_options=pacsv.ReadOptions(block_size=CSV_BLOCK_BYTES, use_threads=False),
                convert_options=pacsv.ConvertOptions(column_types=types, strings_can_be_null=True),
            )
            start = 0
            for batch in reader:
                events.line_of = lambda row, base=start: line_of(None if row is None else base + row)
                events.add(batch)
                start += batch.num_rows
        except pa.ArrowInvalid as exc:
            raise ParseError(
                path,
                _first_bad_csv_line(opener, len(columns)),
                None,
                f"{len(columns)} comma-separated fields as in the header ({exc})",
            ) from None


def _first_bad_csv_line(opener, width: int):
    """The first line with another number of fields than ``width``, or that Python's csv module
    cannot read either (a field over its 128 KB limit, a newline in an unquoted field)."""
    with opener() as raw:
        reader = csv.reader(io.TextIOWrapper(raw, encoding="utf-8", errors="surrogateescape", newline=""))
        try:
            for cells in reader:
                if any(cells) and len(cells) != width:
                    return reader.line_num
        except csv.Error:
            return reader.line_num + 1
    return None
