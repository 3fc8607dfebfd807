"""Measures that print text: the run tag and the relevance string."""

from __future__ import annotations

import numpy as np

from evaltool.measures.base import Agg, Better, Params, measure


@measure("runid", better=Better.NEITHER, agg=Agg.RUNID, per_query=False)
def runid(batch, params):
    """The run tag: the last field of the run's last content line.

    Edge cases: no value per query; when lines carry different tags, the last line's wins.
    (trec_eval 10.0, ``m_runid.c``.)

    >>> from evaltool import evaluate
    >>> evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["runid"], runid="bm25").summary
    {'runid': 'bm25'}
    """
    return np.zeros(batch.n_queries)


_SYMBOLS = np.array(list("<.-0123456789>"))


@measure(
    "relstring",
    better=Better.NEITHER,
    params=Params.NUMBERS,
    default=(10.0,),
    agg=Agg.NONE,
    on_missing_bare="",
    arity=1,
)
def relstring(batch, params):
    """The grades of the first N documents as text (per query only; default N = 10).

    A digit for grades 0-9, '>' above 9, '-' for a document outside the qrels, '.' for a
    negative grade (in the pool, unjudged). With ``-c`` a query missing from the run shows
    '' under the bare name, and '-' (trec_eval's stand-in document) as ``relstring_N``.

    Edge cases: a ranking shorter than N prints only the documents it has. (trec_eval 10.0,
    ``m_relstring.c``.)

    >>> from evaltool import evaluate
    >>> evaluate({"q": {"a": 2, "b": -1}}, {"q": {"a": 3.0, "x": 2.0, "b": 1.0}}, ["relstring.5"], per_query=True).per_query
    {'q': {'relstring_5': '2-.'}}
    """
    limit = int(params[0]) if params else 10
    seg, _, rel = batch.dense(limit)
    codes = np.clip(rel, -3, 10) + 3
    chars = _SYMBOLS[codes]
    bounds = np.concatenate(([0], np.cumsum(np.bincount(seg, minlength=batch.n_queries))))
    text = "".join(chars.tolist())
    return [text[bounds[i] : bounds[i + 1]] for i in range(batch.n_queries)]
