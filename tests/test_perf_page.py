"""docs/performance.md is written by tools/perf_page.py from the newest full run in
benchmarks/results/; the check fails when the page and the newest results disagree.

The tool's own cases run on copies of the real newest results file, changed the way new runs
change it: a quick run written later (not a full one: ignored), a goal added by benchmarks/run.py,
a section absent, a section the tool does not know.
"""

from __future__ import annotations

import json
import shutil
import sys

import pytest

from tests.support.helpers import ROOT

sys.path.insert(0, str(ROOT / "tools"))
import perf_page  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"


def test_the_performance_page_says_what_the_newest_full_run_says(capsys):
    assert perf_page.main(["--check"]) == 0, capsys.readouterr().out


@pytest.fixture
def results(tmp_path):
    """A results folder holding the newest full run, its dashboard file and nothing else."""
    path, full = perf_page.newest(RESULTS, perf_page.FULL_NAME, perf_page.is_full)
    folder = tmp_path / "results"
    folder.mkdir()
    dashboard, _ = perf_page.newest(RESULTS, perf_page.DASHBOARD_NAME)
    shutil.copy(dashboard, folder / dashboard.name)
    (folder / path.name).write_text(json.dumps(full))
    return folder, path.name, full


def test_every_goal_and_section_of_the_newest_full_run_is_on_the_page(results, tmp_path):
    folder, name, full = results
    text = perf_page.page(folder, tmp_path / "no-notes.md")
    assert name in text
    for goal in full["goals"]:
        row = next(line for line in text.splitlines() if f"| {goal['goal']} |" in line)
        assert f"{goal['ratio']:.3f}×" in row and goal["note"] in row
        assert row.startswith(f"| **{goal['status']}** |" if goal["status"] == "FAIL" else f"| {goal['status']} |")
    for heading in ("## Goals", "## Start-up", "## In-process", "## Many runs", "## Whole-process runs",
                    "## Click logs", "## Dashboard"):
        assert heading in text, heading
    if not any(row.get("error") for row in full["startup"]):
        assert "| command | median |\n" in text   # a column empty in every row (no error) is left out
    for data_set, size in full["data_sets"].items():
        assert f"### {data_set}, {size['run_lines']:,} run lines" in text


def test_every_route_of_ranx_s_workload_is_on_the_page_with_its_ratio_to_the_reference(results, tmp_path):
    folder, _, full = results
    text = perf_page.page(folder, tmp_path / "no-notes.md")
    sections = [s for s in full["ranx_workload"] if "rows" in s]
    assert sections
    for section in sections:
        baseline = "ranx arrays" if section["queries"] >= 1_000_000 else "ranx"
        block = text.split(f"### {section['queries']:,} queries × 100", 1)[1].split("###", 1)[0]
        assert f"÷ {baseline} |" in block
        base = {r["measure"]: r["median_s"] for r in section["rows"] if r["route"] == baseline}
        for r in section["rows"]:
            line = next(line for line in block.splitlines() if line.startswith(f"| {r['measure']} | {r['route']} |"))
            assert f"| {r['median_s'] / base[r['measure']]:.3f}× |" in line and line.endswith(f"| {r['check']} |")
        for route in section.get("peak_rss_kb") if isinstance(section.get("peak_rss_kb"), dict) else ():
            assert f"| {route} | {section['peak_rss_kb'][route] / 1024:.0f} MB |" in block


def test_a_quick_run_written_later_is_not_the_page(results, tmp_path):
    folder, name, full = results
    quick = dict(full, argv=["--quick"], goals=[dict(full["goals"][0], goal="quick only", note="not full")])
    (folder / "29991231T000000Z.json").write_text(json.dumps(quick))
    text = perf_page.page(folder, tmp_path / "no-notes.md")
    assert "quick only" not in text and name in text


