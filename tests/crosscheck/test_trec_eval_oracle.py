"""Byte-for-byte comparison with the real trec_eval 10.0 binary on seeded random collections.

The collections come from the generator of ``tests/crosscheck/test_crosscheck.py`` (ties, graded and
negative grades, 1- and 1000-document queries, '#' and UTF-8 in document ids, queries
only in the qrels or only in the run). The whole output of ``trec_eval`` and of
``evaltool`` for the same command line must be identical.

The binary must be on PATH: ``../shared/tools/build-trec-eval`` builds it and prints its
path (``.ci/run`` does so). Without it these tests skip locally and fail under CI=true.

Input rules, and why:

* trec_eval 10 aborts (exit 4, "result qid ... not found") when a qrels query has no
  results and ``-c`` is not given; evaltool skips such queries with a warning. Without
  ``-c`` the qrels are restricted to the queries of the run.
* No comment lines: trec_eval's qrels reader mishandles consecutive '#' lines.
* Every qrels query has a judgment with grade >= 0. trec_eval's ``form_res_rels``
  sizes ``rel_levels`` by the largest grade of the query and sets ``num_rel_levels``
  only when some level is occupied; for a query with only negative grades (found by
  running it):
    - if it is the first query evaluated, ``rel_levels`` is still NULL: "Can't
      calculate measure" and exit 4;
    - with a grade -2 as largest, ``memset`` gets a negative size: segmentation fault;
    - with -1 as largest, the previous query's ``rel_levels``/``num_rel_levels`` stay
      in place: ``ideal_dcg`` prints the previous query's ideal DCG (evaltool: 0);
      all_trec measures come out 0 either way and agree.
* trec_eval crashes ("double free", exit 134/139) when two of dcg, ideal_dcg and ndcg
  are requested and one of them has parameters (they share one parameter block), so
  each option set below names at most one of them with parameters.
* ``rbp``: ``te_calc_rbp`` reads ``min`` and ``max`` uninitialised before rescaling the
  gains, so its value can depend on which other measures ran before it (with
  ``-m ndcg -m rbp`` on grades {2, 0, 1} trec_eval prints 0.0760 where ``-m rbp`` alone
  prints 0.1000). The option sets below are ones where the stack happens to hold
  harmless values; a failure that shows only rbp would be worth checking for this.
* Repeating ``-m`` for one measure with different parameters is a deliberate CLI
  difference (evaltool prints every list, trec_eval keeps one), so no set repeats one.

trec_eval's nan cases are reproduced, not tolerated: ``iprec_at_recall_*`` and
``11pt_avg`` of an empty ranking (``-J`` with nothing judged retrieved, ``-M 0``) and
``Rndcg`` with relevant documents but no positive ideal gain print ``-nan`` in both, and
every byte must match. (``set_F.-1`` when P = R is 0/0 in trec_eval and 0 in evaltool;
no option set uses a negative beta.)
"""

from __future__ import annotations

import subprocess

import pytest

from evaltool import evaluate
from evaltool.report.trec import format_trec
from tests.support.helpers import CASES, generate, invoke, write_trec


PARAMETERISED = (
    "-m ndcg.1=3,2=0,3=7 -m Rndcg.1=2,2=2 -m ndcg_rel.0=1 -m G.2=5 -m rbp.p=0.8 -m rbp_resid.p=0.5 "
    "-m 11pt_avg.0.2,0.5,0.8 -m utility.3,-2,1,0.5 -N 5000 -m set_F.0.5 -m Rprec_mult.0.3,1.7 -m relstring.15"
)

