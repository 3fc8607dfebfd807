"""A small history for the dashboard tests, with numbers known in advance.

* The seed's comparative table (seed 004, "Ejemplo de tabla comparativa"): three executions
  on 2025-01-28 with MRR / nDCG@10 / P@5 of 0.833/0.72/0.60, 1.000/0.85/0.80 and
  0.250/0.41/0.20; the seed's summary is 0.69 / 0.66 / 0.53, Aceptable (acceptable), rows
  Bueno, Bueno, Mejorable.
* Two executions with per-query values (for diff, side by side and drill-down), in February.
* A run named like an HTML injection, with a note full of markup, in March.
* A suite ``panel`` with one execution, and a suite never run.
"""

from __future__ import annotations

from pathlib import Path

from tests.support.helpers import missing

ROOT = Path(__file__).resolve().parents[2]
XSS = "<img src=x onerror=alert(1)>"
SEED = [("envíos a Quito", 0.833, 0.72, 0.60), ("celulares del mes anterior", 1.000, 0.85, 0.80),
        ("productos electrónicos", 0.250, 0.41, 0.20)]
SEED_MEANS = (0.69, 0.66, 0.53)  # as printed in the seed, to two decimals
PER_QUERY = {  # recip_rank and P_5 per query of "bm25" and "rm3"
    "bm25": {"q1": (1.0, 0.4), "q2": (0.5, 0.2), "q3": (0.25, 0.2), "q4": (1.0, 0.6), "q<5>": (0.2, 0.0)},
    "rm3": {"q1": (1.0, 0.6), "q2": (1.0, 0.4), "q3": (0.5, 0.2), "q4": (0.5, 0.4), "q<5>": (1.0, 0.2)},
}


def require_dashboard() -> None:
    """The dashboard extra (Starlette, uvicorn, plotly): skip without it locally, fail under CI=true."""
    try:
        import plotly  # noqa: F401
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as exc:
        missing(f"the dashboard extra is not installed ({exc}): pip install 'evaltool[dashboard]'")


def dashboard_client(app, **options):
    """Starlette's in-process client for the dashboard ``app``, naming the server ``localhost`` (the
    dashboard refuses other host names, such as the client's default ``testserver``)."""
    from starlette.testclient import TestClient

    return TestClient(app, base_url="http://localhost", raise_server_exceptions=False, **options)


def english_only_words() -> set[str]:
    """Words of the English catalogue that no Spanish entry uses (so their presence on a Spanish page
    is an untranslated text)."""
    import re

    from evaltool.report.i18n import CATALOGUE

    def words(lang):
        return {w.lower() for entry in CATALOGUE.values() for w in re.findall(r"[A-Za-z]{3,}", entry[lang])}

    return words("en") - words("es")


def _result(values: dict[str, tuple[float, float]]) -> dict:
    per_query = {q: {"recip_rank": rr, "P_5": p5} for q, (rr, p5) in values.items()}
    n = len(per_query)
    summary = {m: sum(v[m] for v in per_query.values()) / n for m in ("recip_rank", "P_5")}
    return {"summary": summary, "per_query": per_query, "meta": {"counts": {"queries_evaluated": n}}}


def build(db: str) -> dict[str, int]:
    """Record everything into the history file ``db``; returns the ids by name."""
    from evaltool.history import add_suite, record

    ids = {}
    for i, (name, mrr, ndcg, p5) in enumerate(SEED):
        ids[name] = record({"summary": {"recip_rank": mrr, "ndcg_cut_10": ndcg, "P_5": p5}}, db=db, name=name,
                           at=f"2025-01-28T0{9 + i // 10}:{i}0:00Z", note="seed 004", fingerprints={}, commit=None)
    for day, name in ((1, "bm25"), (2, "rm3")):
        ids[name] = record(_result(PER_QUERY[name]), db=db, name=name, at=f"2025-02-0{day}T12:00:00Z",
                           tags={"split": "dev"}, fingerprints={"qrels": "a" * 64}, commit=None)
    ids[XSS] = record(_result(PER_QUERY["bm25"]), db=db, name=XSS, at="2025-03-01", note='<b>bold</b> & "q"',
                      fingerprints={"qrels": "a" * 64}, commit=None)
    queries = str(ROOT / "data" / "bench_queries.json")
    add_suite(db, "panel", queries, "evaltool.bench.examples:search")
    add_suite(db, "never run", queries, "evaltool.bench.examples:search")
    ids["panel"] = record(_result(PER_QUERY["rm3"]), db=db, name="panel", at="2025-03-02", kind="suite",
                          fingerprints={}, commit=None)
    return ids
