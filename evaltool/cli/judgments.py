"""``evaltool pool``, ``evaltool judgments ...`` and ``evaltool feedback``: what to judge, the judgment
sets, their agreement, a model's calibration against people, users' ratings.

No package is named ``pool`` or ``feedback``: pooling is :mod:`evaltool.judgments.pool`, and
ratings from production become judgment sets through :mod:`evaltool.judgments.feedback`.
"""

from __future__ import annotations

import os

import click

from evaltool.cli.common import REPORT_FORMATS, emit, fail, output_options, warn
from evaltool.cli.recording import db_option
from evaltool.errors import EvaltoolError

JUDGMENTS_HELP = """Judgment sets in the history: several raters' grades of (query, document) pairs on a
declared scale (binary, graded 0-3, or labels mapped to grades), versioned; their agreement;
the consensus qrels.

\b
  evaltool pool run1.txt run2.txt run3.txt --depth 10 --output pool.txt
  evaltool judgments import ana.qrels --set dl19-extra --rater ana --scale graded
  evaltool judgments import ben.jsonl --set dl19-extra --rater ben
  evaltool judgments agreement dl19-extra
  evaltool judgments calibrate dl19-llm dl19-extra --runs run1.txt run2.txt run3.txt
  evaltool judgments export dl19-extra --consensus median --output qrels.txt
  evaltool qrels.txt run1.txt
  evaltool history rescore 12 --judgments dl19-extra
"""


@click.command("pool")
@click.argument("runs", nargs=-1, type=click.Path(dir_okay=False))
@click.option(
    "--qrels", default=None, type=click.Path(dir_okay=False), help="Leave out the pairs these qrels judge already."
)
@click.option(
    "--depth",
    type=click.IntRange(min=1),
    default=None,
    help="Depth@K: the union of each run's first K documents per query (default 10).",
)
@click.option(
    "--method",
    type=click.Choice(["depth", "rrf"]),
    default="depth",
    show_default=True,
    help="depth (Depth@K) or rrf: the N best per query by reciprocal-rank fusion (--size N).",
)
@click.option("--size", type=click.IntRange(min=1), default=None, help="--method rrf: documents per query.")
@click.option(
    "--execution",
    "executions",
    multiple=True,
    type=int,
    metavar="ID",
    help="Also pool what a history execution returned (bench and suite executions); repeatable.",
)
@db_option
@click.option(
    "--task",
    default=None,
    metavar="NAME",
    help="Instead of a file, make a judging task of this name in the history (see --set).",
)
@click.option(
    "--set",
    "set_name",
    default=None,
    metavar="SET",
    help="--task: the judgment set its judgments go to (created, graded 0-3, when new); its "
    "judged pairs are left out too.",
)
@click.option(
    "--ratings",
    type=click.IntRange(min=1, max=20),
    default=1,
    show_default=True,
    help="--task: raters wanted per pair.",
)
@click.option(
    "--topics",
    default=None,
    type=click.Path(dir_okay=False),
    help="--task: the queries' text, description and narrative (TSV, JSON or JSONL with a query id).",
)
@click.option(
    "--output",
    type=click.Path(dir_okay=False),
    default=None,
    help="Write the pool to FILE (atomically) instead of standard output.",
)
def pool_command(runs, qrels, depth, method, size, executions, db, task, set_name, ratings, topics, output):
    """What to judge: one line 'query_id doc_id' per pair, sorted by query then document id, from run
    files and history executions. Depth@K is trectools' pool (its 'topX'); runs are ranked as trec_eval
    ranks them (score, then document id), executions as the search returned them.

    \b
      evaltool pool bm25.txt splade.txt tasb.txt --depth 10 --output pool.txt
      evaltool pool bm25.txt splade.txt --method rrf --size 20 --qrels judged.txt
      evaltool pool --execution 12 --execution 15 --db history.sqlite --task "round 2" --set helpdesk
    """
    from evaltool.judgments.pool import depth_pool, rrf_pool

    try:
        if method == "rrf" and size is None:
            raise EvaltoolError("--method rrf needs --size N (documents per query)")
        if method == "depth" and size is not None:
            raise EvaltoolError("--size goes with --method rrf; Depth@K takes --depth K")
        if method == "rrf" and depth is not None:
            raise EvaltoolError("--depth goes with --method depth; RRF takes --size N")
        if not runs and not executions:
            raise EvaltoolError("pool: give run files, --execution IDs, or both")
        if (task is None) != (set_name is None):
            raise EvaltoolError("--task NAME and --set SET go together (a task's judgments go to a set)")
        lists, sources = _lists(runs, executions, db)
        judged = _judged(qrels, set_name, db)
        if method == "rrf":
            pool = rrf_pool(lists, size, judged=judged, sources=sources)
        else:
            pool = depth_pool(lists, depth or 10, judged=judged, sources=sources)
        if task is not None:
            from evaltool.judgments.tasks import create_task

            from evaltool.io.topics import read_topics

            made = create_task(
                db,
                set_name,
                pool,
                name=task,
                ratings_wanted=ratings,
                executions=[int(e) for e in executions],
                queries=read_topics(topics).rows if topics else None,
            )
            warn(
                f"task {made.id} ({made.name}): {len(pool)} pairs of {len(pool.pairs)} queries to judge into "
                f"set {set_name}; {pool.left_out} pairs judged already were left out"
            )
            return
    except EvaltoolError as exc:
        fail(exc)
    emit(pool.text(), output)
    shown = f"RRF@{size}" if method == "rrf" else f"Depth@{depth or 10}"
    warn(f"pool: {len(pool)} pairs of {len(pool.pairs)} queries ({shown}); {pool.left_out} judged already, left out")


