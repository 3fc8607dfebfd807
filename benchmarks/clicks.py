"""Click-log rows for the benchmark harness: seeded events tables (JSONL and Parquet), events per second.

A data set is a pure function of its spec: impressions of ``depth`` results, each for one
of ``n_queries`` queries (Zipf-like popularity) in its own session, clicks drawn with a
position-biased probability (0.45 / position), timestamps in seconds. Rows are one per
shown document, then one per click, impression after impression — ~``events`` rows.

    .venv/bin/python benchmarks/clicks.py clicks-S clicks-10M     # generate only

``run.py`` times ``evaltool clicks LOG -m click_mrr -m ctr -m ctr@10 -o json`` on the
JSONL and the Parquet file as whole processes and reports events per second and peak RSS,
side by side with the same three metrics as one DuckDB query over the same file
(:func:`duckdb_sql`, run by ``drivers/duckdb_clicks.py``): what a data engineer would
otherwise write.
"""
from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass

import numpy as np

GENERATOR_VERSION = 1
COMMAND = ["clicks", "-m", "click_mrr", "-m", "ctr", "-m", "ctr@10", "-o", "json"]


@dataclass(frozen=True)
class ClickSpec:
    name: str
    seed: int
    impressions: int
    depth: int = 10
    n_queries: int = 50_000
    n_docs: int = 2_000_000


CLICK_SPECS = {
    "clicks-S": ClickSpec("clicks-S", seed=5, impressions=10_000),
    "clicks-10M": ClickSpec("clicks-10M", seed=6, impressions=920_000),   # ~10M events
}
QUICK_CLICKS = ["clicks-S"]
ALL_CLICKS = ["clicks-S", "clicks-10M"]
CHUNK = 50_000                    # impressions per generated chunk


# evaltool's definitions (evaltool/clicks/metrics.py, evaltool/io/clicks/) as SQL, for an events
# table whose impressions are named by (session_id, query_id) and whose click rows name their
# document, as the logs generated here are:
# * log order is the file's row order (ev.rn);
# * an impression shows, at each position, the first document given for it in log order;
# * a click's rank is its document's top-most shown position in its impression; a click on
#   a document the impression did not show is ignored, and each document counts once (its
#   first click in log order);
# * an impression is a (session_id, query_id) with a shown document (a key with click rows
#   only enters no metric);
# * click_mrr = mean over impressions of 1 / rank of the first click in log order (0
#   without a click); ctr = mean of clicked / shown; ctr@10 = mean of clicked at ranks
#   1..10 / shown at positions 1..10, over the impressions that showed something there;
# * the mean is micro (over impressions, evaltool's default), summed with fsum as
#   evaltool sums with math.fsum, so the values are equal, not merely close.
DUCKDB_SQL = """
WITH ev AS (
  SELECT {row_number} AS rn, action, session_id, query_id, doc_id, position FROM {source}
),
shown AS (
  SELECT session_id, query_id, position, arg_min(doc_id, rn) AS doc_id
  FROM ev WHERE action = 'impression' GROUP BY ALL
),
impressions AS (
  SELECT session_id, query_id, count(*) AS n_shown, count(*) FILTER (WHERE position <= 10) AS n_shown10
  FROM shown GROUP BY ALL
),
doc_rank AS (
  SELECT session_id, query_id, doc_id, min(position) AS rank FROM shown GROUP BY ALL
),
clicks AS (
  SELECT c.session_id, c.query_id, c.doc_id, min(c.rn) AS rn, any_value(d.rank) AS rank
  FROM ev c JOIN doc_rank d USING (session_id, query_id, doc_id)
  WHERE c.action = 'click' GROUP BY ALL
),
per_impression AS (
  SELECT any_value(i.n_shown) AS n_shown, any_value(i.n_shown10) AS n_shown10,
         count(c.doc_id) AS n_clicks, count(c.doc_id) FILTER (WHERE c.rank <= 10) AS n_clicks10,
         arg_min(c.rank, c.rn) AS first_rank
  FROM impressions i LEFT JOIN clicks c USING (session_id, query_id)
  GROUP BY i.session_id, i.query_id
)
SELECT fsum(coalesce(1.0 / first_rank, 0)) / count(*) AS click_mrr,
       fsum(n_clicks / n_shown) / count(*) AS ctr,
       fsum(n_clicks10 / n_shown10) FILTER (WHERE n_shown10 > 0)
         / count(*) FILTER (WHERE n_shown10 > 0) AS "ctr@10"
FROM per_impression
"""


def duckdb_sql(path: str, layout: str) -> str:
    """The three metrics of ``COMMAND`` as one DuckDB query over the file (``layout``: parquet or jsonl).

    Parquet rows are numbered by DuckDB's ``file_row_number``; JSONL rows by ``row_number() OVER ()``,
    which DuckDB documents as keeping the input's order."""
    quoted = "'" + path.replace("'", "''") + "'"
    if layout == "parquet":
        return DUCKDB_SQL.format(row_number="file_row_number",
                                 source=f"read_parquet({quoted}, file_row_number = true)")
    return DUCKDB_SQL.format(row_number="row_number() OVER ()",
                             source=f"read_json({quoted}, format = 'newline_delimited')")


