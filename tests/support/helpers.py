"""What the tests share; test modules import this, never one another.

* Outside requirements: ../shared (specification, conformance and real data) and external
  programs (the trec_eval oracle). Locally, tests that need one skip with a reason when it
  is missing; under CI=true they fail.
* The command line in process (``invoke``), files (``write``), the error contract
  (``assert_fails``).
* Seeded random collections for the cross-checks (``generate``, ``write_trec``, ``CASES``).
* ``evaltool bench``: queries files, reports, and fake search backends (spec
  ``tests.support.helpers:NAME``).
"""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import shutil
import threading
import time
import traceback
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from evaltool import evaluate
from evaltool.bench import TransientError
from evaltool.cli import main
from evaltool.cli.app import Interrupted

ROOT = Path(__file__).resolve().parents[2]


def shared_dir() -> Path | None:
    candidates = [os.environ.get("EVALTOOL_SHARED"), ROOT.parent / "shared", ROOT / "shared"]
    for candidate in candidates:
        if candidate and Path(candidate, "conformance").is_dir():
            return Path(candidate)
    return None


def require_program(name: str, hint: str) -> str:
    """Path of an executable on PATH; skip (locally) or fail (CI=true) when there is none."""
    path = shutil.which(name)
    if path is None:
        missing(f"{name} is not on PATH: {hint}")
    return path


def require_shared(*parts: str) -> Path:
    """Path inside ../shared; skip (locally) or fail (CI=true) when it is not there."""
    base = shared_dir()
    path = base.joinpath(*parts) if base else None
    if path is None or not path.exists():
        missing(f"../shared/{'/'.join(parts)} not found next to the repository (set EVALTOOL_SHARED)")
    return path


def missing(reason: str):
    """A component a test needs is not there: skip locally with the reason, fail under CI=true."""
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(reason)
    pytest.skip(reason)


# ---------------------------------------------------------------------------- command line


INTERRUPTED = (Interrupted, KeyboardInterrupt)  # the console script prints one line for these and exits 130


def invoke(*args, input=None, env=None):
    """Run the command line in process as `evaltool ARGS` (the one way the tests run it).

    A traceback is always a failure, whatever the test expects of the exit code: an exception
    escaping the command that the console script (:func:`evaltool.cli.app.run`) does not turn
    into an exit code (the user would see its traceback), or a traceback printed on either stream.
    """
    result = CliRunner().invoke(main, [str(a) for a in args], input=input, env=env, prog_name="evaltool")
    if result.exception is not None and not isinstance(result.exception, (SystemExit, *INTERRUPTED)):
        raise AssertionError("evaltool " + " ".join(map(str, args)) + " raised:\n"
                             + "".join(traceback.format_exception(*result.exc_info))) from result.exception
    assert "Traceback" not in result.stderr and "Traceback" not in result.stdout, result.output
    return result


def write(path, content) -> str:
    """Write text (UTF-8) or bytes to path; return it as a string."""
    path.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
    return str(path)


def assert_fails(result, *fragments, one_line=True):
    """Exit 2, nothing on stdout, no traceback, and every fragment in the message."""
    assert result.exit_code == 2, (result.exit_code, result.stdout, result.stderr, result.exception)
    assert isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.stderr and "Traceback" not in result.stdout
    assert result.stdout == "", "output must not be half-written"
    for fragment in fragments:
        assert fragment in result.stderr, (fragment, result.stderr)
    if one_line:
        assert result.stderr.startswith("evaltool: ") and result.stderr.count("\n") == 1, result.stderr
    return result.stderr


def rows(stdout: str) -> list[tuple[str, str, str]]:
    """trec_eval-format output as (measure, query, value) rows."""
    return [tuple(field.strip() for field in line.split("\t")) for line in stdout.splitlines()]


def score(tmp_path, qrels, run, measures, **options):
    """Evaluate file contents (str or bytes) written to tmp_path."""
    result = evaluate(write(tmp_path / "qrels", qrels), write(tmp_path / "run", run), measures,
                      per_query=True, **options)
    return result


