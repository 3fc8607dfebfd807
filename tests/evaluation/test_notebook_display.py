"""In a notebook, results show themselves (``_repr_html_``) and become DataFrames (``to_frame``).

Hand-made data: one relevant document per query over ten queries. Run A finds it at rank 5
everywhere (recip_rank 0.2); B at rank 1 on six queries and 2 on four (mean 0.8: a
difference of +0.6 on every query, far past any test); C as A but at rank 1 on one query
(mean 0.28, +0.08 on a single query: no paired test calls that significant).
"""

from __future__ import annotations

import math
from html.parser import HTMLParser

import pytest

from evaltool.compare import compare_runs
from evaltool.evaluation import evaluate

QIDS = [f"q{i:02d}" for i in range(10)]
QRELS = {q: {f"rel-{q}": 1} for q in QIDS}
HOSTILE = '<img src=x onerror=alert(1)> & "quoted"'


def run(ranks: list[int]) -> dict:
    out = {}
    for q, rank in zip(QIDS, ranks):
        docs = [f"other-{q}-{j}" for j in range(5)]
        docs[rank - 1] = f"rel-{q}"
        out[q] = {doc: float(10 - j) for j, doc in enumerate(docs)}
    return out


RUNS = {"A": run([5] * 10), "B": run([1] * 6 + [2] * 4), "C": run([5] * 9 + [1])}


class Tables(HTMLParser):
    """Every table as a list of rows of cell texts, the captions, the notes, and every start tag seen."""

    def __init__(self, text: str):
        super().__init__()
        self.tables, self.captions, self.notes, self.tags = [], [], [], []
        self._text = None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th", "caption", "p"):
            self._text = []

    def handle_data(self, data):
        if self._text is not None:
            self._text.append(data)

    def handle_endtag(self, tag):
        if tag in ("td", "th"):
            self.tables[-1][-1].append("".join(self._text))
        elif tag == "caption":
            self.captions.append("".join(self._text))
        elif tag == "p":
            self.notes.append("".join(self._text))
        if tag in ("td", "th", "caption", "p"):
            self._text = None


def as_dicts(table: list[list[str]]) -> dict[str, dict[str, str]]:
    header, *rows = table
    return {row[0]: dict(zip(header[1:], row[1:])) for row in rows}


def test_an_eval_result_shows_its_summary_and_groups():
    topics = {q: {"kind": "even" if i % 2 == 0 else "odd"} for i, q in enumerate(QIDS)}
    result = evaluate(QRELS, RUNS["C"], ["recip_rank", "P.5"], group_by="kind", topics=topics, thresholds=True)
    page = Tables(result._repr_html_())
    rows = as_dicts(page.tables[0])
    # C: 0.2 on nine queries, 1 on q09 (odd); P_5 is 0.2 everywhere
    assert rows["all"] == {"queries": "10", "recip_rank": "0.2800", "P_5": "0.2000", "label": result.labels["all"]}
    assert rows["kind=even"]["recip_rank"] == "0.2000" and rows["kind=odd"]["recip_rank"] == "0.3600"
    assert page.notes == ["10 queries; per-query values: .to_frame()"]
    assert "script" not in page.tags and "style" not in page.tags


def test_to_frame_holds_every_per_query_value():
    result = evaluate(QRELS, RUNS["B"], ["recip_rank", "ndcg_cut.10"])
    frame = result.to_frame()
    assert list(frame.columns) == ["query_id", "measure", "value"]
    wide = frame.pivot(index="query_id", columns="measure", values="value")
    assert wide.to_dict(orient="index") == result.per_query
    # by hand: rank 1 -> 1 and 1; rank 2 -> 1/2 and 1/log2(3)
    assert result.per_query["q00"] == {"recip_rank": 1.0, "ndcg_cut_10": 1.0}
    assert result.per_query["q09"]["recip_rank"] == 0.5
    assert math.isclose(result.per_query["q09"]["ndcg_cut_10"], 1 / math.log2(3))


def test_a_comparison_marks_what_is_significant_as_the_paper_table_does():
    cmp = compare_runs(QRELS, RUNS, measures=["recip_rank"])
    assert cmp.significant("B", "recip_rank") and not cmp.significant("C", "recip_rank")
    page = Tables(cmp._repr_html_())
    main = as_dicts(page.tables[0])
    assert main["A"]["recip_rank"] == "0.2000"
    assert main["B"]["recip_rank"] == "0.8000 (+0.6000)*"
    assert main["C"]["recip_rank"] == "0.2800 (+0.0800)"
    assert any("* adjusted p < 0.05" in note for note in page.notes)
    # the same cells as the LaTeX table of `evaltool compare -o latex`
    from evaltool.report.layouts import compare_report
    from evaltool.report.table import render

    latex = render(compare_report(cmp), "latex")
    assert "B & 0.8000 (+0.6000)* \\\\" in latex and "C & 0.2800 (+0.0800) \\\\" in latex
    frame = cmp.to_frame().set_index("run")
    assert frame.loc["B", "significant"] == 1 and frame.loc["C", "significant"] == 0
    assert frame.loc["B", "mean"] == pytest.approx(0.8) and frame.loc["C", "delta"] == pytest.approx(0.08)


