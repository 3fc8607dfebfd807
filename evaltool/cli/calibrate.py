"""``evaltool judgments calibrate LLM_SET HUMAN_SET``: how far a model's judgments can be trusted
(it drives :mod:`evaltool.judgments.calibration`)."""

from __future__ import annotations

import os

import click

from evaltool.cli.common import REPORT_FORMATS, emit, fail, output_options
from evaltool.cli.recording import db_option
from evaltool.errors import EvaltoolError


@click.command("calibrate")
@click.argument("llm_set", metavar="LLM_SET")
@click.argument("human_set", metavar="HUMAN_SET")
@click.argument("more", nargs=-1, metavar="[RUN... | ID...]")
@click.option("--runs", "with_runs", is_flag=True, help="The arguments after the two sets are run files.")
@click.option("--executions", "with_executions", is_flag=True,
              help="The arguments after the two sets are ids of history executions with stored result lists.")
@click.option("-m", "--measure", default="ndcg_cut_10", show_default=True, help="The measure that ranks the systems.")
@click.option("--all-pairs", is_flag=True,
              help="Rank the systems under each set whole (default: both kept to the pairs both judged).")
@click.option("--consensus", default="majority", show_default=True, metavar="majority|median|ADJUDICATOR",
              help="One grade per pair where a side has several raters.")
@db_option
@output_options(REPORT_FORMATS, "table")
def calibrate_command(llm_set, human_set, more, with_runs, with_executions, measure, all_pairs, consensus, db, fmt,
                      output):
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