RANKS = {"A": {"q1": 1, "q2": 2, "q3": 4, "q4": 1}, "B": {"q1": 1, "q2": 1, "q3": 2, "q4": 2},
         "C": {"q1": 1, "q2": 1, "q3": 1}}


def write_run(path, tag: str, ranks: dict[str, int], depth: int = 5) -> str:
    """The relevant document d<q> at the given rank among unjudged fillers."""
    lines = []
    for qid, rank in ranks.items():
        docs = [f"x{i}" for i in range(depth - 1)]
        docs.insert(rank - 1, f"d{qid}")
        lines += [f"{qid} Q0 {doc} {i + 1} {depth - i} {tag}" for i, doc in enumerate(docs)]
    path.write_text("\n".join(lines) + "\n")
    return str(path)


# ---------------------------------------------------------------------------- generated collections
# (test_crosscheck.py against pytrec_eval, test_trec_eval_oracle.py against trec_eval)

GRADES = np.array([-2, -1, 0, 1, 2, 3, 4])
PLAIN = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
PUNCT = "-_.:/#+~"
NON_ASCII = ["é", "ß", "ÿ", "Ω", "中"]


@dataclass(frozen=True)
class Scenario:
    name: str
    n_queries: int
    ret_range: tuple[int, int]          # documents retrieved per query
    judged_range: tuple[int, int]       # judgments per query
    grade_probs: tuple[float, ...]      # over GRADES
    scores: str                         # "tenths", "continuous", "integers"
    overlap: float                      # share of judged documents that are also retrieved
    qrels_only: int = 0                 # extra queries with judgments but no results
    run_only: int = 0                   # extra queries with results but no judgments
    id_style: str = "plain"             # "plain" or "stress"
    extremes: bool = False              # add 1-doc, 1000-doc and no-relevant queries


SCENARIOS = {
    "ties": Scenario("ties", 14, (2, 60), (1, 40), (0.05, 0.05, 0.35, 0.25, 0.15, 0.1, 0.05),
                     "tenths", 0.6, qrels_only=2, run_only=2),
    "graded": Scenario("graded", 12, (1, 150), (1, 80), (0.04, 0.04, 0.3, 0.2, 0.18, 0.14, 0.1),
                       "continuous", 0.5, qrels_only=1, run_only=1),
    "extremes": Scenario("extremes", 6, (1, 40), (1, 30), (0.05, 0.05, 0.4, 0.3, 0.1, 0.05, 0.05),
                         "tenths", 0.5, qrels_only=2, run_only=2, extremes=True),
    "docids": Scenario("docids", 10, (3, 80), (2, 50), (0.05, 0.1, 0.35, 0.25, 0.1, 0.1, 0.05),
                       "integers", 0.7, qrels_only=1, run_only=1, id_style="stress"),
    "sparse": Scenario("sparse", 12, (5, 120), (1, 25), (0.3, 0.2, 0.2, 0.15, 0.1, 0.03, 0.02),
                       "tenths", 0.4, qrels_only=1, run_only=1, id_style="stress"),
}


def _stress_id(rng: np.random.Generator) -> str:
    """A document id of 1..14 characters mixing case, digits, punctuation ('#') and UTF-8."""
    length = int(rng.integers(1, 15))
    chars = []
    for _ in range(length):
        pick = rng.random()
        if pick < 0.75:
            chars.append(PLAIN[rng.integers(len(PLAIN))])
        elif pick < 0.93:
            chars.append(PUNCT[rng.integers(len(PUNCT))])
        else:
            chars.append(NON_ASCII[rng.integers(len(NON_ASCII))])
    return "".join(chars)


def _doc_ids(rng: np.random.Generator, n: int, style: str) -> list[str]:
    """``n`` distinct ids; "stress" ids include prefixes of one another ("d1", "d1#", "d10")."""
    out: list[str] = []
    seen: set[str] = set()
    while len(out) < n:
        if style == "plain":
            doc = f"D{int(rng.integers(0, 10 ** int(rng.integers(1, 7))))}"
        elif out and rng.random() < 0.3:
            base = out[int(rng.integers(len(out)))]
            doc = base + _stress_id(rng)[:2] if rng.random() < 0.6 else base[: max(1, len(base) - 1)]
        else:
            doc = _stress_id(rng)
        if doc not in seen:
            seen.add(doc)
            out.append(doc)
    return out