def test_a_new_goal_and_a_new_section_appear_and_absent_sections_are_left_out(results, tmp_path):
    folder, _, full = results
    newer = dict(full, goals=[*full["goals"], {"goal": "clicks: evaltool <= 0.5x a new baseline", "ratio": 0.61,
                                               "status": "FAIL", "note": "6.1 s vs 10.0 s"}],
                 fusion=[{"row": "evaltool fuse x10", "median_wall_s": 0.25, "check": "= ranx"}])
    for absent in ("clicks", "many_runs", "inprocess"):
        newer.pop(absent)
    (folder / "29991231T000000Z.json").write_text(json.dumps(newer))
    text = perf_page.page(folder, tmp_path / "no-notes.md")
    assert "| **FAIL** | clicks: evaltool <= 0.5x a new baseline | 0.610× | 6.1 s vs 10.0 s |" in text
    passed = sum(goal["status"] == "PASS" for goal in full["goals"])
    held = sum(goal["status"] != "REPORT" for goal in full["goals"])
    assert f"{passed} of {held + 1} goals hold" in text
    assert "## Fusion" in text and "| evaltool fuse x10 | 0.25 | = ranx |" in text
    for heading in ("## Click logs", "## Many runs", "## In-process"):
        assert heading not in text
    assert "29991231T000000Z.json" in text


def test_a_reported_row_is_shown_and_not_counted_as_a_goal(results, tmp_path):
    folder, _, full = results
    goals = [dict(g, status="PASS") for g in full["goals"][:3]]
    goals.append({"goal": "DL: evaltool whole process vs pytrec_eval (start-up bound; reported)", "ratio": 0.826,
                  "status": "REPORT", "note": "0.266s vs 0.322s"})
    (folder / "29991231T000000Z.json").write_text(json.dumps(dict(full, goals=goals)))
    text = perf_page.page(folder, tmp_path / "no-notes.md")
    assert "3 of 3 goals hold" in text and "1 row is REPORT: shown, not held to a limit." in text
    assert "| REPORT | DL: evaltool whole process vs pytrec_eval (start-up bound; reported) | 0.826× | 0.266s vs 0.322s |" \
        in text


def test_the_check_fails_when_the_page_and_the_results_differ(results, tmp_path, capsys):
    folder, _, full = results
    page = tmp_path / "performance.md"
    notes = tmp_path / "notes.md"
    notes.write_text("## What the numbers say\n\nBy hand.\n")
    assert perf_page.main([], folder, page, notes) == 0
    assert page.read_text().endswith("By hand.\n")
    assert perf_page.main(["--check"], folder, page, notes) == 0
    newer = dict(full, goals=[dict(g, ratio=g["ratio"] * 2) for g in full["goals"]])
    (folder / "29991231T000000Z.json").write_text(json.dumps(newer))
    assert perf_page.main(["--check"], folder, page, notes) == 1
    assert "make perf-page" in capsys.readouterr().out


def test_what_reading_the_dicts_costs_by_itself_is_shown_under_its_size(results, tmp_path):
    folder, _, full = results
    sections = [dict(s) for s in full["ranx_workload"]]
    large = next(s for s in sections if s.get("queries", 0) >= 1_000_000)
    large["floors"] = {"evaltool dicts": [{"read": "scores", "median_s": 1.17, "calls": 3, "entries": 100_000_000},
                                          {"read": "(id, score) pairs", "median_s": 6.13, "calls": 3,
                                           "entries": 100_000_000}]}
    (folder / "29991231T000000Z.json").write_text(json.dumps(dict(full, ranx_workload=sections)))
    text = perf_page.page(folder, tmp_path / "no-notes.md")
    block = text.split("### 1,000,000 queries × 100", 1)[1].split("\n## ", 1)[0]
    assert "| evaltool dicts | scores | 100,000,000 | 1.17 s | 3 |" in block
    assert "| evaltool dicts | (id, score) pairs | 100,000,000 | 6.13 s | 3 |" in block
