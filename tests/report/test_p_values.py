"""One p-value format: ``compare``, ``history diff`` and the dashboard's side-by-side page write
the same p as the same text (report.table.p_text), the p itself from scipy's paired t-test."""

from __future__ import annotations

import re

import pytest
from scipy import stats

from evaltool.report.table import p_text
from tests.support.dashboard_data import dashboard_client, require_dashboard
from tests.support.helpers import invoke, write
from tests.support.html_pages import Page

pytestmark = pytest.mark.filterwarnings("ignore:Using `httpx` with `starlette.testclient`")

# 20 queries, one relevant document d1 each, found by A at rank 2 or 3 and by B mostly higher:
# a paired t-test p of about 1.2e-05, which the dashboard used to print 0.0000
RANKS_A = [2, 3, 2, 2, 3, 2, 3, 2, 2, 2] * 2
RANKS_B = [1, 1, 2, 1, 3, 1, 2, 1, 2, 1] * 2


def _run(ranks, tag):
    lines = []
    for i, rank in enumerate(ranks):
        docs = [f"x{k}" for k in range(1, rank)] + ["d1"]
        lines += [f"q{i} Q0 {doc} {r} {10 - r} {tag}\n" for r, doc in enumerate(docs, 1)]
    return "".join(lines)


def test_compare_history_diff_and_the_side_by_side_page_write_one_p(tmp_path):
    require_dashboard()
    from evaltool.history import open_history
    from evaltool.server import create_app

    qrels = write(tmp_path / "qrels", "".join(f"q{i} 0 d1 1\n" for i in range(len(RANKS_A))))
    a, b = write(tmp_path / "a.txt", _run(RANKS_A, "A")), write(tmp_path / "b.txt", _run(RANKS_B, "B"))
    expected_p = stats.ttest_rel([1 / r for r in RANKS_B], [1 / r for r in RANKS_A]).pvalue
    assert 1e-9 < expected_p < 1e-4  # where the three used to disagree: 0.0000, 2.3e-06, 2.3e-06
    shown = p_text(expected_p)
    assert re.fullmatch(r"\d\.\de-\d\d", shown)

    db = str(tmp_path / "history.sqlite")
    compared = invoke("compare", qrels, a, b, "-m", "recip_rank", "--record", "--db", db)
    assert compared.exit_code == 0, compared.stderr
    row = next(line.split() for line in compared.stdout.splitlines() if line.startswith("b.txt  recip_rank"))
    assert row[3:5] == [shown, shown]  # p, p_adjusted (one comparison)

    diffed = invoke("history", "diff", "1", "2", "--db", db, "-m", "recip_rank")
    assert diffed.exit_code == 0, diffed.stderr
    row = next(line.split() for line in diffed.stdout.splitlines() if line.startswith("recip_rank"))
    assert row[4:6] == [shown, shown]

    history = open_history(db)
    try:
        with dashboard_client(create_app(history)) as client:
            response = client.get("/compare?ids=1,2")
            spanish = client.get("/compare?ids=1,2&lang=es")
    finally:
        history.close()
    assert response.status_code == 200, response.text[:300]
    page = Page(response.text)
    paired = next(t for t in page.tables if t[0][:5] == ["measure", "mean A", "mean B", "delta", "p"])
    assert paired[1][4:6] == [shown, shown]
    spanish_rows = [row for table in Page(spanish.text).tables for row in table if len(row) == 10 and row[0] == "recip_rank"]
    assert spanish.status_code == 200 and spanish_rows[0][4:6] == [shown, shown]


@pytest.mark.parametrize(("p", "text"), [(0.5, "0.5000"), (0.001, "0.0010"), (0.00063, "6.3e-04"),
                                         (2.34e-06, "2.3e-06"), (0.0, "0")])
def test_p_text_four_decimals_from_a_thousandth_scientific_below(p, text):
    assert p_text(p) == text
