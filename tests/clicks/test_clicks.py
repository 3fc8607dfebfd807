"""Implicit feedback (issue 13): click logs, click metrics, intervals, click models, the command.

Expected numbers come from seed 004's ``calcular_mrr_con_clicks`` (re-implemented in tests/support/helpers.py),
from hand calculation (each case says how), and from scipy's bootstrap on the same data.
"""

from __future__ import annotations

import json
import math
import os
import tempfile

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evaltool.clicks import click_judgments, evaluate, read_click_log
from evaltool.clicks.stats import bootstrap_interval
from evaltool.errors import EvaltoolError, MeasureError, ParseError
from tests.support.helpers import ROOT, assert_fails, calcular_mrr_con_clicks, invoke


# ---------------------------------------------------------------- generated logs


@st.composite
def impression_logs(draw):
    """Seed-style impressions: non-empty result lists, clicks on shown documents (repeats allowed), some none."""
    n_queries = draw(st.integers(1, 5))
    log = []
    for _ in range(draw(st.integers(1, 25))):
        shown = draw(st.lists(st.sampled_from([f"HAW{i:03d}" for i in range(12)]), min_size=1, max_size=8,
                              unique=True))
        clicks = draw(st.lists(st.sampled_from(shown), max_size=4))
        log.append({"consulta": f"consulta {draw(st.integers(0, n_queries - 1))}", "resultados": shown,
                    "clicks": clicks})
    return log


def events_rows(log):
    """The same log as an events table: a row per shown document, then a row per click."""
    rows = []
    for i, imp in enumerate(log):
        rows += [{"session_id": f"s{i}", "query": imp["consulta"], "action": "impression", "doc_id": doc,
                  "position": p} for p, doc in enumerate(imp["resultados"], 1)]
        rows += [{"session_id": f"s{i}", "query": imp["consulta"], "action": "click", "doc_id": doc}
                 for doc in imp["clicks"]]
    return rows


def write_log(folder, layout, log):
    path = os.path.join(folder, {"json": "log.json", "jsonl": "log.jsonl", "events-jsonl": "events.jsonl",
                                 "events-csv": "events.csv", "events-parquet": "events.parquet"}[layout])
    if layout == "json":
        with open(path, "w", encoding="utf-8") as f:
            json.dump(log, f, ensure_ascii=False, indent=1)
    elif layout == "jsonl":
        with open(path, "w", encoding="utf-8") as f:
            f.writelines(json.dumps(imp, ensure_ascii=False) + "\n" for imp in log)
    elif layout == "events-jsonl":
        with open(path, "w", encoding="utf-8") as f:
            f.writelines(json.dumps(row, ensure_ascii=False) + "\n" for row in events_rows(log))
    else:
        import pyarrow as pa
        import pyarrow.csv as pacsv
        import pyarrow.parquet as pq

        rows = events_rows(log)
        table = pa.table({name: [row.get(name) for row in rows]
                          for name in ("session_id", "query", "action", "doc_id", "position")})
        (pacsv.write_csv if layout == "events-csv" else pq.write_table)(table, path)
    return path


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(impression_logs())
def test_click_mrr_is_the_seeds_function(log):
    expected = calcular_mrr_con_clicks(log)
    assert evaluate(log, ["click_mrr"]).summary["click_mrr"] == pytest.approx(expected, abs=1e-12)
    with tempfile.TemporaryDirectory() as folder:
        for layout in ("json", "jsonl"):
            path = write_log(folder, layout, log)
            assert evaluate(path, ["click_mrr"]).summary["click_mrr"] == pytest.approx(expected, abs=1e-12)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(impression_logs())
def test_every_layout_reads_the_same_log(log):
    measures = ["click_mrr", "ctr", "ctr@2", "abandonment", "clicks_per_query", "mean_click_rank"]
    reference = evaluate(log, measures, average="macro")
    with tempfile.TemporaryDirectory() as folder:
        for layout in ("events-jsonl", "events-csv", "events-parquet"):
            result = evaluate(write_log(folder, layout, log), measures, average="macro")
            assert result.meta["format"] == layout
            assert result.summary == pytest.approx(reference.summary, nan_ok=True)
            assert result.meta["counts"]["clicks"] == reference.meta["counts"]["clicks"]
            assert result.meta["counts"]["repeated_clicks"] == reference.meta["counts"]["repeated_clicks"]


