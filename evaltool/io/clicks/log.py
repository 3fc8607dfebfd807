"""The click log as read: arrays over impressions, what the readers of every layout build."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np


@dataclass
class ClickLog:
    """A click log as arrays over impressions (first-seen order).

    ``shown_*`` hold the shown documents of impression ``i`` at
    ``shown_offsets[i]:shown_offsets[i + 1]`` in position order; ``click_*`` its valid
    clicks (on a shown document, each document once) in log order at
    ``click_offsets[i]:click_offsets[i + 1]``. ``click_rank`` is the clicked document's
    top-most shown position. Documents are held as exact keys (``shown_key``, ``click_key``:
    equal keys, equal ids; :class:`~evaltool.io.clicks.ids.DocKeys`); ``doc_ids``,
    ``shown_doc`` and ``click_doc`` number them (``doc_ids[code]``), made on first use.
    Times are seconds, ``nan`` where the log has none.
    ``counts`` says what was read, ignored and kept apart; ``fields`` maps each kept
    impression field to (value per impression, ``None`` where absent).
    """

    path: str
    format: str
    query_ids: list[str]
    docs: object  # the DocKeys that made shown_key and click_key
    imp_query: np.ndarray
    imp_time: np.ndarray
    shown_offsets: np.ndarray
    shown_key: np.ndarray
    shown_pos: np.ndarray
    click_offsets: np.ndarray
    click_key: np.ndarray
    click_rank: np.ndarray
    click_time: np.ndarray
    counts: dict
    fields: dict = field(default_factory=dict)

    @cached_property
    def _coded(self):
        return self.docs.coded(self.shown_key, self.click_key)

    @property
    def doc_ids(self):
        """The shown documents' ids, a pyarrow string array: ``doc_ids[code]``."""
        return self._coded[0]

    @property
    def shown_doc(self) -> np.ndarray:
        """The code of each shown document."""
        return self._coded[1]

    @property
    def click_doc(self) -> np.ndarray:
        """The code of each clicked document."""
        return self._coded[2]

    @property
    def n_impressions(self) -> int:
        return len(self.imp_query)

    @property
    def n_shown(self) -> np.ndarray:
        return np.diff(self.shown_offsets)

    @property
    def n_clicks(self) -> np.ndarray:
        return np.diff(self.click_offsets)

    @property
    def has_timestamps(self) -> bool:
        return bool(np.isfinite(self.imp_time).any() and np.isfinite(self.click_time).any())
