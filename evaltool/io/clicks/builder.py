"""Shown documents and clicks collected from any layout, resolved to ranks in one vectorised pass."""

from __future__ import annotations

import numpy as np

from evaltool.io.clicks.buffers import Blocks, Growing
from evaltool.io.clicks.ids import NULL_KEY, DocKeys, PairCodes, Vocab
from evaltool.io.clicks.log import ClickLog

BATCH_ROWS = 65536  # impression objects (or JSONL event rows read by Python) per chunk


class Builder:
    """Collects shown documents and clicks, then resolves clicks to ranks in one vectorised pass."""

    def __init__(self, path: str, fmt: str, fields: tuple[str, ...]) -> None:
        self.path, self.format, self.field_names = path, fmt, fields
        self.queries = Vocab()
        self.docs = DocKeys()
        # an events table's impressions: (session key, query code) or (impression id key, -2) pairs
        self.id_keys, self.impression_pairs = DocKeys(), PairCodes()
        self.n_imp = 0
        self.imp_query = Growing(np.int32, -1)
        self.imp_time = Growing(np.float64, np.nan)
        self.field_vocab = {name: Vocab() for name in fields}
        self.field_code = {name: Growing(np.int32, -1) for name in fields}
        self.shown = (Blocks(np.int32), Blocks(np.uint64), Blocks(np.int32, narrow=np.uint8))  # imp, doc key, pos
        self.clicks = (
            Blocks(np.int32),
            Blocks(np.uint64),
            Blocks(np.int32, narrow=np.uint8),
            Blocks(np.float64),
        )  # + time
        self.counts = {
            "events": 0,
            "clicks_read": 0,
            "clicks_not_shown": 0,
            "repeated_clicks": 0,
            "duplicate_positions": 0,
        }

    def new_impressions(self, n: int) -> np.ndarray:
        start = self.n_imp
        self.impressions_up_to(start + n)
        return np.arange(start, self.n_imp, dtype=np.int32)

    def impressions_up_to(self, n: int) -> None:
        self.n_imp = max(self.n_imp, n)
        self.imp_query.ensure(self.n_imp)
        self.imp_time.ensure(self.n_imp)
        for grow in self.field_code.values():
            grow.ensure(self.n_imp)

    def add_shown(self, imp, doc, pos) -> None:
        for column, values in zip(self.shown, (imp, doc, pos)):
            column.extend(values)

    def add_clicks(self, imp, doc, pos, time) -> None:
        """``doc`` NULL_KEY: the click names a position only; ``pos`` 0: a document only."""
        for column, values in zip(self.clicks, (imp, doc, pos, time)):
            column.extend(values)

    def _shown_rows(self):
        """Shown rows in (impression, position) order; a second row for a filled position is dropped."""
        imp, doc, pos = (column.release() for column in self.shown)
        if len(imp) > 1:
            same = imp[1:] == imp[:-1]
            if not (np.all(imp[1:] >= imp[:-1]) and np.all(pos[1:][same] > pos[:-1][same])):
                order = np.lexsort((pos, imp))  # stable: log order among rows of one position
                imp, doc, pos = imp[order], doc[order], pos[order]
                del order
                same = imp[1:] == imp[:-1]
            repeat = np.zeros(len(imp), bool)
            repeat[1:] = same & (pos[1:] == pos[:-1])
            if repeat.any():
                self.counts["duplicate_positions"] += int(repeat.sum())
                keep = ~repeat
                imp, doc, pos = imp[keep], doc[keep], pos[keep]
        return imp, doc, pos

    @staticmethod
    def _resolve(c_imp, c_doc, c_pos, starts, n_shown, doc, pos) -> tuple[np.ndarray, np.ndarray]:
        """Rank of each click: its document's top-most shown position (or, without a document, the
        position it names when something was shown there); 0 when the impression did not show it.
        Also the shown row matched (-1 where none), and ``c_doc`` is filled in for clicks by position.

        Walks the shown lists in step: the j-th row of every impression still searched, so the
        memory is a few arrays the size of the clicks, whatever the size of the log.
        """
        rank = np.zeros(len(c_imp), np.int32)
        matched = np.full(len(c_imp), -1, np.int64)
        active = np.arange(len(c_imp))
        j = 0
        while len(active):
            where = c_imp[active]
            active = active[j < n_shown[where]]
            rows = starts[c_imp[active]] + j
            wanted = c_doc[active]
            match = np.where(wanted != NULL_KEY, doc[rows] == wanted, pos[rows] == c_pos[active])
            hit = active[match]
            rank[hit] = pos[rows[match]]
            matched[hit] = rows[match]
            c_doc[hit] = doc[rows[match]]
            active = active[~match]
            j += 1
        return rank, matched

    def finish(self) -> ClickLog:
        n = self.n_imp
        self.id_keys = self.impression_pairs = None  # the hash tables are done with before the rows are joined
        imp, doc, pos = self._shown_rows()
        n_shown = np.bincount(imp, minlength=n)
        shown_offsets = np.zeros(n + 1, np.int64)
        np.cumsum(n_shown, out=shown_offsets[1:])
        del imp
        c_imp, c_doc, c_pos, c_time = (column.release() for column in self.clicks)
        by_position = c_doc == NULL_KEY
        c_rank, row = self._resolve(c_imp, c_doc, c_pos, shown_offsets[:-1], n_shown, doc, pos)
        del c_pos
        valid = c_rank > 0
        self.counts["clicks_not_shown"] += int(len(valid) - valid.sum())
        by_position &= valid
        if by_position.any():  # the document clicked, as a clicked document: its top-most row
            _, row[by_position] = self._resolve(
                c_imp[by_position],
                c_doc[by_position],
                np.zeros(int(by_position.sum()), np.int32),
                shown_offsets[:-1],
                n_shown,
                doc,
                pos,
            )
        c_imp, c_doc, c_rank, c_time, row = c_imp[valid], c_doc[valid], c_rank[valid], c_time[valid], row[valid]
        # each document once per impression (its first click), clicks grouped by impression in log order:
        # the clicks on one document of one impression are those matched to its top-most shown row
        _, first_seen = np.unique(row, return_index=True)
        self.counts["repeated_clicks"] += int(len(row) - len(first_seen))
        keep = np.sort(first_seen)
        del row, first_seen
        order = keep[np.argsort(c_imp[keep], kind="stable")]
        c_imp, c_doc, c_rank, c_time = c_imp[order], c_doc[order], c_rank[order], c_time[order]
        click_offsets = np.zeros(n + 1, np.int64)
        np.cumsum(np.bincount(c_imp, minlength=n), out=click_offsets[1:])

        self.counts["impressions"] = int(np.count_nonzero(n_shown))
        # an events table cannot show an empty list: an impression key without shown rows came from clicks alone
        self.counts["empty_impressions"] = 0 if self.format.startswith("events") else n - self.counts["impressions"]
        self.counts["clicks"] = len(c_imp)
        self.counts["queries"] = len(self.queries)
        fields = {}
        for name in self.field_names:
            vocab, codes = self.field_vocab[name].ids, self.field_code[name].data[:n]
            fields[name] = [vocab[c] if c >= 0 else None for c in codes.tolist()]
        return ClickLog(
            self.path,
            self.format,
            self.queries.ids,
            self.docs,
            self.imp_query.data[:n].copy(),
            self.imp_time.data[:n].copy(),
            shown_offsets,
            doc,
            pos,
            click_offsets,
            c_doc,
            c_rank,
            c_time,
            self.counts,
            fields,
        )