# ---------------------------------------------------------------- metrics by hand

HAND_LOG = [
    # q1 three times, q2 once; q1's third impression showed nothing
    {"query_id": "q1", "query": "envíos a Quito", "results": ["A", "B", "C"], "clicks": ["C", "B", "C"],
     "timestamp": 100, "device": "mobile"},
    {"query_id": "q1", "results": ["B", "A"], "clicks": [], "timestamp": 200, "device": "desktop"},
    {"query_id": "q1", "results": [], "clicks": ["A"], "device": "desktop"},
    {"query_id": "q2", "results": ["D", "E", "F", "G"], "clicks": ["X", {"doc_id": "E", "timestamp": 307}],
     "timestamp": 300, "device": "mobile"},
]


def test_metrics_by_hand():
    result = evaluate(HAND_LOG, ["click_mrr", "ctr", "ctr@2", "abandonment", "clicks_per_query",
                                 "mean_click_rank", "time_to_first_click"], per_query=True)
    counts = result.meta["counts"]
    # X was not shown and A's impression showed nothing: 2 clicks ignored; C again: 1 repeated
    assert (counts["clicks_not_shown"], counts["repeated_clicks"], counts["clicks"]) == (2, 1, 3)
    assert (counts["impressions"], counts["empty_impressions"], counts["queries"]) == (3, 1, 2)
    # per impression: first click C at 3 -> 1/3; none -> 0; E at 2 -> 1/2; micro = (1/3 + 0 + 1/2) / 3
    assert result.summary["click_mrr"] == pytest.approx((1 / 3 + 0 + 1 / 2) / 3)
    # ctr: 2/3, 0/2, 1/4; ctr@2: clicked in the top 2 / shown in the top 2: 1/2, 0/2, 1/2
    assert result.summary["ctr"] == pytest.approx((2 / 3 + 0 + 1 / 4) / 3)
    assert result.summary["ctr@2"] == pytest.approx((1 / 2 + 0 + 1 / 2) / 3)
    assert result.summary["abandonment"] == pytest.approx(1 / 3)
    assert result.summary["clicks_per_query"] == pytest.approx(1.0)
    # mean rank of clicks: (3 + 2) / 2 = 2.5 and 2; impressions without a click have none
    assert result.summary["mean_click_rank"] == pytest.approx((2.5 + 2) / 2)
    assert result.meta["clicks"]["mean_click_rank"]["impressions"] == 2
    # only q2's click has a time: 307 - 300
    assert result.summary["time_to_first_click"] == pytest.approx(7.0)
    assert result.meta["clicks"]["time_to_first_click"]["queries"] == 1
    assert result.per_query["q1"]["click_mrr"] == pytest.approx((1 / 3 + 0) / 2)
    assert math.isnan(result.per_query["q1"]["time_to_first_click"])
    macro = evaluate(HAND_LOG, ["click_mrr"], average="macro")
    assert macro.summary["click_mrr"] == pytest.approx(((1 / 3 + 0) / 2 + 1 / 2) / 2)
    assert macro.meta["clicks"]["click_mrr"]["micro"] == pytest.approx(result.summary["click_mrr"])


def test_first_click_by_position_takes_the_top_most_click():
    log = [{"query": "q", "results": ["A", "B", "C"], "clicks": ["C", "B"]}]
    assert evaluate(log, ["click_mrr"]).summary["click_mrr"] == pytest.approx(1 / 3)
    assert evaluate(log, ["click_mrr"], first_click="position").summary["click_mrr"] == pytest.approx(1 / 2)


