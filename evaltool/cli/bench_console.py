"""What ``evaltool bench`` prints: a benchmark runner's console log, as benchmark scripts print it.

Standard output gets the run log: the banner, the loaded queries, with ``--verbose`` a
block per query as it finishes, and the final summary (aggregate metrics with bars, by
difficulty, by category, latency, failures, where the files are). Standard error gets
warnings and, on a terminal, one progress line redrawn in place.

>>> bar(0.35)
'████████░░░░░░░░░░░░░░░░'
>>> value_text(0.35, percent=True), value_text(0.4123), value_text(None)
('35.0%', '0.412', 'n/a')
>>> short_label("precision@3"), long_label("recall@10"), long_label("mrr"), short_label("ndcg_cut_10")
('P@3', 'Recall@10', 'Mean MRR', 'ndcg_cut_10')
"""

from __future__ import annotations

import math
import re
import sys

from evaltool.bench.checkpoint import Outcome
from evaltool.bench.execute import TIMEOUT
from evaltool.bench.queries import BenchQuery
from evaltool.bench.scoring import MeasurePlan, score_one
from evaltool.bench.session import BenchResult, Listener
from evaltool.cli.progress import Progress

RULE = "=" * 80
BAR_WIDTH = 24
_SEED_NAME = re.compile(r"(precision|recall)@(\d+)")


def bar(value: float) -> str:
    filled = max(0, min(BAR_WIDTH, round(value * BAR_WIDTH)))
    return "█" * filled + "░" * (BAR_WIDTH - filled)


def value_text(value, percent: bool = False) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    if isinstance(value, str):
        return value
    if percent:
        return f"{value * 100:.1f}%"
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def short_label(name: str) -> str:
    """Short per-query labels (P@3, R@10, MRR) for ``precision@k``, ``recall@k`` and ``mrr``; other names as written."""
    match = _SEED_NAME.fullmatch(name)
    if match:
        return f"{'P' if match.group(1) == 'precision' else 'R'}@{match.group(2)}"
    return "MRR" if name == "mrr" else name


def long_label(name: str) -> str:
    """Summary labels (Precision@3, Recall@10, Mean MRR) for ``precision@k``, ``recall@k`` and ``mrr``; other names as written."""
    match = _SEED_NAME.fullmatch(name)
    if match:
        return f"{match.group(1).capitalize()}@{match.group(2)}"
    return "Mean MRR" if name == "mrr" else name


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def milliseconds(value: float | None) -> str:
    if value is None:
        return "n/a"
    return f"{value:.0f}ms" if value >= 10 else f"{value:.1f}ms"


class Console(Listener):
    """Prints a run's log as it goes (see the module docstring)."""

    def __init__(self, queries_path: str, verbose: bool = False, relevance_level: int = 1, out=None, err=None):
        self.queries_path = queries_path
        self.plan: MeasurePlan | None = None
        self.verbose = verbose
        self.relevance_level = relevance_level
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self.progress: Progress | None = None
        self.count = 0
        self.total = 0
        self.checkpoint = ""

    def write(self, text: str = "") -> None:
        if self.progress:
            self.progress.clear()
        buffer = getattr(self.out, "buffer", None)
        if buffer is not None:
            self.out.flush()
            buffer.write((text + "\n").encode("utf-8", "surrogateescape"))
            buffer.flush()
        else:
            self.out.write(text + "\n")
        if self.progress:
            self.progress.draw()

    def warn(self, text: str) -> None:
        if self.progress:
            self.progress.clear()
        self.err.write(f"evaltool: {text}\n")
        self.err.flush()

    def loaded(self, queries: list[BenchQuery], backend, plan: MeasurePlan) -> None:
        self.plan = plan
        self.write(RULE)
        self.write("evaltool benchmark runner")
        self.write(RULE)
        self.write()
        self.write(f"Loading queries from: {self.queries_path}")
        self.write(f"✓ Loaded {len(queries)} queries successfully")
        self.write(f"Backend: {backend.label} ({backend.kind})")

    def corpus_checked(self, unknown: dict[str, list[str]], corpus_size: int | None) -> None:
        if corpus_size is None:
            return
        if not unknown:
            self.write(f"✓ Every expected id is in the corpus ({corpus_size} ids)")
            return
        ids = sum(len(v) for v in unknown.values())
        self.warn(
            f"warning: {ids} expected id{'s' if ids > 1 else ''} of {len(unknown)} "
            f"quer{'ies' if len(unknown) > 1 else 'y'} not in the corpus ({corpus_size} ids):"
        )
        for qid, missing in unknown.items():
            self.warn(f"  query {qid}: {', '.join(missing)}")

    def checkpoint_opened(self, path: str, resumed: int, discarded: int) -> None:
        self.checkpoint = path
        if discarded:
            self.write(
                f"Restarting: the unfinished run in {path} ({discarded} "
                f"quer{'y' if discarded == 1 else 'ies'} done) is discarded"
            )

    def started(self, total: int, pending: list[BenchQuery], resumed: int) -> None:
        self.total, self.count = total, resumed
        self.write()
        if resumed:
            self.write(f"Resuming: {resumed} of {total} queries are done ({self.checkpoint}); {len(pending)} to go")
        self.write("Starting benchmark execution...")
        self.write()
        self.progress = Progress(self.err, total, resumed)
        self.progress.draw()

    def finished(self, query: BenchQuery, outcome: Outcome) -> None:
        self.count += 1
        if self.verbose:
            self.block(query, outcome)
        self.progress.advance(outcome.error is not None)

    def block(self, query: BenchQuery, outcome: Outcome) -> None:
        head = f"[{self.count}/{self.total}] "
        pad = " " * len(head)
        context = [f"Version: {query.version}"] if query.version is not None else []
        context += [
            f"{name}: {value}"
            for name, value in (("Category", query.category), ("Difficulty", query.difficulty))
            if value is not None
        ]
        expected = sum(1 for g in query.judgments.values() if g >= self.relevance_level)
        noun = "module" if query.expected_field == "expected_modules" else "id"
        lines = [
            f'{head}Query: "{query.text}"',
            *([f"{pad}{' | '.join(context)}"] if context else []),
            f"{pad}Expected: {plural(expected, noun)}",
        ]
        took = milliseconds(outcome.execution_time_ms)
        tries = f" after {outcome.attempts} attempts" if outcome.attempts > 1 else ""
        if outcome.error == TIMEOUT:
            lines.append(f"{pad}✗ Timed out after {took}{tries}")
        elif outcome.error is not None:
            lines.append(f"{pad}✗ Failed{tries}: {outcome.error}")
        else:
            dropped = f", {outcome.duplicates_removed} duplicates removed" if outcome.duplicates_removed else ""
            lines.append(f"{pad}✓ Executed in {took}{tries}: {plural(len(outcome.ids), 'result')}{dropped}")
            metrics = score_one(query, outcome, self.plan, self.relevance_level)
            shown = " | ".join(f"{short_label(k)}={value_text(metrics[k])}" for k in self.plan.names if k in metrics)
            lines.append(f"{pad}Metrics: {shown}")
        self.write("\n".join(lines) + "\n")

    def completed(self, result: BenchResult) -> None:
        if self.progress:
            self.progress.clear()
            self.progress = None
        self.write("\n".join(summary_lines(result)))


