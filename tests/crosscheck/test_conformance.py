"""trec_eval 10.0's own test suite, byte for byte (one case per command line)."""

from __future__ import annotations

import pytest

from tests.support.helpers import invoke, require_shared

MEAS_PARAMS = (
    "-q -miprec_at_recall..10,.20,.25,.75,.50 -m P.5,7,3 -m recall.20,2000 "
    "-m Rprec_mult.5.0,0.2,0.35 -mutility.2,-1,0,0 -m 11pt_avg..25,.5,.75 "
    "-mndcg.1=3,2=9,4=4.5 -mndcg_cut.10,20,23.4 -msuccess.2,5,20 qrels.test results.test"
)

CASES = [
    ("out.test", "qrels.test results.test"),
    ("out.test", "qrels.test.with-comments results.test"),
    ("out.comment.test", "qrels.comment.test results.comment.test"),
    ("out.test.a", "-m all_trec qrels.test results.test"),
    ("out.test.aq", "-m all_trec -q qrels.test results.test"),
    ("out.test.aqc", "-m all_trec -q -c qrels.test results.trunc"),
    ("out.test.aqcM", "-m all_trec -q -c -M100 qrels.test results.trunc"),
    ("out.test.aql", "-m all_trec -mrelstring.20 -q -l2 qrels.rel_level results.test"),
    ("out.test.meas_params", MEAS_PARAMS),
    ("out.test.aqZ", "-q -m all_trec -Z zscores_file qrels.test results.test"),
]


@pytest.mark.parametrize("expected,command", CASES, ids=[f"{e}:{c[:40]}" for e, c in CASES])
def test_trec_eval_golden_output(expected, command, reading_mode, monkeypatch):
    folder = require_shared("conformance", "trec_eval")
    monkeypatch.chdir(folder)
    result = invoke(*[*reading_mode, *command.split()])
    assert result.exit_code == 0, result.output
    assert result.stdout_bytes == (folder / expected).read_bytes()
