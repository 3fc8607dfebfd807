"""An events table as JSONL: through Arrow's block reader when it can, else a line at a time
(which names the line of any problem)."""

from __future__ import annotations

import io
import json

import numpy as np

from evaltool.errors import EvaltoolError, ParseError
from evaltool.io.clicks import events as events_table
from evaltool.io.clicks.builder import BATCH_ROWS, Builder
from evaltool.io.clicks.columns import nullable_array
from evaltool.io.clicks.events import EventBatches
from evaltool.io.clicks.text import json_lines, short
from evaltool.io.clicks.values import POSITION_EXPECTED, RESERVED, position_of, seconds_of

JSON_BLOCK_BYTES = 1 << 20  # Arrow's JSON reader holds dozens of its blocks while parsing
ARROW_NESTING_LIMIT = 1000  # '[' and '{' on one line beyond which Arrow's JSON reader is not trusted


class _JsonlEvents:
    """Events as JSON lines, gathered into record batches for the vectorised checks."""

    def __init__(self, builder: Builder) -> None:
        self.b = builder
        self.events: EventBatches | None = None
        self.rows: list[dict] = []
        self.lines: list[int] = []
        self.texts: list[str] = []

    def add(self, obj: dict, number: int, text: str) -> None:
        if self.events is None:
            self.events = EventBatches(self.b, list(obj), lambda row: (number, short(text)))
        self.rows.append(obj)
        self.lines.append(number)
        self.texts.append(text)
        if len(self.rows) >= BATCH_ROWS:
            self.flush()

    def flush(self) -> None:
        import pyarrow as pa

        if not self.rows:
            return
        names = list(dict.fromkeys(k for row in self.rows for k in row))
        events = self.events
        lines, texts = self.lines, self.texts
        events.line_of = lambda row: (None, None) if row is None else (lines[row], short(texts[row]))
        events.columns = list(dict.fromkeys([*events.columns, *names]))
        data = {}
        for name in names:
            values = [row.get(name) for row in self.rows]
            data[name] = self._column(name, values, lines, texts)
        events.add(pa.RecordBatch.from_pydict(data))
        self.rows, self.lines, self.texts = [], [], []

    def _column(self, name, values, lines, texts):
        import pyarrow as pa

        if name == "timestamp":
            out = []
            for i, v in enumerate(values):
                seconds = None if v is None else seconds_of(v)
                if v is not None and seconds is None:
                    raise ParseError(self.b.path, lines[i], short(texts[i]), "a timestamp: seconds or an ISO 8601 time")
                out.append(seconds)
            return nullable_array(out, pa.float64())
        if name == "position":
            out = []
            for i, v in enumerate(values):
                pos = None if v is None else position_of(v)
                if v is not None and pos is None:
                    raise ParseError(self.b.path, lines[i], short(texts[i]), POSITION_EXPECTED)
                out.append(pos)
            return nullable_array(out, pa.int64())
        out = []
        for i, v in enumerate(values):
            if v is None or isinstance(v, str):
                out.append(v)
            elif isinstance(v, int) and not isinstance(v, bool):
                out.append(str(v))
            elif name in RESERVED or name == "session_id":
                raise ParseError(self.b.path, lines[i], short(texts[i]), f"{name}: a text or a whole number")
            else:
                out.append(json.dumps(v))
        return nullable_array(out, pa.string())


def read_arrow(opener, builder: Builder) -> None:
    """JSONL events through Arrow's block reader (fast); any failure is left to the line reader.

    The reader's memory grows with its block (several dozen blocks' worth in flight: ~200 MB
    at 4 MB blocks), so blocks are small and their batches are gathered into bigger ones for
    the per-batch work. The blocks are parsed in Arrow's threads, ahead of the batch being
    encoded here: parsing is most of the time of a JSONL log, and this way it runs on every
    core and alongside the encoding rather than before it (the batches still come in file
    order)."""
    import pyarrow.json as pajson

    with opener() as raw:
        options = pajson.ReadOptions(block_size=JSON_BLOCK_BYTES, use_threads=True)
        events = None
        for batch in _gathered(
            pajson.open_json(ShallowLines(raw), read_options=options), events_table.TABLE_BATCH_ROWS
        ):
            if events is None:
                events = EventBatches(builder, batch.schema.names, lambda row: (None, None))
            events.add(batch)


