"""Generated click logs shared by the click tests: impression objects and their events-table rows."""

from __future__ import annotations

import numpy as np

MEASURES = ["click_mrr", "ctr", "ctr@3", "abandonment", "clicks_per_query", "mean_click_rank"]


def generated_log(n_impressions=700, n_docs=20_000, seed=11):
    """Impressions of 1..9 distinct documents (over 2048 distinct ids in all, so the id table
    grows), clicks on shown documents (some repeated, some impressions without any)."""
    rng = np.random.default_rng(seed)
    log = []
    for i in range(n_impressions):
        shown = [f"d{j}" for j in rng.choice(n_docs, size=int(rng.integers(1, 10)), replace=False)]
        clicks = [shown[k] for k in rng.integers(0, len(shown), size=int(rng.integers(0, 4)))]
        log.append({"session_id": f"s{i}", "consulta": f"q{int(rng.integers(0, 40))}", "resultados": shown,
                    "clicks": clicks})
    return log


def interleaved_rows(log, width=3):
    """Event rows with the rows of ``width`` neighbouring impressions interleaved (each impression's
    own rows in order: its shown documents, then its clicks), so no impression is contiguous."""
    keyed = []
    for i, imp in enumerate(log):
        rows = [{"session_id": imp["session_id"], "query": imp["consulta"], "action": "impression",
                 "doc_id": doc, "position": p} for p, doc in enumerate(imp["resultados"], 1)]
        rows += [{"session_id": imp["session_id"], "query": imp["consulta"], "action": "click", "doc_id": doc}
                 for doc in imp["clicks"]]
        keyed += [((i // width, k, i), row) for k, row in enumerate(rows)]
    return [row for _, row in sorted(keyed, key=lambda kr: kr[0])]