def test_no_impressions_is_null_and_no_click_is_zero(tmp_path):
    path = tmp_path / "events.csv"
    # q2 has a click row but no impression row: null; q1 was shown without a click: 0
    path.write_text("session_id,query_id,action,doc_id,position\n"
                    "s1,q1,impression,a,1\ns2,q2,click,b,\n")
    result = evaluate(str(path), ["click_mrr", "ctr"], per_query=True)
    assert result.per_query["q1"] == {"click_mrr": 0.0, "ctr": 0.0}
    assert all(math.isnan(v) for v in result.per_query["q2"].values())
    assert result.meta["counts"]["clicks_not_shown"] == 1
    assert result.meta["clicks"]["click_mrr"]["queries"] == 1
    empty = evaluate([{"query": "q", "results": [], "clicks": []}], ["click_mrr"])
    assert empty.summary["click_mrr"] is None and empty.meta["clicks"]["click_mrr"]["ci"] == [None, None]


def test_events_table_details(tmp_path):
    path = tmp_path / "events.csv"
    # impression_id identifies impressions; rows out of order; a click named by position; a filled position again
    path.write_text("impression_id,query,action,doc_id,position,timestamp\n"
                    "i1,q,impression,b,2,2026-01-01T00:00:00Z\n"
                    "i2,q,impression,a,1,2026-01-01T00:01:00\n"
                    "i1,q,click,,2,2026-01-01T00:00:04Z\n"
                    "i1,q,impression,a,1,2026-01-01T00:00:00Z\n"
                    "i1,q,impression,c,1,2026-01-01T00:00:00Z\n"
                    "i2,q,click,a,,2026-01-01T00:01:10\n")
    log = read_click_log(str(path))
    assert log.counts["duplicate_positions"] == 1
    assert log.doc_ids.take(log.shown_doc).to_pylist() == ["a", "b", "a"]
    assert log.click_rank.tolist() == [2, 1]
    result = evaluate(log, ["click_mrr", "time_to_first_click"])
    assert result.summary["click_mrr"] == pytest.approx((1 / 2 + 1) / 2)
    assert result.summary["time_to_first_click"] == pytest.approx((4 + 10) / 2)


def test_ids_whose_hashes_collide_keep_their_own_codes(tmp_path, monkeypatch):
    from evaltool.io.clicks import ids

    path = write_log(str(tmp_path), "events-csv", MODEL_LOG + [dict(MODEL_LOG[0], consulta="otra")])
    honest = evaluate(path, ["click_mrr", "ctr", "mean_click_rank"], per_query=True)
    monkeypatch.setattr(ids, "fnv1a", lambda strings: np.zeros(len(strings), np.uint64))
    colliding = evaluate(path, ["click_mrr", "ctr", "mean_click_rank"], per_query=True)
    assert colliding.per_query == honest.per_query
    assert colliding.summary == honest.summary
    log = read_click_log(path)
    assert sorted(log.doc_ids.to_pylist()) == ["A", "B", "C"]


def test_groups_by_a_log_field():
    result = evaluate(HAND_LOG, ["click_mrr"], by="device")
    groups = result.groups["device"]
    assert list(groups) == ["desktop", "mobile"]
    # desktop: q1's second impression (0) and the empty one (kept apart); mobile: 1/3 and 1/2
    assert groups["desktop"]["click_mrr"] == 0.0
    assert groups["mobile"]["click_mrr"] == pytest.approx((1 / 3 + 1 / 2) / 2)
    assert groups["mobile"]["count"] == 2
    assert result.meta["clicks_groups"]["device"]["mobile"]["click_mrr"]["impressions"] == 2


def test_measure_names_and_options_are_checked():
    with pytest.raises(MeasureError, match="unknown click measure 'ndcg@10'"):
        evaluate(HAND_LOG, ["ndcg@10"])
    with pytest.raises(MeasureError, match="unknown click measure 'abandonment@3'"):
        evaluate(HAND_LOG, ["abandonment@3"])
    with pytest.raises(EvaltoolError, match="needs timestamps"):
        evaluate([{"query": "q", "results": ["a"], "clicks": ["a"]}], ["time_to_first_click"])
    with pytest.raises(EvaltoolError, match="average"):
        evaluate(HAND_LOG, average="mean")


# ---------------------------------------------------------------- intervals against scipy