class TooDeepForArrow(EvaltoolError):
    """A line that might nest deeper than Arrow's JSON reader goes (the line reader takes the log)."""


class ShallowLines(io.RawIOBase):
    """A binary stream passed through unchanged, refusing (:class:`TooDeepForArrow`) a line
    with :data:`ARROW_NESTING_LIMIT` or more ``[`` and ``{``: Arrow's JSON reader (RapidJSON)
    recurses once per level on the C stack and crashes the process (a segmentation fault)
    on a line nested about 20,000 deep. A line that deep has at least as many bytes, so
    only long lines are counted; event lines are a hundred bytes or so, and the cost is one
    pass of numpy over the bytes looking for a newline in every 500. The count bounds the depth from above
    (brackets inside strings count too): a refused line goes to the line reader, which
    parses it with Python's ``json`` and names it when it really is too deep.
    """

    def __init__(self, raw) -> None:
        super().__init__()
        self.raw = raw
        self.line_bytes = 0  # of the line not ended yet, read so far
        self.line_openers = 0  # its '[' and '{' so far
        self.scratch = np.empty(0, dtype=bool)

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        data = self.raw.read(size)
        if data:
            self._check(data)
        return data

    def readinto(self, buffer) -> int:
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)

    def _check(self, data: bytes) -> None:
        first = data.find(b"\n")
        if first >= 0 and self.line_bytes + first < ARROW_NESTING_LIMIT and not self._long_line_inside(data):
            last = data.rfind(b"\n") + 1  # the common case: no line is long, only the last goes on
            self.line_bytes = len(data) - last
            self.line_openers = data.count(b"[", last) + data.count(b"{", last)
            return
        self._check_each_line(data)

    def _long_line_inside(self, data: bytes) -> bool:
        """Might ``data`` hold a line of ARROW_NESTING_LIMIT bytes or more? Such a line covers a whole
        aligned block of half that many bytes, so it is enough that every block has a newline.
        The comparison goes into a buffer kept from read to read: a new one for each block of
        bytes would be fresh pages from the system each time, and cost more than the comparison."""
        size = ARROW_NESTING_LIMIT // 2
        whole = len(data) // size * size
        if len(self.scratch) < whole:
            self.scratch = np.empty(whole, dtype=bool)
        blocks = np.frombuffer(data, dtype=np.uint8, count=whole).reshape(-1, size)
        newlines = np.equal(blocks, 10, out=self.scratch[:whole].reshape(-1, size))
        return not newlines.any(axis=1).all()

    def _check_each_line(self, data: bytes) -> None:
        ends = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == 10)
        starts = np.concatenate(([0], ends + 1))
        stops = np.concatenate((ends, [len(data)]))
        lengths = stops - starts
        lengths[0] += self.line_bytes
        for i in np.flatnonzero(lengths >= ARROW_NESTING_LIMIT):
            if self._openers(data, int(starts[i]), int(stops[i]), i == 0) >= ARROW_NESTING_LIMIT:
                raise TooDeepForArrow("a line with many '[' or '{'")
        last = len(starts) - 1
        self.line_openers = self._openers(data, int(starts[last]), len(data), last == 0)
        self.line_bytes = int(lengths[last])

    def _openers(self, data: bytes, start: int, stop: int, continued: bool) -> int:
        return data.count(b"[", start, stop) + data.count(b"{", start, stop) + (self.line_openers if continued else 0)


def _gathered(batches, rows: int):
    """Record batches joined into batches of at least ``rows`` rows (the last may have fewer)."""
    import pyarrow as pa

    pending, count = [], 0
    for batch in batches:
        pending.append(batch)
        count += batch.num_rows
        if count >= rows:
            yield _joined_batches(pa, pending)
            pending, count = [], 0
    if count:
        yield _joined_batches(pa, pending)


def _joined_batches(pa, batches):
    if len(batches) == 1:
        return batches[0]
    table = pa.Table.from_batches(batches).combine_chunks()
    batches.clear()
    return table.to_batches()[0]


def read_lines(path: str, opener, builder: Builder) -> None:
    """JSONL events a line at a time, gathered into batches."""
    rows = _JsonlEvents(builder)
    for number, text, obj in json_lines(path, opener):
        if not isinstance(obj, dict):
            raise ParseError(path, number, short(text), "an event object with 'action'")
        rows.add(obj, number, text)
    rows.flush()
