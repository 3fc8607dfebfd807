"""How the history tells measures apart: one series per measure across its spellings, and which way
each improves.

Executions record their measures as the user spelled them (``ndcg_cut_10``, ``nDCG@10``,
``ndcg@10``; ``recip_rank``, ``mrr``). Whatever compares executions (``history report``,
``diff``, ``check``, the dashboard) pairs values by the measure's *identity*, the one
canonical name the measure grammar gives every spelling
(:func:`evaltool.names.measure_identity`), so a change of spelling does not split a
series. What is shown keeps a spelling the user wrote: that of the newest execution
that has the measure. A name no measure has (a value recorded from a hand-made dict) is
its own identity.

Which way a measure improves is declared with the measure
(:class:`~evaltool.measures.base.Better`): FirstRelPos and ARP are better lower, counts
(``num_ret``) neither. A name no measure has is better higher, unless it was recorded as
a sum or a count.

>>> from types import SimpleNamespace as E
>>> old, new = E(summary={"ndcg_cut_10": 0.73, "recip_rank": 0.9}), E(summary={"nDCG@10": 0.51, "mrr": 0.8})
>>> series([old, new])
{'nDCG@10': ['ndcg_cut_10', 'nDCG@10'], 'mrr': ['recip_rank', 'mrr']}
>>> value(old, series([old, new])["nDCG@10"]), better("FirstRelPos").value, better("num_ret").value
(0.73, 'lower', 'neither')
"""

from __future__ import annotations

from functools import lru_cache

from evaltool.errors import HistoryError


@lru_cache(maxsize=4096)
def identity(name: str) -> str:
    """The one name of the measure behind a recorded spelling; the spelling itself if no measure has it."""
    from evaltool.names import measure_identity

    return measure_identity(name) or name


def better(name: str, aggregate: str | None = None):
    """Which way the recorded measure ``name`` improves (a :class:`~evaltool.measures.base.Better`)."""
    from evaltool.measures.base import Better
    from evaltool.names import direction

    declared = direction(name)
    if declared is not None:
        return declared
    return Better.NEITHER if aggregate in ("sum", "count") else Better.HIGHER


def series(executions) -> dict[str, list[str]]:
    """The measures of ``executions`` (oldest first) by identity: {shown name: [every spelling recorded]},
    in the order first recorded; the shown name is the spelling of the newest execution that has it."""
    spellings: dict[str, list[str]] = {}
    newest: dict[str, str] = {}
    for execution in executions:
        for name in execution.summary:
            key = identity(name)
            names = spellings.setdefault(key, [])
            if name not in names:
                names.append(name)
            newest[key] = name
    return {newest[key]: names for key, names in spellings.items()}


def value(execution, spellings) -> float | None:
    """``execution``'s summary value of the measure recorded under any of ``spellings`` (None: none)."""
    return next((execution.summary[s] for s in spellings if execution.summary.get(s) is not None), None)


def spelling_in(execution, spellings) -> str | None:
    """The spelling ``execution`` recorded the measure under (None: it has none of them)."""
    return next((s for s in spellings if s in execution.summary), None)


def resolve_measures(requested, available) -> list[str]:
    """The shown names that ``-m`` values ask for: a shown name as it is, else any spelling of the same
    measure (``mrr`` finds ``recip_rank``, ``ndcg_cut.10`` finds ``nDCG@10``; ``P.5,10`` both P columns).

    ``available`` is :func:`series`'s dict (or a list of shown names, each its only spelling).
    """
    from evaltool.errors import EvaltoolError
    from evaltool.names import parse_measures

    groups = available if isinstance(available, dict) else {name: [name] for name in available}
    by_identity = {identity(s): shown for shown, names in groups.items() for s in names}
    names: list[str] = []
    for spec in requested:
        if spec in groups:
            found = [spec]
        else:
            try:
                outputs = [n for request in parse_measures([spec], suggestions=False) for n in request.names]
            except EvaltoolError:
                outputs = [spec]
            found = [by_identity[identity(n)] for n in outputs if identity(n) in by_identity]
            if not found:
                shown = ", ".join(groups) if groups else "none"
                raise HistoryError(f"-m {spec}: no execution here has it (recorded measures: {shown})")
        names.extend(n for n in found if n not in names)
    return names
