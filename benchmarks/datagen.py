"""Seeded synthetic TREC qrels/run files for the benchmark harness.

Every data set is a pure function of (name, GENERATOR_VERSION): the same bytes on
every machine.  Run lines are built with numpy directly into byte buffers (digit by
digit, whole columns at a time) and written in chunks, so 20M lines take seconds,
not minutes.

Run files look like real TREC runs:  ``qid Q0 docid rank score tag``, grouped by
query (except the shuffled variant), ranks 1..depth in file order, scores strictly
descending except for ~3% of lines that tie with the line above.  Tied lines are in
random docid order, so a tool that breaks ties by file order/rank instead of by
trec_eval's rule (score desc, then docid desc) gets different numbers.
"""
from __future__ import annotations

import datetime as dt
import json
import os
import time
from dataclasses import asdict, dataclass

import numpy as np

# Bump whenever the bytes a spec produces change: cached files are regenerated.
GENERATOR_VERSION = 1

MSMARCO_PASSAGES = 8_841_823     # passage ids 0..8,841,822
MSMARCO_MAX_QID = 1_102_400      # dev qids fall below this


@dataclass(frozen=True)
class Spec:
    name: str
    seed: int
    n_queries: int
    depth: int                   # documents per query in the run
    qrels_model: str             # "sparse" (MS MARCO dev-like) or "pooled" (graded, TREC DL-like)
    judged: tuple = (0, 0)       # pooled: judged docs per query, uniform in [lo, hi]
    max_grade: int = 1
    decimals: int = 6
    tie_rate: float = 0.03
    tag: str = "bm25"
    shuffled: bool = False       # lines in random order (same data as the unshuffled spec)
    base: str = ""               # the spec whose data a shuffled spec permutes
    n_docs: int = MSMARCO_PASSAGES
    max_qid: int = MSMARCO_MAX_QID
    systems: int = 1             # robust: runs of as many systems (the first is the data set's run)


SPECS = {
    "S": Spec("S", seed=11, n_queries=50, depth=100, qrels_model="pooled", judged=(20, 40),
              max_grade=2, decimals=4, tag="small"),
    "DL": Spec("DL", seed=19, n_queries=43, depth=1000, qrels_model="pooled", judged=(120, 300),
               max_grade=3, decimals=6, tag="dl"),
    "L": Spec("L", seed=7, n_queries=6980, depth=1000, qrels_model="sparse"),
    "XL": Spec("XL", seed=23, n_queries=20000, depth=1000, qrels_model="sparse",
               max_qid=1_500_000),
}
SPECS["R03"] = Spec("R03", seed=2003, n_queries=100, depth=1000, qrels_model="robust", judged=(900, 1600),
                    max_grade=2, tie_rate=0.02, tag="pircRB03", systems=17)
SPECS["L-shuffled"] = Spec(**{**asdict(SPECS["L"]), "name": "L-shuffled", "shuffled": True, "base": "L"})

CHUNK_QUERIES = 500              # queries per generated chunk (500k lines at depth 1000)


# ---------------------------------------------------------------- byte formatting

def _ndigits(v: np.ndarray) -> np.ndarray:
    n = np.ones(v.shape, np.int64)
    t = 10
    while True:
        m = v >= t
        if not m.any():
            return n
        n += m
        t *= 10


def _put_uint(buf, pos, v, nd):
    """Write non-negative ints v (with nd digits each) into buf at byte offsets pos."""
    v = v.astype(np.int64, copy=True)
    end = pos + nd - 1
    lo = int(nd.min())
    for k in range(int(nd.max())):
        d = (v % 10).astype(np.uint8) + 48
        v //= 10
        if k < lo:
            buf[end - k] = d
        else:
            m = nd > k
            buf[(end - k)[m]] = d[m]


def _put_fixed(buf, pos, v, width):
    """Zero-padded fixed-width ints."""
    v = v.astype(np.int64, copy=True)
    for k in range(width):
        buf[pos + width - 1 - k] = (v % 10).astype(np.uint8) + 48
        v //= 10


def _put_const(buf, pos, s: bytes):
    for i, c in enumerate(s):
        buf[pos + i] = c