@pytest.mark.parametrize("kind", ["few distinct values", "many distinct values"])
def test_bootstrap_interval_agrees_with_scipy(kind):
    from scipy.stats import bootstrap

    rng = np.random.default_rng(7)
    if kind == "few distinct values":
        values = 1.0 / rng.integers(1, 6, size=400) * (rng.random(400) < 0.7)      # click_mrr-like
    else:
        values = rng.exponential(8.0, size=5000)                                  # time_to_first_click-like
    ours = bootstrap_interval(values, n_resamples=20000, seed=1)
    theirs = bootstrap((values,), np.mean, method="percentile", n_resamples=20000, random_state=2,
                       vectorized=True).confidence_interval
    spread = theirs.high - theirs.low
    assert ours[0] == pytest.approx(theirs.low, abs=0.03 * spread)
    assert ours[1] == pytest.approx(theirs.high, abs=0.03 * spread)


def test_interval_of_the_chosen_average_is_reported():
    result = evaluate(HAND_LOG, ["click_mrr"], average="macro", n_resamples=500)
    per_query = [v["click_mrr"] for v in result.per_query.values()]
    assert result.meta["clicks"]["click_mrr"]["ci"] == list(bootstrap_interval(np.array(per_query), n_resamples=500))


# ---------------------------------------------------------------- click models by hand

MODEL_LOG = [
    {"consulta": "envíos a Quito", "resultados": ["A", "B", "C"], "clicks": ["B"]},
    {"consulta": "envíos a Quito", "resultados": ["B", "A", "C"], "clicks": ["B"]},
    {"consulta": "envíos a Quito", "resultados": ["A", "B", "C"], "clicks": ["A", "B"]},
]


def scores(model, **options):
    table = click_judgments(read_click_log(MODEL_LOG), model, **options)
    return {row.doc_id: (row.score, row.grade) for row in table.rows}


def test_ctr_model_by_hand():
    # A shown 3 times, clicked once; B clicked every time; C never
    assert scores("ctr") == {"A": (pytest.approx(1 / 3), 2), "B": (1.0, 3), "C": (0.0, 0)}


def test_coec_by_hand():
    # prior: position 1 shown A, B, A, clicked B (2nd) and A (3rd): 2/3; position 2 likewise 2/3; position 3: 0
    # A: expected 2/3 * 3 = 2, 1 click -> 0.5 (grade 1 at 0.5); B: 3 clicks / 2 -> 1.5 (grade 2); C: 0 / 0 -> 0
    assert scores("coec") == {"A": (pytest.approx(0.5), 1), "B": (pytest.approx(1.5), 2), "C": (0.0, 0)}
    table = click_judgments(read_click_log(MODEL_LOG), "coec")
    assert table.prior == {1: pytest.approx(2 / 3), 2: pytest.approx(2 / 3), 3: 0.0}


def test_sdbn_by_hand():
    # last clicks: B at 2, B at 1, B at 2. Examined: A in the 1st and 3rd, B in all, C never (unjudged).
    # A: attractiveness 1/2, satisfaction 0/1 -> 0; B: 3/3 and 3/3 -> 1
    assert scores("sdbn") == {"A": (0.0, 0), "B": (1.0, 3)}
    # sessions without a click say nothing
    assert scores("sdbn") == {k: v for k, v in scores("sdbn").items()}
    assert click_judgments(read_click_log([{"query": "q", "results": ["a"], "clicks": []}]), "sdbn").rows == []


def test_grades_and_min_impressions():
    assert scores("ctr", grades=(0.5,)) == {"A": (pytest.approx(1 / 3), 0), "B": (1.0, 1), "C": (0.0, 0)}
    assert scores("ctr", min_impressions=4) == {}


# ---------------------------------------------------------------- the command


@pytest.fixture
def model_log(tmp_path):
    path = tmp_path / "clicks.json"
    path.write_text(json.dumps(MODEL_LOG, ensure_ascii=False), encoding="utf-8")
    return path


