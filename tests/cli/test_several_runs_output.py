"""Several runs in every output format: the per-query rows of every run, one layout (a ``run``
column first, then what one run's table has), names the user can choose, and options that
apply to one run refused rather than ignored.

Expected values by hand: q1 relevant d1, q2 relevant d3.
recip_rank  A: q1 1/2, q2 1 (all 0.75)   B: q1 1, q2 1/2 (all 0.75)   C: q1 1, q2 1 (all 1)
P_1         A: q1 0,   q2 1 (all 0.5)    B: q1 1, q2 0   (all 0.5)    C: q1 1, q2 1 (all 1)
"""

from __future__ import annotations

import io
import json
import re

import pandas as pd
import pytest

from tests.support.helpers import assert_fails, invoke
from tests.support.html_pages import Page

EXPECTED = {  # (run, query) -> (recip_rank, P_1)
    ("a.txt", "q1"): (0.5, 0.0), ("a.txt", "q2"): (1.0, 1.0), ("a.txt", "all"): (0.75, 0.5),
    ("b.txt", "q1"): (1.0, 1.0), ("b.txt", "q2"): (0.5, 0.0), ("b.txt", "all"): (0.75, 0.5),
    ("c.txt", "q1"): (1.0, 1.0), ("c.txt", "q2"): (1.0, 1.0), ("c.txt", "all"): (1.0, 1.0),
}
HEADER = ["run", "query", "recip_rank", "P_1"]


@pytest.fixture
def runs(many):
    """(qrels, [a.txt, b.txt, c.txt]) of the fixture ``many`` (conftest.py)."""
    qrels, folder = many
    return qrels, sorted(folder.iterdir())


def _eval(many, fmt, *more):
    qrels, runs = many
    result = invoke("-m", "recip_rank", "-m", "P.1", "-q", qrels, *runs, "-o", fmt, *more)
    assert result.exit_code == 0, result.stderr
    return result.stdout


def _as_expected(rows):
    """Rows of cell texts (header first) as {(run, query): (recip_rank, P_1)}."""
    assert rows[0] == HEADER
    return {(r[0], r[1]): (float(r[2]), float(r[3])) for r in rows[1:]}


def test_csv_holds_every_run_and_query_and_reads_back_with_pandas(runs):
    frame = pd.read_csv(io.StringIO(_eval(runs, "csv")), dtype={"query": str})
    assert list(frame.columns) == HEADER
    assert {(r.run, r.query): (r.recip_rank, r.P_1) for r in frame.itertuples()} == EXPECTED
    assert frame.groupby("run").size().to_dict() == {"a.txt": 3, "b.txt": 3, "c.txt": 3}


def test_table_holds_every_run_and_query(runs):
    rows = [line.split() for line in _eval(runs, "table").splitlines() if line.strip()]
    assert _as_expected(rows) == EXPECTED


def test_markdown_holds_every_run_and_query(runs):
    lines = [line for line in _eval(runs, "markdown").splitlines() if line.startswith("|")]
    rows = [[cell.strip().replace("\\", "") for cell in line.strip("|").split("|")] for line in lines]
    assert rows[1] == ["---", "---", "---:", "---:"]
    assert _as_expected([rows[0], *rows[2:]]) == EXPECTED


def test_latex_holds_every_run_and_query(runs):
    lines = [line for line in _eval(runs, "latex").splitlines() if line.endswith("\\\\")]
    rows = [[cell.strip().replace("\\", "") for cell in line[:-2].split("&")] for line in lines]
    assert _as_expected(rows) == EXPECTED


def test_html_holds_a_summary_per_run_the_per_query_rows_and_a_chart_per_run(runs):
    page = Page(_eval(runs, "html"))
    summary, values = page.tables
    assert summary[0] == ["run", "runid", "queries", "recip_rank", "P_1"]
    assert [row[:3] for row in summary[1:]] == [["a.txt", "A", "2"], ["b.txt", "B", "2"], ["c.txt", "C", "2"]]
    assert _as_expected(values) == EXPECTED
    bars = page.figures[0]["data"]
    assert sorted({trace["name"] for trace in bars}) == ["a.txt", "b.txt", "c.txt"]
    recip_rank = {trace["name"]: trace["y"] for trace in bars if trace["visible"]}
    assert recip_rank == {"a.txt": [0.5, 1.0], "b.txt": [1.0, 0.5], "c.txt": [1.0, 1.0]}


