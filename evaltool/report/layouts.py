"""What each command shows, as :class:`~evaltool.report.table.Report` s and text.

Formatting only: every number, group and label comes computed on the result objects
(:class:`~evaltool.evaluation.result.EvalResult`, :class:`~evaltool.compare.Comparison`,
:class:`~evaltool.check.CheckResult`); nothing here imports a computing module.
"""

from __future__ import annotations

from evaltool.report.table import Report, Table, cell_text, p_text
from evaltool.report.trec import number_text

# ---------------------------------------------------------------- eval


def _resolved(result) -> bool:
    """Whether judgments came from more than a TREC qrels file (a queries file, JSONL results, --relevance)."""
    relevance = result.meta.get("relevance")
    if not relevance:
        return False
    inputs = relevance["inputs"].values()
    return relevance["mode"] != "auto" or any(kind in ("json", "jsonl") for kind in inputs)


def _plural(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def relevance_notes(result) -> list[str]:
    """What judged the queries, in a line or two under the table (none for TREC files alone)."""
    if not _resolved(result):
        return []
    rel = result.meta["relevance"]
    counts = ", ".join(f"{name} {n}" for name, n in rel["strategy_counts"].items() if n)
    packs = ", ".join(f"{name} {n}" for name, n in rel["packs"].items())
    k = f"; k {','.join(map(str, rel['k']))}" if rel["k"] else ""
    lines = [
        f"relevance: {rel['strategy_used']} ({counts}{f'; packs: {packs}' if packs else ''}) over "
        f"{_plural(rel['total'], 'query', 'queries')}, {rel['queries_with_relevant']} with relevant items{k}; "
        f"F1 threshold {rel['f1_threshold']:g}"
    ]
    found_only = rel["relevant_found_only"]
    if found_only:
        lines.append(
            f"note: {_plural(found_only, 'query has', 'queries have')} no known number of relevant items "
            "(token F1, or a pack without total_relevant): the ideal DCG is built from the relevant items "
            "found alone, so nDCG and recall may be overestimated there"
        )
    return lines


def eval_report(result, *, per_query: bool = False, summary: bool = True) -> Report:
    """One table: a row per query (``-q``), the summary row ``all``, a row per group (``FIELD=VALUE``),
    and a ``label`` column when the result has labels.

    When judgments were resolved (a queries file, JSONL results), per-query rows say which
    source judged the query (column ``relevance``) and notes under the table summarise it.
    """
    names = result.measures
    groups = result.groups
    labelled = result.thresholds is not None
    strategy = per_query and _resolved(result)
    header = [
        "query",
        *(["queries"] if groups else []),
        *names,
        *(["relevance"] if strategy else []),
        *(["label"] if labelled else []),
    ]

    def row(key, count, values, source=None):
        return [
            key,
            *([count] if groups else []),
            *[values.get(n) for n in names],
            *([source] if strategy else []),
            *([result.labels.get(key)] if labelled else []),
        ]

    rows = []
    if per_query:
        rows += [row(qid, None, values, result.strategies.get(qid)) for qid, values in result.per_query.items()]
    if summary:
        rows.append(row("all", len(result.qids), result.summary))
    for field, entries in groups.items():
        rows += [row(f"{field}={value}", entry["count"], entry) for value, entry in entries.items()]
    return Report([Table(header, rows)], relevance_notes(result))


def runs_report(names: list[str], results: list, *, per_query: bool = False, summary: bool = True) -> Report:
    """Several runs scored against one qrels, as one table whose first column names the run.

    Without ``per_query``: a row per run: its name, its run tag, the number of queries
    scored and every summary value. With ``per_query``: for each run in turn, the rows of
    :func:`eval_report` (every query, then ``all`` unless ``summary`` is False, then the
    groups) after the run's name, so that every format holds every run's per-query values
    and a program can read them back (``pandas.read_csv`` and group by ``run``). Columns
    that only some runs have (``relevance``) are empty for the others; notes name their run.
    """
    if not per_query:
        measures = results[0].measures
        rows = [
            [name, result.meta["runid"], len(result.qids), *[result.summary.get(m) for m in measures]]
            for name, result in zip(names, results)
        ]
        return Report([Table(["run", "runid", "queries", *measures], rows)])
    reports = [eval_report(result, per_query=True, summary=summary) for result in results]
    header = []
    for report in reports:
        header += [column for column in report.tables[0].header if column not in header]
    rows, notes = [], []
    for name, report in zip(names, reports):
        table = report.tables[0]
        position = {column: j for j, column in enumerate(table.header)}
        rows += [[name, *[row[position[c]] if c in position else None for c in header]] for row in table.rows]
        notes += [f"{name}: {note}" for note in report.notes]
    return Report([Table(["run", *header], rows)], notes)


def eval_trec_lines(result, *, per_query: bool = False) -> str:
    """Group summaries, labels and per-query relevance in trec_eval's three columns, after its own lines.

    A group's rows carry ``FIELD=VALUE`` where trec_eval writes the query id; ``queries``
    is the group's size. Labels are rows of the pseudo-measure ``label``; with ``-q``,
    when judgments were resolved, rows of ``relevance`` name each query's source.
    """
    integer = {c.name: c.integer_summary for c in result.columns}
    lines = []
    for field, entries in result.groups.items():
        for value, entry in entries.items():
            key = f"{field}={value}"
            lines.append(f"{'queries':<22}\t{key}\t{entry['count']}\n")
            lines += [
                f"{name:<22}\t{key}\t{number_text(v, integer[name], result.zscores)}\n"
                for name, v in entry.items()
                if name != "count"
            ]
    labels = result.to_dict(per_query).get("labels", {})
    lines += [f"{'label':<22}\t{key}\t{value}\n" for key, value in labels.items()]
    if per_query and _resolved(result):
        lines += [f"{'relevance':<22}\t{qid}\t{result.strategies[qid]}\n" for qid in result.qids]
    return "".join(lines)


# ---------------------------------------------------------------- compare


def _policy(cmp) -> str:
    n = len(cmp.qids)
    if cmp.complete:
        return (
            f"{n} queries: every query judged in {cmp.qrels} (-c: a query a run does not answer "
            "scores as trec_eval scores it)"
        )
    text = f"{n} queries: judged in {cmp.qrels} and answered by every run"
    lacking = {name: qids for name, qids in cmp.left_out.items() if qids}
    if lacking:
        parts = [
            f"{len(q)} of {name}'s ({', '.join(q[:3])}{', ...' if len(q) > 3 else ''})" for name, q in lacking.items()
        ]
        text += f"; left out, as not every run answers them: {'; '.join(parts)}; -c scores them instead"
    return text


def compare_notes(cmp) -> list[str]:
    ci = "t interval" if cmp.test == "t" else f"paired bootstrap BCa interval ({cmp.trials} resamples)"
    seeded = "" if cmp.test == "t" else f"; seed {cmp.seed}"
    family = (len(cmp.names) - 1) * len(cmp.measures)
    notes = [
        f"baseline: {cmp.baseline}; {_policy(cmp)}",
        f"test: {cmp.test_name}; correction over {family} comparison{'s' if family > 1 else ''}: "
        f"{cmp.correction_name}; * adjusted p < {cmp.alpha:g}; ci: {1 - cmp.alpha:.0%} {ci} of the "
        f"mean difference{seeded}; wins/ties/losses: queries where the run does better than/as well as/"
        "worse than the baseline (lower is better for ranks such as FirstRelPos and ARP; counts have no wins "
        "or losses)",
    ]
    if cmp.ignored_measures:
        notes.append(f"not compared (no per-query mean): {', '.join(cmp.ignored_measures)}")
    return notes


def _ci_text(ci) -> str:
    return f"[{cell_text(ci[0])}, {cell_text(ci[1])}]"


def compare_report(cmp) -> Report:
    """A row per run and a column per measure (and its label); the paired statistics; means per group."""
    if cmp.pairs is not None:
        return all_pairs_report(cmp)
    labelled = cmp.thresholds is not None
    main = []
    for name in cmp.names:
        row = [name]
        for m in cmp.measures:
            cell = cmp.cells[name][m]
            if cell.delta is None:
                row.append(cell.mean)
            else:
                mark = "*" if cmp.significant(name, m) else ""
                row.append(f"{cell_text(cell.mean)} ({cell.delta:+.4f}){mark}")
        main.append(row + ([cmp.labels[name]] if labelled else []))
    tables = [Table(["run", *cmp.measures, *(["label"] if labelled else [])], main)]
    details = []
    for name in cmp.names[1:]:
        for m in cmp.measures:
            c = cmp.cells[name][m]
            details.append(
                [name, m, c.delta, p_text(c.p_value), p_text(c.p_adjusted), _ci_text(c.ci), c.wins, c.ties, c.losses]
            )
    tables.append(
        Table(
            ["run", "measure", "delta", "p", "p_adjusted", "ci", "wins", "ties", "losses"],
            details,
            title=f"paired differences from {cmp.baseline}",
        )
    )
    for field, entries in cmp.groups.items():
        rows = [
            [value, entry["count"], name, *[entry["runs"][name][m] for m in cmp.measures]]
            for value, entry in entries.items()
            for name in cmp.names
        ]
        tables.append(Table([field, "queries", "run", *cmp.measures], rows, title=f"means by {field}"))
    return Report(tables, compare_notes(cmp))


def compare_csv(cmp) -> Report:
    """One tidy table (:meth:`~evaltool.compare.Comparison.rows`): a row per (group, run, measure);
    with all pairs, a row per (measure, pair) (:meth:`~evaltool.multiple.AllPairs.rows`)."""
    rows = cmp.rows() if cmp.pairs is None else cmp.pairs.rows()
    header = list(rows[0]) if rows else []
    return Report([Table(header, [list(row.values()) for row in rows])])


LETTERS_TITLE = "means; runs that share a letter do not differ significantly"


def _pairs_table(analysis) -> Table:
    rows = [
        [
            p.measure,
            p.a,
            p.b,
            f"{p.delta:+.4f}{'*' if analysis.significant(p) else ''}",
            p_text(p.p_value),
            p_text(p.p_adjusted),
            _ci_text(p.ci),
            p.effect_size,
            p.cohens_d,
            p.wins,
            p.ties,
            p.losses,
        ]
        for p in analysis.pairs
    ]
    header = [
        "measure",
        "a",
        "b",
        "delta (b - a)",
        "p",
        "p_adjusted",
        "ci",
        "ES_E",
        "cohens_d",
        "wins",
        "ties",
        "losses",
    ]
    return Table(header, rows, title="all pairs")


def _anova_table(analysis) -> Table:
    anova = [[m, *row[:4], row[4], p_text(row[5])] for m, a in analysis.anova.items() for row in a.rows()]
    return Table(
        ["measure", "source", "SS", "df", "MS", "F", "p"], anova, title="two-way ANOVA (system x topic)", digits=6
    )


def pairs_report(analysis) -> Report:
    """An :class:`~evaltool.multiple.AllPairs` alone: the means (over the topics every run has) with
    their letters, the pairs (``*``: adjusted p below alpha) and the ANOVA per measure."""
    means: dict = {name: {} for name in analysis.names}
    for p in analysis.pairs:
        means[p.a][p.measure], means[p.b][p.measure] = p.mean_a, p.mean_b
    main = [
        [name, *[f"{cell_text(means[name].get(m))} {analysis.letters[m][name]}" for m in analysis.measures]]
        for name in analysis.names
    ]
    notes = [f"* adjusted p < {analysis.alpha:g} ({analysis.test}, correction {analysis.correction})"]
    return Report(
        [Table(["run", *analysis.measures], main, title=LETTERS_TITLE), _pairs_table(analysis), _anova_table(analysis)],
        notes,
    )


def all_pairs_report(cmp) -> Report:
    """Every pair of runs: the means with their letters (the paper table), the pairs, the ANOVA per measure."""
    analysis = cmp.pairs
    labelled = cmp.thresholds is not None
    main = [
        [
            name,
            *[f"{cell_text(cmp.cells[name][m].mean)} {analysis.letters[m][name]}" for m in cmp.measures],
            *([cmp.labels[name]] if labelled else []),
        ]
        for name in cmp.names
    ]
    tables = [
        Table(["run", *cmp.measures, *(["label"] if labelled else [])], main, title=LETTERS_TITLE),
        _pairs_table(analysis),
        _anova_table(analysis),
    ]
    family = analysis.family_wise
    correction = (
        "p-values family-wise over the pairs of each measure"
        if family
        else f"correction over {len(analysis.pairs)} comparisons: {cmp.correction_name}"
    )
    interval = (
        f"simultaneous {1 - cmp.alpha:.0%} Tukey HSD interval (delta +- MOE)"
        if family
        else f"{1 - cmp.alpha:.0%} " + ("t interval" if cmp.test == "t" else "paired bootstrap BCa interval")
    )
    seeded = f"; {cmp.trials} trials, seed {cmp.seed}" if cmp.test not in ("t", "hsd") else ""
    notes = [
        f"{len(cmp.names)} runs, every pair; {_policy(cmp)}",
        f"test: {cmp.test_name}{seeded}; {correction}; * adjusted p < {cmp.alpha:g}; ci: {interval}",
        "ES_E: (mean_b - mean_a) / sqrt(V_E), V_E the residual variance of the two-way ANOVA (Sakai); "
        "cohens_d: mean / sd of the per-query differences b - a; wins/ties/losses: queries where b does "
        "better than/as well as/worse than a",
        "; ".join(
            f"{m}: {analysis.topics[m]} topics, V_E {cell_text(a.residual_variance, 6)}, "
            f"HSD margin of error {cell_text(analysis.moe[m])}"
            for m, a in analysis.anova.items()
        ),
    ]
    if cmp.ignored_measures:
        notes.append(f"not compared (no per-query mean): {', '.join(cmp.ignored_measures)}")
    return Report(tables, notes)


# ---------------------------------------------------------------- check


def check_report(result, *, notes: bool = True) -> Report:
    """The drifts (values past the tolerance, missing ones, allowed improvements)."""
    rows = [[d.measure, d.query, d.reference, d.current, d.difference, d.status] for d in result.drifts]
    table = Table(["measure", "query", "reference", "current", "difference", "status"], rows, digits=6)
    if not notes:
        return Report([table])
    failed = len(result.failures)
    held = result.checked - len(result.drifts)
    summary = (
        f"{result.checked} value{'s' if result.checked != 1 else ''} checked against {result.reference} "
        f"(tolerance {result.tolerance:g}): {held} hold{'s' if held == 1 else ''}"
    )
    if failed:
        summary += f", {failed} drifted"
    improved = len(result.drifts) - failed
    if improved:
        summary += f", {improved} improved (allowed)"
    return Report([table], [summary])


# ---------------------------------------------------------------- clicks


CLICK_COLUMNS = ["row", "measure", "value", "ci_low", "ci_high", "micro", "macro", "impressions", "queries"]


def _defined(value):
    return None if isinstance(value, float) and value != value else value


def clicks_notes(result) -> list[str]:
    """What the log held and what was ignored or kept apart; how values and intervals were computed."""
    counts, options = result.meta["counts"], result.meta["options"]
    ignored = [
        f"{_plural(counts[key], 'click', 'clicks')} {text}"
        for key, text in (
            ("clicks_not_shown", "on documents not shown"),
            ("repeated_clicks", "repeating a click on the same document"),
        )
        if counts.get(key)
    ]
    apart = []
    if counts.get("empty_impressions"):
        apart.append(
            f"{_plural(counts['empty_impressions'], 'impression', 'impressions')} with an empty result list kept apart"
        )
    if counts.get("duplicate_positions"):
        apart.append(f"{_plural(counts['duplicate_positions'], 'row', 'rows')} for a position already filled ignored")
    lines = [
        f"log {result.meta['log']} ({result.meta['format']}): {_plural(counts['events'], 'event', 'events')}, "
        f"{_plural(counts['impressions'], 'impression', 'impressions')} of "
        f"{_plural(counts['queries'], 'query', 'queries')}, {_plural(counts['clicks'], 'click', 'clicks')} counted"
        + (f"; ignored: {', '.join(ignored)}" if ignored else "")
        + (f"; {'; '.join(apart)}" if apart else "")
    ]
    over = "impressions (micro)" if options["average"] == "micro" else "queries (macro)"
    lines.append(
        f"value: mean over {over}; ci: {options['confidence']:.0%} percentile bootstrap over {over}, "
        f"{options['resamples']} resamples, seed {options['seed']}; first click: "
        + ("first in log order" if options["first_click"] == "log" else "top-most clicked result")
    )
    return lines


def clicks_report(result, *, per_query: bool = False) -> Report:
    """One long table: a row per measure for the whole log, each group (``FIELD=VALUE``) and, with -q, each query."""
    rows = []

    def add(key, stats):
        for name in result.measures:
            s = stats[name]
            rows.append([key, name, s["value"], *s["ci"], s["micro"], s["macro"], s["impressions"], s["queries"]])

    add("all", result.meta["clicks"])
    for field, entries in result.meta.get("clicks_groups", {}).items():
        for value, stats in entries.items():
            add(f"{field}={value}", stats)
    if per_query:
        for qid, values in result.per_query.items():
            rows += [[qid, name, _defined(value), None, None, None, None, None, None] for name, value in values.items()]
    return Report([Table(CLICK_COLUMNS, rows)], clicks_notes(result))


# ---------------------------------------------------------------- fuse --optimize


def fusion_search_report(search, *, csv: bool = False) -> Report:
    """The settings tried with their mean, the folds' choices, and the chosen setting in the notes.

    CSV holds the one table of settings (a row per weight vector or parameter value)."""
    grid = Table(
        ["setting", search.measure, "chosen"],
        [list(row.values()) for row in search.rows()],
        title=f"{search.method}: mean {search.measure} of each setting over {len(search.qids)} queries",
    )
    if csv:
        return Report([grid])
    folds = Table(
        ["fold", "queries", "chosen on the other folds", f"held-out {search.measure}"],
        [
            [i + 1, search.fold_of.count(i), search.setting_text(search.fold_choice[i]), search.fold_score[i]]
            for i in range(search.folds)
        ],
        title=f"{search.folds}-fold cross-validation",
    )
    searched = search.parameter or "weights (>= 0, summing to 1)"
    notes = [
        f"chosen: {search.chosen_text()}; mean {search.measure} {cell_text(search.score)} on all "
        f"{len(search.qids)} queries; cross-validated {cell_text(search.cv_score)} ({search.folds} folds: each "
        "query scored with the setting best on the other folds)",
        f"searched: {searched} of {search.method} (norm {search.norm}) over {len(search.candidates)} settings; "
        f"runs: {', '.join(search.names)}",
    ]
    return Report([grid, folds] if search.folds > 1 else [grid], notes)


# ---------------------------------------------------------------- power


def power_report(analysis, *, csv: bool = False) -> Report:
    """The design table (a row per measure; CSV: per measure and minimum difference) and each pair's power."""
    if csv:
        rows = analysis.rows()
        return Report([Table(list(rows[0]) if rows else [], [list(r.values()) for r in rows])])
    deltas = analysis.min_deltas
    design = Table(
        [
            "measure",
            "topics",
            "V_E",
            "sd of differences",
            "detectable difference",
            *[f"topics for {d:g}" for d in deltas],
        ],
        [
            [m.measure, m.topics, m.residual_variance, m.sd, m.detectable, *[m.needed[d] for d in deltas]]
            for m in analysis.measures
        ],
        title="topic set size design (paired t-test)",
    )
    pairs = Table(
        ["measure", "a", "b", "delta (b - a)", "sd", "power"],
        [[p.measure, p.a, p.b, p.delta, p.sd, p.power] for p in analysis.pairs],
        title="achieved power of each comparison",
    )
    notes = [
        f"alpha {analysis.alpha:g} (two-sided), power 1 - beta = {1 - analysis.beta:g}; runs: "
        f"{', '.join(analysis.names)}",
        "V_E: residual variance of the two-way ANOVA (system x topic); sd of differences: sqrt(2 V_E) (Sakai's "
        "estimate for a future pair of runs); detectable difference: the smallest true difference the present "
        "topics detect with that power; power: noncentral t with the pair's observed mean and sd of differences",
    ]
    return Report([design, pairs], notes)


# ---------------------------------------------------------------- reproduce


def reproduce_report(result, *, per_topic: bool = False, csv: bool = False) -> Report:
    """The rankings' agreement per pair, the scores' per (pair, measure), the effects per advanced pair."""
    if csv:
        rows = result.rows()
        return Report([Table(list(rows[0]) if rows else [], [list(r.values()) for r in rows])])
    tables = [
        Table(
            ["original", "reproduced", "KTU", "RBO"],
            [[p.original, p.reproduced, p.ktu_mean, p.rbo_mean] for p in result.pairs],
            title=f"rankings (mean over the topics; top {result.depth}, RBO p {result.p:g})",
        )
    ]
    tables.append(
        Table(
            ["original", "reproduced", "measure", "original mean", "reproduced mean", "RMSE", "p"],
            [
                [p.original, p.reproduced, m, p.mean_original[m], p.mean_reproduced[m], p.rmse[m], p_text(p.p_value[m])]
                for p in result.pairs
                for m in result.measures
            ],
            title="per-topic scores",
        )
    )
    if result.effects:
        tables.append(
            Table(
                ["baseline", "advanced", "measure", "ER", "DeltaRI"],
                [
                    [e.baseline, e.advanced, m, e.effect_ratio[m], e.delta_ri[m]]
                    for e in result.effects
                    for m in result.measures
                ],
                title="effects (advanced against baseline)",
            )
        )
    if per_topic:
        tables.append(
            Table(
                ["original", "reproduced", "topic", "KTU", "RBO"],
                [[p.original, p.reproduced, q, p.ktu[q], p.rbo[q]] for p in result.pairs for q in p.ktu],
                title="rankings per topic",
            )
        )
    notes = [
        f"{result.queries} queries scored by every run; KTU: Kendall's tau union; RBO: rank-biased overlap "
        "(truncated, normalised); RMSE: root mean square of the per-topic differences; p: paired t-test, original "
        "against reproduced",
        "ER: mean improvement of the reproduced advanced run over the reproduced baseline divided by the "
        "original's (1: fully reproduced); DeltaRI: relative improvement of the originals minus that of the "
        "reproductions (0: reproduced)",
    ]
    return Report(tables, notes)
