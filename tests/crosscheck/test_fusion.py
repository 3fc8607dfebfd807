"""Fusion (evaltool.fusion, ``evaltool fuse``) checked against ranx's ``fuse`` run here as the oracle.

ranx ranks a run's tied scores by its own sort, evaltool by trec_eval's rule (score
descending, then document id descending); rank methods are therefore compared on rankings
without ties (each run given to ranx with its scores replaced by its trec_eval order), and
one test shows the difference where a run has ties.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from evaltool import evaluate
from evaltool.fusion import METHODS, NORMS, fuse, optimize_fusion, weight_grid
from evaltool.io.load import load_run
from tests.support.helpers import assert_fails, invoke, require_shared, write

ranx = pytest.importorskip("ranx", reason="ranx is the oracle of fusion: pip install -e '.[test]'")

DL19 = ["BM25", "BM25_RM3", "D_BERT_KD_TASB", "SPLADE_P_P_ENSEMBLE_DISTIL"]
WEIGHTS = [0.1, 0.2, 0.3, 0.4]
PARAMETERS = {"k": 60, "phi": 0.8, "gamma": 0.5, "sigma": 0.01}
RANX_NORM = {"minmax": "min-max", "none": None}


@pytest.fixture(scope="module")
def paths():
    return [str(require_shared("realdata", "runs", f"{name}.trec_results_dl19.txt")) for name in DL19]


def as_dict(path: str, ranked: bool) -> dict:
    """The run as ``{qid: {docid: score}}``; ``ranked``: scores replaced by n - position in trec_eval's order."""
    run = load_run(path)
    out: dict = {}
    for q, d, s in zip([run.qid_vocab[c] for c in run.qid_codes], run.doc_text(np.arange(len(run))),
                       run.scores.tolist()):
        out.setdefault(q, {})[d] = s
    if not ranked:
        return out
    ordered = {}
    for q, docs in out.items():
        items = sorted(docs.items(), key=lambda item: (item[1], item[0].encode()), reverse=True)
        ordered[q] = {d: float(len(items) - i) for i, (d, _) in enumerate(items)}
    return ordered


@pytest.fixture(scope="module")
def dicts(paths):
    return {ranked: [as_dict(p, ranked) for p in paths] for ranked in (False, True)}


CASES = [(name, norm) for name, m in METHODS.items() for norm in (NORMS if m.part == "score" else ("minmax",))]


@pytest.mark.parametrize(("method", "norm"), CASES, ids=[f"{m}-{n}" for m, n in CASES])
def test_fused_scores_equal_ranx(paths, dicts, method, norm):
    chosen = METHODS[method]
    ranked = chosen.part != "score" or norm == "rank"   # what depends on the order of ties
    params = {chosen.parameter: PARAMETERS[chosen.parameter]} if chosen.parameter else {}
    if chosen.weighted:
        params["weights"] = WEIGHTS
    oracle = ranx.fuse([ranx.Run(d) for d in dicts[ranked]], norm=RANX_NORM.get(norm, norm), method=chosen.ranx,
                       params=params).to_dict()
    options = dict(params)
    ours = fuse(paths, method, norm=norm, weights=options.pop("weights", None), **options).to_dict()
    assert set(ours) == set(oracle)
    for q, docs in oracle.items():
        assert set(ours[q]) == set(docs), q
        assert max(abs(ours[q][d] - s) for d, s in docs.items()) <= 1e-9, q


def test_ties_are_broken_by_trec_eval_rule_where_ranx_breaks_them_its_own_way():
    # a, b tied: trec_eval ranks b first (larger id), so rrf gives b 1/61 and a 1/62
    runs = [{"q": {"a": 1.0, "b": 1.0}}, {"q": {"c": 1.0}}]
    ours = fuse(runs, "rrf").to_dict()["q"]
    assert ours == {"c": 1 / 61, "b": 1 / 61, "a": 1 / 62}
    assert list(ours) == ["c", "b", "a"]  # the fused tie c, b: larger id first
    oracle = ranx.fuse([ranx.Run(r) for r in runs], norm=None, method="rrf").to_dict()["q"]
    assert sorted(oracle.values()) == sorted(ours.values())  # the same scores, given to a or b as its sort fell


def test_fused_run_is_written_in_trec_eval_order_and_evaluates_as_its_dict(tmp_path, paths):
    out = tmp_path / "fused.run"
    result = invoke("fuse", *paths, "--output", out, "--depth", 50)
    assert result.exit_code == 0, result.stderr
    lines = out.read_text().splitlines()
    fused = fuse(paths, "rrf", depth=50)
    assert len(lines) == len(fused) == 43 * 50
    first = lines[0].split()
    assert first[1] == "Q0" and first[3] == "1" and first[5] == "rrf"
    by_file = evaluate(str(require_shared("realdata", "qrels", "qrels.dl19-passage.txt")), str(out), ["ndcg_cut.10"])
    by_dict = evaluate(str(require_shared("realdata", "qrels", "qrels.dl19-passage.txt")), fused.to_dict(),
                       ["ndcg_cut.10"])
    assert by_file.summary == by_dict.summary


def test_depth_fuses_each_runs_top_documents_only():
    runs = [{"q": {"a": 3.0, "b": 2.0, "c": 1.0}}, {"q": {"c": 3.0, "d": 2.0}}]
    # depth 1: a (run 1) and c (run 2) only, each 1/(60+1); c > a by id
    assert fuse(runs, "rrf", depth=1).to_dict() == {"q": {"c": 1 / 61}}
    assert fuse(runs, "rrf", depth=2).to_dict() == {"q": {"c": 1 / 61, "a": 1 / 61}}


