"""The summary's means of several float columns, summed all at once, against one column at a time."""

import numpy as np
import pytest

from evaltool import evaluate
from evaltool.aggregate import summarize
from evaltool.evaluation.result import Column, _column_means, summarize_columns
from evaltool.measures.base import Agg
from evaltool.names import parse_measures


@pytest.mark.parametrize("seed", range(5))
def test_means_summed_at_once_equal_each_columns_sum_to_the_bit(seed):
    """Values of every magnitude and sign, a -0.0 and a value that swallows later ones: a running sum
    down the stacked columns adds each column in query order, as the sum of one column does."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 500))
    requests = parse_measures(["map", "P.5,10", "ndcg_cut.10", "recip_rank", "num_ret"])
    columns = []
    for request in requests:
        for name in request.names:
            values = rng.random(n) * 10.0 ** float(rng.integers(-200, 200)) * rng.choice([-1.0, 1.0], n)
            values[:: int(rng.integers(2, 9))] = 1e16 if seed % 2 else -0.0
            columns.append(Column(name, request, values))
    means = _column_means(columns, n)
    assert len(means) == sum(c.measure.agg is Agg.MEAN for c in columns) > 1
    for column in columns:
        if id(column) in means:
            one = summarize(Agg.MEAN, column.values, n)
            assert np.float64(means[id(column)]).tobytes() == np.float64(one).tobytes()
    summary = summarize_columns(columns, n, "run")
    num_ret = next(c for c in columns if c.name == "num_ret")
    assert summary["num_ret"] == int(summarize(Agg.SUM, num_ret.values, n))


def test_a_single_column_a_list_column_and_no_queries_are_summed_one_by_one():
    requests = parse_measures(["map", "relstring", "P.5"])
    columns = [Column("map", requests[0], np.array([0.5, 0.25])), Column("relstring", requests[1], ["1", "0"])]
    assert _column_means(columns, 2) == {}  # one float column: nothing to stack
    assert _column_means([Column("map", requests[0], np.zeros(0)), Column("P_5", requests[2], np.zeros(0))], 0) == {}
    result = evaluate({"q": {"a": 1}, "r": {"b": 1}}, {"q": {"a": 1.0, "x": 2.0}, "r": {"b": 1.0}},
                      ["map", "P.1,2", "recip_rank", "relstring"], per_query=True)
    for name in ("map", "P_1", "P_2", "recip_rank"):
        assert result.summary[name] == sum(result.per_query[q][name] for q in ("q", "r")) / 2
