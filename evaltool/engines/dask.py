"""The Dask engine: the same evaluation, partitioned by query over a Dask cluster.

Evaluation is independent per query, so a run is cut by query and each piece is scored
where it lies:

1. **Read** — the workers read the run in byte blocks cut at line ends (a path or an
   fsspec URL that every worker can reach; a compressed file is read whole by one
   worker). Each block's content lines go to the partition of their query id: the
   CRC-32 of its bytes modulo the number of partitions, the same on every machine.
2. **Score** — a partition gathers its lines from every block, in file order, and is
   parsed, ranked and scored by the code every engine scores with
   (:func:`evaltool.evaluation.scoring.score_chunk`), against the judgments of its queries.
3. **Merge** — only per-query values come back to the client, which orders them as
   trec_eval does and aggregates them exactly as the local engine (the same
   :class:`evaltool.evaluation.scoring.ChunkedScores`), so every output is byte-identical.

The judgments are read by the client (they are small next to a run) and sent once to
each worker. Errors name the file and the line of the whole file, as the local reader
does: each block reports its line count, so a partition maps its lines back.

Without a scheduler address a ``LocalCluster`` with one single-threaded worker process
per core is started once and reused for the rest of the process. Dask is an optional
extra (``pip install 'evaltool[dask]'``), imported only here. Click logs are read on the
cluster by :mod:`evaltool.clicks.distributed`, with this module's blocks and client.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import re
import tempfile
import time
import uuid
import zlib

import numpy as np

from evaltool.errors import EvaltoolError, ParseError

BLOCK_BYTES = 64 << 20  # bytes of whole lines a worker reads and splits at a time
PARTITION_BYTES = 32 << 20  # default partition count: about this many bytes of the run each
CONNECT_TIMEOUT = "30s"  # how long to wait for a scheduler named by address
COMPRESSED_MAGIC = (b"\x1f\x8b", b"BZh", b"\xfd7zXZ", b"\x28\xb5\x2f\xfd")  # gzip, bz2, xz, zstd

_clients: dict = {}


def _dask():
    try:
        import dask  # noqa: F401
        import distributed
    except ImportError:
        raise EvaltoolError("--engine dask needs Dask: pip install 'evaltool[dask]'") from None
    return distributed


def get_client(scheduler: str | None = None):
    """A Dask client for ``scheduler`` (an address such as ``tcp://host:8786``), or for a
    ``LocalCluster`` on this machine's cores when None; one per address per process."""
    if scheduler in _clients:
        return _clients[scheduler]
    distributed = _dask()
    try:
        if scheduler is None:
            cluster = distributed.LocalCluster(
                n_workers=os.cpu_count() or 1,
                threads_per_worker=1,
                processes=True,
                dashboard_address=":0",
                silence_logs=logging.ERROR,
            )
            client = distributed.Client(cluster)
        else:
            client = distributed.Client(scheduler, timeout=CONNECT_TIMEOUT)
    except (OSError, TimeoutError) as exc:
        raise EvaltoolError(f"cannot reach the Dask scheduler {scheduler}: {exc}") from None
    _clients[scheduler] = client
    return client


def close_client(scheduler: str | None = None) -> None:
    """Close this process's client for ``scheduler`` (and the local cluster it started, if any)."""
    client = _clients.pop(scheduler, None)
    if client is None:
        return
    cluster = client.cluster if scheduler is None else None
    client.close()
    if cluster is not None:
        cluster.close()


@atexit.register
def close_clients() -> None:
    """Close every client (and local cluster) this process opened."""
    for scheduler in list(_clients):
        close_client(scheduler)


def partition_of(qid: bytes, partitions: int) -> int:
    """The partition of a query id: CRC-32 of its bytes modulo ``partitions`` (stable everywhere).

    >>> partition_of(b"301", 4), partition_of(b"301", 4) == partition_of("301".encode(), 4)
    (2, True)
    """
    return zlib.crc32(qid) % partitions


def open_url(path: str):
    import fsspec

    return fsspec.open(path, "rb")


def block_ranges(path: str, block_bytes: int) -> tuple[list[tuple[int, int | None]], int]:
    """(offset, length) of each block to read, one block (length None) for a compressed
    file; and the file's size in bytes."""
    import fsspec

    with open_url(path) as handle:
        head = handle.read(6)
    fs, _, (real,) = fsspec.get_fs_token_paths(path)
    size = fs.size(real)
    if any(head.startswith(magic) for magic in COMPRESSED_MAGIC):
        return [(0, None)], size
    return [(offset, block_bytes) for offset in range(0, max(size, 1), block_bytes)], size


@contextlib.contextmanager
def spilled(data: bytes, suffix: str):
    """``data`` in a temporary file (for readers that take a path); its name."""
    with tempfile.NamedTemporaryFile(prefix="evaltool-", suffix=suffix) as spill:
        spill.write(data)
        spill.flush()
        yield spill.name


def read_lines_block(path: str, offset: int, length: int | None) -> bytes:
    """Whole lines starting in ``[offset, offset + length)``; a compressed file whole, decompressed."""
    from evaltool.io.common import read_bytes

    if length is None:
        if "://" in path:
            with open_url(path) as handle, spilled(handle.read(), ".run") as name:
                return read_bytes(name)[1]  # decompressed as the local reader does
        return read_bytes(path)[1]
    from dask.bytes.core import read_block

    from evaltool.io.common import BOM

    with open_url(path) as handle:
        data = read_block(handle, offset, length, delimiter=b"\n")
    return data[len(BOM) :] if offset == 0 and data.startswith(BOM) else data


def _segments(data: bytes):
    """Runs of consecutive lines of one query: ``(start, end, query id or None)`` byte ranges.

    A run grouped by query (as systems write them) is a few thousand ranges per block, found
    by one regular-expression search each; blank and comment lines are ranges of their own.
    """
    patterns: dict[bytes, re.Pattern] = {}
    pos, size = 0, len(data)
    while pos < size:
        newline = data.find(b"\n", pos)
        line_end = size if newline < 0 else newline + 1
        fields = data[pos:line_end].split(None, 1)
        if not fields or fields[0][:1] == b"#":
            yield pos, line_end, None
            pos = line_end
            continue
        qid = fields[0]
        if newline < 0 or not data.startswith(qid, pos):  # the last line, or one with leading blanks
            yield pos, line_end, qid
            pos = line_end
            continue
        pattern = patterns.get(qid)
        if pattern is None:
            pattern = patterns[qid] = re.compile(b"\n(?!" + re.escape(qid) + rb"\s)")
        found = pattern.search(data, newline)
        end = size if found is None else found.start() + 1
        yield pos, end, qid
        pos = end


def split_block(path: str, offset: int, length: int | None, partitions: int) -> dict:
    """Read one block and send each query's lines to its partition.

    Returns, per partition, its lines (bytes, each line ending in a newline) with the
    block line number and line count of every range they came from; the block's line
    count; the run tag of its last content line; its three smallest query ids.
    """
    data = read_lines_block(path, offset, length)
    pieces: list[list] = [[] for _ in range(partitions)]
    firsts: list[list[int]] = [[] for _ in range(partitions)]
    counts: list[list[int]] = [[] for _ in range(partitions)]
    cache: dict[bytes, int] = {}
    line = 1
    last_content = None
    first_qids: list[bytes] = []  # the three smallest query ids, in byte order
    view = memoryview(data)
    for start, end, qid in _segments(data):
        lines = data.count(b"\n", start, end)
        whole = lines + (0 if data[end - 1 : end] == b"\n" else 1)
        part = 0 if qid is None else cache.get(qid)
        if part is None:
            part = cache[qid] = partition_of(qid, partitions)
        pieces[part].append(view[start:end])
        if whole > lines:
            pieces[part].append(b"\n")
        firsts[part].append(line)
        counts[part].append(whole)
        if qid is not None:
            last_content = (start, end)
            if qid not in first_qids and (len(first_qids) < 3 or qid < first_qids[-1]):
                first_qids = sorted([*first_qids, qid])[:3]
        line += whole
    tag = b""
    if last_content is not None:
        last_line = data[last_content[0] : last_content[1]].rstrip(b"\n").rsplit(b"\n", 1)[-1].split()
        tag = last_line[5] if len(last_line) >= 6 else b""
    parts = [
        (b"".join(p), np.asarray(f, dtype=np.int64), np.asarray(c, dtype=np.int64))
        for p, f, c in zip(pieces, firsts, counts)
    ]
    return {"parts": parts, "lines": line - 1, "tag": tag, "first_qids": first_qids}


def _piece(split: dict, part: int):
    return split["parts"][part]


def _tag(split: dict) -> tuple[bytes, list[bytes]]:
    return split["tag"], split["first_qids"]


def _line_counts(splits: list[dict]) -> list[int]:
    return [s["lines"] for s in splits]


def _qrels_part(qrels, part: int, partitions: int):
    """The judgments of the queries of one partition (its own query vocabulary, every id used)."""
    from dataclasses import replace

    keep_code = np.array(
        [partition_of(q.encode("utf-8", "surrogateescape"), partitions) == part for q in qrels.qid_vocab], dtype=bool
    )
    mask = keep_code[qrels.qid_codes] if len(qrels.qid_vocab) else np.zeros(0, dtype=bool)
    used, codes = np.unique(qrels.qid_codes[mask], return_inverse=True)
    return replace(
        qrels,
        qid_vocab=[qrels.qid_vocab[c] for c in used],
        qid_codes=codes.astype(qrels.qid_codes.dtype),
        doc_codes=qrels.doc_codes[mask],
        grades=qrels.grades[mask],
        lines=None if qrels.lines is None else qrels.lines[mask],
    )


class _Failure:
    """A ParseError found in a partition, with its line in the whole file (picklable)."""

    def __init__(self, exc: ParseError, duplicate: bool):
        self.args = (exc.path, exc.line, exc.text, exc.expected)
        self.duplicate = duplicate

    def error(self) -> ParseError:
        return ParseError(*self.args)


def _parse_partition(path: str, data: bytes, on_duplicate: str):
    """The partition's lines as a Run, by the reader the local engine would use for that size.

    A large partition goes through a temporary file to the columnar reader (which reads
    files); messages still name ``path``.
    """
    from evaltool.io.kinds import repays_columnar
    from evaltool.io.load import read_run
    from evaltool.io.trec import parse_run

    if not repays_columnar(len(data)):
        return parse_run(path, data, on_duplicate=on_duplicate)
    with spilled(data, ".run") as name:
        try:
            run = read_run(name, on_duplicate=on_duplicate)
        except ParseError as exc:
            raise ParseError(path, exc.line, exc.text, exc.expected) from None
    run.path = path
    return run


def score_partition(
    path: str, part: int, partitions: int, pieces: list, counts: list[int], qrels, scoring, on_duplicate: str
):
    """Parse, rank and score one partition: per-query values only, or a :class:`_Failure`."""
    from evaltool.evaluation.scoring import score_chunk

    data = b"".join(piece for piece, _, _ in pieces)
    if not data:
        return None

    def whole_file_line(line: int) -> int:
        """The file's line number of the partition's ``line``-th line (1-based)."""
        block_starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
        firsts = np.concatenate([f + block_starts[b] for b, (_, f, _) in enumerate(pieces)])
        sizes = np.concatenate([c for _, _, c in pieces])
        ends = np.cumsum(sizes)
        k = int(np.searchsorted(ends, line))  # the range holding the line
        return int(firsts[k] + (line - 1 - (ends[k] - sizes[k])))

    try:
        run = _parse_partition(path, data, on_duplicate)
    except ParseError as exc:
        if exc.line is None:
            raise
        expected = re.sub(r"at line (\d+)", lambda m: f"at line {whole_file_line(int(m.group(1)))}", exc.expected)
        moved = ParseError(exc.path, whole_file_line(exc.line), exc.text, expected)
        return _Failure(moved, duplicate=exc.expected.startswith("each ("))
    qids, columns, missing, unjudged = score_chunk(_qrels_part(qrels, part, partitions), run, scoring)
    return {
        "qids": qids,
        "values": [c.values for c in columns],
        "missing": missing,
        "unjudged": unjudged,
        "rows": len(run),
        "duplicates": run.duplicates_resolved,
    }


def _no_judged_query(qrels_t, path: str, first_qids: list[bytes], options) -> None:
    """Raise the local engine's error for a run none of whose queries is judged (the ranking
    step's own message, from a run of the file's first query ids)."""
    from evaltool.inputs import Run
    from evaltool.io.common import decode
    from evaltool.ranking import rank

    sample = [decode(q) for q in sorted(set(first_qids))[:3]]
    codes = np.arange(len(sample), dtype=np.int64)
    rank(
        qrels_t,
        Run(sample, codes, ["-"], np.zeros(len(sample), np.int64), np.zeros(len(sample)), codes + 1, path=path),
        options,
    )


def score(plan, judgments, run):
    """Score ``run`` on a Dask cluster under ``plan``: the pieces and counts the local engine would make."""
    from evaltool.evaluation.scoring import Scored
    from evaltool.inputs import Qrels
    from evaltool.io.kinds import streamed_format

    run_kind = plan.inputs.run_format or streamed_format(run)
    if (
        not isinstance(judgments, Qrels)
        or plan.relevance.mode not in ("auto", "qrels")
        or run_kind != "trec"
        or plan.engine.stream
    ):
        raise EvaltoolError(
            "--engine dask reads a TREC run scored against TREC qrels; queries files, "
            "JSONL results, --relevance and --stream need the local engine"
        )
    clock = time.perf_counter()
    pieces, counts = dask_parts(plan, judgments, run)
    return Scored(pieces, counts, judgments, run_kind, timings={"dask": time.perf_counter() - clock})


def dask_parts(plan, qrels_t, run, block_bytes: int | None = None):
    """Score ``run`` on a Dask cluster; the pieces and counts the local engine would have made."""
    import dask

    from evaltool.evaluation.scoring import ChunkedScores, columns_of
    from evaltool.io.common import decode
    from evaltool.io.trec import parse_run

    scoring, on_duplicate = plan.scoring, plan.inputs.on_duplicate
    scheduler, partitions = plan.engine.scheduler, plan.engine.partitions
    if not isinstance(run, (str, os.PathLike)) or os.fspath(run) == "-":
        raise EvaltoolError(
            "--engine dask reads a run file (a path or URL every worker can reach); "
            "dicts, DataFrames and stdin are evaluated locally"
        )
    path = os.fspath(run)
    try:
        ranges, size = block_ranges(path, BLOCK_BYTES if block_bytes is None else block_bytes)
    except (OSError, ValueError) as exc:
        raise EvaltoolError(f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}") from None
    client = get_client(scheduler)
    if partitions is None:
        workers = len(client.scheduler_info().get("workers", {}))
        partitions = max(2 * workers, -(-size // PARTITION_BYTES), 1)
    if partitions < 1:
        raise EvaltoolError(f"--partitions {partitions}: expected 1 or more")
    split = dask.delayed(split_block, pure=True)
    piece = dask.delayed(_piece, pure=True)
    splits = [split(path, offset, length, partitions) for offset, length in ranges]
    counts = dask.delayed(_line_counts, pure=True)(splits)
    # a literal of the graph, not scattered data: a worker lost mid-run costs a recomputation, not the run
    qrels_ref = dask.delayed(qrels_t, name=f"qrels-{uuid.uuid4().hex}", traverse=False)
    score_task = dask.delayed(score_partition, pure=True)
    scored = [
        score_task(path, p, partitions, [piece(s, p) for s in splits], counts, qrels_ref, scoring, on_duplicate)
        for p in range(partitions)
    ]
    tags = [dask.delayed(_tag, pure=True)(s) for s in splits]
    results, tags = client.gather(client.compute([scored, tags]))
    failures = [r for r in results if isinstance(r, _Failure)]
    if failures:
        # the error the local reader meets first: a malformed line before any duplicate
        first = min(failures, key=lambda f: (f.duplicate, f.args[1]))
        raise first.error()
    scores = ChunkedScores()
    for result in results:
        if result is None:
            continue
        # a partition none of whose queries is judged has no columns
        columns = columns_of(scoring.requests, result["values"]) if len(result["qids"]) else []
        scores.add(
            (result["qids"], columns, result["missing"], result["unjudged"]),
            rows=result["rows"],
            duplicates=result["duplicates"],
            tag="",
        )
    if not any(result is not None for result in results):
        parse_run(path, b"")  # the local reader's message for a run without a result line
    scores.tag = decode(next((tag for tag, _ in reversed(tags) if tag), b""))
    if not scores.seen:
        _no_judged_query(qrels_t, path, [q for _, first in tags for q in first], scoring.ranking)
    return scores.finish(qrels_t, scoring, path, plan.inputs.runid)
