"""An events table, one row per shown document or click (CSV, JSONL or Parquet): its record
batches validated and encoded with vectorised code, whichever layout they come from."""

from __future__ import annotations

import numpy as np

from evaltool.errors import ParseError
from evaltool.io.clicks.builder import Builder
from evaltool.io.clicks.columns import arrow_array, bools, floats, ints, typed
from evaltool.io.clicks.ids import NULL_KEY
from evaltool.io.columnar import numpy_column
from evaltool.io.clicks.values import CLICK_ID_EXPECTED, EVENT_ID_COLUMNS, POSITION_EXPECTED, seconds_of

TABLE_BATCH_ROWS = 1 << 17  # events table rows per Arrow batch
IMPRESSION_ID = -2  # the second half of an impression's key when an impression_id names it


def _is_text(type) -> bool:
    import pyarrow as pa

    return pa.types.is_string(type) or pa.types.is_large_string(type)


def _without_blanks(column):
    """A dictionary-encoded text column with its blank entries' rows made null."""
    import pyarrow as pa
    import pyarrow.compute as pc

    dictionary = column.dictionary
    if not pa.types.is_string(dictionary.type):
        dictionary = pc.cast(dictionary, pa.string())
    blank = blanks(dictionary)
    indices = column.indices
    if blank.any():
        rows = np.append(blank, False)[ints(indices, len(dictionary), np.int64)]
        indices = pc.if_else(arrow_array(rows), typed(None, indices.type), indices)
    elif dictionary is column.dictionary:
        return column
    return pa.DictionaryArray.from_arrays(indices, dictionary)