OPTION_SETS = [
    "-m all_trec -q",
    "-m all_trec -q -c",
    "-m all_trec -q -c -M 7",
    "-m all_trec -q -J",
    "-m all_trec -q -l 2",
    "-m all_trec -q -c -J -l 3",
    "-q " + PARAMETERISED,
    "-q -c " + PARAMETERISED,
    # fractional gains: trec_eval sorts gain levels with an int-truncating comparator
    "-q -m G.1=0.5,3=2.5 -m ndcg_rel.2=0.25,1=0.7 -m Rndcg.1=5,2=1",
    "-q -c -m ndcg.1=0.5,2=1.7,0=0.2 -m G.0=0.3,4=0.9 -m Rndcg.3=0.1,1=2.2 -m ndcg_rel.1=1.5,1=2.5",
    "-q -m ideal_dcg.3=0.5,2=2.25",
    "-q -m dcg.1=2,4=0.5 -m yaap -m set_F.0",
    # relevance levels at the edges, tiny -M, relstring and unj across -M and -J
    "-m all_trec -q -l 0",
    "-m all_trec -q -l 5",
    "-m all_trec -m yaap -m dcg -m ideal_dcg -q -c -M 1",
    "-q -c -J -M 40 -m relstring.30 -m unj.1,50 -m num_nonrel_judged_ret",
    "-q -c -m Rprec_mult.0,0.05,4.5 -m iprec_at_recall.0.05,0.15,0.25,0.35,0.45,0.55,0.65,0.75,0.85,0.95 "
    "-m 11pt_avg.0.15,0.85 -m utility.1,1,1,1 -N 100000",
    # 11pt_avg takes its levels in the order given (trec_eval does not sort them)
    "-q -c -m 11pt_avg.0.5,0.2,0.9,0.1,0.1,0",
    "-q -m 11pt_avg.1.2,0,0.04",
    "-q -J -M 30 -m 11pt_avg.0.3,0.31,0.05",
    # a negative beta can make F's denominator 0: trec_eval prints inf
    "-q -m set_F.-0.5",
    "-q -c -M 0 -m all_trec",
]

def _compare(expected: bytes, got: bytes) -> list[str]:
    """Lines that differ (byte for byte)."""
    want, have = expected.split(b"\n"), got.split(b"\n")
    if len(want) != len(have):
        return [f"trec_eval printed {len(want)} lines, evaltool {len(have)}"]
    return [f"trec_eval {a!r}\n evaltool {b!r}" for a, b in zip(want, have) if a != b]


@pytest.fixture(scope="module")
def oracle_root(tmp_path_factory):
    return tmp_path_factory.mktemp("oracle")


@pytest.mark.parametrize("options", OPTION_SETS)
@pytest.mark.parametrize("scenario,seed", CASES, ids=[f"{n}-{s}" for n, s in CASES])
def test_output_identical_to_trec_eval(trec_eval, oracle_root, scenario, seed, options, reading_mode):
    args = options.split()
    qrels, run = generate(scenario, seed)
    if "-c" not in args:
        qrels = {qid: docs for qid, docs in qrels.items() if qid in run}
    folder = oracle_root / f"{scenario}{seed}{'c' if '-c' in args else ''}"
    if not folder.exists():
        folder.mkdir()
        write_trec(folder, qrels, run)
    qpath, rpath = folder / "qrels.txt", folder / "run.txt"

    reference = subprocess.run([trec_eval, *args, str(qpath), str(rpath)], capture_output=True, timeout=120)
    assert reference.returncode == 0, f"trec_eval failed: {reference.stderr.decode(errors='replace')}"
    assert reference.stdout, "trec_eval printed nothing"

    result = invoke(*[*reading_mode, *args, str(qpath), str(rpath)])
    assert result.exit_code == 0, result.output

    problems = _compare(reference.stdout, result.stdout_bytes)
    assert not problems, f"{len(problems)} lines differ:\n" + "\n".join(problems[:15])


def test_nan_cases_print_like_trec_eval():
    """0/0 cases print glibc's '-nan' (hand check: -J and nothing judged retrieved)."""
    result = invoke(*["-J", "-q", "-m", "iprec_at_recall.0,0.5", "-m", "11pt_avg", "-m", "map",
                                       *_nan_files()])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    # R = 1: level 0 needs lround(0) = 0 relevant documents (0/0 -> nan), level 0.5 needs 1 (-> 0)
    assert "iprec_at_recall_0.00  \tq\t  -nan" in lines
    assert "iprec_at_recall_0.50  \tq\t0.0000" in lines
    assert "11pt_avg              \tq\t  -nan" in lines
    assert "map                   \tq\t0.0000" in lines