def _scores(rng: np.random.Generator, n: int, kind: str) -> list[float]:
    if kind == "tenths":
        return [round(float(x), 1) for x in rng.uniform(-0.5, 1.5, n)]
    if kind == "integers":
        return [float(x) for x in rng.integers(-2, 4, n)]
    return [float(x) for x in np.round(rng.normal(10.0, 3.0, n), 6)]


def _query(rng, sc: Scenario, n_ret: int, n_judged: int, grade_probs=None, min_grade=0):
    """One query: (judgments {doc: grade}, results {doc: score})."""
    n_overlap = min(n_judged, n_ret, int(round(sc.overlap * n_judged)))
    docs = _doc_ids(rng, n_ret + n_judged - n_overlap, sc.id_style)
    order = rng.permutation(len(docs))
    docs = [docs[i] for i in order]
    retrieved = docs[:n_ret]
    judged = docs[n_ret - n_overlap:n_ret - n_overlap + n_judged]
    probs = np.asarray(grade_probs if grade_probs is not None else sc.grade_probs)
    grades = rng.choice(GRADES, size=len(judged), p=probs / probs.sum())
    if not (grades >= 0).any():
        # trec_eval needs one judgment >= 0 per query (see test_trec_eval_oracle.py)
        grades[int(rng.integers(len(grades)))] = max(min_grade, 0)
    qrels = {doc: int(g) for doc, g in zip(judged, grades)}
    run = dict(zip(retrieved, _scores(rng, n_ret, sc.scores)))
    return qrels, run


def generate(scenario: str, seed: int):
    """Seeded ({qid: {doc: grade}}, {qid: {doc: score}}) for one scenario."""
    sc = SCENARIOS[scenario]
    rng = np.random.default_rng([seed, sum(map(ord, scenario))])
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    # query ids whose byte order differs from numeric order
    qids = [f"{int(x)}" for x in rng.choice(400, size=sc.n_queries, replace=False)]
    for qid in qids:
        n_ret = int(rng.integers(sc.ret_range[0], sc.ret_range[1] + 1))
        n_judged = int(rng.integers(sc.judged_range[0], sc.judged_range[1] + 1))
        qrels[qid], run[qid] = _query(rng, sc, n_ret, n_judged)
    if sc.extremes:
        # one retrieved, one judged (relevant or not); one retrieved of many judged
        for i in range(3):
            qrels[f"one{i}"], run[f"one{i}"] = _query(rng, sc, 1, 1 + 5 * i, min_grade=i % 2)
        # a 1000-document ranking, with and without ties
        big = Scenario("big", 1, (1000, 1000), (300, 300), sc.grade_probs, "tenths", 0.8, id_style="stress")
        qrels["big"], run["big"] = _query(rng, big, 1000, 300)
        big_c = Scenario("big", 1, (1000, 1000), (50, 50), sc.grade_probs, "continuous", 0.5)
        qrels["bigc"], run["bigc"] = _query(rng, big_c, 1000, 50)
        # judged, but nothing relevant (only 0 and negative grades)
        qrels["norel"], run["norel"] = _query(rng, sc, 20, 10, grade_probs=(0.2, 0.2, 0.6, 0, 0, 0, 0))
        # everything relevant, everything retrieved
        every = Scenario("every", 1, (8, 8), (8, 8), sc.grade_probs, "continuous", 1.0)
        qrels["every"], run["every"] = _query(rng, every, 8, 8, grade_probs=(0, 0, 0, 0.3, 0.3, 0.2, 0.2))
    for i in range(sc.qrels_only):
        qrels[f"Q{i}only"], _ = _query(rng, sc, 5, int(rng.integers(1, 20)))
    for i in range(sc.run_only):
        _, run[f"R{i}only"] = _query(rng, sc, int(rng.integers(1, 30)), 3)
    return qrels, run