def test_weight_grid_is_the_simplex_at_the_step():
    grid = weight_grid(3, 0.1)
    assert len(grid) == 66   # C(12, 2)
    assert np.allclose(grid.sum(axis=1), 1) and (grid >= 0).all()
    assert len({tuple(row) for row in grid.tolist()}) == 66


def test_optimize_picks_the_best_setting_and_cross_validates_it(paths):
    qrels = str(require_shared("realdata", "qrels", "qrels.dl19-passage.txt"))
    search = optimize_fusion(qrels, paths[:3:2], "ndcg_cut.10", "wsum", folds=4, step=0.25)
    # every setting's mean is that of the run fused with it, scored by evaluate
    for setting, score in zip(search.candidates, search.scores):
        fused = fuse(paths[:3:2], "wsum", weights=setting)
        assert evaluate(qrels, fused.to_dict(), ["ndcg_cut.10"]).summary["ndcg_cut_10"] == pytest.approx(score, 1e-12)
    assert search.score == max(search.scores)
    # the cross-validated score, recomputed from the folds by hand
    per_setting = {tuple(c): evaluate(qrels, fuse(paths[:3:2], "wsum", weights=c).to_dict(), ["ndcg_cut.10"],
                                      per_query=True).per_query for c in search.candidates}
    held = []
    for q, fold in zip(search.qids, search.fold_of):
        train = [p for p, f in zip(search.qids, search.fold_of) if f != fold]
        best = max(search.candidates, key=lambda c: (np.mean([per_setting[tuple(c)][p]["ndcg_cut_10"] for p in train]),
                                                     -search.candidates.index(c)))
        assert best == search.fold_choice[fold]
        held.append(per_setting[tuple(best)][q]["ndcg_cut_10"])
    assert search.cv_score == pytest.approx(np.mean(held), abs=1e-12)


def test_optimize_on_the_command_line_prints_the_search_and_writes_the_best_run(tmp_path, paths):
    qrels = str(require_shared("realdata", "qrels", "qrels.dl19-passage.txt"))
    out = tmp_path / "best.run"
    result = invoke("fuse", paths[0], paths[3], "--optimize", "ndcg_cut.10", "--qrels", qrels, "--folds", 3,
                    "--output", out, "-o", "json")
    assert result.exit_code == 0, result.stderr
    search = json.loads(result.stdout)
    assert search["searched"] == "k" and len(search["folds"]) == 3
    best = max(search["grid"], key=lambda row: row["score"])
    assert search["chosen"] == best["setting"]
    k = search["chosen"]
    assert evaluate(qrels, str(out), ["ndcg_cut.10"]).summary["ndcg_cut_10"] == pytest.approx(search["score"], 1e-12)
    assert fuse([paths[0], paths[3]], "rrf", k=k).to_trec() == out.read_text()


@pytest.mark.parametrize(("args", "fragments"), [
    (["--method", "combsum", "--weights", "1,2"], ["combsum takes no weights"]),
    (["--method", "wsum", "--weights", "1,x"], ["--weights: found 'x'"]),
    (["--method", "wsum", "--weights", "1,2,3"], ["3 weights for 2 runs"]),
    (["--method", "rbc", "--phi", "1.5"], ["phi must be between 0 and 1"]),
    (["--method", "combsum", "-k", "10"], ["combsum takes no k"]),
    (["--optimize", "map"], ["--optimize needs --qrels"]),
    (["--method", "combsum", "--optimize", "map", "--qrels", "Q", "--output", "O"], ["combsum has no weights"]),
])
def test_bad_requests_fail_with_one_message(tmp_path, args, fragments):
    a = write(tmp_path / "a.txt", "q1 Q0 d1 1 2.0 A\n")
    b = write(tmp_path / "b.txt", "q1 Q0 d2 1 2.0 B\n")
    args = [str(tmp_path / "qrels") if a_ == "Q" else str(tmp_path / "o.run") if a_ == "O" else a_ for a_ in args]
    write(tmp_path / "qrels", "q1 0 d1 1\n")
    assert_fails(invoke("fuse", a, b, *args), *fragments)
    assert not (tmp_path / "o.run").exists()


def test_a_bad_run_line_is_named(tmp_path):
    a = write(tmp_path / "a.txt", "q1 Q0 d1 1 2.0 A\n")
    b = write(tmp_path / "b.txt", "q1 Q0 d2 1 high B\n")
    assert_fails(invoke("fuse", a, b), f"{b}:1", "'q1 Q0 d2 1 high B'")


def test_one_run_is_not_a_fusion(tmp_path):
    a = write(tmp_path / "a.txt", "q1 Q0 d1 1 2.0 A\n")
    assert_fails(invoke("fuse", a), "fusion needs at least 2 runs, got 1")


def test_the_search_as_an_html_page_charts_every_setting(tmp_path, paths):
    pytest.importorskip("plotly")
    qrels = str(require_shared("realdata", "qrels", "qrels.dl19-passage.txt"))
    result = invoke("fuse", paths[0], paths[3], "--method", "rbc", "--optimize", "ndcg_cut.10", "--qrels", qrels,
                    "--output", tmp_path / "best.run", "-o", "html")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith("<!DOCTYPE html>") and "mean ndcg_cut_10 of each setting" in result.stdout
    assert "phi=0.5" in result.stdout and (tmp_path / "best.run").stat().st_size > 0
