"""``jobs`` (``--jobs``) is a parameter passed down to the readers, not a module global (issue 10)."""

from __future__ import annotations

import random

import pytest

pa = pytest.importorskip("pyarrow")


@pytest.fixture(scope="module")
def big_files(tmp_path_factory):
    """A run above the columnar reader's size threshold (so threads are used) and its qrels."""
    from evaltool.io.kinds import COLUMNAR_MIN_BYTES

    folder = tmp_path_factory.mktemp("jobs")
    rng = random.Random(7)
    lines, size, q = [], 0, 0
    while size <= COLUMNAR_MIN_BYTES:
        q += 1
        for rank in range(1, 101):
            line = f"q{q} Q0 d{rng.randrange(10**6)}x{rank} {rank} {100 - rank}.5 tag\n"
            lines.append(line)
            size += len(line)
    (folder / "run.txt").write_text("".join(lines))
    (folder / "qrels.txt").write_text("".join(f"q{i} 0 d1x1 1\n" for i in range(1, q + 1)))
    return str(folder / "qrels.txt"), str(folder / "run.txt")


def test_jobs_reaches_the_columnar_reader_and_changes_no_module_state(big_files, monkeypatch):
    from evaltool import evaluate
    from evaltool.io import columnar

    asked = []
    real = columnar.threads
    monkeypatch.setattr(columnar, "threads", lambda jobs: asked.append(jobs) or real(jobs))
    one = evaluate(*big_files, ["map", "P.10"], jobs=1)
    assert asked and set(asked) == {1} and pa.cpu_count() == 1
    asked.clear()
    two = evaluate(*big_files, ["map", "P.10"], jobs=2)
    assert asked and set(asked) == {2}
    assert one.summary == two.summary
    assert not hasattr(columnar, "JOBS")


def test_the_cli_passes_jobs_down(big_files, monkeypatch):
    from evaltool.io import columnar
    from tests.support.helpers import invoke

    asked = []
    real = columnar.threads
    monkeypatch.setattr(columnar, "threads", lambda jobs: asked.append(jobs) or real(jobs))
    result = invoke(*[*big_files, "--jobs", "3", "-m", "map"])
    assert result.exit_code == 0, result.output
    assert asked and set(asked) == {3}
    asked.clear()
    result = invoke(*[*big_files, "--jobs", "2", "--stream", "-m", "map"])
    assert result.exit_code == 0, result.output
    assert asked and set(asked) == {2}