def write_trec(folder: Path, qrels: dict, run: dict, runid: str = "gen#run") -> tuple[Path, Path]:
    """TREC qrels and run files (no comment lines); returns their paths.

    Qrels and run lines are shuffled so that neither file order nor the rank column
    (deliberately wrong) can stand in for sorting.
    """
    rng = np.random.default_rng(len(qrels) * 7919 + len(run))
    qlines = [f"{q} 0 {d} {g}\n" for q, docs in qrels.items() for d, g in docs.items()]
    rlines = [f"{q} Q0 {d} {i % 7} {s!r} {runid}\n"
              for q, docs in run.items() for i, (d, s) in enumerate(docs.items())]
    qlines = [qlines[i] for i in rng.permutation(len(qlines))]
    rlines = [rlines[i] for i in rng.permutation(len(rlines))]
    qpath, rpath = folder / "qrels.txt", folder / "run.txt"
    qpath.write_bytes("".join(qlines).encode("utf-8"))
    rpath.write_bytes("".join(rlines).encode("utf-8"))
    return qpath, rpath


CASES = [(name, seed) for name in SCENARIOS for seed in (1, 2, 3)]


# ir_measures spellings named in issue 10, canonical forms (test_names.py, test_ir_measures_crosscheck.py)
ISSUE_IR_MEASURES = [
    ("nDCG@10", "nDCG@10"),
    ("P(rel=2)@5", "P(rel=2)@5"),
    ("AP", "AP"),
    ("AP@100", "AP@100"),
    ("R@1000", "R@1000"),
    ("RR", "RR"),
    ("RR@10", "RR@10"),
    ("Rprec", "Rprec"),   # trec_eval's Rprec: the same name, measure and output
    ("Bpref", "Bpref"),
    ("infAP", "infAP"),   # idem
    ("Success@5", "Success@5"),
    ("SetP", "SetP"),
    ("SetR", "SetR"),
    ("SetF(beta=1)", "SetF"),
    ("IPrec@0.5", "IPrec@0.5"),
    ("NumQ", "NumQ"),
    ("NumRet", "NumRet"),
    ("NumRel", "NumRel"),
    ("NumRelRet", "NumRet(rel=1)"),
    ("Judged@10", "Judged@10"),
    ("ERR@20", "ERR@20"),
    ("RBP(p=0.8)", "RBP"),
    ("RBP(p=0.5,rel=2)", "RBP(p=0.5,rel=2)"),
    ("nDCG(dcg='exp-log2')@10", "nDCG(dcg='exp-log2')@10"),
    ("nDCG(gains={0:0,1:1,2:3})@10", "nDCG(gains={2:3})@10"),
    ("nDCG(judged_only=True)@10", "nDCG(judged_only=True)@10"),
]


# ---------------------------------------------------------------------------- evaltool bench


def write_queries(path: Path, queries: list[dict]) -> str:
    path.write_text(json.dumps(queries, indent=1))
    return str(path)


def query(qid, text, expected=("rel1",), category="A", difficulty="easy", **fields) -> dict:
    out = {"id": qid, "query": text, "category": category, "difficulty": difficulty}
    if isinstance(expected, dict):
        out["qrels"] = expected
    else:
        out["relevant_ids"] = list(expected)
    out.update(fields)
    return out


def bench(queries_path, backend, out_dir, *args):
    return invoke("bench", queries_path, "--backend", backend, "--out", out_dir, *args)


def only_report(out_dir) -> tuple[dict, Path]:
    reports = sorted(Path(out_dir).glob("baseline_*.json"))
    assert len(reports) == 1, reports
    return json.loads(reports[0].read_text()), reports[0]


def rescore(report: dict) -> dict:
    """evaltool itself, running the report's own re-score command with ``-q -o json``."""
    command = shlex.split(report["metadata"]["rescore"])
    assert command[0] == "evaltool"
    result = invoke("-q", "-o", "json", *command[1:])
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


# fake search backends
#
# ``fake_search`` does what the query's ``behaviour`` field says (it asks for the field by
# parameter name, as a backend may); every call is counted in ``CALLS`` by query text.
# ``logged_search`` appends each query text to the file named by ``BENCH_CALL_LOG`` and
# sleeps ``BENCH_DELAY`` seconds: the subprocess tests read the log to count calls.