def test_judgments_round_trip_through_evaltool(tmp_path, model_log):
    qrels = tmp_path / "clicks.qrels"
    result = invoke("clicks", model_log, "--judgments", qrels, "--model", "ctr", "-o", "json")
    assert result.exit_code == 0, result.stderr
    assert qrels.read_text(encoding="utf-8") == "envíos_a_Quito 0 A 2\nenvíos_a_Quito 0 B 3\nenvíos_a_Quito 0 C 0\n"
    run = tmp_path / "run.txt"
    run.write_text("envíos_a_Quito Q0 C 1 3.0 r\nenvíos_a_Quito Q0 A 2 2.0 r\nenvíos_a_Quito Q0 B 3 1.0 r\n",
                   encoding="utf-8")
    scored = invoke(qrels, run, "-m", "ndcg_cut.10", "-o", "json")
    assert scored.exit_code == 0, scored.stderr
    # DCG: 0/log2(2) + 2/log2(3) + 3/log2(4); ideal: 3/log2(2) + 2/log2(3)
    expected = (2 / math.log2(3) + 3 / 2) / (3 + 2 / math.log2(3))
    assert json.loads(scored.stdout)["summary"]["ndcg_cut_10"] == pytest.approx(expected, abs=1e-12)
    # the metrics still print, with the seed's MRR: (1/2 + 1 + 1) / 3
    assert json.loads(result.stdout)["summary"]["click_mrr"] == pytest.approx(2.5 / 3)


@pytest.mark.parametrize("fmt", ["table", "csv", "markdown", "latex", "json"])
def test_every_format(model_log, fmt):
    result = invoke("clicks", model_log, "-m", "click_mrr", "-m", "ctr@1", "-q", "-o", fmt)
    assert result.exit_code == 0, result.stderr
    escaped = {"markdown": "click\\_mrr", "latex": "click\\_mrr"}.get(fmt, "click_mrr")
    assert escaped in result.stdout and "ctr@1" in result.stdout
    if fmt == "csv":
        header, first = result.stdout.splitlines()[:2]
        assert header == "row,measure,value,ci_low,ci_high,micro,macro,impressions,queries"
        assert first.startswith(f"all,click_mrr,{2.5 / 3!r},")


def test_table_notes_counts_and_interval(tmp_path):
    path = write_log(str(tmp_path), "jsonl", HAND_LOG[:2] + HAND_LOG[3:])
    result = invoke("clicks", path, "-m", "click_mrr", "--by", "device", "--resamples", "100")
    assert result.exit_code == 0, result.stderr
    assert "device=mobile" in result.stdout
    assert "1 click on documents not shown" in result.stdout and "1 click repeating" in result.stdout
    assert "95% percentile bootstrap over impressions (micro), 100 resamples" in result.stdout


def error_cases(tmp_path):
    def write(name, text):
        path = tmp_path / name
        path.write_text(text)
        return path

    import pyarrow as pa
    import pyarrow.parquet as pq

    parquet = tmp_path / "bad.parquet"
    pq.write_table(pa.table({"session_id": ["s", "s"], "query_id": ["q", "q"], "action": ["impression"] * 2,
                             "doc_id": ["a", "b"], "position": [1, -2]}), parquet)
    header = "session_id,query_id,action,doc_id,position\n"
    return [
        (write("a.jsonl", '{"query": "q", "results": ["a"], "clicks": []}\n\n{"query": "q", results}\n'),
         ":3: found '{\"query\": \"q\", results}'; expected a JSON object on each line"),
        (write("b.json", '[\n {"query": "q", "results": ["a"], "clicks": []},\n {"query": "q", "clicks": []}\n]'),
         ":3: found '{\"query\": \"q\", \"clicks\": []}'; expected 'resultados' or 'results'"),
        (write("c.csv", header + "s,q,impression,a,1\n,q,click,a,\n"),
         ":3: found ',q,click,a,'; expected a click that names its impression"),
        (write("d.csv", header + "s,q,impression,a,1\ns,q,impression,b,-2\n"),
         ":3: found 's,q,impression,b,-2'; expected a position that is a whole number of 1 or more"),
        (write("e.jsonl", '{"session_id": "s", "query": "q", "action": "impression", "doc_id": "a", "position": 0}\n'),
         ":1: found "),
        (write("f.jsonl", '{"session_id": "s", "query": "q", "action": "impression", "doc_id": "a", "position": 1}\n'
                          '{"query": "q", "action": "click", "doc_id": "a"}\n'),
         ":2: found '{\"query\": \"q\", \"action\": \"click\", \"doc_id\": \"a\"}'; expected a click that names"),
        (write("g.csv", header + "s,q,view,a,1\n"), ":2: found 's,q,view,a,1'; expected action 'impression' or 'click'"),
        (parquet, ":row 2: found '-2'; expected a position"),
        (write("h.json", '[{"query": "q", "results": ["a"], "clicks": []}'),
         ":1; expected ',' or ']' in the JSON array (the file ends before the array is closed)"),
    ]