def paths(cache_dir: str, name: str) -> dict[str, str]:
    return {"jsonl": os.path.join(cache_dir, f"{name}.events.jsonl"),
            "parquet": os.path.join(cache_dir, f"{name}.events.parquet")}


def _chunk(spec: ClickSpec, rng, start: int, n: int) -> dict[str, np.ndarray]:
    """Events of impressions start..start+n as columns."""
    imp = np.arange(start, start + n)
    query = np.minimum(rng.zipf(1.3, size=n), spec.n_queries) - 1
    docs = rng.integers(0, spec.n_docs, size=(n, spec.depth))
    position = np.tile(np.arange(1, spec.depth + 1), (n, 1))
    clicked = rng.random((n, spec.depth)) < 0.45 / position
    when = 1_700_000_000.0 + imp * 3.0
    click_delay = rng.exponential(8.0, size=(n, spec.depth)).round(3)
    shown_rows = n * spec.depth
    c_imp, c_pos = np.nonzero(clicked)
    order = np.argsort(c_imp * (spec.depth + 1) + c_pos, kind="stable")
    c_imp, c_pos = c_imp[order], c_pos[order]
    imp_rows = np.repeat(np.arange(n), spec.depth)
    row_imp = np.concatenate([imp_rows, c_imp])
    row_rank = np.concatenate([np.zeros(shown_rows, np.int64), np.ones(len(c_imp), np.int64)])
    order = np.lexsort((row_rank, row_imp))                  # each impression's rows, then its clicks
    action = np.where(row_rank[order] == 0, "impression", "click")
    doc = np.concatenate([docs.ravel(), docs[c_imp, c_pos]])[order]
    pos = np.concatenate([position.ravel(), c_pos + 1])[order]
    stamp = np.concatenate([np.repeat(when, spec.depth), when[c_imp] + click_delay[c_imp, c_pos]])[order]
    local = row_imp[order]
    return {"session_id": np.char.add("s", (start + local).astype(str)),
            "query_id": np.char.add("q", query[local].astype(str)), "action": action,
            "doc_id": np.char.add("d", doc.astype(str)), "position": pos, "timestamp": stamp}


def generate(cache_dir: str, name: str) -> dict:
    import pyarrow as pa
    import pyarrow.parquet as pq

    spec = CLICK_SPECS[name]
    os.makedirs(cache_dir, exist_ok=True)
    out = paths(cache_dir, name)
    rng = np.random.default_rng(spec.seed)
    clock = time.perf_counter()
    events = 0
    writer = None
    with open(out["jsonl"] + ".tmp", "w") as jsonl:
        for start in range(0, spec.impressions, CHUNK):
            cols = _chunk(spec, rng, start, min(CHUNK, spec.impressions - start))
            table = pa.table({k: pa.array(v.tolist() if v.dtype.kind == "U" else v) for k, v in cols.items()})
            if writer is None:
                writer = pq.ParquetWriter(out["parquet"] + ".tmp", table.schema)
            writer.write_table(table)
            events += table.num_rows
            jsonl.writelines(
                f'{{"session_id": "{s}", "query_id": "{q}", "action": "{a}", "doc_id": "{d}", "position": {p}, '
                f'"timestamp": {t:.3f}}}\n'
                for s, q, a, d, p, t in zip(*(cols[k].tolist() for k in
                                               ("session_id", "query_id", "action", "doc_id", "position",
                                                "timestamp"))))
    writer.close()
    for path in out.values():
        os.replace(path + ".tmp", path)
    meta = {"spec": asdict(spec), "generator_version": GENERATOR_VERSION, "events": events,
            "bytes": {k: os.path.getsize(p) for k, p in out.items()}, "seconds": time.perf_counter() - clock}
    with open(os.path.join(cache_dir, f"{name}.meta.json"), "w") as f:
        json.dump(meta, f)
    return meta


def ensure(cache_dir: str, name: str, log=print) -> tuple[dict, dict]:
    """Paths and meta of click data set ``name``, generated when missing or stale."""
    meta_path = os.path.join(cache_dir, f"{name}.meta.json")
    meta = None
    if os.path.exists(meta_path):
        with open(meta_path) as f:
            meta = json.load(f)
        fresh = (meta.get("generator_version") == GENERATOR_VERSION and meta.get("spec") == asdict(CLICK_SPECS[name])
                 and all(os.path.exists(p) and os.path.getsize(p) == meta["bytes"][k]
                         for k, p in paths(cache_dir, name).items()))
        meta = meta if fresh else None
    if meta is None:
        log(f"generating {name} ...")
        meta = generate(cache_dir, name)
        log(f"  {name}: {meta['events']:,} events in {meta['seconds']:.1f}s")
    return paths(cache_dir, name), meta


if __name__ == "__main__":
    import sys

    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cache")
    for nm in sys.argv[1:] or ALL_CLICKS:
        ensure(here, nm)