def _lists(runs, executions, db):
    from evaltool.io.load import load_run
    from evaltool.judgments.pool import execution_lists, run_lists

    lists, sources = [], []
    for path in runs:
        lists.append(run_lists(load_run(path)))
        sources.append(path)
    if executions:
        from evaltool.history import get_executions

        for execution in get_executions(db, list(executions), results=True):
            lists.append(execution_lists(execution))
            sources.append(f"execution {execution.id}")
    return lists, sources


def _judged(qrels, set_name, db) -> dict[str, set[str]]:
    judged: dict[str, set[str]] = {}
    if qrels is not None:
        from evaltool.io.load import load_qrels

        for query, (docs, _) in load_qrels(qrels).by_query.items():
            judged.setdefault(query, set()).update(docs)
    if set_name is not None:
        from evaltool.judgments.sets import list_sets, read_judgments

        try:
            known = {s.name for s in list_sets(db)}
        except EvaltoolError:
            known = set()
        if set_name in known:
            for jd in read_judgments(db, set_name):
                judged.setdefault(jd.query_id, set()).add(jd.doc_id)
    return judged


@click.group("judgments", help=JUDGMENTS_HELP)
def judgments_group():
    pass


@judgments_group.command("list")
@db_option
@output_options(["table", "json", "csv", "markdown"], "table")
def list_command(db, fmt, output):
    """List the judgment sets: scale, version, who made them.

    \b
      evaltool judgments list
    """
    from evaltool.judgments.sets import list_sets

    try:
        sets = list_sets(db)
    except EvaltoolError as exc:
        fail(exc)
    if fmt == "json":
        from evaltool.report.json import dump_json

        emit(dump_json([s.to_dict() for s in sets]), output)
        return
    from evaltool.report.judgments import sets_table
    from evaltool.report.table import render

    emit(render(sets_table(sets), fmt), output)


@judgments_group.command("create")
@click.argument("name")
@db_option
@click.option(
    "--scale",
    default="graded",
    show_default=True,
    metavar="binary|graded|labels:NAME=GRADE,...",
    help="binary (not_useful=0, useful=1), graded (0-3), or declared labels mapped to grades.",
)
@click.option("--description", default=None, help="What the set judges, in a line.")
def create_command(name, db, scale, description):
    """Declare an empty judgment set.

    \b
      evaltool judgments create helpdesk-ratings --scale labels:bad=0,ok=1,good=2,perfect=3
    """
    from evaltool.judgments.sets import create_set

    try:
        made = create_set(db, name, scale, description=description)
    except EvaltoolError as exc:
        fail(exc)
    warn(f"judgment set {made.name} created ({made.scale.describe()})")


