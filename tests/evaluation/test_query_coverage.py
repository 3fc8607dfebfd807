"""Judged queries the run has no results for: never silent.

Without ``-c`` they are skipped with a :class:`~evaltool.errors.QueriesSkippedWarning`
and counted in ``meta.counts``; under ``-c`` a run with results for fewer than half of
the judged queries warns, and one with results for none of them is an error (judgments
of another collection used to print ``map all 0.0000``).
"""

from __future__ import annotations

import warnings

import pytest

from evaltool import evaluate
from evaltool.errors import EvaltoolWarning, InputError, QueriesSkippedWarning
from tests.support.helpers import ROOT, assert_fails, invoke, require_shared


def test_skipped_queries_warn_in_python():
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 1}}
    with pytest.warns(QueriesSkippedWarning) as caught:
        result = evaluate(qrels, {"q1": {"a": 1.0}, "q2": {"x": 1.0}}, ["map"])
    assert [str(w.message) for w in caught] == result.warnings == [
        "warning: 1 of the 3 qrels queries have no results in <run dict> and were skipped (q3); "
        "use -c to score them as trec_eval does"]
    assert issubclass(QueriesSkippedWarning, EvaltoolWarning)
    assert result.summary == {"map": 0.5}
    counts = result.meta["counts"]
    assert (counts["queries_evaluated"], counts["queries_missing_from_run"], counts["queries_skipped"]) == (2, 1, 1)


def test_readme_example_counts_its_skipped_query():
    """README's data/qrels.txt + data/run.txt: q4 is skipped, and the counts say so."""
    with pytest.warns(QueriesSkippedWarning, match=r"1 of the 4 qrels queries .* \(q4\)"):
        meta = evaluate(str(ROOT / "data/qrels.txt"), str(ROOT / "data/run.txt"), ["map"]).meta
    assert meta["skipped_queries"] == ["q4"]
    assert (meta["counts"]["queries_evaluated"], meta["counts"]["queries_missing_from_run"],
            meta["counts"]["queries_skipped"]) == (3, 1, 1)


def test_complete_counts_missing_queries_without_skipping_them():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        meta = evaluate(str(ROOT / "data/qrels.txt"), str(ROOT / "data/run.txt"), ["map"], complete=True).meta
    assert (meta["counts"]["queries_evaluated"], meta["counts"]["queries_missing_from_run"],
            meta["counts"]["queries_skipped"]) == (4, 1, 0)


def test_results_for_few_judged_queries_warn_under_complete():
    qrels = {f"q{i}": {"d": 1} for i in range(5)}
    with pytest.warns(EvaltoolWarning, match=r"only 2 of the 5 queries judged in <qrels dict> have results in "
                                             r"<run dict>; the other 3 score as queries without results under -c"):
        result = evaluate(qrels, {"q0": {"d": 1.0}, "q1": {"x": 1.0}}, ["map"], complete=True)
    assert result.summary["map"] == pytest.approx(1 / 5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # half of the judged queries or more: no warning
        evaluate(qrels, {f"q{i}": {"d": 1.0} for i in range(3)}, ["map"], complete=True)
        evaluate({"q0": {"d": 1}, "q1": {"d": 1}}, {"q0": {"d": 1.0}}, ["map"], complete=True)


def test_no_judged_query_with_results_is_an_error_under_complete():
    with pytest.raises(InputError, match=r"no query of <run dict> has judgments in <qrels dict> "
                                         r"\(run queries such as 'x1'; qrels queries such as 'q1'\)"):
        evaluate({"q1": {"d": 1}}, {"x1": {"d": 1.0}}, ["map"], complete=True)


def test_cli_warns_when_few_judged_queries_have_results_under_complete(tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"q{i} 0 d 1\n" for i in range(5)))
    run = tmp_path / "run.txt"
    run.write_text("q0 Q0 d 1 1.0 r\nq9 Q0 d 1 1.0 r\n")
    for mode in ([], ["--stream"]):
        result = invoke("-c", "-m", "map", *mode, qrels, run)
        assert result.exit_code == 0 and result.stdout == "map                   \tall\t0.2000\n"
        assert result.stderr == (f"evaltool: warning: only 1 of the 5 queries judged in {qrels} have results in "
                                 f"{run}; the other 4 score as queries without results under -c (are these "
                                 "judgments for this run?)\n")


@pytest.mark.parametrize("mode", [[], ["--stream"]])
def test_dl20_run_against_dl19_judgments_is_an_error(mode):
    """The issue's reproduction: was 'map all 0.0000', exit 0, nothing on stderr."""
    qrels = require_shared("realdata", "qrels", "qrels.dl19-passage.txt")
    run = require_shared("realdata", "runs", "BM25.trec_results_dl20.txt")
    assert_fails(invoke("-c", "-m", "map", *mode, qrels, run),
                 f"evaltool: no query of {run} has judgments in {qrels}")


def test_covid_run_for_4_of_30_judged_queries_warns():
    qrels = require_shared("realdata", "qrels", "qrels.covid-round1.txt")
    run = require_shared("realdata", "runs", "pyserini-covid-filter.txt")
    complete = invoke("-c", "-m", "map", qrels, run)
    assert complete.exit_code == 0
    assert "only 4 of the 30 queries judged" in complete.stderr and "other 26" in complete.stderr
    skipping = invoke("-m", "map", qrels, run)
    assert skipping.exit_code == 0
    assert skipping.stderr.startswith("evaltool: warning: 26 of the 30 qrels queries have no results")


def test_compare_words_skipped_queries_once(tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 a 1\nq2 0 b 1\nq3 0 c 1\n")
    runs = []
    for name in ("a", "b"):
        path = tmp_path / f"{name}.txt"
        path.write_text("q1 Q0 a 1 1.0 r\nq2 Q0 x 1 1.0 r\n")
        runs.append(path)
    result = invoke("compare", qrels, *runs, "-m", "map")
    assert result.exit_code == 0, result.stderr
    assert result.stderr.count("warning:") == 1 and "left out of the comparison" in result.stderr


@pytest.mark.parametrize("complete", [False, True])
def test_empty_ranking_in_a_run_dict_scores_zero(complete):
    """{'q1': {}} is a ranking with nothing in it, not 'no rows', nor a query missing from the run."""
    result = evaluate({"q1": {"a": 1}, "q2": {"b": 1}}, {"q1": {}, "q2": {"b": 1.0}}, ["map", "P.5", "num_ret"],
                      per_query=True, complete=complete)
    assert result.per_query["q1"] == {"num_ret": 0, "map": 0.0, "P_5": 0.0}
    assert result.summary["map"] == 0.5
    assert result.meta["counts"]["queries_missing_from_run"] == 0