def format_run_lines(qid, docid, rank, score_units, decimals, tag) -> bytes:
    """One 'qid Q0 docid rank score tag' line per element (score = score_units / 10**decimals)."""
    tagb = (" " + tag + "\n").encode()
    scale = 10 ** decimals
    s_int, s_frac = np.divmod(score_units, scale)
    nq, nd, nr, ni = _ndigits(qid), _ndigits(docid), _ndigits(rank), _ndigits(s_int)
    length = nq + 4 + nd + 1 + nr + 1 + ni + 1 + decimals + len(tagb)
    start = np.cumsum(length) - length
    buf = np.empty(int(length.sum()), np.uint8)
    p = start
    _put_uint(buf, p, qid, nq)
    p = p + nq
    _put_const(buf, p, b" Q0 ")
    p = p + 4
    _put_uint(buf, p, docid, nd)
    p = p + nd
    buf[p] = 32
    p = p + 1
    _put_uint(buf, p, rank, nr)
    p = p + nr
    buf[p] = 32
    p = p + 1
    _put_uint(buf, p, s_int, ni)
    p = p + ni
    buf[p] = 46
    p = p + 1
    _put_fixed(buf, p, s_frac, decimals)
    _put_const(buf, p + decimals, tagb)
    return buf.tobytes()


# ---------------------------------------------------------------- data model

def _distinct_docids(rng, n_rows, depth, n_docs):
    """(n_rows, depth) docids, distinct within each row, in random order."""
    d = rng.integers(0, n_docs, size=(n_rows, depth), dtype=np.int64)
    srt = np.sort(d, axis=1)
    bad = np.nonzero((srt[:, 1:] == srt[:, :-1]).any(axis=1))[0]
    for i in bad:
        d[i] = rng.choice(n_docs, size=depth, replace=False)
    return d


def _scores(rng, n_rows, depth, decimals, tie_rate):
    """(n_rows, depth) integer score units, non-increasing along rows, ~tie_rate ties."""
    unit = 10.0 ** decimals
    top = rng.uniform(15.0, 35.0, size=(n_rows, 1))           # BM25-like top scores
    r = np.arange(1, depth, dtype=np.float64)
    # steep at the top, flat in the tail; total drop ~45% of the top score
    scale = 0.45 * top / (2.0 * np.sqrt(depth)) / np.sqrt(r)
    gaps = np.maximum(1, np.floor(rng.exponential(1.0, size=(n_rows, depth - 1)) * scale * unit))
    gaps[rng.random((n_rows, depth - 1)) < tie_rate] = 0
    units = np.floor(top * unit) - np.concatenate([np.zeros((n_rows, 1)), np.cumsum(gaps, axis=1)], axis=1)
    return units.astype(np.int64)


def _sparse_qrels(rng, qids, docs, n_docs):
    """MS MARCO dev-like: ~1.07 relevant (grade 1) per query, ~86% of them retrieved."""
    n, depth = docs.shape
    k = 1 + (rng.random(n) < 0.055) + (rng.random(n) < 0.012)   # mean ~1.07
    out = []
    for i in range(n):
        seen = set()
        for _ in range(int(k[i])):
            if rng.random() < 0.86:                             # retrieved: log-uniform rank
                rank = min(depth, int(np.exp(rng.uniform(0.0, np.log(depth + 1)))))
                doc = int(docs[i, rank - 1])
            else:                                               # not retrieved
                row = set(docs[i].tolist())
                doc = int(rng.integers(0, n_docs))
                while doc in row:
                    doc = int(rng.integers(0, n_docs))
            if doc not in seen:
                seen.add(doc)
                out.append((int(qids[i]), doc, 1))
    return out


def _pooled_qrels(rng, qids, docs, judged, max_grade, n_docs):
    """TREC DL-like graded judgments: a pool mostly from the run's top ranks plus some
    documents the run missed; grades 0..max_grade, more relevant near the top."""
    n, depth = docs.shape
    out = []
    for i in range(n):
        n_j = int(rng.integers(judged[0], judged[1] + 1))
        n_in = min(depth, int(round(n_j * 0.75)))
        top = min(10, n_in, depth)
        w = 1.0 / np.arange(top + 1, depth + 1) ** 0.7
        rest = rng.choice(np.arange(top, depth), size=n_in - top, replace=False, p=w / w.sum())
        ranks = np.concatenate([np.arange(top), rest]) + 1
        row = set(docs[i].tolist())
        extra = set()
        while len(extra) < n_j - n_in:
            d = int(rng.integers(0, n_docs))
            if d not in row:
                extra.add(d)
        p_rel = np.concatenate([0.15 + 0.7 * np.exp(-ranks / 150.0), np.full(len(extra), 0.2)])
        rel = rng.random(len(p_rel)) < p_rel
        g = rng.integers(1, max_grade + 1, size=len(p_rel)) * rel
        if not rel.any():
            g[0] = max_grade
        qdocs = np.concatenate([docs[i, ranks - 1], np.array(sorted(extra), dtype=np.int64)])
        order = rng.permutation(len(qdocs))                    # qrels order within a query: arbitrary
        out.extend((int(qids[i]), int(qdocs[j]), int(g[j])) for j in order)
    return out