@judgments_group.command("import")
@click.argument("qrels", type=click.Path(dir_okay=False))
@click.option("--set", "set_name", required=True, metavar="NAME", help="The judgment set (made when new).")
@click.option(
    "--rater",
    default=None,
    metavar="NAME",
    help="Who judged (required for TREC qrels; JSONL lines may name their own).",
)
@click.option(
    "--scale",
    default=None,
    metavar="binary|graded|labels:...",
    help="The scale of a new set (default graded); an existing set keeps its own.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["auto", "trec", "jsonl"]),
    default="auto",
    show_default=True,
    help="TREC qrels or JSONL {query_id, doc_id, grade|label[, rater, note, at]}; auto reads the content.",
)
@db_option
def import_command(qrels, set_name, rater, scale, fmt, db):
    """Add a file's judgments to a set, as one new version: a rater's grade of a pair replaces only
    that rater's earlier one. Every grade is checked against the set's scale first; nothing is
    written when any line is wrong.

    \b
      evaltool judgments import ana.qrels --set dl19-extra --rater ana --scale graded
    """
    import os

    from evaltool.judgments.exchange import read_file
    from evaltool.judgments.scales import Scale
    from evaltool.judgments.sets import add_judgments, create_set, list_sets

    try:
        known = {}
        try:
            known = {s.name: s for s in list_sets(db)}
        except EvaltoolError:
            pass  # no history yet: made below
        if set_name in known:
            current = known[set_name]
            if scale is not None and Scale.parse(scale) != current.scale:
                raise EvaltoolError(f"--scale {scale}: set {set_name} is on the scale {current.scale.describe()}")
            chosen = current.scale
        else:
            chosen = Scale.parse(scale or "graded")
        items = read_file(qrels, chosen, rater, None if fmt == "auto" else fmt)
        if set_name not in known:
            create_set(db, set_name, chosen)
        before = known[set_name].version if set_name in known else 0
        after = add_judgments(
            db,
            set_name,
            items,
            author=rater,
            change={"what": "imported", "file": os.path.abspath(qrels), "judgments": len(items)},
        )
    except EvaltoolError as exc:
        fail(exc)
    if after.version == before:
        warn(
            f"judgment set {set_name}: {len(items)} judgments read from {qrels}, all already there; unchanged "
            f"(version {before})"
        )
    else:
        warn(f"judgment set {set_name}: {len(items)} judgments read from {qrels}; now version {after.version}")


@judgments_group.command("export")
@click.argument("name")
@db_option
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["trec", "jsonl"]),
    default="trec",
    show_default=True,
    help="TREC qrels (one grade per pair) or JSONL.",
)
@click.option("--rater", default=None, metavar="NAME", help="One rater's grades only.")
@click.option(
    "--consensus",
    default=None,
    metavar="majority|median|ADJUDICATOR",
    help="One grade per pair from several raters: the majority (a tie goes to the lower grade), the "
    "median (the lower middle one), or a rater's name: that adjudicator's grade where given, else "
    "the grade all raters agree on. Default for TREC: majority; JSONL without it lists every "
    "rater's judgment.",
)
@click.option("--version", "version", type=click.IntRange(min=0), default=None, help="A past version of the set.")
@click.option(
    "--output",
    type=click.Path(dir_okay=False),
    default=None,
    help="Write to FILE (atomically) instead of standard output.",
)
def export_command(name, db, fmt, rater, consensus, version, output):
    """Write a set's judgments as qrels any tool reads (TREC) or as JSONL.

    \b
      evaltool judgments export dl19-extra --consensus median --output qrels.txt
      evaltool judgments export dl19-extra --rater ana --format jsonl
    """
    from evaltool.judgments.adjudication import consensus as agree
    from evaltool.judgments.exchange import jsonl_text, qrels_text
    from evaltool.judgments.sets import read_judgments

    try:
        if rater is not None and consensus is not None:
            raise EvaltoolError("--rater and --consensus: give one (a rater's grades, or several raters' consensus)")
        judged = read_judgments(db, name, version)
        if fmt == "jsonl" and rater is None and consensus is None:
            text = jsonl_text(judgments=judged)
        else:
            agreed = agree(judged, consensus or "majority", rater=rater)
            if agreed.unresolved:
                warn(
                    f"{len(agreed.unresolved)} pairs the raters disagree on were not adjudicated by "
                    f"{consensus}; left out (see 'evaltool judgments agreement {name}')"
                )
            text = qrels_text(agreed) if fmt == "trec" else jsonl_text(agreed)
    except EvaltoolError as exc:
        fail(exc)
    emit(text, output)


