"""evaltool feedback: rating events as judgments, the users' agreement, and the seed's nDCG from ratings
(seed 004, calcular_ndcg_con_calificaciones, run here on the same grades as the oracle)."""

from __future__ import annotations

import csv
import json
import math

import pytest

from tests.support.helpers import assert_fails, invoke, write


def calcular_ndcg_con_calificaciones(resultados, calificaciones, k=10):
    """Seed 004's function, as the document gives it (the oracle)."""
    dcg = 0.0
    for i, resultado_id in enumerate(resultados[:k], 1):
        relevancia = calificaciones.get(resultado_id, 0)
        dcg += relevancia / math.log2(i + 1)
    relevancias_ideales = sorted(calificaciones.values(), reverse=True)[:k]
    idcg = sum(rel / math.log2(i + 2) for i, rel in enumerate(relevancias_ideales))
    return dcg / idcg if idcg > 0 else 0.0


RESULTS = {"envíos a Quito": ["HAW001", "HAW002", "HAW003", "HAW004", "HAW005"],
           "celulares": ["CEL9", "CEL2", "CEL7", "CEL1"]}
# (query, document, stars by user); stars map to grades 1,2 -> 0, 3 -> 1, 4 -> 2, 5 -> 3
STARS = [("envíos a Quito", "HAW001", {"ana": 4, "ben": 5, "eva": 4}),
         ("envíos a Quito", "HAW003", {"ana": 5, "ben": 5}),
         ("envíos a Quito", "HAW004", {"ana": 1}),
         ("envíos a Quito", "HAW009", {"ben": 3}),
         ("celulares", "CEL2", {"ana": 3, "eva": 2}),
         ("celulares", "CEL1", {"eva": 5})]


def _events():
    events, second = [], 0
    for query, doc, by_user in STARS:
        for user, stars in by_user.items():
            second += 1
            events.append({"query": query, "doc_id": doc, "rating": stars, "user": user,
                           "timestamp": f"2025-03-01T10:00:{second:02d}Z"})
    # ana first gave HAW003 two stars, then changed her mind (the later rating counts)
    events.append({"query": "envíos a Quito", "doc_id": "HAW003", "rating": 2, "user": "ana",
                   "timestamp": "2025-03-01T09:00:00Z"})
    return events


def _run(tmp_path) -> str:
    return write(tmp_path / "run.txt", "".join(f"{q.replace(' ', '_')} Q0 {doc} {i} {10 - i} prod\n"
                                               for q, docs in RESULTS.items() for i, doc in enumerate(docs, 1)))


def test_feedback_gives_the_seeds_ndcg_from_ratings(tmp_path):
    log = write(tmp_path / "ratings.jsonl", "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in _events()))
    db = str(tmp_path / "h.sqlite")
    result = invoke("feedback", log, "--set", "production", "--mapping", "stars", "--run", _run(tmp_path),
                    "-k", "5", "--db", db, "-o", "json")
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    grade = {1: 0, 2: 0, 3: 1, 4: 2, 5: 3}
    # the median of each pair's grades (lower middle), as the seed's single rating per result
    expected = {}
    for query, docs in RESULTS.items():
        ratings = {doc: sorted(grade[s] for s in by_user.values())[(len(by_user) - 1) // 2]
                   for q, doc, by_user in STARS if q == query}
        expected[query.replace(" ", "_")] = calcular_ndcg_con_calificaciones(docs, ratings, k=5)
    assert report["ndcg"]["per_query"] == pytest.approx(expected, abs=1e-12)
    assert report["ndcg"]["mean"] == pytest.approx(sum(expected.values()) / 2, abs=1e-12)
    assert report["events"] == 11 and report["version"] == 1
    users = {u["user"]: (u["ratings"], u["shared"]) for u in report["users"]}
    assert users == {"ana": (4, 3), "ben": (3, 2), "eva": (3, 2)}
    export = invoke("judgments", "export", "production", "--rater", "ana", "--db", db).stdout
    assert "envíos_a_Quito 0 HAW003 3\n" in export  # her later rating


@pytest.mark.parametrize("kind", ["json", "csv", "parquet"])
def test_every_log_format_reads_the_same(tmp_path, kind):
    events = _events()
    if kind == "json":
        log = write(tmp_path / "ratings.json", json.dumps(events))
    elif kind == "csv":
        log = str(tmp_path / "ratings.csv")
        with open(log, "w", newline="", encoding="utf-8") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(events[0]))
            writer.writeheader()
            writer.writerows(events)
    else:
        import pyarrow as pa
        import pyarrow.parquet as pq

        log = str(tmp_path / "ratings.parquet")
        pq.write_table(pa.Table.from_pylist(events), log)
    jsonl = write(tmp_path / "ratings.jsonl", "".join(json.dumps(e) + "\n" for e in events))
    outs = []
    for index, path in enumerate((log, jsonl)):
        db = str(tmp_path / f"h{index}.sqlite")
        invoke("feedback", path, "--set", "p", "--mapping", "stars", "--db", db)
        outs.append(invoke("judgments", "export", "p", "--format", "jsonl", "--db", db).stdout)
    assert outs[0] == outs[1] and outs[0].count("\n") == 10  # 11 events, one a change of mind


def test_thumbs_and_bad_ratings(tmp_path):
    log = write(tmp_path / "t.jsonl", '{"query": "q1", "doc_id": "a", "rating": "up", "user": "u", "timestamp": 1}\n'
                                      '{"query": "q1", "doc_id": "b", "rating": "Útil", "user": "v", "timestamp": 2}\n')
    db = str(tmp_path / "h.sqlite")
    assert invoke("feedback", log, "--set", "t", "--db", db).exit_code == 0
    assert invoke("judgments", "export", "t", "--db", db).stdout == "q1 0 a 1\nq1 0 b 1\n"
    bad = write(tmp_path / "bad.jsonl", '{"query": "q1", "doc_id": "a", "rating": "up", "user": "u", "timestamp": 1}\n'
                                        '{"query": "q1", "doc_id": "b", "rating": "maybe", "user": "u", "timestamp": 2}\n')
    assert_fails(invoke("feedback", bad, "--set", "t2", "--db", db), "bad.jsonl:2", "a rating of the thumbs mapping")
    no_user = write(tmp_path / "nouser.jsonl", '{"query": "q1", "doc_id": "a", "rating": "up"}\n')
    assert_fails(invoke("feedback", no_user, "--set", "t2", "--db", db), "nouser.jsonl:1", "user, timestamp")
    assert_fails(invoke("feedback", log, "--set", "t", "--mapping", "stars", "--db", db), "is on the scale binary")
