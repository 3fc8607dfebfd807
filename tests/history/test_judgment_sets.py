"""Judgment sets in the history (SQLite and PostgreSQL): scales, versions, several raters."""

from __future__ import annotations

import pytest

from evaltool.errors import EvaltoolError, NotFoundError
from evaltool.judgments import (Scale, add_judgments, consensus, create_set, get_set, list_sets, read_judgments,
                                set_versions)
from evaltool.judgments.sets import JudgmentConflict


def _pairs(judgments):
    return [(j.query_id, j.doc_id, j.rater, j.grade) for j in judgments]


def test_a_rater_replaces_only_their_own_grade_and_every_version_reads_back(db):
    create_set(db, "dl", "graded", description="extra DL19 judgments")
    add_judgments(db, "dl", [{"query_id": "q1", "doc_id": "d1", "rater": "ana", "grade": 2},
                             {"query_id": "q1", "doc_id": "d1", "rater": "ben", "grade": 0},
                             {"query_id": "q1", "doc_id": "d2", "rater": "ana", "grade": 1}])
    after = add_judgments(db, "dl", [{"query_id": "q1", "doc_id": "d1", "rater": "ana", "grade": 3, "note": "exact"}])
    assert after.version == 2
    assert _pairs(read_judgments(db, "dl")) == [("q1", "d1", "ana", 3), ("q1", "d1", "ben", 0), ("q1", "d2", "ana", 1)]
    assert _pairs(read_judgments(db, "dl", version=1)) == [("q1", "d1", "ana", 2), ("q1", "d1", "ben", 0),
                                                           ("q1", "d2", "ana", 1)]
    assert read_judgments(db, "dl", version=0) == []
    assert [j.note for j in read_judgments(db, "dl", rater="ana")] == ["exact", None]
    # the same grade again changes nothing and makes no version
    assert add_judgments(db, "dl", [{"query_id": "q1", "doc_id": "d1", "rater": "ben", "grade": 0}]).version == 2
    assert [v["version"] for v in set_versions(db, "dl")] == [1, 2]
    assert set_versions(db, "dl")[1]["change"] == {"what": "judged", "query": "q1", "doc": "d1", "grade": 3}
    with pytest.raises(NotFoundError, match="versions 0 to 2, not 5"):
        read_judgments(db, "dl", version=5)


def test_scales_binary_graded_and_declared_labels(db):
    create_set(db, "thumbs", "binary")
    create_set(db, "stars", "labels:1star=0,2stars=0,3stars=1,4stars=2,5stars=3")
    add_judgments(db, "thumbs", [{"query_id": "q", "doc_id": "a", "rater": "u", "label": "useful"},
                                 {"query_id": "q", "doc_id": "b", "rater": "u", "grade": 0}])
    add_judgments(db, "stars", [{"query_id": "q", "doc_id": "a", "rater": "u", "label": "4stars"},
                                {"query_id": "q", "doc_id": "b", "rater": "u", "label": "2stars"}])
    assert [(j.grade, j.label) for j in read_judgments(db, "thumbs")] == [(1, "useful"), (0, "not_useful")]
    assert [(j.grade, j.label) for j in read_judgments(db, "stars")] == [(2, "4stars"), (0, "2stars")]
    assert [s.name for s in list_sets(db)] == ["stars", "thumbs"]
    assert get_set(db, "stars").scale.grades == (0, 1, 2, 3)
    with pytest.raises(EvaltoolError, match="grade 2 is not on the binary scale; expected one of 0, 1"):
        add_judgments(db, "thumbs", [{"query_id": "q", "doc_id": "c", "rater": "u", "grade": 2}])
    with pytest.raises(EvaltoolError, match="'6stars' is not on the labels scale"):
        add_judgments(db, "stars", [{"query_id": "q", "doc_id": "c", "rater": "u", "label": "6stars"}])
    assert get_set(db, "thumbs").version == 1  # the refused change wrote nothing
    with pytest.raises(JudgmentConflict, match="exists already"):
        create_set(db, "thumbs", "binary")


@pytest.mark.parametrize("text, message", [
    ("stars", "expected binary, graded or labels:NAME=GRADE"),
    ("labels:a=1", "2 to 10 labels"),
    ("labels:a=1,a=2", "names a label twice"),
    ("labels:a b=1,c=2", "is not NAME=GRADE"),
    ("labels:a=-1,b=2", "is not NAME=GRADE"),
])
def test_a_scale_that_cannot_be_read_says_why(text, message):
    with pytest.raises(EvaltoolError, match=message):
        Scale.parse(text)


@pytest.mark.parametrize("item, message", [
    ({"query_id": "q 1", "doc_id": "d", "rater": "u", "grade": 1}, "holds a space"),
    ({"query_id": "q", "doc_id": "", "rater": "u", "grade": 1}, "doc_id: expected a non-empty name"),
    ({"query_id": "q", "doc_id": "d", "rater": "u"}, "no grade nor label"),
    ({"query_id": "q", "doc_id": "d", "rater": "u", "grade": 1, "at": "yesterday"}, "at 'yesterday': expected"),
])
def test_a_bad_judgment_is_refused_whole(db, item, message):
    create_set(db, "s", "graded")
    with pytest.raises(EvaltoolError, match=message):
        add_judgments(db, "s", [{"query_id": "q", "doc_id": "ok", "rater": "u", "grade": 1}, item])
    assert read_judgments(db, "s") == []


def test_consensus_by_majority_median_and_an_adjudicator(db):
    create_set(db, "s", "graded")
    grades = {"ana": [3, 0, 1, 2], "ben": [2, 0, 1, 0], "eva": [2, 1, 3, 3]}
    add_judgments(db, "s", [{"query_id": "q", "doc_id": f"d{i}", "rater": rater, "grade": g}
                            for rater, values in grades.items() for i, g in enumerate(values)])
    add_judgments(db, "s", [{"query_id": "q", "doc_id": "d3", "rater": "chief", "grade": 1}])
    judged = read_judgments(db, "s")
    # by hand: d0 {3,2,2}, d1 {0,0,1}, d2 {1,1,3}, d3 {2,0,3,1 (chief)}
    assert consensus(judged, "majority").qrels == {"q": {"d0": 2, "d1": 0, "d2": 1, "d3": 0}}  # d3: a 4-way tie
    assert consensus(judged, "median").qrels == {"q": {"d0": 2, "d1": 0, "d2": 1, "d3": 1}}  # lower middle of 0,1,2,3
    chief = consensus(judged, "chief")
    assert chief.qrels == {"q": {"d3": 1}} and chief.unresolved == [("q", "d0"), ("q", "d1"), ("q", "d2")]
    assert consensus(judged, rater="ben").qrels == {"q": {"d0": 2, "d1": 0, "d2": 1, "d3": 0}}
    with pytest.raises(EvaltoolError, match="expected majority, median or the name of a rater"):
        consensus(judged, "nobody")