def _chunks(spec: Spec):
    """Yield (qids (n,), docids (n, depth), score units (n, depth), qrels list) per chunk."""
    rng = np.random.default_rng([spec.seed, 0])
    if spec.qrels_model == "sparse":
        qids = rng.choice(spec.max_qid, size=spec.n_queries, replace=False)   # topic-file order
    else:
        qids = np.sort(rng.choice(spec.max_qid, size=spec.n_queries, replace=False))
    for c, lo in enumerate(range(0, spec.n_queries, CHUNK_QUERIES)):
        crng = np.random.default_rng([spec.seed, 1, c])
        q = qids[lo:lo + CHUNK_QUERIES]
        docs = _distinct_docids(crng, len(q), spec.depth, spec.n_docs)
        units = _scores(crng, len(q), spec.depth, spec.decimals, spec.tie_rate)
        if spec.qrels_model == "sparse":
            qrels = _sparse_qrels(crng, q, docs, spec.n_docs)
        else:
            qrels = _pooled_qrels(crng, q, docs, spec.judged, spec.max_grade, spec.n_docs)
        yield q, docs, units, qrels


# ---------------------------------------------------------------- a TREC 2003 Robust stand-in

# TREC disks 4 and 5 without the Congressional Record, the Robust track's collection:
# (source, documents), in this order along the document numbers 0..528,154
ROBUST_SOURCES = (("FBIS", 130_471), ("FR94", 55_630), ("FT", 210_158), ("LA", 131_896))
ROBUST_DOCS = sum(n for _, n in ROBUST_SOURCES)
FBIS3_DOCS = 67_000  # FBIS3-1 .. FBIS3-67000, then FBIS4-1 ..