def test_every_error_path_is_one_message_with_file_and_line(tmp_path):
    for path, message in error_cases(tmp_path):
        out = tmp_path / "out.txt"
        qrels = tmp_path / "out.qrels"
        result = invoke("clicks", path, "--judgments", qrels, "--output", out)
        assert_fails(result, f"evaltool: {path}", message)
        assert not out.exists() and not qrels.exists()
        assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]
        with pytest.raises(ParseError):
            read_click_log(str(path))


def test_bad_options_exit_2(model_log, tmp_path):
    result = invoke("clicks", model_log, "--judgments", tmp_path / "o.qrels", "--grades", "0.5,0.2")
    assert result.exit_code == 2 and "increasing numbers" in result.stderr
    assert not (tmp_path / "o.qrels").exists()
    result = invoke("clicks", model_log, "-m", "time_to_first_click")
    assert result.exit_code == 2 and "needs timestamps" in result.stderr
    result = invoke("clicks", tmp_path / "missing.json")
    assert result.exit_code == 2


def test_readme_section_shows_what_the_command_prints(tmp_path, monkeypatch):

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## Implicit feedback"):readme.index("## Benchmarking a search backend")]
    monkeypatch.chdir(ROOT)
    shown = section[section.index("$ evaltool clicks data/clicks/log.json\n"):]
    shown = shown[len("$ evaltool clicks data/clicks/log.json\n"):shown.index("```")]
    assert invoke("clicks", "data/clicks/log.json").stdout == shown
    # the seed's own function on the same log, the empty impression left out as decided
    with open(ROOT / "data" / "clicks" / "log.json", encoding="utf-8") as f:
        log = [imp for imp in json.load(f) if imp["resultados"]]
    log = [dict(imp, clicks=[c for i, c in enumerate(imp["clicks"]) if c not in imp["clicks"][:i]]) for imp in log]
    assert f"click_mrr         {calcular_mrr_con_clicks(log):.4f}" in shown
    qrels = tmp_path / "clicks.qrels"
    assert invoke("clicks", "data/clicks/log.json", "--judgments", qrels, "--model", "coec").exit_code == 0
    scored = invoke(qrels, "data/clicks/run.txt", "-m", "ndcg_cut.10", "-m", "P.5", "-m", "recip_rank").stdout
    assert scored in section
    result = evaluate("data/clicks/log.json", ["click_mrr", "ctr@5"], average="macro")
    assert f"'click_mrr': {str(result.summary['click_mrr'])[:5]}" in section


def test_record_stores_the_click_metrics_in_the_history(tmp_path, model_log):
    from evaltool.history import get_execution, list_executions

    db = tmp_path / "history.sqlite"
    result = invoke("clicks", model_log, "-m", "click_mrr", "-m", "ctr", "-q", "--record", "--db", db,
                    "--name", "search-clicks", "--tag", "source=seed004")
    assert result.exit_code == 0, result.stderr
    (execution,) = list_executions(str(db))
    stored = get_execution(str(db), execution.id)
    # by hand: first clicks at 2, 1, 1 -> (1/2 + 1 + 1) / 3; ctr 1/3, 1/3, 2/3
    assert stored.name == "search-clicks"
    assert stored.summary == {"click_mrr": pytest.approx(2.5 / 3), "ctr": pytest.approx(4 / 9)}
    assert stored.per_query["envíos a Quito"]["click_mrr"] == pytest.approx(2.5 / 3)
    refused = invoke("clicks", model_log, "--db", db)
    assert refused.exit_code == 2 and "--db applies to --record only" in refused.stderr
