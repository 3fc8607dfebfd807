"""Click metrics of a log as an :class:`~evaltool.evaluate.EvalResult`, like :func:`evaltool.evaluate`."""

from __future__ import annotations

import time
import numpy as np

from evaltool.clicks.metrics import (
    DEFAULT_MEASURES,
    FIRST_CLICK_RULES,
    click_measure_of,
    parse_click_measures,
)
from evaltool.clicks.stats import summarise
from evaltool.clicks.values import ClickValues, impression_values
from evaltool.errors import EvaltoolError, InputError
from evaltool.ranking import byte_key

AVERAGES = ("micro", "macro")


def _check(average: str, first_click: str, confidence: float, n_resamples: int) -> None:
    if average not in AVERAGES:
        raise EvaltoolError(f"average {average!r}: expected micro (over impressions) or macro (over queries)")
    if first_click not in FIRST_CLICK_RULES:
        raise EvaltoolError(
            f"first_click {first_click!r}: expected log (first in log order) or position (top-most clicked result)"
        )
    if not 0.0 < confidence < 1.0:
        raise EvaltoolError(f"confidence {confidence!r}: expected a number between 0 and 1, such as 0.95")
    if n_resamples < 1:
        raise EvaltoolError(f"resamples {n_resamples!r}: expected 1 or more")


def _group_positions(log, field: str) -> dict[str, np.ndarray]:
    values = log.fields[field]
    found: dict[str, list[int]] = {}
    for i, value in enumerate(values):
        found.setdefault("(none)" if value is None else value, []).append(i)
    return {value: np.asarray(found[value]) for value in sorted(found, key=lambda v: (v == "(none)", byte_key(v)))}


def _requests(measures, has_timestamps: bool, path: str) -> list:
    """The measures asked for (default: all, time_to_first_click only when the log has timestamps)."""
    requests = parse_click_measures(measures if measures is not None else DEFAULT_MEASURES)
    if measures is None and has_timestamps:
        requests += parse_click_measures(["time_to_first_click"])
    for request in requests:
        if click_measure_of(request).needs_timestamps and not has_timestamps:
            raise InputError(f"{path}: {request.names[0]} needs timestamps on impressions and clicks; the log has none")
    return requests


