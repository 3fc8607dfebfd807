"""Eight raters judging at once into one SQLite file lose nothing, and never replace each other's grades."""

from __future__ import annotations

import multiprocessing
import sqlite3

from evaltool.judgments import create_set, read_judgments, set_versions

RATERS = 8
PAIRS = 25


def _rater(db: str, number: int, start) -> None:
    from evaltool.judgments.sets import add_judgments

    start.wait()
    for pair in range(PAIRS):  # the same pairs for every rater, one judgment per transaction
        add_judgments(db, "s", [{"query_id": f"q{pair % 5}", "doc_id": f"d{pair}", "rater": f"r{number}",
                                 "grade": (number + pair) % 4}], author=f"r{number}")
    for pair in range(0, PAIRS, 5):  # then each changes their mind on some of them
        add_judgments(db, "s", [{"query_id": f"q{pair % 5}", "doc_id": f"d{pair}", "rater": f"r{number}",
                                 "grade": (number + pair + 1) % 4}], author=f"r{number}")


def test_eight_raters_at_once_lose_nothing(tmp_path):
    db = str(tmp_path / "h.sqlite")
    create_set(db, "s", "graded")
    context = multiprocessing.get_context("spawn")
    start = context.Event()
    workers = [context.Process(target=_rater, args=(db, n, start)) for n in range(RATERS)]
    for worker in workers:
        worker.start()
    start.set()
    for worker in workers:
        worker.join(timeout=300)
    assert [w.exitcode for w in workers] == [0] * RATERS
    judged = read_judgments(db, "s")
    assert len(judged) == RATERS * PAIRS
    expected = {(f"r{n}", f"d{p}"): (n + p + (1 if p % 5 == 0 else 0)) % 4 for n in range(RATERS) for p in range(PAIRS)}
    assert {(j.rater, j.doc_id): j.grade for j in judged} == expected
    versions = set_versions(db, "s")
    changes = RATERS * (PAIRS + PAIRS // 5)
    assert [v["version"] for v in versions] == list(range(1, changes + 1))  # every write its own version, none lost
    # each replaced grade is kept, marked with the version that replaced it, and was the rater's own
    with sqlite3.connect(db) as conn:
        replaced = conn.execute("SELECT rater, doc_id, grade FROM judgments WHERE until IS NOT NULL").fetchall()
    assert sorted(replaced) == sorted((f"r{n}", f"d{p}", (n + p) % 4) for n in range(RATERS) for p in range(0, PAIRS, 5))
