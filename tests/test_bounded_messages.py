"""Messages quote at most 200 characters of what they found, and a command prints at most
100 lines on stderr (the rest counted): a 100 KB query id used to make a 100 KB warning."""

from __future__ import annotations

from tests.support.helpers import assert_fails, invoke

BIG = "Q" * 100_000
CUT = "... (100000 characters)"


def _files(tmp_path, **contents) -> dict:
    paths = {}
    for name, text in contents.items():
        paths[name] = tmp_path / f"{name}.txt"
        paths[name].write_text(text)
    return paths


def test_a_skipped_query_with_a_huge_id(tmp_path):
    f = _files(tmp_path, qrels=f"q1 0 d1 1\n{BIG} 0 d1 1\n", run="q1 Q0 d1 1 1.0 r\n")
    result = invoke("-m", "map", f["qrels"], f["run"])
    assert result.exit_code == 0
    assert CUT in result.stderr and len(result.stderr) < 1000


def test_no_common_query_with_a_huge_id(tmp_path):
    f = _files(tmp_path, qrels="q1 0 d1 1\n", run=f"{BIG} Q0 d1 1 1.0 r\n")
    result = invoke("-m", "map", f["qrels"], f["run"])
    assert_fails(result, "no query of", CUT)
    assert len(result.stderr) < 1000


def test_a_huge_unknown_measure(tmp_path):
    f = _files(tmp_path, qrels="q1 0 d1 1\n", run="q1 Q0 d1 1 1.0 r\n")
    result = invoke("-m", "X" * 3000, f["qrels"], f["run"])
    assert_fails(result, "unknown measure 'XXXX", "... (3000 characters)")
    assert len(result.stderr) < 1000
    result = invoke("-m", "P." + "9" * 3000, f["qrels"], f["run"])
    assert result.exit_code == 2 and len(result.stderr) < 1000, result.stderr[:300]


def test_a_reference_with_a_huge_measure_name(tmp_path):
    f = _files(tmp_path, qrels="q1 0 d1 1\n", run="q1 Q0 d1 1 1.0 r\n", ref=f"map all 0.5\n{BIG} all 0.3\n")
    result = invoke("check", f["ref"], f["qrels"], f["run"])
    assert_fails(result, f"{f['ref']}:2: found 'QQQ", CUT)
    assert len(result.stderr) < 1000


def test_many_warnings_are_counted_past_a_hundred(tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\nq2 0 d2 1\n")
    folder = tmp_path / "runs"
    folder.mkdir()
    for i in range(150):  # each run skips q2: one warning per run
        (folder / f"run{i:03}.txt").write_text(f"q1 Q0 d1 1 1.0 r{i}\n")
    result = invoke("-m", "map", "-o", "csv", qrels, folder)
    assert result.exit_code == 0, result.stderr[-300:]
    lines = result.stderr.splitlines()
    assert len(lines) == 101
    assert all("have no results" in line for line in lines[:100])
    assert lines[-1] == "evaltool: 50 more messages not shown (at most 100 are printed)"