def evaluate(
    log,
    measures=None,
    per_query: bool = False,
    *,
    average: str = "micro",
    first_click: str = "log",
    by=(),
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int | None = 0,
    engine: str = "local",
    scheduler: str | None = None,
):
    """Click metrics of ``log`` (a path or a list of impression dicts, :mod:`evaltool.io.clicks`).

    ``measures``: ``click_mrr``, ``ctr``, ``ctr@k``, ``abandonment``, ``clicks_per_query``,
    ``mean_click_rank``, ``time_to_first_click`` (default: all but the last, which is added
    when the log has timestamps). ``average``: ``micro`` (over impressions: a query searched often weighs more)
    or ``macro`` (over distinct queries); ``result.summary`` holds the chosen mean,
    ``result.per_query`` each query's mean over its impressions. ``meta["clicks"]`` gives,
    per measure, both means, the percentile bootstrap interval of the chosen one
    (``confidence``, ``n_resamples``, ``seed``) and the impressions and queries behind it;
    ``meta["counts"]`` what the log held, ignored and kept apart. ``by`` names impression
    fields: ``result.groups[field][value]`` holds each group's impressions (``count``) and
    values, ``meta["clicks_groups"][field][value]`` the same details as ``meta["clicks"]``.
    ``engine="dask"`` reads a JSONL log of impression objects on a Dask cluster
    (:mod:`evaltool.clicks.distributed`); the result is identical.

    >>> log = [{"consulta": "envíos a Quito", "resultados": ["HAW001", "HAW002", "HAW003"], "clicks": ["HAW002"]},
    ...        {"consulta": "envíos a Quito", "resultados": ["HAW002", "HAW001"], "clicks": ["HAW002"]},
    ...        {"consulta": "tarifas", "resultados": ["HAW004"], "clicks": []}]
    >>> result = evaluate(log, ["click_mrr"])
    >>> result.summary, result.per_query
    ({'click_mrr': 0.5}, {'envíos a Quito': {'click_mrr': 0.75}, 'tarifas': {'click_mrr': 0.0}})
    >>> evaluate(log, ["click_mrr"], average="macro").summary
    {'click_mrr': 0.375}
    """
    from evaltool.engines import ENGINES
    from evaltool.io.clicks import read_click_log

    _check(average, first_click, confidence, n_resamples)
    if engine not in ENGINES:
        raise EvaltoolError(f"unknown engine {engine!r}; expected one of {', '.join(ENGINES)}")
    by = [by] if isinstance(by, str) else list(by)
    clock = time.perf_counter()
    if measures is not None:
        parse_click_measures(measures)  # a misspelt measure fails before any reading
    if engine == "dask":
        from evaltool.clicks.distributed import click_values

        data = click_values(log, measures, by, first_click, scheduler=scheduler)
        requests = _requests(measures, data.has_timestamps, data.path)
    else:
        clicks = read_click_log(log, fields=by)
        requests = _requests(measures, clicks.has_timestamps, clicks.path)
        data = ClickValues(
            clicks.path,
            clicks.format,
            clicks.query_ids,
            clicks.imp_query,
            clicks.fields,
            dict(clicks.counts),
            clicks.has_timestamps,
            impression_values(clicks, requests, first_click),
        )
    for field in by:
        if all(value is None for value in data.fields[field]):
            raise InputError(f"{data.path}: no impression has the field {field!r} to group by")
    timings = {"parse": time.perf_counter() - clock}
    return click_result(
        data,
        requests,
        per_query,
        average=average,
        first_click=first_click,
        by=by,
        confidence=confidence,
        n_resamples=n_resamples,
        seed=seed,
        timings=timings,
    )


def click_result(
    data: ClickValues,
    requests,
    per_query: bool,
    *,
    average: str,
    first_click: str,
    by: list,
    confidence: float,
    n_resamples: int,
    seed,
    timings: dict,
):
    """Summaries, intervals, groups and meta of the values per impression, as an EvalResult."""
    from evaltool.evaluation.result import Column, EvalResult

    clock = time.perf_counter()
    n_queries = len(data.query_ids)
    order = sorted(range(n_queries), key=lambda i: byte_key(data.query_ids[i]))
    qids = [data.query_ids[i] for i in order]
    options = dict(confidence=confidence, n_resamples=n_resamples, seed=seed)
    columns, summary, details = [], {}, {}
    groups: dict = {field: {} for field in by}
    group_details: dict = {field: {} for field in by}
    positions = {field: _group_positions(data, field) for field in by}
    for request in requests:
        name = request.names[0]
        values = data.values[name]
        stats = summarise(values, data.imp_query, n_queries, average=average, **options)
        query_means = stats.pop("query_means")
        columns.append(Column(name, request, query_means[order]))
        summary[name] = stats["value"]
        details[name] = stats
        for field in by:
            for value, where in positions[field].items():
                part = summarise(values[where], data.imp_query[where], n_queries, average=average, **options)
                part.pop("query_means")
                groups[field].setdefault(value, {"count": len(where)})[name] = part["value"]
                group_details[field].setdefault(value, {})[name] = part
    timings["measures"] = time.perf_counter() - clock
    meta = {
        "log": data.path,
        "format": data.format,
        "options": {
            "average": average,
            "first_click": first_click,
            "confidence": confidence,
            "resamples": n_resamples,
            "seed": seed,
            "by": by,
        },
        "counts": dict(data.counts),
        "clicks": details,
    }
    if by:
        meta["clicks_groups"] = group_details
    return EvalResult(
        qids,
        columns,
        summary,
        meta,
        timings=timings,
        per_query_requested=per_query,
        strategies=dict.fromkeys(qids, "clicks"),
        groups=groups,
    )
