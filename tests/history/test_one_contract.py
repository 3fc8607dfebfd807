"""One JSON contract: a result recorded from the object, from ``-o json`` and through
``POST /api/executions`` is stored as the same rows, each measure's aggregate included."""

from __future__ import annotations

import json

import pytest
import sqlalchemy as sa

from tests.support.helpers import invoke

pytestmark = pytest.mark.filterwarnings("ignore:Using `httpx` with `starlette.testclient`")

TOKEN = "contract-token"
MEASURES = ["num_ret", "num_rel_ret", "map", "gm_map", "P.5", "recip_rank", "FirstRelPos"]


def _rows(db: str, execution_id: int) -> dict:
    """Everything stored for one execution but its id and the fingerprints of local files (which
    the server, reading no file a request names, leaves empty)."""
    from evaltool.history import schema

    engine = sa.create_engine(f"sqlite:///{db}")
    with engine.connect() as conn:
        execution = dict(conn.execute(sa.select(schema.executions).where(
            schema.executions.c.id == execution_id)).mappings().one())
        summary = [dict(r) for r in conn.execute(sa.select(schema.summary_values).where(
            schema.summary_values.c.execution_id == execution_id).order_by(
            schema.summary_values.c.position)).mappings()]
        queries = [dict(r) for r in conn.execute(sa.select(schema.query_values).where(
            schema.query_values.c.execution_id == execution_id).order_by(
            schema.query_values.c.query_id, schema.query_values.c.measure)).mappings()]
    engine.dispose()
    for key in ("id", "qrels_sha256", "run_sha256", "queries_sha256", "git_commit"):
        execution.pop(key, None)
    for row in summary + queries:
        row.pop("execution_id", None)
        row.pop("id", None)
    return {"execution": execution, "summary": summary, "queries": queries}


def test_object_json_and_http_record_the_same_rows(tmp_path):
    from evaltool import evaluate
    from evaltool.history import open_history, record
    from evaltool.server import create_app
    from tests.support.dashboard_data import dashboard_client, require_dashboard

    require_dashboard()
    qrels, run = "data/qrels.txt", "data/run.txt"
    with pytest.warns(UserWarning):  # q4 has no results: the skip warning
        result = evaluate(qrels, run, MEASURES, per_query=True, thresholds=["map=0.2"])
    args = [qrels, run, *[x for m in MEASURES for x in ("-m", m)], "-q", "-o", "json", "--labels",
            "--threshold", "map=0.2"]
    printed = invoke(*args)
    assert printed.exit_code == 0, printed.stderr
    as_json = json.loads(printed.stdout)

    db = str(tmp_path / "history.sqlite")
    when = "2025-03-01"
    from_object = record(result, db=db, name="bm25", at=when, fingerprints={}, commit=None)
    from_json = record(as_json, db=db, name="bm25", at=when, fingerprints={}, commit=None)
    history = open_history(db)
    try:
        with dashboard_client(create_app(history, token=TOKEN)) as client:
            response = client.post(f"/api/executions?name=bm25&at={when}", content=printed.stdout,
                                   headers={"authorization": f"Bearer {TOKEN}"})
    finally:
        history.close()
    assert response.status_code == 201, response.text
    from_http = response.json()["id"]

    stored = _rows(db, from_object)
    assert _rows(db, from_json) == stored
    assert _rows(db, from_http) == stored
    aggregates = {row["measure"]: row["aggregate"] for row in stored["summary"]}
    assert aggregates == {"num_ret": "sum", "num_rel_ret": "sum", "map": "mean", "gm_map": "geometric",
                          "P_5": "mean", "recip_rank": "mean",
                          "FirstRelPos": "mean over queries with a value"}
    assert json.loads(stored["execution"]["thresholds"])["map"] == 0.2
    assert {row["query_id"] for row in stored["queries"]} == {"q1", "q2", "q3"}  # q4 has no results, q5 no judgments


def test_the_json_contract_carries_each_measures_direction():
    """``meta["measures"]`` says which way each output improves, as the registry declares it:
    a reader of ``-o json`` judges a change without evaltool's measure registry."""
    from evaltool import evaluate

    facts = evaluate({"q": {"a": 1, "b": 0}}, {"q": {"b": 2.0, "a": 1.0}},
                     ["num_ret", "map", "FirstRelPos"]).to_dict()["meta"]["measures"]
    assert {name: fact["better"] for name, fact in facts.items()} == {
        "num_ret": "neither", "map": "higher", "FirstRelPos": "lower"}
