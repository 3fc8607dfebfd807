"""Fixtures of the CLI tests."""

from __future__ import annotations

import pytest

RUNS = {
    "a.txt": "q1 Q0 d2 1 2.0 A\nq1 Q0 d1 2 1.0 A\nq2 Q0 d3 1 1.0 A\n",
    "b.txt": "q1 Q0 d1 1 2.0 B\nq2 Q0 d9 1 1.0 B\nq2 Q0 d3 2 0.5 B\n",
    "c.txt": "q1 Q0 d1 1 2.0 C\nq2 Q0 d3 1 1.0 C\n",
}


@pytest.fixture
def many(tmp_path):
    """(qrels, folder of three runs a.txt, b.txt, c.txt), values by hand: q1 relevant d1, q2 relevant d3.
    recip_rank: A 1/2, 1 -> 0.75; B 1, 1/2 -> 0.75; C 1, 1 -> 1."""
    qrels = tmp_path / "qrels"
    qrels.write_text("q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 1\n")
    folder = tmp_path / "runs"
    folder.mkdir()
    for name, text in RUNS.items():
        (folder / name).write_text(text)
    return qrels, folder
