"""What a run's reader derives from a qrels' document ids (their fingerprints' table, their
integer keys) is kept for a few qrels, not only the last: a training loop scoring its runs
against dev and test judgments in turn does not build them again on every call, and gets
each Evaluator's own numbers."""

from __future__ import annotations

import numpy as np
import pytest

from evaltool import Evaluator, evaluate
from evaltool.io import textids
from evaltool.io.common import RECENT_LISTS, LastIds
from tests.support.tables import as_dicts, frame

pd = pytest.importorskip("pandas")
pytest.importorskip("pyarrow")


def test_the_last_few_id_lists_are_kept_the_oldest_dropped():
    made = []
    lengths = LastIds(lambda ids: made.append(ids) or np.array([len(i) for i in ids]))
    lists = [[f"d{i}"] * (i + 1) for i in range(RECENT_LISTS + 1)]
    for _ in range(3):
        for ids in lists[:RECENT_LISTS]:
            assert lengths(ids).tolist() == [len(ids[0])] * len(ids)
    assert made == lists[:RECENT_LISTS]
    lengths(lists[-1])  # one more list: the oldest is dropped
    lengths(lists[0])
    assert made == [*lists, lists[0]]


def test_fingerprint_tables_of_a_few_qrels_are_kept():
    lists = [[f"doc{i}-{k}" for k in range(7)] for i in range(RECENT_LISTS)]
    tables = [textids._judged(ids) for ids in lists]
    for _ in range(2):
        assert [textids._judged(ids) for ids in lists] == tables  # the same objects, not built again


def _rows(seed: int, prefix: str):
    rng = np.random.default_rng(seed)
    qrels = [(f"q{q}", f"{prefix}{d}", int(rng.integers(0, 3))) for q in range(6)
             for d in rng.choice(300, 30, replace=False).tolist()]
    run = [(f"q{q}", f"{prefix}{d}", float(rng.integers(0, 5))) for q in range(6)
           for d in rng.choice(300, 20, replace=False).tolist()]
    return qrels, run


@pytest.mark.parametrize("prefix", ["d", ""])  # text ids, numeric ids
def test_evaluators_used_in_turn_each_give_their_own_numbers(prefix):
    data = [_rows(seed, prefix) for seed in (1, 2, 3)]
    evaluators = [Evaluator(frame(qrels, "relevance"), ["map", "ndcg_cut.5", "P.5"]) for qrels, _ in data]
    expected = [[evaluate(as_dicts(q), as_dicts(r), ["map", "ndcg_cut.5", "P.5"], per_query=True).per_query
                 for _, r in data] for q, _ in data]
    for _ in range(2):
        for i, evaluator in enumerate(evaluators):
            for j, (_, run) in enumerate(data):
                assert evaluator.evaluate(frame(run, "score"), per_query=True).per_query == expected[i][j]
