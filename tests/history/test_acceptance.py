"""The issue's acceptance test, through the command line on both backends: three evaluations of
DL19 runs recorded at three dates, the report (rows, summary means, labels), the CSV export,
and `history check` after a perturbed run.

Expected numbers: nDCG@10 of the three runs as published (pyserini's 2CR pages, in
../shared/realdata/published.tsv: BM25 0.5058, BM25+RM3 0.5216, SPLADE++ 0.7308); the
labels by hand from the thresholds (MRR >= 0.7, nDCG@10 >= 0.6, P@5 >= 0.5) and the
values; the summary means are the means of the three executions' own summaries, as
`evaltool -o json` printed them.
"""

from __future__ import annotations

import csv
import io
import json

import pytest

from tests.support.helpers import invoke, require_shared

RUNS = [("2025-01-10", "BM25"), ("2025-01-20", "BM25_RM3"), ("2025-01-30", "SPLADE_P_P_ENSEMBLE_DISTIL")]
PUBLISHED_NDCG10 = [0.5058, 0.5216, 0.7308]
MEASURES = ["-m", "recip_rank", "-m", "ndcg_cut.10", "-m", "P.5"]


@pytest.fixture
def dl19(db):
    folder = require_shared("realdata")
    qrels = folder / "qrels" / "qrels.dl19-passage.txt"
    summaries = []
    for at, run in RUNS:
        done = invoke("-c", *MEASURES, qrels, folder / "runs" / f"{run}.trec_results_dl19.txt", "-o", "json",
                      "--record", "--db", db, "--name", "dl19", "--at", at, "--tag", f"run={run}")
        assert done.exit_code == 0, done.stderr
        assert "recorded execution" in done.stderr
        summaries.append(json.loads(done.stdout)["summary"])
    return db, qrels, folder, summaries


def test_report_rows_means_and_labels(dl19):
    db, _, _, summaries = dl19
    done = invoke("history", "report", "--db", db, "--from", "2025-01-01", "--to", "2025-01-31", "--labels",
                  "-o", "json")
    assert done.exit_code == 0, done.stderr
    out = json.loads(done.stdout)
    assert set(out) == {"rows", "summary", "from", "to"}
    assert (out["from"], out["to"]) == ("2025-01-01T00:00:00Z", "2025-01-31T23:59:59Z")
    assert [(r["id"], r["name"], r["recorded_at"]) for r in out["rows"]] == [
        (i + 1, "dl19", f"{at}T00:00:00Z") for i, (at, _) in enumerate(RUNS)]
    assert [r["values"] for r in out["rows"]] == summaries
    assert [round(r["values"]["ndcg_cut_10"], 4) for r in out["rows"]] == PUBLISHED_NDCG10
    # BM25 and RM3 hold MRR and P@5 but not nDCG@10 (2 of 3: fair); SPLADE++ holds all three
    assert [r["label"] for r in out["rows"]] == ["fair", "fair", "good"]
    summary = out["summary"]
    assert summary["count"] == 3
    for measure in ("recip_rank", "ndcg_cut_10", "P_5"):
        assert summary["values"][measure] == pytest.approx(sum(s[measure] for s in summaries) / 3, abs=1e-15)
    # means: MRR 0.869, P@5 0.746 hold; nDCG@10 (0.5058 + 0.5216 + 0.7308) / 3 = 0.586 does not
    assert summary["label"] == "acceptable"

    narrower = json.loads(invoke("history", "report", "--db", db, "--from", "2025-01-15", "--to",
                                 "2025-01-20T00:00:00Z", "-o", "json").stdout)
    assert [r["id"] for r in narrower["rows"]] == [2] and narrower["summary"]["values"] == summaries[1]

    spanish = json.loads(invoke("history", "report", "--db", db, "--lang", "es", "-o", "json").stdout)
    assert [r["label"] for r in spanish["rows"]] == ["Regular", "Regular", "Bueno"]
    assert spanish["summary"]["label"] == "Aceptable"


def test_csv_report_and_export(dl19, tmp_path):
    db, _, _, summaries = dl19
    target = tmp_path / "report.csv"
    done = invoke("history", "report", "--db", db, "--from", "2025-01-01", "--to", "2025-01-31", "--labels",
                  "-m", "recip_rank", "-m", "ndcg_cut.10", "-m", "P.5", "-o", "csv", "--output", target)
    assert done.exit_code == 0 and done.stdout == ""
    rows = list(csv.reader(io.StringIO(target.read_text())))
    assert rows[0] == ["id", "name", "recorded_at", "recip_rank", "ndcg_cut_10", "P_5", "label"]
    assert [r[0] for r in rows[1:]] == ["1", "2", "3", "summary"]
    assert [float(r[4]) for r in rows[1:4]] == [s["ndcg_cut_10"] for s in summaries]
    assert rows[4][1:3] == ["3 executions", ""] and rows[4][6] == "acceptable"

    exported = invoke("history", "export", "--db", db, "--format", "csv")
    lines = list(csv.DictReader(io.StringIO(exported.stdout)))
    assert len(lines) == 3 * (3 + 43 * 3)  # per execution: 3 summary values, 43 queries x 3 measures
    assert {(r["execution_id"], r["measure"]): float(r["value"]) for r in lines if r["query_id"] == "all"} == {
        (str(i + 1), m): s[m] for i, s in enumerate(summaries) for m in s}


def test_check_exit_codes_after_a_perturbed_run(dl19, tmp_path):
    db, qrels, folder, _ = dl19
    assert invoke("history", "check", "--db", db, "--name", "dl19").exit_code == 0  # each run improved on the last
    # the same SPLADE++ run with every ranking reversed: the relevant documents sink
    lines = (folder / "runs" / "SPLADE_P_P_ENSEMBLE_DISTIL.trec_results_dl19.txt").read_text().splitlines()
    perturbed = tmp_path / "perturbed.txt"
    perturbed.write_text("".join(f"{q} {z} {d} {r} {-float(s)} {t}\n" for q, z, d, r, s, t in map(str.split, lines)))
    assert invoke("-c", *MEASURES, qrels, perturbed, "--record", "--db", db, "--name", "dl19",
                  "--at", "2025-02-01").exit_code == 0
    dropped = invoke("history", "check", "--db", db, "--name", "dl19", "-o", "json")
    assert dropped.exit_code == 1
    verdict = json.loads(dropped.stdout)
    assert verdict["ok"] is False and verdict["latest"]["id"] == 4
    assert {r["measure"] for r in verdict["measures"] if r["dropped"]} == {"recip_rank", "ndcg_cut_10", "P_5"}
    assert {r["reference_id"] for r in verdict["measures"]} == {3}
    assert invoke("history", "check", "--db", db, "--name", "dl19", "--against", "best").exit_code == 1
    assert invoke("history", "check", "--db", db, "--name", "dl19", "--tolerance", "1").exit_code == 0
    assert invoke("history", "check", "--db", db, "--name", "dl19", "--against", "nope").exit_code == 2