CALLS: Counter = Counter()
_LOCK = threading.Lock()
IN_FLIGHT = {"now": 0, "max": 0}

# what each behaviour returns; expected ids in the tests' queries are "rel1", "rel2"
RANKINGS = {
    "ok": ["rel1", "x1", "rel2", "x2"],
    "slow": ["x1", "rel1"],
    "dupes": ["x1", "rel1", "x1", "rel2", "rel1", "x2"],
    "empty": [],
    "scored": [("x1", 3.5), ("rel1", 2.0, "some text"), ("rel2", 2.0)],
}


def _count(query: str) -> int:
    with _LOCK:
        CALLS[query] += 1
        return CALLS[query]


def fake_search(query, limit=10, behaviour="ok"):
    calls = _count(query)
    if behaviour == "boom":
        raise ValueError("boom")
    if behaviour == "hang":
        time.sleep(3)
    if behaviour == "slow":
        time.sleep(0.2)
    if behaviour == "transient" and calls == 1:
        raise TransientError("overloaded, try again")
    if behaviour == "always_transient":
        raise ConnectionError("connection reset")
    if behaviour == "not_a_list":
        return {"ids": ["rel1"]}
    if behaviour == "mixed":
        return ["rel1", ("x1", 1.0)]
    if behaviour == "bad_score":
        return [("rel1", float("nan"))]
    if behaviour == "spaced_id":
        return ["rel 1"]
    return list(RANKINGS.get(behaviour, RANKINGS["ok"]))


async def async_search(query, limit=10):
    """Counts how many calls are in flight at once."""
    _count(query)
    with _LOCK:
        IN_FLIGHT["now"] += 1
        IN_FLIGHT["max"] = max(IN_FLIGHT["max"], IN_FLIGHT["now"])
    try:
        await asyncio.sleep(0.05)
    finally:
        with _LOCK:
            IN_FLIGHT["now"] -= 1
    return ["rel1", "x1"][:limit]


def threaded_search(query):
    """A sync backend without a limit parameter; counts calls in flight (threads)."""
    _count(query)
    with _LOCK:
        IN_FLIGHT["now"] += 1
        IN_FLIGHT["max"] = max(IN_FLIGHT["max"], IN_FLIGHT["now"])
    try:
        time.sleep(0.05)
    finally:
        with _LOCK:
            IN_FLIGHT["now"] -= 1
    return ["x1", "rel1", "x2", "x3", "x4", "x5"]


def logged_search(query, limit=10):
    with open(os.environ["BENCH_CALL_LOG"], "a", encoding="utf-8") as log:
        log.write(query + "\n")
    time.sleep(float(os.environ.get("BENCH_DELAY", "0.15")))
    return ["rel1", "x1"] if query.endswith("0") else ["x1", "rel1"]


def search_with_corpus(query, limit=10):
    return fake_search(query, limit)


def _corpus_ids():
    """search_with_corpus's corpus: it lacks 'rel2'."""
    return ["rel1", "x1", "x2"]


search_with_corpus.corpus_ids = _corpus_ids


class AsyncSearcher:
    """A callable object whose __call__ is async (a client with state, say)."""

    def __init__(self):
        self.seen = []

    async def __call__(self, query, version=None):
        self.seen.append((query, version))
        await asyncio.sleep(0)
        return [("rel1", 1.0)] if version == "16.0" else [("x1", 1.0)]


async_object = AsyncSearcher()


# ---------------------------------------------------------------------------- clicks


def calcular_mrr_con_clicks(consultas_resultados_clicks):
    """Seed 004, "Opción 1: Feedback Implícito", as written there."""
    reciprocal_ranks = []
    for consulta_data in consultas_resultados_clicks:
        resultados = consulta_data['resultados']
        clicks = consulta_data['clicks']
        if clicks:
            primer_click = clicks[0]
            posicion = resultados.index(primer_click) + 1
            reciprocal_ranks.append(1.0 / posicion)
        else:
            reciprocal_ranks.append(0.0)
    return sum(reciprocal_ranks) / len(reciprocal_ranks)