def robust_docno(i: int) -> str:
    """The document id of document number ``i`` of the Robust collection, in its source's form:
    ``FBIS3-10082``, ``FR940104-0-00001``, ``FT911-3``, ``LA010189-0001``.

    >>> [robust_docno(i) for i in (10081, 130_471, 186_101, 528_154)]
    ['FBIS3-10082', 'FR940103-0-00001', 'FT911-1', 'LA123090-0128']
    """
    for source, n in ROBUST_SOURCES:
        if i < n:
            break
        i -= n
    if source == "FBIS":
        return f"FBIS3-{i + 1}" if i < FBIS3_DOCS else f"FBIS4-{i - FBIS3_DOCS + 1}"
    if source == "FR94":  # 250 documents a publication day, parts 0 and 1
        day = dt.date(1994, 1, 3) + dt.timedelta(days=(i // 250) * 362 // 223)
        return f"FR94{day:%m%d}-{i % 250 // 125}-{i % 125 + 1:05d}"
    if source == "FT":  # Financial Times 1991-1994, one series a quarter
        quarter = i % 16
        return f"FT9{1 + quarter // 4}{1 + quarter % 4}-{i // 16 + 1}"
    day = dt.date(1989, 1, 1) + dt.timedelta(days=i // 181)  # Los Angeles Times 1989-1990
    return f"LA{day:%m%d%y}-{i % 181 + 1:04d}"


def _robust_topics(rng, n_queries: int) -> np.ndarray:
    """Robust 2003's mix: half old topics (of 301-450, the hard ones), half new (601-...)."""
    old = np.sort(rng.choice(np.arange(301, 451), size=n_queries // 2, replace=False))
    return np.concatenate([old, np.arange(601, 601 + n_queries - n_queries // 2)])


# each system: (noise of its ranking, scale and offset of its scores, decimals); scores of
# BM25-like systems positive, of language models negative log probabilities
ROBUST_SCORE_STYLES = ((4.0, 10.0, 4), (1.0, -10.0, 6), (0.05, 0.5, 8))


def _robust_data(spec: Spec):
    """(qrels lines, [run bytes of each system]) of a Robust-like test collection.

    Per topic, a judged pool of ``judged`` documents (uniform), ~5% relevant (a fifth of
    them highly relevant, grade 2) and a few thousand unjudged candidates. Each system
    scores the candidates with a latent relevance plus its own noise, keeps its 1000 best,
    writes them by score (ranks 1..1000, a style of scores of its own, ~2% of lines tied with
    the line above, tied lines in no docid order) and a tag of its own.
    """
    rng = np.random.default_rng([spec.seed, 0])
    topics = _robust_topics(rng, spec.n_queries)
    qrels, runs = [], [[] for _ in range(spec.systems)]
    noise = rng.uniform(0.6, 1.3, size=spec.systems)
    styles = [ROBUST_SCORE_STYLES[s % len(ROBUST_SCORE_STYLES)] for s in range(spec.systems)]
    tags = [f"{spec.tag}{'tdm'[s % 3]}{s // 3 + 1}" for s in range(spec.systems)]
    for t, topic in enumerate(topics):
        trng = np.random.default_rng([spec.seed, 1, t])
        n_judged = int(trng.integers(spec.judged[0], spec.judged[1] + 1))
        docs = trng.choice(ROBUST_DOCS, size=n_judged + 3 * spec.depth, replace=False)
        judged, unjudged = docs[:n_judged], docs[n_judged:]
        relevant = trng.random(n_judged) < 0.05
        grades = relevant * np.where(trng.random(n_judged) < 0.2, 2, 1)
        names = {int(d): robust_docno(int(d)) for d in docs}
        qrels += [f"{topic} 0 {names[int(d)]} {g}\n" for d, g in sorted(zip(judged.tolist(), grades.tolist()),
                                                                     key=lambda p: names[p[0]])]
        # judged documents were pooled from systems' top ranks: most rank above the unjudged
        latent = np.concatenate([np.where(relevant, 2.6, 0.8), np.full(len(unjudged), -0.5)])
        latent += trng.normal(0.0, 1.0, size=len(docs))
        for s, out in enumerate(runs):
            srng = np.random.default_rng([spec.seed, 2, t, s])
            spread, scale, decimals = styles[s]
            system = latent + srng.normal(0.0, noise[s], size=len(docs))
            top = np.argsort(-system, kind="stable")[: spec.depth]
            units = np.round((scale + spread * system[top]) * 10**decimals).astype(np.int64)
            tied = np.flatnonzero(srng.random(spec.depth - 1) < spec.tie_rate) + 1
            units[tied] = units[tied - 1]
            out += [f"{topic} Q0 {names[int(docs[top[r]])]} {r + 1} {units[r] / 10**decimals:.{decimals}f} {tags[s]}\n"
                    for r in range(spec.depth)]
    return "".join(qrels), ["".join(lines).encode() for lines in runs]


def many_paths(cache_dir: str, name: str) -> list[str]:
    """The run files of every system of a ``robust`` data set (the first is its run)."""
    spec = SPECS[name]
    return [os.path.join(cache_dir, f"{name}-many", f"run{s + 1:02d}.txt") for s in range(spec.systems)]


# ---------------------------------------------------------------- files and cache

def paths(cache_dir: str, name: str) -> tuple[str, str]:
    return os.path.join(cache_dir, f"{name}.qrels"), os.path.join(cache_dir, f"{name}.run")


def _meta_path(cache_dir, name):
    return os.path.join(cache_dir, f"{name}.meta.json")


def _wanted_meta(spec: Spec) -> dict:
    # through JSON so that it compares equal to what is read back (tuples become lists)
    return json.loads(json.dumps({"generator_version": GENERATOR_VERSION, "spec": asdict(spec)}))


def is_current(cache_dir: str, name: str) -> bool:
    qrels, run = paths(cache_dir, name)
    try:
        with open(_meta_path(cache_dir, name)) as f:
            meta = json.load(f)
    except (OSError, ValueError):
        return False
    want = _wanted_meta(SPECS[name])
    many = many_paths(cache_dir, name) if SPECS[name].qrels_model == "robust" else []
    return (meta.get("generator_version") == want["generator_version"] and meta.get("spec") == want["spec"]
            and os.path.isfile(qrels) and os.path.isfile(run)
            and os.path.getsize(run) == meta.get("run_bytes") and os.path.getsize(qrels) == meta.get("qrels_bytes")
            and [os.path.getsize(p) if os.path.isfile(p) else None for p in many] == meta.get("many_bytes", []))


def generate(cache_dir: str, name: str) -> dict:
    spec = SPECS[name]
    os.makedirs(cache_dir, exist_ok=True)
    qrels_path, run_path = paths(cache_dir, name)
    meta_path = _meta_path(cache_dir, name)
    if os.path.exists(meta_path):
        os.remove(meta_path)
    t0 = time.perf_counter()
    if spec.qrels_model == "robust":
        return _generate_robust(spec, cache_dir, t0)
    qrels_rows = []
    n_lines = 0
    ranks = np.arange(1, spec.depth + 1, dtype=np.int64)
    with open(run_path + ".tmp", "wb") as out:
        if not spec.shuffled:
            for q, docs, units, qr in _chunks(spec):
                qrels_rows.extend(qr)
                n = docs.size
                out.write(format_run_lines(np.repeat(q, spec.depth), docs.ravel(), np.tile(ranks, len(q)),
                                           units.ravel(), spec.decimals, spec.tag))
                n_lines += n
        else:
            parts = []
            for q, docs, units, qr in _chunks(spec):
                qrels_rows.extend(qr)
                parts.append((np.repeat(q, spec.depth), docs.ravel(), np.tile(ranks, len(q)), units.ravel()))
            cols = [np.concatenate(c) for c in zip(*parts)]
            del parts
            perm = np.random.default_rng([spec.seed, 2]).permutation(len(cols[0]))
            step = CHUNK_QUERIES * spec.depth
            for lo in range(0, len(perm), step):
                idx = perm[lo:lo + step]
                out.write(format_run_lines(*(c[idx] for c in cols), spec.decimals, spec.tag))
            n_lines = len(perm)
    with open(qrels_path + ".tmp", "w") as out:
        out.write("".join(f"{q} 0 {d} {g}\n" for q, d, g in qrels_rows))
    os.replace(run_path + ".tmp", run_path)
    os.replace(qrels_path + ".tmp", qrels_path)
    meta = {**_wanted_meta(spec), "run_lines": n_lines, "qrels_lines": len(qrels_rows),
            "run_bytes": os.path.getsize(run_path), "qrels_bytes": os.path.getsize(qrels_path),
            "seconds": round(time.perf_counter() - t0, 2)}
    with open(meta_path, "w") as f:
        json.dump(meta, f, indent=1)
    return meta


def _generate_robust(spec: Spec, cache_dir: str, t0: float) -> dict:
    qrels_path, run_path = paths(cache_dir, spec.name)
    qrels, runs = _robust_data(spec)
    many = many_paths(cache_dir, spec.name)
    os.makedirs(os.path.dirname(many[0]), exist_ok=True)
    for path, data in [(run_path, runs[0]), *zip(many, runs), (qrels_path, qrels.encode())]:
        with open(path + ".tmp", "wb") as out:
            out.write(data)
        os.replace(path + ".tmp", path)
    meta = {**_wanted_meta(spec), "run_lines": runs[0].count(b"\n"), "qrels_lines": qrels.count("\n"),
            "run_bytes": len(runs[0]), "qrels_bytes": len(qrels.encode()), "many_bytes": [len(r) for r in runs],
            "seconds": round(time.perf_counter() - t0, 2)}
    with open(_meta_path(cache_dir, spec.name), "w") as f:
        json.dump(meta, f, indent=1)
    return meta


def ensure(cache_dir: str, name: str, log=print) -> tuple[str, str, dict]:
    """Paths of (qrels, run) for data set `name`, generating them if missing or stale."""
    if not is_current(cache_dir, name):
        log(f"generating {name} ...")
        meta = generate(cache_dir, name)
        log(f"  {name}: {meta['run_lines']:,} run lines ({meta['run_bytes'] / 1e6:.0f} MB), "
            f"{meta['qrels_lines']:,} qrels lines in {meta['seconds']:.1f}s")
    with open(_meta_path(cache_dir, name)) as f:
        meta = json.load(f)
    return (*paths(cache_dir, name), meta)


if __name__ == "__main__":
    import sys
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cache")
    for nm in sys.argv[1:] or list(SPECS):
        ensure(here, nm)
