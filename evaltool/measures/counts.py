"""Counts: queries, retrieved, relevant, relevant retrieved, judged non-relevant retrieved."""

from __future__ import annotations

import numpy as np

from evaltool.measures.base import PYTREC, REL, Agg, Better, Option, measure

from evaltool.measures.restrict import at_level

NEITHER = Better.NEITHER  # a count is neither better higher nor lower


@measure("num_q", better=NEITHER, agg=Agg.COUNT, integer=True, per_query=False, same_as="NumQ")
def num_q(batch, params):
    """Number of queries averaged over (with ``-c``: every query of the qrels).

    Edge cases: without ``-c``, qrels queries missing from the run and run queries without judgments
    are not counted. (trec_eval 10.0, ``m_num_q.c``.)

    >>> from evaltool import evaluate
    >>> evaluate({"q1": {"a": 1}, "q2": {"b": 1}}, {"q1": {"a": 1.0}}, ["num_q"], complete=True).summary
    {'num_q': 2}
    """
    return np.ones(batch.n_queries)


@measure("num_ret", better=NEITHER, agg=Agg.SUM, integer=True, on_missing=0.0, same_as="NumRet")
def num_ret(batch, params):
    """Documents retrieved (after ``-M`` and ``-J``); the summary is the sum over queries.

    Edge cases: with ``-c`` a query missing from the run retrieved 0. (trec_eval 10.0,
    ``m_num_ret.c``.)

    >>> from evaltool import evaluate
    >>> evaluate({"q": {"a": 1}}, {"q": {"a": 1.0, "b": 0.5}}, ["num_ret"]).summary
    {'num_ret': 2}
    """
    return batch.num_ret


def judged_relevant_in_qrels(qrels) -> float:
    """trec_eval's ``num_rel`` summary under ``-c``: judgments with a grade above 0, whatever ``-l`` says."""
    return float(np.count_nonzero(qrels.grades > 0))


@measure(
    "num_rel", better=NEITHER, agg=Agg.SUM, integer=True, same_as="NumRel", complete_summary=judged_relevant_in_qrels
)
def num_rel(batch, params):
    """Relevant documents in the qrels (grade >= ``-l``); the summary is the sum.

    With ``-c`` the summary counts every judgment with a grade above 0 (trec_eval's rule,
    independent of ``-l``).

    Edge cases: negative grades never count; the ``-c`` rule above is declared on the measure
    (``complete_summary``). (trec_eval 10.0, ``m_num_rel.c``.)

    >>> from evaltool import evaluate
    >>> evaluate({"q": {"a": 2, "b": 1, "c": 0}}, {"q": {"a": 1.0}}, ["num_rel"]).summary
    {'num_rel': 2}
    """
    return batch.num_rel


@measure("num_rel_ret", better=NEITHER, agg=Agg.SUM, integer=True)
def num_rel_ret(batch, params):
    """Relevant documents retrieved; the summary is the sum.

    Edge cases: 0 when nothing relevant is retrieved; with ``-c`` a query missing from the run adds
    0. (trec_eval 10.0, ``m_num_rel_ret.c``.)

    >>> from evaltool import evaluate
    >>> evaluate({"q": {"a": 1, "b": 1}}, {"q": {"a": 1.0, "x": 0.5}}, ["num_rel_ret"]).summary
    {'num_rel_ret': 1}
    """
    return batch.num_rel_ret


@measure("num_nonrel_judged_ret", better=NEITHER, agg=Agg.SUM, integer=True)
def num_nonrel_judged_ret(batch, params):
    """Retrieved documents judged non-relevant (0 <= grade < ``-l``); the summary is the sum.

    Edge cases: negative grades (pooled, unjudged) and documents outside the qrels are not counted.
    (trec_eval 10.0, ``m_num_nonrel_judged_ret.c``.)

    >>> from evaltool import evaluate
    >>> evaluate({"q": {"a": 0, "b": 1}}, {"q": {"a": 1.0, "b": 0.5, "x": 0.1}}, ["num_nonrel_judged_ret"]).summary
    {'num_nonrel_judged_ret': 1}
    """
    return batch.count((batch.rel >= 0) & ~batch.is_rel)


# ---------------------------------------------------------------- named-parameter measures (ir_measures' names)


@measure("NumQ", better=NEITHER, options=(), agg=Agg.COUNT, integer=True, per_query=False, oracle=PYTREC)
def named_num_q(batch, p):
    """Number of queries evaluated (trec_eval's ``num_q``; with ``-c`` every query of the qrels).

    Printed as a summary only (ir_measures reports 1 per query and sums them).

    Edge cases: a summary only; without ``-c`` queries missing from either file are not counted.
    (trec_eval 10.0, ``m_num_q.c``.)

    >>> from evaltool import evaluate
    >>> evaluate({"q1": {"a": 1}, "q2": {"b": 1}}, {"q1": {"a": 1.0}}, ["NumQ"]).summary
    {'NumQ': 1}
    """
    return np.ones(batch.n_queries)


@measure(
    "NumRet",
    better=NEITHER,
    options=(Option("rel", int, doc="count only retrieved documents with at least this grade", minimum=0),),
    agg=Agg.SUM,
    integer=True,
    on_missing=0.0,
    aliases=(("NumRelRet", {"rel": 1}),),
    oracle=PYTREC,
)
def named_num_ret(batch, p):
    """Documents retrieved; with ``rel``, only those with a grade >= rel. The summary is the sum.

    ``NumRelRet`` is ``NumRet(rel=1)`` (trec_eval's ``num_rel_ret`` at ``-l 1``). With ``-c`` a
    query missing from the run retrieved 0.

    Edge cases: with ``-c`` a query missing from the run retrieved 0. (trec_eval 10.0,
    ``m_num_ret.c``.)

    >>> from evaltool import evaluate
    >>> evaluate({"q": {"a": 1, "b": 2}}, {"q": {"a": 1.0, "b": 0.5, "x": 0.1}}, ["NumRet", "NumRelRet", "NumRet(rel=2)"]).summary
    {'NumRet': 3, 'NumRelRet': 2, 'NumRet(rel=2)': 1}
    """
    if p.rel is None:
        return batch.num_ret
    return at_level(batch, p.rel).num_rel_ret


@measure("NumRel", better=NEITHER, options=(REL,), agg=Agg.SUM, integer=True, oracle=PYTREC)
def named_num_rel(batch, p):
    """Relevant documents in the qrels (grade >= rel), retrieved or not. The summary is the sum.

    Negative grades ("pooled but unjudged") never count. (trec_eval's ``num_rel``.)

    Edge cases: a query whose judgments are all below rel has 0. (trec_eval 10.0, ``m_num_rel.c``.)

    >>> from evaltool import evaluate
    >>> evaluate({"q": {"a": 2, "b": 1, "c": 0}}, {"q": {"a": 1.0}}, ["NumRel", "NumRel(rel=2)"]).summary
    {'NumRel': 2, 'NumRel(rel=2)': 1}
    """
    return at_level(batch, p.rel).num_rel
