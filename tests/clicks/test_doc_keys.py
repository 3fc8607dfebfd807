"""Document ids held as exact 64-bit keys (evaltool.io.clicks.ids.DocKeys) give the values that
coding every id gave: checked key by key on ids of every shape, and metric by metric against a
plain-Python reading of the decided rules on shuffled events tables with ids that fit in a key
and ids that do not, repeated clicks, clicks by position, duplicate positions and strays."""

from __future__ import annotations

import json
import random

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaltool.clicks import click_judgments, evaluate, read_click_log
from evaltool.io.clicks.ids import DocKeys, packed_keys, unpacked

# every shape: short, exactly 8 bytes (last byte low, printable, non-ASCII), longer, multi-byte
# characters across the 8th byte, a NUL inside, digits only
ODD_IDS = ["d1", "12345678", "1234567\x05", "abcdefg\xe9", "a-long-document-identifier", "é", "x\x00", "x",
           "dé1234567", "0042", "ab\x00\x00", "ab", "\U0001F600\U0001F600", "1234567\x7f"]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(ODD_IDS), st.text(min_size=1, max_size=10)), min_size=1, max_size=40))
def test_equal_keys_exactly_for_equal_ids(texts):
    column = pa.array(texts, pa.string())
    keys, fits = packed_keys(column)
    for i, a in enumerate(texts):
        for j, b in enumerate(texts):
            if fits[i] and fits[j]:
                assert (keys[i] == keys[j]) == (a == b), (a, b)
        assert fits[i] == (len(a.encode()) <= 7 or (len(a.encode()) == 8 and 8 <= a.encode()[-1] < 0x80))
    assert unpacked(keys[fits]).to_pylist() == [t for t, f in zip(texts, fits) if f]
    doc_keys = DocKeys()
    all_keys = doc_keys.keys(column)
    texts_of, codes, again = doc_keys.coded(all_keys, all_keys[::-1])
    assert texts_of.take(pa.array(codes)).to_pylist() == texts
    assert again.tolist() == codes[::-1].tolist()


def events(seed: int, key: str) -> list[dict]:
    rng = random.Random(seed)
    rows = []
    for _ in range(300):
        ident = {"impression_id": f"i{rng.randrange(70)}", "query_id": f"q{rng.randrange(6)}"} if key == "imp" \
            else {"session_id": f"s{rng.randrange(50)}", "query": f"q{rng.randrange(6)}"}
        docs = ODD_IDS + [f"d{rng.randrange(30)}" for _ in range(10)]
        for p in range(1, rng.randint(2, 13)):
            rows.append({**ident, "action": "impression", "doc_id": rng.choice(docs),
                         "position": rng.choice([p, p, p, 1, 11])})
        for _ in range(rng.randint(0, 4)):
            if rng.random() < 0.2:
                rows.append({**ident, "action": "click", "position": rng.randint(1, 13)})
            else:
                rows.append({**ident, "action": "click", "doc_id": rng.choice(docs + ["never-shown"])})
    rng.shuffle(rows)
    return rows


def reference(rows: list[dict], k: int = 10) -> dict:
    """click_mrr, ctr and ctr@k (micro) and the counts, by the rules of evaltool.io.clicks, in plain Python."""
    shown: dict = {}
    clicks: dict = {}
    for row in rows:
        ident = row.get("impression_id") or (row["session_id"], row.get("query_id") or row.get("query"))
        if row["action"] == "impression":
            shown.setdefault(ident, {}).setdefault(row["position"], row["doc_id"])  # the first per position
        else:
            clicks.setdefault(ident, []).append((row.get("doc_id"), row.get("position")))
    rr, ctr, ctr_k, kept, repeated, strays = [], [], [], 0, 0, 0
    for ident, positions in shown.items():
        top = {}
        for position in sorted(positions):
            top.setdefault(positions[position], position)  # a document's top-most position
        ranks, seen = [], set()
        for doc, position in clicks.get(ident, []):
            rank = top.get(doc) if doc is not None else (position if position in positions else None)
            doc = doc if doc is not None else positions.get(position)
            if rank is None:
                strays += 1
            elif doc in seen:
                repeated += 1
            else:
                seen.add(doc)
                ranks.append(rank)
        kept += len(ranks)
        rr.append(1 / ranks[0] if ranks else 0.0)
        ctr.append(len(ranks) / len(positions))
        shown_k = sum(1 for p in positions if p <= k)
        if shown_k:
            ctr_k.append(sum(1 for r in ranks if r <= k) / shown_k)
    strays += sum(len(c) for ident, c in clicks.items() if ident not in shown)
    mean = lambda values: sum(values) / len(values)  # noqa: E731
    return {"summary": {"click_mrr": mean(rr), "ctr": mean(ctr), f"ctr@{k}": mean(ctr_k)},
            "counts": {"clicks": kept, "repeated_clicks": repeated, "clicks_not_shown": strays}}