def test_no_summary_leaves_out_each_runs_all_row(runs):
    frame = pd.read_csv(io.StringIO(_eval(runs, "csv", "-n")), dtype={"query": str})
    assert sorted(frame["query"].unique()) == ["q1", "q2"] and len(frame) == 6


def test_json_names_each_run(runs):
    out = json.loads(_eval(runs, "json"))
    assert [r["name"] for r in out] == ["a.txt", "b.txt", "c.txt"]
    assert [r["per_query"]["q1"]["recip_rank"] for r in out] == [0.5, 1.0, 1.0]


# ---------------------------------------------------------------- naming runs


def test_runs_are_named_by_file_name_not_by_path(runs):
    qrels, runs = runs
    stdout = invoke("-m", "P.1", qrels, *runs, "-o", "csv").stdout
    assert [row.split(",")[0] for row in stdout.splitlines()[1:]] == ["a.txt", "b.txt", "c.txt"]


def test_colliding_file_names_take_the_shortest_distinct_tail(tmp_path, runs):
    qrels, runs = runs
    for year in ("dl19", "dl20"):
        (tmp_path / year).mkdir()
        (tmp_path / year / "a.txt").write_text(runs[0].read_text())
    stdout = invoke("-m", "P.1", qrels, tmp_path / "dl19" / "a.txt", tmp_path / "dl20" / "a.txt", runs[1],
                    "-o", "csv").stdout
    assert [row.split(",")[0] for row in stdout.splitlines()[1:]] == ["dl19/a.txt", "dl20/a.txt", "b.txt"]


def test_name_equals_path_and_run_name_name_the_runs(runs):
    qrels, runs = runs
    named = invoke("-m", "P.1", qrels, f"bm25={runs[0]}", f"rm3={runs[1]}", runs[2], "-o", "csv")
    assert [row.split(",")[0] for row in named.stdout.splitlines()[1:]] == ["bm25", "rm3", "c.txt"]
    options = invoke("-m", "P.1", qrels, *runs, "--run-name", "x", "--run-name", "y", "--run-name", "z", "-o", "csv")
    assert [row.split(",")[0] for row in options.stdout.splitlines()[1:]] == ["x", "y", "z"]
    single = json.loads(invoke("-m", "P.1", qrels, f"bm25={runs[0]}", "-o", "json").stdout)
    assert single["name"] == "bm25" and single["summary"] == {"P_1": 0.5}


def test_run_names_that_cannot_hold_are_refused(runs):
    qrels, runs = runs
    assert_fails(invoke(qrels, *runs, "--run-name", "x"), "--run-name: 1 names for 3 runs")
    assert_fails(invoke(qrels, f"x={runs[0]}", f"x={runs[1]}"), "two runs are named 'x'")
    assert_fails(invoke(qrels, f"x={runs[0]}", runs[1], "--run-name", "y", "--run-name", "z"), "not both")
    assert_fails(invoke(qrels, f"x={runs[0].parent}"), "is a folder")


@pytest.mark.parametrize("option", [["--name", "x"], ["--note", "x"], ["--tag", "k=v"], ["--at", "2024-01-01"],
                                    ["--db", "h.sqlite"]])
def test_record_options_with_several_runs_are_refused(runs, option, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    qrels, runs = runs
    result = invoke(qrels, *runs, *option)
    assert_fails(result, f"{option[0]}: this option applies to a single run", "3:")
    assert not (tmp_path / "h.sqlite").exists()
    if option[0] == "--name":
        assert "--run-name or NAME=PATH" in result.stderr


def test_record_options_without_record_are_named_together(runs):
    qrels, runs = runs
    assert_fails(invoke(qrels, runs[0], "--note", "x", "--tag", "k=v"), "--note, --tag apply to --record only")


def test_the_help_says_how_runs_are_named():
    text = re.sub(r"\s+", " ", invoke("eval", "--help").stdout)
    assert "NAME=PATH" in text and "--run-name" in text and "shortest tail" in text


def test_compare_names_colliding_files_by_their_shortest_distinct_tail(tmp_path, runs):
    qrels, runs = runs
    for year in ("dl19", "dl20"):
        (tmp_path / year).mkdir()
        (tmp_path / year / "a.txt").write_text(runs[0 if year == "dl19" else 2].read_text())
    result = invoke("compare", qrels, tmp_path / "dl19" / "a.txt", tmp_path / "dl20" / "a.txt", "-m", "P.1",
                    "-o", "csv")
    assert result.exit_code == 0, result.stderr
    assert sorted(set(pd.read_csv(io.StringIO(result.stdout))["run"])) == ["dl19/a.txt", "dl20/a.txt"]
