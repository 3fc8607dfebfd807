"""Click logs read on a Dask cluster: the workers compute each impression's click values.

The log (a JSONL file of impression objects, a path or an fsspec URL every worker can
reach) is cut into blocks at line ends as :mod:`evaltool.engines.dask` cuts a run; each
worker reads its block and computes every measure per impression
(:func:`evaltool.clicks.values.impression_values`); only those values come back. The
client joins them in file order, so summaries, intervals and groups are exactly the
local engine's. A malformed line is named by its line in the whole file.
"""

from __future__ import annotations

import os

import numpy as np

from evaltool.engines import dask as engine
from evaltool.errors import EvaltoolError, ParseError


def _click_block(path: str, offset: int, length: int | None, measures, fields: list[str], first_click: str) -> dict:
    """Read one block of a JSONL log of impression objects: each measure's value per impression.

    A malformed line comes back as ``error`` (its line in the block) instead of raising, so
    that the client can name the line of the whole file.
    """
    from evaltool.clicks.values import impression_values
    from evaltool.clicks.metrics import DEFAULT_MEASURES, parse_click_measures
    from evaltool.io.clicks import read_click_log

    data = engine.read_lines_block(path, offset, length)
    lines = data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)
    if not data.strip():
        return {"lines": lines, "empty": True}
    with engine.spilled(data, ".jsonl") as name:
        try:
            clicks = read_click_log(name, fields=fields)
        except ParseError as exc:
            return {"lines": lines, "error": (exc.line, exc.text, exc.expected)}
    names = list(measures) if measures is not None else [*DEFAULT_MEASURES, "time_to_first_click"]
    return {
        "lines": lines,
        "empty": False,
        "format": clicks.format,
        "query_ids": clicks.query_ids,
        "imp_query": clicks.imp_query,
        "fields": clicks.fields,
        "counts": clicks.counts,
        "imp_times": bool(np.isfinite(clicks.imp_time).any()),
        "click_times": bool(np.isfinite(clicks.click_time).any()),
        "values": impression_values(clicks, parse_click_measures(names), first_click),
    }


def _click_layout(path: str) -> str:
    """What the log is, from its first non-blank line (read through fsspec, so URLs work)."""
    from evaltool.io.kinds import layout_of_first_line

    with engine.open_url(path) as handle:
        head = handle.read(1 << 16)
    if head[:2] == b"\x1f\x8b":
        import gzip

        with engine.open_url(path) as handle, gzip.open(handle) as unpacked:
            head = unpacked.read(1 << 16)
    first = next((line for line in head.split(b"\n") if line.strip()), b"")
    return layout_of_first_line(first.decode("utf-8", "replace"))


def click_values(
    log, measures, fields: list[str], first_click: str, *, scheduler: str | None = None, block_bytes: int | None = None
):
    """A JSONL click log read in blocks by the workers; the values per impression come back.

    Impressions keep the file's order and queries their first-seen order, so the client's
    summaries, intervals and groups are those of the local engine.
    """
    from evaltool.clicks.values import ClickValues
    from evaltool.io.clicks import read_click_log

    if not isinstance(log, (str, os.PathLike)):
        raise EvaltoolError(
            "--engine dask reads a click log file (a path or URL every worker can reach); "
            "lists of impressions are evaluated locally"
        )
    path = os.fspath(log)
    try:
        layout = _click_layout(path)
        ranges, _ = engine.block_ranges(path, engine.BLOCK_BYTES if block_bytes is None else block_bytes)
    except (OSError, ValueError) as exc:
        raise EvaltoolError(f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}") from None
    if layout != "jsonl":
        raise EvaltoolError(
            f"--engine dask reads click logs of impression objects in JSONL (one impression per "
            f"line); {path} is read as {layout}: use the local engine"
        )
    client = engine.get_client(scheduler)
    futures = [
        client.submit(_click_block, path, offset, length, measures, fields, first_click, pure=False)
        for offset, length in ranges
    ]
    blocks = client.gather(futures)
    line = 0
    for block in blocks:
        if "error" in block:
            local, text, expected = block["error"]
            raise ParseError(path, None if local is None else line + local, text, expected)
        line += block["lines"]
    blocks = [b for b in blocks if not b["empty"]]
    if not blocks:
        read_click_log(path, fields=fields)  # the local reader's message for a log without impressions
    index: dict[str, int] = {}
    imp_query: list[np.ndarray] = []
    values: dict[str, list[np.ndarray]] = {}
    field_values: dict[str, list] = {name: [] for name in fields}
    counts: dict[str, int] = {}
    for block in blocks:
        codes = np.array([index.setdefault(q, len(index)) for q in block["query_ids"]], dtype=np.int64)
        imp_query.append(codes[block["imp_query"]] if len(codes) else block["imp_query"].astype(np.int64))
        for name, array in block["values"].items():
            values.setdefault(name, []).append(array)
        for name in fields:
            field_values[name].extend(block["fields"][name])
        for key, count in block["counts"].items():
            counts[key] = counts.get(key, 0) + count
    counts["queries"] = len(index)
    has_timestamps = any(b["imp_times"] for b in blocks) and any(b["click_times"] for b in blocks)
    return ClickValues(
        path,
        blocks[0]["format"],
        list(index),
        np.concatenate(imp_query).astype(np.int32),
        field_values,
        counts,
        has_timestamps,
        {name: np.concatenate(parts) for name, parts in values.items()},
    )