@judgments_group.command("agreement")
@click.argument("name")
@db_option
@click.option("--version", "version", type=click.IntRange(min=0), default=None, help="A past version of the set.")
@click.option("--task", "task_id", type=int, default=None, metavar="ID", help="Only the pairs of this judging task.")
@output_options(REPORT_FORMATS, "table")
def agreement_command(name, db, version, task_id, fmt, output):
    """How far the raters of a set agree: Cohen's kappa per pair of raters (also weighted linear and
    quadratic on scales of more than two grades), Fleiss' kappa and Krippendorff's alpha (ordinal)
    over all raters, per query, and every pair they graded differently. A figure chance already
    explains entirely (one grade only) is empty (null).

    \b
      evaltool judgments agreement dl19-extra
      evaltool judgments agreement dl19-extra -o json
    """
    from evaltool.judgments.reliability import set_agreement

    try:
        pairs = None
        if task_id is not None:
            from evaltool.judgments.tasks import get_task

            pairs = get_task(db, task_id).pair_keys()
        figures = set_agreement(db, name, version, pairs=pairs)
    except EvaltoolError as exc:
        fail(exc)
    if fmt == "json":
        from evaltool.report.json import dump_json

        emit(dump_json(figures), output)
        return
    from evaltool.report.judgments import agreement_report, agreement_rows
    from evaltool.report.table import render

    emit(render(agreement_rows(figures) if fmt == "csv" else agreement_report(figures), fmt), output)


@click.command("feedback")
@click.argument("log", type=click.Path(dir_okay=False))
@click.option(
    "--set",
    "set_name",
    required=True,
    metavar="NAME",
    help="The judgment set the ratings go to (made when new, on the mapping's scale).",
)
@click.option(
    "--mapping",
    "mapping_text",
    default="thumbs",
    show_default=True,
    metavar="thumbs|stars|graded|labels:RATING=GRADE,...",
    help="Ratings to grades: thumbs (useful=1, not useful=0), stars (1-5 as 0,0,1,2,3), graded (0-3), or declared.",
)
@click.option(
    "--run",
    default=None,
    type=click.Path(dir_okay=False),
    help="The ranked results the users rated (a TREC run): report nDCG@K from their ratings.",
)
@click.option("-k", "depth", type=click.IntRange(min=1), default=10, show_default=True, help="nDCG's cutoff.")
@click.option(
    "--consensus",
    default="median",
    show_default=True,
    metavar="majority|median|ADJUDICATOR",
    help="One grade per pair from several users (see 'evaltool judgments export -h').",
)
@db_option
@output_options(["table", "json"], "table")
def feedback_command(log, set_name, mapping_text, run, depth, consensus, db, fmt, output):
    """Explicit feedback from production: rating events (query, doc_id, rating, user, timestamp; JSON,
    JSONL, CSV or Parquet) become judgments of a set, one rater per user (a user's later rating of a
    pair replaces their earlier one); prints how far users agree and, with --run, nDCG@K of the run
    from the ratings (sum of grade / log2(rank + 1) over the ideal order of the rated grades).

    \b
      evaltool feedback ratings.jsonl --set production --mapping stars --run results.txt
    """
    from evaltool.judgments.feedback import feedback_report

    try:
        report = feedback_report(db, log, set_name, mapping_text, run=run, depth=depth, method=consensus)
    except EvaltoolError as exc:
        fail(exc)
    if fmt == "json":
        from evaltool.report.json import dump_json

        emit(dump_json(report), output)
        return
    from evaltool.report.judgments import feedback_table
    from evaltool.report.table import render

    emit(render(feedback_table(report), fmt), output)