def test_all_pairs_show_their_letters_and_marked_pairs():
    cmp = compare_runs(QRELS, RUNS, measures=["recip_rank"], all_pairs=True, test="hsd")
    letters = cmp.pairs.letters["recip_rank"]
    # A and C do not differ; B differs from both
    assert letters["A"] == letters["C"] != letters["B"]
    for shown in (cmp._repr_html_(), cmp.pairs._repr_html_()):
        page = Tables(shown)
        means = as_dicts(page.tables[0])
        assert means["A"]["recip_rank"] == f"0.2000 {letters['A']}"
        assert means["B"]["recip_rank"] == f"0.8000 {letters['B']}"
        pairs = {(row[1], row[2]): row[3] for row in page.tables[1][1:]}
        assert pairs == {("A", "B"): "+0.6000*", ("A", "C"): "+0.0800", ("B", "C"): "-0.5200*"}
    frame = cmp.pairs.to_frame()
    assert frame.set_index(["a", "b"])["significant"].to_dict() == {("A", "B"): 1, ("A", "C"): 0, ("B", "C"): 1}


def test_hostile_run_names_are_shown_as_text():
    cmp = compare_runs(QRELS, {HOSTILE: RUNS["A"], "B&<b>": RUNS["B"]}, measures=["recip_rank"])
    shown = cmp._repr_html_()
    page = Tables(shown)
    assert "img" not in page.tags and "b" not in page.tags
    assert [row[0] for row in page.tables[0][1:]] == [HOSTILE, "B&<b>"]
    assert any(HOSTILE in note for note in page.notes)  # the baseline's name in the notes
    pairs = compare_runs(QRELS, {HOSTILE: RUNS["A"], "B": RUNS["B"]}, measures=["recip_rank"], all_pairs=True)
    assert "img" not in Tables(pairs.pairs._repr_html_()).tags


def test_history_reports_show_themselves_and_become_frames(tmp_path):
    import json

    from evaltool.history import check, diff, record, report

    db = str(tmp_path / "history.sqlite")
    first = record(evaluate(QRELS, RUNS["A"], ["recip_rank"]), db=db, name=HOSTILE, at="2025-01-01T00:00:00Z")
    second = record(evaluate(QRELS, RUNS["B"], ["recip_rank"]), db=db, name=HOSTILE, at="2025-01-02T00:00:00Z")

    out = report(db)
    assert json.loads(json.dumps(out)) == out  # still the JSON of `history report -o json`
    page = Tables(out._repr_html_())
    rows = page.tables[0][1:]
    assert [row[1] for row in rows[:2]] == [HOSTILE, HOSTILE] and "img" not in page.tags
    assert [row[3] for row in rows] == ["0.2000", "0.8000", "0.5000"]  # the summary row: the mean of the two
    frame = out.to_frame()
    assert frame["recip_rank"].tolist() == [row["values"]["recip_rank"] for row in out["rows"]]
    assert frame["recip_rank"].tolist() == pytest.approx([0.2, 0.8]) and frame["id"].tolist() == [first, second]
    spanish = Tables(report(db, lang="es")._repr_html_())
    assert spanish.tables[0][0][:3] == ["ID", "nombre", "fecha"] and spanish.tables[0][-1][0] == "Resumen"

    changes = diff(db, first, second)
    page = Tables(changes._repr_html_())
    row = page.tables[0][1]
    assert row[:4] == ["recip_rank", "0.2000", "0.8000", "0.6000"]
    assert changes.to_frame().set_index("measure").loc["recip_rank", "wins"] == 10

    verdict = check(db, HOSTILE)
    assert verdict.ok
    assert Tables(verdict._repr_html_()).tables[0][1][-1] == "holds"
    assert verdict.to_frame()["dropped"].tolist() == [False]


def test_to_frame_without_pandas_says_what_to_install(monkeypatch):
    import sys

    from evaltool.errors import EvaltoolError

    result = evaluate(QRELS, RUNS["A"], ["recip_rank"])
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas raises ImportError
    with pytest.raises(EvaltoolError, match=r"to_frame\(\) needs pandas: pip install pandas"):
        result.to_frame()