def write(tmp_path, rows, layout):
    if layout == "parquet":
        path = tmp_path / "events.parquet"
        names = sorted({name for row in rows for name in row})
        pq.write_table(pa.table({name: [row.get(name) for row in rows] for name in names}), path,
                       row_group_size=101)
    else:
        path = tmp_path / "events.jsonl"
        path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("layout", ["parquet", "jsonl"])
@pytest.mark.parametrize("seed, key", [(1, "imp"), (2, "ses"), (3, "imp"), (4, "ses")])
def test_values_and_counts_follow_the_rules(tmp_path, seed, key, layout):
    rows = events(seed, key)
    expected = reference(rows)
    result = evaluate(write(tmp_path, rows, layout), ["click_mrr", "ctr", "ctr@10"])
    assert result.summary == pytest.approx(expected["summary"], rel=1e-12)
    for name, value in expected["counts"].items():
        assert result.meta["counts"][name] == value, name


def test_a_click_by_position_and_one_by_document_are_one_click(tmp_path):
    """d shown at 1 and 3: a click on position 3, then a click naming d, are d's clicks (it counts
    once, the first in log order: rank 3); the judgments see d clicked once."""
    rows = [{"impression_id": "i", "query": "q", "action": "impression", "doc_id": d, "position": p}
            for p, d in ((1, "d"), (2, "e"), (3, "d"))]
    rows += [{"impression_id": "i", "query": "q", "action": "click", "position": 3},
             {"impression_id": "i", "query": "q", "action": "click", "doc_id": "d"}]
    path = write(tmp_path, rows, "parquet")
    result = evaluate(path, ["click_mrr", "ctr"])
    assert result.summary == {"click_mrr": 1 / 3, "ctr": 1 / 3}
    assert result.meta["counts"]["repeated_clicks"] == 1
    log = read_click_log(path)
    assert log.doc_ids.take(pa.array(log.click_doc)).to_pylist() == ["d"]
    assert [(j.doc_id, j.clicks) for j in click_judgments(log, "ctr").rows] == [("d", 1), ("e", 0)]


def test_judgments_agree_across_layouts(tmp_path):
    """The same impressions as objects (ids coded one by one) and as an events table in Parquet
    (ids packed into keys, long ones coded) give the same values and judgments."""
    rng = random.Random(6)
    docs = ODD_IDS + [f"d{i}" for i in range(30)]
    objects = [{"query": f"q{rng.randrange(6)}", "results": rng.sample(docs, rng.randint(1, 12))} for _ in range(200)]
    for imp in objects:
        imp["clicks"] = [rng.choice(imp["results"] + ["never-shown"]) for _ in range(rng.randint(0, 3))]
    shown, clicked = [], []  # every impression's rows first, then every click, each in log order
    for i, imp in enumerate(objects):
        shown += [{"session_id": f"s{i}", "query": imp["query"], "action": "impression", "doc_id": doc,
                   "position": p} for p, doc in enumerate(imp["results"], 1)]
        clicked += [{"session_id": f"s{i}", "query": imp["query"], "action": "click", "doc_id": doc}
                    for doc in imp["clicks"]]
    rows = shown + clicked
    from_events, from_objects = read_click_log(write(tmp_path, rows, "parquet")), read_click_log(objects)
    measures = ["click_mrr", "ctr", "ctr@5", "mean_click_rank"]
    assert evaluate(from_events, measures, per_query=True).per_query == \
        evaluate(from_objects, measures, per_query=True).per_query
    for model in ("ctr", "coec", "sdbn"):
        mine = [(j.query_id, j.doc_id, j.score, j.grade) for j in click_judgments(from_events, model).rows]
        theirs = [(j.query_id, j.doc_id, j.score, j.grade) for j in click_judgments(from_objects, model).rows]
        assert mine == theirs, model