@judgments_group.command("calibrate")
@click.argument("llm_set", metavar="LLM_SET")
@click.argument("human_set", metavar="HUMAN_SET")
@click.argument("more", nargs=-1, metavar="[RUN... | ID...]")
@click.option("--runs", "with_runs", is_flag=True, help="The arguments after the two sets are run files.")
@click.option(
    "--executions",
    "with_executions",
    is_flag=True,
    help="The arguments after the two sets are ids of history executions with stored result lists.",
)
@click.option("-m", "--measure", default="ndcg_cut_10", show_default=True, help="The measure that ranks the systems.")
@click.option(
    "--all-pairs",
    is_flag=True,
    help="Rank the systems under each set whole (default: both kept to the pairs both judged).",
)
@click.option(
    "--consensus",
    default="majority",
    show_default=True,
    metavar="majority|median|ADJUDICATOR",
    help="One grade per pair where a side has several raters.",
)
@db_option
@output_options(REPORT_FORMATS, "table")
def calibrate_command(
    llm_set, human_set, more, with_runs, with_executions, measure, all_pairs, consensus, db, fmt, output
):
    """How far a model's judgments can be trusted: on the pairs both judged, Cohen's kappa (linearly
    weighted on graded scales), the confusion matrix (rows: human grade, columns: model grade), the
    exact agreement and the mean grade difference; with runs, the systems ranked under each set (both
    kept to the pairs both judged, unless --all-pairs), with Kendall's tau and tau-AP (the human
    ranking as the truth) and the largest rank swaps.

    A set is a judgment set in --db (its llm:... raters are the model's side, the other raters the
    people's) or a qrels file.

    \b
      evaltool judgments calibrate dl19-llm dl19-people --db h.sqlite
      evaltool judgments calibrate dl19-llm qrels.dl19.txt --runs bm25.txt splade.txt tasb.txt -o json
      evaltool judgments calibrate helpdesk helpdesk --executions 12 15 19
    """
    from evaltool.judgments.calibration import calibrate

    try:
        if with_runs and with_executions:
            raise EvaltoolError("--runs and --executions exclude each other")
        if more and not (with_runs or with_executions):
            raise EvaltoolError(f"{more[0]!r}: give --runs (run files) or --executions (ids) before the systems")
        if (with_runs or with_executions) and len(more) < 2:
            raise EvaltoolError("a ranking needs two systems or more after --runs or --executions")
        human, human_grades = _side(db, human_set, model=False, consensus=consensus)
        model, model_grades = _side(db, llm_set, model=True, consensus=consensus)
        grades = human_grades or model_grades or tuple(sorted(set(human.values()) | set(model.values())))
        runs = _systems(db, more, with_executions) if more else None
        figures = calibrate(human, model, grades, runs=runs, measure=measure, all_pairs=all_pairs)
    except EvaltoolError as exc:
        fail(exc)
    figures = {"model_set": llm_set, "human_set": human_set, **figures}
    if fmt == "json":
        from evaltool.report.json import dump_json

        emit(dump_json(figures), output)
        return
    from evaltool.report.calibration import calibration_report, calibration_rows
    from evaltool.report.table import render

    emit(render(calibration_rows(figures) if fmt == "csv" else calibration_report(figures), fmt), output)


def _side(db, name: str, *, model: bool, consensus: str):
    from evaltool.judgments.calibration import qrels_grades, set_grades

    if os.path.isfile(name):
        return qrels_grades(name), ()
    return set_grades(db, name, model=model, consensus=consensus)


def _systems(db, more, executions: bool) -> dict:
    if not executions:
        if len(set(more)) != len(more):
            raise EvaltoolError("a run file is given twice")
        return {os.path.basename(path): path for path in more}
    from evaltool.history import get_executions
    from evaltool.judgments.rescoring import stored_run

    try:
        ids = [int(value) for value in more]
    except ValueError:
        raise EvaltoolError(f"--executions: expected execution ids (numbers), found {' '.join(more)[:200]}") from None
    return {f"{e.name} #{e.id}": stored_run(e) for e in get_executions(db, ids, results=True)}


@judgments_group.command("apply")
@click.argument("name")
@click.option("--suite", "suite_name", required=True, metavar="SUITE", help="The suite whose ground truth it becomes.")
@click.option(
    "--consensus",
    default="majority",
    show_default=True,
    metavar="majority|median|ADJUDICATOR",
    help="One grade per pair from several raters (see 'evaltool judgments export -h').",
)
@click.option("--rater", default=None, metavar="NAME", help="One rater's grades instead of a consensus.")
@click.option("--version", "version", type=click.IntRange(min=0), default=None, help="A past version of the set.")
@db_option
def apply_command(name, suite_name, consensus, rater, version, db):
    """Make a judgment set the ground truth of a suite: each of the suite's queries the set judges gets
    the set's grades; the others keep theirs. A new version of the suite (when anything changed), which
    its next runs are scored against.

    \b
      evaltool judgments apply helpdesk-ratings --suite helpdesk --consensus median
    """
    from evaltool.judgments.rescoring import apply_to_suite

    try:
        suite = apply_to_suite(db, name, suite_name, consensus=consensus, rater=rater, version=version)
    except EvaltoolError as exc:
        fail(exc)
    warn(f"suite {suite.name}: version {suite.version}, its ground truth from judgment set {name}")