def _equals(column, text: str) -> np.ndarray:
    """Where a text column (plain or dictionary-encoded) holds ``text``; nulls are not."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if not pa.types.is_dictionary(column.type):
        return bools(pc.equal(column, typed(text)))
    hits = np.append(bools(pc.equal(column.dictionary, typed(text))), False)
    return hits[ints(column.indices, len(column.dictionary), np.int64)]


def blanks(column) -> np.ndarray:
    """Where a string column is empty or only whitespace (Unicode's): what ``utf8_trim_whitespace``
    would leave empty, without writing the trimmed strings. Nulls are not blank.

    >>> import pyarrow as pa
    >>> blanks(pa.array(["", " ", "\u3000\t", " a ", None])).tolist()
    [True, True, True, False, False]
    """
    import pyarrow.compute as pc

    return bools(pc.utf8_is_space(column)) | (ints(pc.binary_length(column), 1, np.int32) == 0)


class EventBatches:
    """Rows of an events table, a record batch at a time, validated and encoded with vectorised code."""

    def __init__(self, builder: Builder, columns: list[str], line_of) -> None:
        self.b = builder
        self.line_of = line_of  # (row number from 0) -> line text for messages
        missing = [c for c in ("action",) if c not in columns]
        if not any(c in columns for c in ("query_id", "query")):
            missing.append("query_id or query")
        if not any(c in columns for c in EVENT_ID_COLUMNS):
            missing.append("impression_id or session_id")
        if "doc_id" not in columns and "position" not in columns:
            missing.append("doc_id or position")
        if missing:
            raise ParseError(
                builder.path,
                line_of(None)[0],
                ", ".join(columns),
                f"the events table's columns; missing: {'; '.join(missing)}",
            )
        self.columns = columns

    def _fail(self, row: int, text, expected: str):
        where, found = self.line_of(row)
        if found is None and text is not None:
            found = str(text)
        raise ParseError(self.b.path, where, found, expected)

    def add(self, batch) -> None:
        import pyarrow as pa
        import pyarrow.compute as pc

        b = self.b
        n = batch.num_rows
        if n == 0:
            return
        cols = {name: batch.column(name) for name in batch.schema.names if name in self.columns}

        def text_column(name, plain=False):
            """The column as text, blank texts as null: a dictionary-encoded column (Parquet's ids)
            stays one (its dictionary checked, not its rows) unless ``plain``."""
            column = cols.get(name)
            if column is None or pa.types.is_null(column.type):
                return pa.nulls(n, pa.string())
            if pa.types.is_dictionary(column.type) and not plain and _is_text(column.type.value_type):
                return _without_blanks(column)
            if pa.types.is_large_string(column.type) or pa.types.is_dictionary(column.type):
                column = pc.cast(column, pa.string())
            if pa.types.is_string(column.type):
                blank = blanks(column)
                return pc.if_else(arrow_array(blank), typed(None, pa.string()), column) if blank.any() else column
            if pa.types.is_integer(column.type):
                return pc.cast(column, pa.string())
            self._fail(int(np.argmax(~bools(pc.is_null(column)))), None, f"{name}: a text or a whole number")

        def first(mask: np.ndarray, text, expected: str) -> None:
            if mask.any():
                row = int(np.argmax(mask))
                self._fail(row, text(row) if callable(text) else text, expected)

        action = text_column("action")
        is_imp = _equals(action, "impression")
        is_click = _equals(action, "click")
        first(~(is_imp | is_click), None, "action 'impression' or 'click'")

        if "query_id" in cols and "query" in cols:
            query = pc.coalesce(text_column("query_id", plain=True), text_column("query", plain=True))
        else:
            query = text_column("query_id") if "query_id" in cols else text_column("query")
        no_query = bools(pc.is_null(query))
        names = text_column("impression_id") if "impression_id" in cols else text_column("session_id")
        no_key = bools(pc.is_null(names)) if "impression_id" in cols else bools(pc.is_null(names)) | no_query
        if no_key.any():
            row = int(np.argmax(no_key))
            self._fail(
                row,
                None,
                CLICK_ID_EXPECTED if is_click[row] else CLICK_ID_EXPECTED.replace("a click", "an impression row"),
            )
        first(no_query & is_imp, None, "an impression row with its query_id or query")

        doc = text_column("doc_id", plain=True)
        doc_null = bools(pc.is_null(doc))
        position = self._positions(cols.get("position"), n)
        no_pos = position == 0
        first(is_imp & (doc_null | no_pos), None, "an impression row with doc_id and position")
        first(is_click & doc_null & no_pos, None, "a click row with doc_id or position")
        stamps = self._timestamps(cols.get("timestamp"), n)

        # an impression is named by (its impression_id's key, -2) or (its session_id's key, its query's code)
        q_codes = b.queries.codes(query)
        id_key = self._id_keys(names)
        second = np.full(n, IMPRESSION_ID, np.int32) if "impression_id" in cols else q_codes
        imp = self._impressions(id_key, second)
        b.impressions_up_to(len(b.impression_pairs))
        unset = (q_codes >= 0) & (b.imp_query.data[imp] < 0)
        b.imp_query.data[imp[unset]] = q_codes[unset]
        for name in b.field_names:
            if name in cols:
                values = b.field_vocab[name].codes(text_column(name))
                store = b.field_code[name].data
                open_ = (values >= 0) & (store[imp] < 0)
                store[imp[open_]] = values[open_]
        np.fmin.at(b.imp_time.data, imp[is_imp], stamps[is_imp])
        d_keys = b.docs.keys(doc)
        b.add_shown(imp[is_imp], d_keys[is_imp], position[is_imp])
        b.add_clicks(imp[is_click], d_keys[is_click], position[is_click], stamps[is_click])
        b.counts["events"] += n
        b.counts["clicks_read"] += int(is_click.sum())

    def _id_keys(self, column) -> np.ndarray:
        """Exact keys of session or impression ids (``NULL_KEY`` for null): of a dictionary-encoded
        column, its dictionary's keys taken by the rows' indices."""
        import pyarrow as pa

        if not pa.types.is_dictionary(column.type):
            return self.b.id_keys.keys(column)
        keys = np.append(self.b.id_keys.keys(column.dictionary), NULL_KEY)
        return keys[ints(column.indices, len(column.dictionary), np.int64)]

    def _impressions(self, key: np.ndarray, second: np.ndarray) -> np.ndarray:
        """The impression code of each row named by (key, second): the batch's distinct pairs
        (Arrow's hash, in first-seen order) looked up in, or added to, the log's pairs."""
        import pyarrow.compute as pc

        local = pc.dictionary_encode(arrow_array(key))
        distinct_key = numpy_column(local.dictionary, np.uint64)
        pair = (ints(local.indices, 0, np.int64) << 32) | (second.astype(np.int64) & 0xFFFFFFFF)
        pairs = pc.dictionary_encode(arrow_array(pair))
        distinct = numpy_column(pairs.dictionary, np.int64)
        halves = distinct_key[distinct >> 32], (distinct & 0xFFFFFFFF).astype(np.uint32).view(np.int32)
        return self.b.impression_pairs.codes(*halves)[ints(pairs.indices, 0, np.int64)]

    def _positions(self, column, n: int) -> np.ndarray:
        """1-based positions as int32, 0 where none is given; a bad one stops with its row."""
        import pyarrow as pa
        import pyarrow.compute as pc

        if column is None or pa.types.is_null(column.type):
            return np.zeros(n, np.int32)
        if pa.types.is_large_string(column.type):
            column = pc.cast(column, pa.string())
        if pa.types.is_string(column.type):
            texts = pc.utf8_trim_whitespace(column)
            blank = blanks(texts) | bools(pc.is_null(texts))
            ok = bools(pc.match_substring_regex(texts, r"^\+?[0-9]{1,9}$"))
            bad = ~(ok | blank)
            if bad.any():
                row = int(np.argmax(bad))
                self._fail(row, column[row].as_py(), POSITION_EXPECTED)
            column = pc.cast(pc.if_else(arrow_array(ok), texts, typed(None, pa.string())), pa.int64())
        elif pa.types.is_floating(column.type):
            values = floats(column)
            bad = ~np.isnan(values) & ((values != np.floor(values)) | np.isinf(values))
            if bad.any():
                row = int(np.argmax(bad))
                self._fail(row, column[row].as_py(), POSITION_EXPECTED)
            column = pc.cast(column, pa.int64(), safe=False)
        elif not pa.types.is_integer(column.type):
            self._fail(int(np.argmax(~bools(pc.is_null(column)))), None, POSITION_EXPECTED)
        given = ~bools(pc.is_null(column))
        values = ints(column, 0, np.int64)
        bad = given & ((values < 1) | (values > np.iinfo(np.int32).max))
        if bad.any():
            row = int(np.argmax(bad))
            self._fail(row, int(values[row]), POSITION_EXPECTED)
        return values.astype(np.int32)

    def _timestamps(self, column, n: int) -> np.ndarray:
        import pyarrow as pa
        import pyarrow.compute as pc

        if column is None or pa.types.is_null(column.type):
            return np.full(n, np.nan)
        if pa.types.is_timestamp(column.type):
            micros = ints(pc.cast(pc.cast(column, pa.timestamp("us", column.type.tz)), pa.int64()), 0, np.int64)
            return np.where(bools(pc.is_null(column)), np.nan, micros / 1e6)
        if pa.types.is_integer(column.type) or pa.types.is_floating(column.type):
            return floats(column)
        if pa.types.is_large_string(column.type):
            column = pc.cast(column, pa.string())
        if pa.types.is_string(column.type):
            try:
                return floats(column)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                pass
            out = np.full(n, np.nan)
            for row, value in enumerate(column.to_pylist()):
                if value is None or not value.strip():
                    continue
                try:
                    out[row] = float(value)
                    continue
                except ValueError:
                    pass
                seconds = seconds_of(value)
                if seconds is None:
                    self._fail(row, value, "a timestamp: seconds or an ISO 8601 time")
                out[row] = seconds
            return out
        self._fail(0, None, "a timestamp: seconds or an ISO 8601 time")