def _nan_files():
    import tempfile
    from pathlib import Path

    folder = Path(tempfile.mkdtemp())
    (folder / "qrels").write_text("q 0 rel 1\n")
    (folder / "run").write_text("q Q0 unjudged 1 1.0 t\n")
    return [str(folder / "qrels"), str(folder / "run")]


INVALID_UTF8 = [b"\xff", b"\xf5", b"\xc0", b"\x80", b"\xfe\xfe", b"\xed\xa0\x80"]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_invalid_utf8_ids_order_like_trec_eval(trec_eval, tmp_path, seed):
    """Ids are bytes to trec_eval: invalid UTF-8 mixed with 3- and 4-byte characters must tie-break
    and order queries by unsigned byte order, not by the decoded (surrogate-escaped) text."""
    import numpy as np

    qrels, run = generate("docids", seed)
    rng = np.random.default_rng(seed)
    docs = sorted({d for q in (*qrels.values(), *run.values()) for d in q})
    raw = {}
    for d in docs:
        body = d.encode("utf-8")
        pick = rng.random()
        if pick < 0.3:
            body = INVALID_UTF8[rng.integers(len(INVALID_UTF8))] + body
        elif pick < 0.45:
            body = "\U0001F600\ue000"[rng.integers(2)].encode("utf-8") + body
        raw[d] = body
    qids = {q: (q.encode() if i % 3 else b"\xfe" + q.encode()) for i, q in enumerate(sorted(set(qrels) | set(run)))}
    qrels = {q: docs_ for q, docs_ in qrels.items() if q in run}
    (tmp_path / "q").write_bytes(b"".join(b"%s 0 %s %d\n" % (qids[q], raw[d], g)
                                          for q, ds in qrels.items() for d, g in ds.items()))
    (tmp_path / "r").write_bytes(b"".join(b"%s Q0 %s 0 %s r\n" % (qids[q], raw[d], repr(s).encode())
                                          for q, ds in run.items() for d, s in ds.items()))
    args = ["-q", "-m", "all_trec", "-m", "relstring.60", str(tmp_path / "q"), str(tmp_path / "r")]
    reference = subprocess.run([trec_eval, *args], capture_output=True, timeout=120)
    assert reference.returncode == 0, reference.stderr
    result = invoke(*args)
    assert result.exit_code == 0, result.output
    problems = _compare(reference.stdout, result.stdout_bytes)
    assert not problems, "\n".join(problems[:15])



DICT_OPTIONS = [("-q -c", {"complete": True}), ("-q -c -J -M 40", {"complete": True, "judged_only": True, "max_ret": 40})]


@pytest.mark.parametrize("options,keywords", DICT_OPTIONS, ids=[o for o, _ in DICT_OPTIONS])
@pytest.mark.parametrize("in_score_order", [True, False], ids=["score-order", "shuffled"])
@pytest.mark.parametrize("scenario,seed", CASES, ids=[f"{n}-{s}" for n, s in CASES])
def test_dicts_rank_like_trec_eval(trec_eval, oracle_root, scenario, seed, in_score_order, options, keywords):
    """Dicts take their own ranking path (each judged id looked up in its query's dict, the
    scores above it counted, ties by id): trec_eval's output on the same data as files, with
    every ranking in score order (how systems produce them) and in the generator's random order."""
    qrels, run = generate(scenario, seed)
    folder = oracle_root / f"{scenario}{seed}dicts"
    if not folder.exists():
        folder.mkdir()
        write_trec(folder, qrels, run)
    measures = ["all_trec", "relstring.1000"]
    reference = subprocess.run([trec_eval, *options.split(), *(f"-m{m}" for m in measures), str(folder / "qrels.txt"),
                                str(folder / "run.txt")], capture_output=True, timeout=120)
    assert reference.returncode == 0, f"trec_eval failed: {reference.stderr.decode(errors='replace')}"
    if in_score_order:
        run = {qid: dict(sorted(docs.items(), key=lambda item: -item[1])) for qid, docs in run.items()}
    result = evaluate(qrels, run, measures, per_query=True, runid="gen#run", **keywords)
    problems = _compare(reference.stdout, format_trec(result, per_query=True).encode())
    assert not problems, f"{len(problems)} lines differ:\n" + "\n".join(problems[:15])
