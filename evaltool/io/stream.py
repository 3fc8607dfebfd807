"""Reading a run as a sequence of whole queries, with memory bounded by a chunk.

``--stream`` evaluates a run that is too large to hold at once: rows are read in
blocks, cut at query boundaries, and each chunk of whole queries becomes its own
:class:`~evaltool.inputs.Run`. Runs are normally grouped by query (every line of a query
together, as systems write them). When a query comes back after another one started,
:func:`iter_run_chunks` raises :class:`NotGroupedError`; :func:`iter_partitions` then
splits the file by a hash of the query id into temporary files small enough to read
whole, so an ungrouped run is still evaluated in bounded memory (one more pass).
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import numpy as np

from evaltool.inputs import Run
from evaltool.errors import InputError, ParseError, quote
from evaltool.io import columnar
from evaltool.io.kinds import pyarrow_available
from evaltool.io.common import Encoder, check_text, compression, decode, head, piped, reading, resolve_duplicates

CHUNK_ROWS = 1 << 18  # rows per evaluated chunk (at least; cut at a query boundary)
BLOCK_BYTES = 1 << 23  # bytes of whole lines parsed at a time
BUCKET_BYTES = 32 << 20  # size of a hash partition of an ungrouped run


def line_of_row(path: str, row: int) -> tuple[int, str]:
    """File line number and text of the ``row``-th content line (0-based); for error messages."""
    seen = -1
    with reading(path) as handle:
        for number, raw in enumerate(handle, 1):
            fields = raw.split()
            if fields and fields[0][:1] != b"#":
                seen += 1
                if seen == row:
                    return number, decode(raw.rstrip(b"\r\n"))
    return row + 1, ""


class NotGroupedError(ParseError):
    """The run is not grouped by query (a query's lines are not all together)."""


class _Grouping:
    """Remembers finished queries so that a query split across the file is caught."""

    def __init__(self, path: str):
        self.path = path
        self.finished: set[str] = set()

    def close(self, qids, first_row: int, row_of) -> None:
        for qid in qids:
            if qid in self.finished:
                line, text = line_of_row(self.path, row_of(qid))
                raise NotGroupedError(
                    self.path,
                    line,
                    text,
                    f"a run grouped by query for --stream: query {quote(qid)} appeared earlier and "
                    "again here (group it first, e.g. sort -s -k1,1 run.txt, or drop --stream)",
                )
        self.finished.update(qids)


def _chunk_run(path, qids, docs, scores, row0, on_duplicate, runid, jobs: int | None = None) -> Run:
    """A Run from one chunk of rows (row0 = index of its first content row in the file).

    ``qids``/``docs`` are Arrow arrays (columnar blocks) or lists of str (line reader).
    """
    scores = np.asarray(scores, dtype=np.float64)
    if isinstance(qids, list):
        q_enc, d_enc = Encoder(), Encoder()
        qid_codes = np.fromiter((q_enc(q) for q in qids), dtype=np.int64, count=len(qids))
        doc_codes = np.fromiter((d_enc(d) for d in docs), dtype=np.int64, count=len(docs))
        run = Run(q_enc.vocab, qid_codes, d_enc.vocab, doc_codes, scores, None, runid=runid, path=path)
    else:
        run = columnar.run_from_columns(qids, docs, scores, runid, path, jobs)

    def duplicate(first: int, repeated: int) -> None:
        line, text = line_of_row(path, row0 + repeated)
        first_line, _ = line_of_row(path, row0 + first)
        raise ParseError(
            path,
            line,
            text,
            f"each (query, document) pair once; query {quote(run.qid_vocab[run.qid_codes[first]])} "
            f"document {quote(run.doc_text(np.array([first]))[0])} was already given at line "
            f"{first_line} (use --on-duplicate first|max to accept duplicates)",
        )

    if columnar.has_duplicates(run.qid_codes, run.doc_codes, jobs):
        n_docs = int(run.doc_codes.max()) + 1
        keep, dropped = resolve_duplicates(on_duplicate, run.qid_codes, run.doc_codes, scores, n_docs, duplicate)
        run.qid_codes, run.doc_codes, run.scores = run.qid_codes[keep], run.doc_codes[keep], scores[keep]
        run.duplicates_resolved = dropped
    return run


def _arrow_blocks(path: str, delimiter: str, jobs: int | None = None):
    """(qids, docids, scores, tag) per block: Python reads a block of whole lines, pyarrow
    parses it (multi-threaded). Arrow's own streaming reader reads far ahead of its
    consumer, so blocks are cut here to keep memory bounded."""
    import pyarrow as pa
    import pyarrow.csv as csv

    read_options = csv.ReadOptions(column_names=["q", "iter", "d", "rank", "s", "tag"], block_size=1 << 22)
    parse_options = csv.ParseOptions(
        delimiter=delimiter, quote_char=False, double_quote=False, escape_char=False, newlines_in_values=False
    )
    convert_options = csv.ConvertOptions(
        include_columns=["q", "d", "s", "tag"],
        column_types={
            "q": pa.string(),
            "d": pa.string(),
            "s": pa.float64(),
            "tag": pa.dictionary(pa.int32(), pa.string()),
        },
        strings_can_be_null=False,
        quoted_strings_can_be_null=False,
    )
    pa.set_cpu_count(columnar.threads(jobs))
    carry = b""
    line0 = 0  # lines before the block
    with reading(path, counted=True) as handle:
        while True:
            data = handle.read(BLOCK_BYTES)
            final = not data
            data = carry + data
            cut = len(data) if final else data.rfind(b"\n") + 1
            block, carry = data[:cut], data[cut:]
            if block.strip():
                try:
                    table = csv.read_csv(
                        pa.BufferReader(block),
                        read_options=read_options,
                        parse_options=parse_options,
                        convert_options=convert_options,
                    )
                except pa.ArrowInvalid as exc:
                    if "UTF8" not in str(exc):
                        raise
                    # ids that are not UTF-8 (Arrow strings must be): this block through the line
                    # reader, whose ids keep their bytes as the default reader's do
                    yield from _parse_lines(path, enumerate(block.split(b"\n"), line0 + 1))
                else:
                    if table.num_rows:
                        yield (
                            table.column("q").combine_chunks(),
                            table.column("d").combine_chunks(),
                            columnar.numpy_column(table.column("s"), np.float64),
                            table.column("tag")[-1].as_py(),
                        )
                line0 += block.count(b"\n")
            if final:
                break


def _line_blocks(path: str):
    """The same blocks from the line reader (irregular files): exact errors, slower."""
    with reading(path, counted=True) as handle:
        yield from _parse_lines(path, enumerate(handle, 1))


def _parse_lines(path: str, numbered_lines):
    """(qids, docids, scores, tag) blocks of (line number, raw line) pairs, ids as lists of str."""
    from evaltool.io.trec import RUN_EXPECTED, line_text, parse_score

    qids, docs, scores, tag = [], [], [], ""
    for number, raw in numbered_lines:
        fields = raw.split()
        if not fields or fields[0][:1] == b"#":
            continue
        if len(fields) < 6:
            raise ParseError(path, number, line_text(raw.rstrip(b"\n")), RUN_EXPECTED)
        score = parse_score(fields[4])
        if score is None:
            raise ParseError(
                path,
                number,
                line_text(raw.rstrip(b"\n")),
                f"a finite number as the score in field 5, not {quote(decode(fields[4]))}",
            )
        qids.append(decode(fields[0]))
        docs.append(decode(fields[2]))
        scores.append(score)
        tag = decode(fields[5])
        if len(qids) >= min(CHUNK_ROWS, 1 << 20):
            yield qids, docs, np.asarray(scores), tag
            qids, docs, scores = [], [], []
    if qids:
        yield qids, docs, np.asarray(scores), tag


def _concat(parts):
    """One column of several blocks; Arrow blocks become lists when a line-read block is among them."""
    if any(isinstance(part, list) for part in parts):
        return [x for part in parts for x in (part if isinstance(part, list) else part.to_pylist())]
    import pyarrow as pa

    return pa.concat_arrays(parts)


def _tail_start(qids) -> int:
    """Index where the last query of a block starts (it may continue in the next block)."""
    if isinstance(qids, list):
        cut = len(qids)
        while cut > 0 and qids[cut - 1] == qids[-1]:
            cut -= 1
        return cut
    import pyarrow.compute as pc

    differs = pc.not_equal(qids, qids[-1])
    positions = np.flatnonzero(columnar.bool_column(differs))
    return int(positions[-1]) + 1 if len(positions) else 0


def iter_run_chunks(
    path, *, on_duplicate: str = "error", chunk_rows: int | None = None, jobs: int | None = None
) -> Iterator[Run]:
    """Yield Runs of whole queries in file order; the last one carries the run's tag (``jobs``: parsing threads)."""
    chunk_rows = chunk_rows or CHUNK_ROWS
    name = os.fspath(path)
    if name == "-":
        raise InputError("--stream reads a file, not stdin")
    if piped(name):
        raise InputError(
            f"--stream reads a regular file; {name} is a pipe or device (without --stream it is read whole)"
        )
    if not os.path.isfile(name):
        raise InputError(f"cannot read {name}: not a readable file")
    start = head(name)
    check_text(name, start)
    delimiter = columnar.delimiter_of(start, 6) if pyarrow_available() else None
    blocks = _arrow_blocks(name, delimiter, jobs) if delimiter else _line_blocks(name)
    grouping = _Grouping(name)
    pending: list[tuple] = []
    pending_rows = 0
    row0 = 0
    tag = ""
    emitted = False
    try:
        for qids, docs, scores, tag in blocks:  # noqa: B007  (the last block's tag is the run's, after the loop)
            if not np.all(np.isfinite(scores)):
                bad = int(np.flatnonzero(~np.isfinite(scores))[0])
                line, text = line_of_row(name, row0 + pending_rows + bad)
                raise ParseError(name, line, text, "a finite number as the score in field 5")
            pending.append((qids, docs, scores))
            pending_rows += len(scores)
            if pending_rows < chunk_rows:
                continue
            cut = _tail_start(qids)
            done = pending[:-1] + ([(qids[:cut], docs[:cut], scores[:cut])] if cut else [])
            if not done:
                continue
            chunk = _chunk_run(
                name,
                _concat([p[0] for p in done]),
                _concat([p[1] for p in done]),
                np.concatenate([p[2] for p in done]),
                row0,
                on_duplicate,
                "",
                jobs,
            )
            _close(grouping, chunk, row0)
            yield chunk
            emitted = True
            row0 += len(chunk.scores) + chunk.duplicates_resolved
            pending = [(qids[cut:], docs[cut:], scores[cut:])]
            pending_rows = len(scores) - cut
    except (ParseError, InputError):
        raise
    except Exception as exc:  # pyarrow's own parse errors: let the line reader name the line
        if type(exc).__module__.startswith("pyarrow"):
            for _ in _line_blocks(name):
                pass
            raise ParseError(name, None, None, f"a run file in TREC format ({exc})") from None
        raise
    if pending_rows:
        chunk = _chunk_run(
            name,
            _concat([p[0] for p in pending]),
            _concat([p[1] for p in pending]),
            np.concatenate([p[2] for p in pending]),
            row0,
            on_duplicate,
            tag,
            jobs,
        )
        _close(grouping, chunk, row0)
        yield chunk
    elif not emitted:
        raise ParseError(name, None, None, "at least one result line")
    else:
        yield Run([], np.zeros(0, np.int64), [], np.zeros(0, np.int64), np.zeros(0), None, runid=tag, path=name)


def _close(grouping: _Grouping, chunk: Run, row0: int) -> None:
    if len(chunk.qid_codes) == 0:
        return
    present = [chunk.qid_vocab[c] for c in np.unique(chunk.qid_codes)]
    first_row = {}
    changes = np.concatenate(([0], np.flatnonzero(chunk.qid_codes[1:] != chunk.qid_codes[:-1]) + 1))
    heads = chunk.qid_codes[changes]
    if len(np.unique(heads)) != len(heads):
        seen = set()
        for start, code in zip(changes.tolist(), heads.tolist()):
            if code in seen:
                line, text = line_of_row(grouping.path, row0 + start)
                raise NotGroupedError(
                    grouping.path,
                    line,
                    text,
                    f"a run grouped by query for --stream: query {quote(chunk.qid_vocab[code])} "
                    "appeared earlier and again here (group it first, e.g. sort -s -k1,1 run.txt, "
                    "or drop --stream)",
                )
            seen.add(code)
    for start, code in zip(changes.tolist(), heads.tolist()):
        first_row.setdefault(chunk.qid_vocab[code], row0 + start)
    grouping.close(present, row0, first_row.__getitem__)


def iter_partitions(
    path, *, on_duplicate: str = "error", bucket_bytes: int | None = None, jobs: int | None = None
) -> Iterator[Run]:
    """Yield Runs of whole queries from an ungrouped run, via temporary hash partitions."""
    bucket_bytes = bucket_bytes or BUCKET_BYTES
    import tempfile
    import zlib

    from evaltool.io.load import read_run

    name = os.fspath(path)
    size = os.path.getsize(name)
    buckets = max(1, -(-size // bucket_bytes))
    if _is_compressed(name):
        buckets *= 4  # compressed size underestimates the text
    tag = ""
    with tempfile.TemporaryDirectory(prefix="evaltool-") as folder:
        files = [open(os.path.join(folder, f"part{i}.txt"), "wb") for i in range(buckets)]
        try:
            with reading(name, counted=True) as handle:
                for raw in handle:
                    fields = raw.split(None, 1)
                    if not fields or fields[0][:1] == b"#":
                        continue
                    files[zlib.crc32(fields[0]) % buckets].write(raw if raw.endswith(b"\n") else raw + b"\n")
                    tag_fields = raw.split()
                    if len(tag_fields) >= 6:
                        tag = decode(tag_fields[5])
        finally:
            for handle in files:
                handle.close()
        for i in range(buckets):
            part = os.path.join(folder, f"part{i}.txt")
            if os.path.getsize(part) == 0:
                continue
            try:
                run = read_run(part, on_duplicate=on_duplicate, jobs=jobs)
            except ParseError:
                read_run(name, on_duplicate=on_duplicate)  # the whole file names the real line
                raise
            run.path, run.runid = name, tag
            yield run


def _is_compressed(path: str) -> bool:
    with open(path, "rb") as handle:
        return compression(handle.read(16)) is not None
