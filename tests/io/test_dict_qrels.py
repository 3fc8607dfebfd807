"""Dict judgments converted in C loops (``io.frames.DictQrels``) against the row-by-row path.

Ranking a dict run reads the judged ids row by row (``row_docs``), so the document codes
are built only when something asks for them; when asked, they are the row-by-row path's.
"""

import numpy as np
import pytest

from evaltool import Evaluator, evaluate
from evaltool.errors import ParseError
from evaltool.io import frames

TRICKY = {
    "q10": {"d1": 2, "d2": 0, "d3": -1, "shared": 1},
    "q2": {"shared": 3, "ü-naïve": 1, "d1": 0},  # a document judged for several queries, unicode ids
    "q1": {"9" * 40: 1, "": 2},  # a huge id and the empty id
    "q3": {"only": 0},  # judged, nothing relevant
}
RUN = {
    "q10": {"d1": 1.0, "d2": 1.0, "d3": 0.5, "x": 2.0},  # tied scores
    "q2": {"ü-naïve": 3.0, "shared": 3.0, "y": -1.0},
    "q1": {"9" * 40: 0.25},
    "q4": {"z": 1.0},  # not judged
}
MEASURES = ["map", "ndcg", "P.2", "recip_rank", "num_rel", "num_rel_ret", "bpref", "relstring"]


def _row_by_row(qrels):
    return frames._build(frames.Qrels, "<qrels dict>", frames._dict_rows(qrels, "<qrels dict>"), frames._check_grade,
                         "error")


def test_the_columns_are_the_row_by_row_paths():
    converted, expected = frames.qrels_from_dict(TRICKY), _row_by_row(TRICKY)
    assert isinstance(converted, frames.DictQrels)
    assert converted.qid_vocab == expected.qid_vocab and converted.doc_vocab == expected.doc_vocab
    for name in ("qid_codes", "doc_codes", "grades", "lines"):
        np.testing.assert_array_equal(getattr(converted, name), getattr(expected, name))
    assert converted.queries_with() == expected.queries_with()
    assert converted.by_query.keys() == expected.by_query.keys()


@pytest.mark.parametrize("complete", [False, True])
def test_scores_equal_the_row_by_row_paths_and_no_document_codes_are_built(complete):
    qrels = frames.qrels_from_dict(TRICKY)
    got = Evaluator(qrels, MEASURES, complete=complete).evaluate(RUN, per_query=True)
    expected = evaluate(_row_by_row(TRICKY), frames._build(
        frames.Run, "<run dict>", frames._dict_rows(RUN, "<run dict>"), frames._check_score, "error", "run",
        queries=RUN), MEASURES, per_query=True, complete=complete)
    assert got.per_query == expected.per_query and got.summary == expected.summary
    assert "_index" not in vars(qrels)  # ranking read the judged ids row by row


def test_document_ids_that_are_not_text_go_row_by_row():
    """An int id is the text str() writes, as on the row-by-row path (it meets the run's "7")."""
    qrels = {"q1": {7: 1, "a": 0}}
    assert not isinstance(frames.qrels_from_dict(qrels), frames.DictQrels)
    assert evaluate(qrels, {"q1": {"7": 2.0, "a": 1.0}}, ["P.1"]).summary == {"P_1": 1.0}


@pytest.mark.parametrize("doc", [None, float("nan")])
def test_a_missing_document_id_is_still_named(doc):
    with pytest.raises(ParseError) as caught:
        frames.qrels_from_dict({"q1": {"a": 1, doc: 0}})
    assert "document id" in caught.value.text and "a document id in every row" in caught.value.expected