def _group_lines(table: dict[str, dict], plan: MeasurePlan, capitalize: bool) -> list[str]:
    names = {value: (value[:1].upper() + value[1:]) if capitalize else value for value in table}
    width = max(len(n) for n in names.values())
    count_width = max(len(f"({e['count']})") for e in table.values())
    lines = []
    for value, entry in table.items():
        parts = [f"{short_label(k)}={value_text(entry[k], plan.kinds[k].percent)}" for k in plan.names]
        if not entry["count"]:
            parts = ["no answers"]
        if entry["failed"]:
            parts.append(f"{entry['failed']} failed")
        lines.append(
            f"  {names[value]:<{width}} {'(' + str(entry['count']) + '):':>{count_width + 1}}  " + " | ".join(parts)
        )
    return lines


def summary_lines(result: BenchResult) -> list[str]:
    """The closing summary of a finished run: aggregate metrics with bars, groups, latency, failures, files."""
    report, meta, plan = result.report, result.report["metadata"], result.plan
    failed = meta["failed_queries"]
    lines = [
        RULE,
        "BENCHMARK COMPLETED",
        RULE,
        "",
        f"Execution Time: {meta['execution_time_seconds']:.{1 if meta['execution_time_seconds'] >= 10 else 2}f} "
        "seconds",
        f"Total Queries: {meta['total_queries']}"
        + (f" ({meta['evaluated_queries']} evaluated, {failed} failed)" if failed else ""),
        "",
        "AGGREGATE METRICS:",
    ]
    width = max(len(long_label(k)) for k in plan.names) + 3
    values = report["aggregate_metrics"]
    percent = {k: plan.kinds[k].percent for k in plan.names}
    column = max(len(value_text(values[k], percent[k])) for k in plan.names)
    for key in plan.names:
        shown = value_text(values[key], percent[key])
        if percent[key] and values[key] is not None:
            shown = f"{shown:<{column}}  {bar(values[key])}"
        lines.append(f"  {long_label(key) + ':':<{width}}{shown}")
    for title, table, capitalize in (
        ("BY DIFFICULTY", report["per_difficulty"], True),
        ("BY CATEGORY", report["per_category"], False),
    ):
        lines += ["", f"{title}:", *_group_lines(table, plan, capitalize)]
    redirects = meta.get("redirects") or {}
    if redirects.get("followed_cross_origin") or redirects.get("refused"):
        lines += [
            "",
            f"REDIRECTS: {redirects['followed_cross_origin']} followed to another origin (without the "
            f"--header headers), {redirects['refused']} refused (another origin; "
            "--follow-cross-origin-redirects follows them); each query's are in detailed_results",
        ]
    timing = meta["latency_ms"]
    lines += [
        "",
        f"LATENCY: p50 {milliseconds(timing['p50'])} | p95 {milliseconds(timing['p95'])} | "
        f"max {milliseconds(timing['max'])}",
    ]
    if failed:
        timeouts = meta["timeouts"]
        lines += [
            "",
            f"FAILURES: {failed} of {meta['total_queries']} queries" + (f" ({timeouts} timed out)" if timeouts else ""),
        ]
        for entry in report["detailed_results"]:
            if entry["error"] is not None:
                tries = f" ({entry['attempts']} attempts)" if entry["attempts"] > 1 else ""
                lines.append(f"  {entry['query_id']}: {entry['error']}{tries}")
    lines += [
        "",
        f"Results saved to: {result.report_path}",
        f"TREC run and qrels: {result.run_path}, {result.qrels_path}",
    ]
    if meta["rescore"]:
        lines.append(f"Re-score with: {meta['rescore']}")
    lines += ["", RULE]
    return lines
