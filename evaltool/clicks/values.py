"""A click log reduced to what the click metrics need: each measure's value per impression.

The local engine computes them from a whole log, the Dask engine per block of a log
(:mod:`evaltool.clicks.distributed`); :func:`evaltool.clicks.evaluate.click_result` turns
either into summaries, intervals and groups.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evaltool.clicks.metrics import Impressions, request_cutoff


@dataclass
class ClickValues:
    """A log reduced to what the click metrics need: every impression's query and kept
    fields, each measure's value per impression, and what the log held (``counts``)."""

    path: str
    format: str
    query_ids: list[str]  # first-seen order
    imp_query: np.ndarray  # query code of each impression
    fields: dict  # field -> value per impression (None where absent)
    counts: dict
    has_timestamps: bool
    values: dict  # output name -> value per impression (nan where undefined)


def impression_values(clicks, requests, first_click: str) -> dict[str, np.ndarray]:
    """Each measure's value per impression of one log (or part of one)."""
    view = Impressions(clicks)
    return {
        request.names[0]: request.measure.kernel(view, request_cutoff(request), first_click=first_click)
        for request in requests
    }
