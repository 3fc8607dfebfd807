"""docs/performance.md, written from the newest full run of `make bench` in benchmarks/results/.

    python tools/perf_page.py            # rewrite the page (make docs-reference and make perf-page run this)
    python tools/perf_page.py --check    # exit 1 when the page differs from what the newest results give

A *full* run is a ``YYYYMMDDTHHMMSSZ.json`` written by ``benchmarks/run.py`` without ``--quick``
(``make bench``; ``make bench-quick`` writes under benchmarks/cache/); the newest is the one whose
name sorts last. The dashboard's numbers come from the newest ``dashboard-*.json``. The page has
every goal (PASS / FAIL, the ratio, the note), then a table per section the results hold (start-up,
in-process, many runs, whole-process runs per data set, click logs, dashboard); a section missing
from the file is left out, and a section this tool does not know yet is shown as a plain table of
its rows, so a goal or section added to benchmarks/run.py appears without a change here.
``docs/performance-notes.md``, when present, is appended as it is: the prose that explains the
numbers, kept by hand (mkdocs.yml leaves it out of the site as a page of its own).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
PAGE = ROOT / "docs" / "performance.md"
NOTES = ROOT / "docs" / "performance-notes.md"  # kept out of the site by exclude_docs: it is part of this page
FULL_NAME = re.compile(r"^\d{8}T\d{6}Z\.json$")
DASHBOARD_NAME = re.compile(r"^dashboard-\d{8}T\d{6}Z\.json$")
KNOWN = {
    "timestamp", "argv", "repeat", "timeout_s", "machine", "git", "rss_floor_kb", "tools", "tools_missing",
    "data_sets", "measurements", "summary", "goals", "startup", "inprocess", "many_runs", "many_runs_r03", "clicks",
    "ranx_workload",
}


def is_full(results: dict) -> bool:
    return "--quick" not in (results.get("argv") or [])


def newest(folder: Path, pattern: re.Pattern, accept=lambda results: True) -> tuple[Path, dict] | None:
    for path in sorted((p for p in folder.glob("*.json") if pattern.match(p.name)), reverse=True):
        results = json.loads(path.read_text())
        if accept(results):
            return path, results
    return None


def number(value: float) -> str:
    """Seconds as the page writes them: 0.129, 1.19, 15.3."""
    if value < 1:
        return f"{value:.3f}"
    return f"{value:.3g}" if value >= 10 else f"{value:.2f}"


def seconds(value) -> str:
    return "" if value is None else f"{number(value)} s"


def megabytes(kb) -> str:
    return "" if kb is None else f"{kb / 1024:.0f} MB"


def cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, (list, tuple)):
        return ", ".join(cell(v) for v in value)
    if isinstance(value, dict):
        return ", ".join(f"{k} {cell(v)}" for k, v in value.items())
    return str(value).replace("|", "\\|").replace("\n", " ")


def table(header: list[str], rows: list[list]) -> str:
    """A Markdown table; a column empty in every row (no error anywhere) is left out."""
    rows = [[cell(v) if not isinstance(v, str) else v for v in row] for row in rows]
    kept = [j for j in range(len(header)) if any(row[j] for row in rows)] or list(range(len(header)))
    lines = ["| " + " | ".join(header[j] for j in kept) + " |", "|" + "---|" * len(kept)]
    lines += ["| " + " | ".join(row[j] for j in kept) + " |" for row in rows]
    return "\n".join(lines)


def relative(path: Path) -> str:
    try:
        return str(path.relative_to(ROOT))
    except ValueError:
        return path.name


def header(path: Path, results: dict) -> str:
    machine = results.get("machine", {})
    facts = []
    if machine.get("cpu_count"):
        facts.append(f"{machine['cpu_count']} cores")
    if machine.get("mem_total_kb"):
        facts.append(f"{machine['mem_total_kb'] / 1024 ** 2:.0f} GB")
    if machine.get("cpu_model"):
        facts.append(machine["cpu_model"])
    if machine.get("python"):
        facts.append(f"Python {machine['python']}")
    commit = results.get("git", {}).get("commit")
    tools = ", ".join(f"{name} ({version})" for name, version in results.get("tools", {}).items())
    lines = [
        f"The newest full run: `{relative(path)}`, {results.get('timestamp', '')} "
        f"({'; '.join(facts)}{'; evaltool at ' + commit[:10] if commit else ''}); median of "
        f"{results.get('repeat', '?')} runs of each command.",
    ]
    if tools:
        lines.append(f"Tools: {tools}.")
    missing = results.get("tools_missing") or {}
    if missing:
        lines.append("Not run: " + "; ".join(f"{name} ({why})" for name, why in missing.items()) + ".")
    return " ".join(lines)


def goals_section(results: dict) -> str:
    rows = [
        [
            f"**{g.get('status', '')}**" if g.get("status") == "FAIL" else g.get("status", ""),
            cell(g.get("goal")),
            "" if g.get("ratio") is None else f"{g['ratio']:.3f}×",
            cell(g.get("note")),
        ]
        for g in results["goals"]
    ]
    passed = sum(1 for g in results["goals"] if g.get("status") == "PASS")
    held = [g for g in results["goals"] if g.get("status") != "REPORT"]
    reported = len(results["goals"]) - len(held)
    return (
        f"## Goals\n\n{passed} of {len(held)} goals hold. The ratio is evaltool's time (or peak "
        "memory) divided by the other tool's; a goal holds when it is at most the goal's limit."
        + (f" {reported} row{'s are' if reported > 1 else ' is'} REPORT: shown, not held to a limit." if reported else "")
        + "\n\n"
        + table(["status", "goal", "ratio", "note"], rows)
    )


def startup_section(results: dict) -> str:
    rows = [[cell(r["row"]), seconds(r.get("median_wall_s")), cell(r.get("error"))] for r in results["startup"]]
    return "## Start-up\n\nA whole process on a 3-line qrels and run (and `--help`).\n\n" + table(
        ["command", "median", "error"], rows
    )


def inprocess_section(results: dict) -> str:
    """One table per depth: a run saves one dict (older runs) or a list of them (one per depth)."""
    found = results["inprocess"]
    blocks = []
    for data in found if isinstance(found, list) else [found]:
        checks = data.get("values_check", {})
        rows = [[cell(name), f"{value * 1000:.1f} ms", cell(checks.get(name))]
                for name, value in data["median_s"].items()]
        size = f" ({data['queries']} queries, {data['run_rows']} run lines)" if "queries" in data else ""
        blocks.append(f"The same evaluation inside one Python process{size}.\n\n"
                      + table(["call", "median", "values"], rows))
    return "## In-process\n\n" + "\n\n".join(blocks)


def many_runs_section(results: dict) -> str:
    rows = [[cell(r["row"]), seconds(r.get("median_wall_s")), cell(r.get("check")), cell(r.get("error"))]
            for r in results["many_runs"]]
    return "## Many runs\n\nThirty runs against one qrels.\n\n" + table(["command", "median", "values", "error"], rows)


def many_runs_r03_section(results: dict) -> str:
    rows = [[cell(r["row"]), seconds(r.get("median_wall_s")), cell(r.get("check")), cell(r.get("error"))]
            for r in results["many_runs_r03"]]
    return "## Many Robust runs\n\nThe 17 systems' runs of R03 (text ids) against its qrels.\n\n" + table(
        ["command", "median", "values", "error"], rows)


def summary_section(results: dict) -> str:
    sizes = results.get("data_sets", {})
    blocks = ["## Whole-process runs\n\nEach tool as a whole process on each data set; `= trec_eval`: every "
              "value printed equals trec_eval's."]
    by_set: dict[str, list[dict]] = {}
    for entry in results["summary"]:
        by_set.setdefault(entry["data_set"], []).append(entry)
    for name, entries in by_set.items():
        size = sizes.get(name, {})
        lines = f", {size['run_lines']:,} run lines, {size['qrels_lines']:,} qrels lines" if size else ""
        reference = next((e for e in entries if e["row"] == "trec_eval"), None)
        rows = []
        for e in entries:
            walls = [w for w in e.get("walls_s") or [] if w is not None]
            spread = f" ({number(min(walls))}–{number(max(walls))})" if len(walls) > 1 else ""
            ratio = ""
            if reference and reference.get("median_wall_s") and e.get("median_wall_s") and e is not reference:
                ratio = f"{e['median_wall_s'] / reference['median_wall_s']:.2f}×"
            status = e.get("check") if e.get("status") == "ok" else f"{e.get('status')}: {e.get('error', '')}"
            rows.append([cell(e["row"]), seconds(e.get("median_wall_s")) + spread, megabytes(e.get("peak_rss_kb")),
                         ratio, cell(status)])
        blocks.append(f"### {name}{lines}\n\n" + table(["run", "median (range)", "peak memory", "÷ trec_eval",
                                                         "values"], rows))
    return "\n\n".join(blocks)


def ranx_workload_section(results: dict) -> str:
    """One table per size of ranx's workload: every route's median per call, its ratio to the
    route evaltool is held against (ranx's ``Qrels`` / ``Run`` below 1,000,000 queries, ranx's
    arrays at that size, where the harness cannot build the former), and the value check; then
    the ``jobs`` rows and, where each route ran in a process of its own, its peak memory."""
    blocks = ["## Ranx workload\n\nranx's efficiency workload inside one process on one core: queries × 100 "
              "retrieved documents, one measure per call, every tool's value checked against the reference "
              "(pytrec_eval's; at 1,000,000 queries ranx's arrays') before a time is shown."]
    for section in results["ranx_workload"]:
        queries = section.get("queries", 0)
        if "rows" not in section:
            blocks.append(f"### {queries:,} queries × 100\n\nNot run: {cell(section.get('error'))}")
            continue
        baseline = "ranx arrays" if queries >= 1_000_000 else "ranx"
        base = {r["measure"]: r["median_s"] for r in section["rows"] if r["route"] == baseline}
        rows = []
        for r in section["rows"]:
            ratio = f"{r['median_s'] / base[r['measure']]:.3f}×" if r["measure"] in base else ""
            rows.append([cell(r["measure"]), cell(r["route"]), seconds(r["median_s"]), ratio, str(r.get("calls", "")),
                         cell(r.get("check"))])
        block = (f"### {queries:,} queries × 100 ({section.get('qrels_rows', 0):,} judgments)\n\n"
                 + table(["measure", "route", "median", f"÷ {baseline}", "calls", "values"], rows))
        jobs = section.get("jobs")
        if jobs:
            block += f"\n\n`jobs` on {jobs['cores']} cores (MAP):\n\n" + table(
                ["route", "median", "values"],
                [[cell(r["route"]), seconds(r["median_s"]), cell(r.get("check"))] for r in jobs["rows"]])
        peaks = section.get("peak_rss_kb")
        if isinstance(peaks, dict):
            block += "\n\nEach route in a process of its own:\n\n" + table(
                ["route", "peak memory", "of which its data", "data built in"],
                [[cell(route), megabytes(kb), megabytes(section["data_rss_kb"].get(route)),
                  seconds(section.get("build_s", {}).get(route))] for route, kb in peaks.items()])
        floors = [(route, f) for route, listed in (section.get("floors") or {}).items() for f in listed]
        if floors:
            block += ("\n\nWhat reading the run's dicts costs by itself, with CPython's own loops and nothing "
                      "done with what is read (the least any tool taking those dicts spends):\n\n") + table(
                ["process", "read", "entries", "median", "calls"],
                [[cell(route), cell(f["read"]), f"{f['entries']:,}", seconds(f["median_s"]), str(f["calls"])]
                 for route, f in floors])
        blocks.append(block)
    return "\n\n".join(blocks)


def clicks_section(results: dict) -> str:
    rows = [
        [cell(r.get("data_set")), cell(r.get("layout")), cell(r.get("tool", "evaltool")),
         f"{r['events']:,}" if "events" in r else "", seconds(r.get("median_wall_s")),
         f"{r['events_per_s']:,.0f}" if r.get("events_per_s") else "", megabytes(r.get("peak_rss_kb")),
         cell(r.get("check", "")), cell(r.get("status")) + (f": {r['error']}" if r.get("error") else "")]
        for r in results["clicks"]
    ]
    return ("## Click logs\n\n`evaltool clicks LOG -m click_mrr -m ctr -m ctr@10 -o json`, and the same three "
            "metrics as one DuckDB query over the same file (`benchmarks/drivers/duckdb_clicks.py`); values: "
            "whether both gave the same numbers.\n\n") + table(
        ["data set", "layout", "tool", "events", "median", "events/s", "peak memory", "values", "status"], rows
    )


def other_section(name: str, value) -> str | None:
    """A section this tool does not know: its rows as a table (a list of flat dicts), or its facts."""
    title = f"## {name.replace('_', ' ').capitalize()}\n\n"
    if isinstance(value, list) and value and all(isinstance(r, dict) for r in value):
        columns = []
        for row in value:
            columns += [k for k, v in row.items() if k not in columns and not isinstance(v, (dict, list))]
        return title + table(columns, [[cell(row.get(c)) for c in columns] for row in value])
    if isinstance(value, dict) and value:
        return title + table(["", "value"], [[cell(k), cell(v)] for k, v in value.items()])
    return None


def dashboard_section(path: Path, results: dict) -> str:
    d = results.get("dashboard", {})
    facts = [
        ("clients, for seconds", f"{d.get('clients')}, {d.get('seconds')}"),
        ("requests (per second)", f"{d.get('requests')} ({d.get('throughput_per_s')})"),
        ("p50 / p95 / max", f"{d.get('p50_ms')} / {d.get('p95_ms')} / {d.get('max_ms')} ms"),
        ("rows in the report", cell(d.get("rows"))),
        ("computing the report afresh", f"{d.get('computed_ms')} ms"),
        ("one client, median", f"{d.get('single_client_median_ms')} ms"),
        ("goal: p95 at most", f"{d.get('goal_p95_ms')} ms: **{d.get('goal')}**" if d.get("goal") == "FAIL"
         else f"{d.get('goal_p95_ms')} ms: {d.get('goal')}"),
    ]
    return (f"## Dashboard\n\n`benchmarks/dashboard.py` (the last step of `make bench`): `GET /api/report` under "
            f"concurrent clients; `{relative(path)}`.\n\n" + table(["", "value"], [[k, v] for k, v in facts]))


SECTIONS = {
    "startup": startup_section,
    "inprocess": inprocess_section,
    "many_runs": many_runs_section,
    "many_runs_r03": many_runs_r03_section,
    "summary": summary_section,
    "clicks": clicks_section,
    "ranx_workload": ranx_workload_section,
}


def page(folder: Path = RESULTS, notes: Path = NOTES) -> str:
    found = newest(folder, FULL_NAME, is_full)
    if found is None:
        raise SystemExit(f"no full run in {folder} (a YYYYMMDDTHHMMSSZ.json of `make bench`)")
    path, results = found
    blocks = [
        f"<!-- written by tools/perf_page.py from {relative(path)}: edit the tool or "
        "docs/performance-notes.md, not this page -->",
        "# Performance",
        "`make bench` generates seeded runs (MS MARCO-like: integer ids, ~3% tied scores) and times every "
        "tool as a whole process, interleaved, checking that all print the same numbers as trec_eval before "
        "a time is shown; every run is saved in `benchmarks/results/` and `benchmarks/README.md` (in the "
        "repository) describes the data sets and the goals.",
        header(path, results),
    ]
    if results.get("goals"):
        blocks.append(goals_section(results))
    for key, render in SECTIONS.items():
        if results.get(key):
            blocks.append(render(results))
    for key, value in results.items():
        if key not in KNOWN:
            block = other_section(key, value)
            if block:
                blocks.append(block)
    dashboard = newest(folder, DASHBOARD_NAME)
    if dashboard is not None:
        blocks.append(dashboard_section(*dashboard))
    if notes.is_file():
        blocks.append(notes.read_text().strip())
    return "\n\n".join(blocks) + "\n"


def main(argv: list[str], folder: Path = RESULTS, out: Path = PAGE, notes: Path = NOTES) -> int:
    wanted = page(folder, notes)
    if "--check" in argv:
        if not out.is_file() or out.read_text() != wanted:
            print(f"{relative(out)} differs from the newest results in {relative(folder)}: run `make perf-page`")
            return 1
        return 0
    if not out.is_file() or out.read_text() != wanted:
        out.write_text(wanted)
        print(f"wrote {relative(out)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
