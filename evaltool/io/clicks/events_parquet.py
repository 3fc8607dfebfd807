"""An events table as Parquet, read a row group at a time; messages name the row."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from evaltool.errors import ParseError
from evaltool.io.clicks import events as events_table
from evaltool.io.clicks.builder import Builder
from evaltool.io.clicks.events import EventBatches
from evaltool.io.clicks.values import RESERVED


DICTIONARY_COLUMNS = ("action", "session_id", "query_id", "query", "impression_id")


def _first_line(exc: Exception) -> str:
    """What a library said, on one line (Arrow's messages may end in a newline or go on for several)."""
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


def read_events_parquet(path: str, builder: Builder) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        handle = pq.ParquetFile(path)
        # ids and actions as Parquet stores them, a dictionary and an index per row: decoded
        # without writing every row's text, and coded a dictionary entry at a time (doc_id is
        # left as text: a log's many documents overflow Parquet's dictionaries into plain pages,
        # which Arrow would hash back into a dictionary)
        coded = [
            field.name
            for field in handle.schema_arrow
            if field.name in DICTIONARY_COLUMNS and pa.types.is_string(field.type)
        ]
        if coded:
            handle = pq.ParquetFile(path, read_dictionary=coded)
    except (pa.ArrowException, OSError) as exc:
        raise ParseError(path, None, None, f"a readable Parquet file ({_first_line(exc)})") from None
    columns = handle.schema_arrow.names
    start = 0

    def line_of(row):
        return (None, None) if row is None else (f"row {start + row + 1}", None)

    events = EventBatches(builder, columns, line_of)
    wanted = [c for c in columns if c in RESERVED or c in ("session_id", "query_id") or c in builder.field_names]

    def decoded(group):
        return handle.read_row_group(group, columns=wanted, use_threads=True)

    # a row group at a time, its columns decoded in Arrow's threads, then cut into batches: one
    # reader over the whole file would keep decoded pages of the row groups it has passed
    # (~100 MB more at 10M events); a row group is some tens of MB decoded. The next row group
    # is decoded in a thread of its own while this one is encoded (Arrow's decoding lets go of
    # the GIL), so decoding and encoding share the cores; at most two row groups are held.
    with ThreadPoolExecutor(max_workers=1) as pool:
        try:
            ahead = pool.submit(decoded, 0) if handle.num_row_groups else None
            for group in range(handle.num_row_groups):
                table = ahead.result()
                ahead = pool.submit(decoded, group + 1) if group + 1 < handle.num_row_groups else None
                for batch in table.to_batches(max_chunksize=events_table.TABLE_BATCH_ROWS):
                    events.add(batch)
                    start += batch.num_rows
                del table
        except (pa.ArrowException, OSError) as exc:  # a damaged page, a column chunk that cannot be decoded
            raise ParseError(path, f"row {start + 1}", None, f"a readable Parquet file ({_first_line(exc)})") from None
