"""``evaltool QRELS RUN RUN ...``: runs read (pyarrow, at any size) and scored in threads must
print exactly what one invocation per run prints, and what trec_eval prints run after run.

The runs of a collection are variants of one seeded run (tests/support/helpers.py ``generate``:
ties, graded and negative grades, '#' and UTF-8 in ids): the run itself, its scores negated,
tab-delimited, gzip-compressed, with a comment line (which the columnar reader hands to the
line reader), with extra fields after the tag, and its numeric-id twin. One invocation per
run reads each file with the small-file reader, so the comparison also holds the two
readers to the same values.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import warnings
from pathlib import Path

import pytest

from evaltool import Evaluator, evaluate
from evaltool.errors import EvaltoolError
from evaltool.io import columnar, kinds
from tests.support.helpers import assert_fails, generate, invoke, write, write_trec

SCENARIOS = ["ties", "graded", "docids", "sparse"]


@pytest.fixture(params=["columnar", "by size"])
def route(request, monkeypatch):
    """Runs read by pyarrow whatever their size (as when they are big together), or by the size
    rule of a single run (these small files: the small-file reader)."""
    if request.param == "columnar":
        monkeypatch.setattr(kinds, "MANY_COLUMNAR_BYTES", 0)
    return request.param


def _variants(folder: Path, scenario: str, seed: int = 1, all_queries: bool = False):
    """(qrels path, run paths, trec_eval-readable twin of each run) for one collection."""
    qrels, run = generate(scenario, seed)
    if not all_queries:  # trec_eval 10 aborts on a qrels query without results unless -c
        qrels = {qid: docs for qid, docs in qrels.items() if qid in run}
    qpath, rpath = write_trec(folder, qrels, run)
    text = rpath.read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    runs = {"plain": text,
            "negated": "".join(_negate(line) for line in lines),
            "tabs": text.replace(" ", "\t"),
            "comment": "# a comment line sends this file to the line reader\n" + text,
            "extra": "".join(line.rstrip("\n") + " extra field\n" for line in lines)}
    paths, twins = [], []
    for name, body in runs.items():
        path = write(folder / f"{name}.txt", body)
        paths.append(path)
        twins.append(path)
    zipped = folder / "plain.txt.gz"
    zipped.write_bytes(gzip.compress(text.encode("utf-8")))
    paths.append(str(zipped))
    twins.append(paths[0])
    return str(qpath), paths, twins


def _negate(line: str) -> str:
    fields = line.split()
    fields[4] = repr(-float(fields[4]))
    return " ".join(fields) + "\n"


@pytest.mark.parametrize("scenario", SCENARIOS)
@pytest.mark.parametrize("options", ["-m all_trec -q", "-q -c -M 7 -m official -m ndcg_cut.5,10"])
def test_many_runs_print_what_trec_eval_prints_run_after_run(trec_eval, tmp_path, scenario, options, route):
    qrels, runs, twins = _variants(tmp_path, scenario, all_queries="-c" in options)
    args = options.split()
    together = invoke(*args, qrels, *runs)
    assert together.exit_code == 0, together.stderr
    expected = b"".join(subprocess.run([trec_eval, *args, qrels, twin], capture_output=True, check=True,
                                       timeout=120).stdout for twin in twins)
    assert together.stdout_bytes == expected


@pytest.mark.parametrize("scenario", SCENARIOS)
@pytest.mark.parametrize("fmt", ["trec", "json"])
def test_many_runs_equal_one_invocation_per_run(tmp_path, scenario, fmt, route):
    qrels, runs, _ = _variants(tmp_path, scenario)
    args = ["-m", "map", "-m", "ndcg_cut.10", "-m", "P.5", "-m", "recip_rank", "-m", "num_ret", "-q", "-o", fmt]
    together = invoke(*args, qrels, *runs)
    assert together.exit_code == 0, together.stderr
    single = [invoke(*args, qrels, run).stdout for run in runs]
    if fmt == "trec":
        assert together.stdout == "".join(single)
    else:
        entries = json.loads(together.stdout)
        assert [entry.pop("name") for entry in entries] == [Path(run).name for run in runs]
        assert entries == [json.loads(text) for text in single]


def test_numeric_ids_order_ties_as_strings_like_the_line_reader(trec_eval, tmp_path, route):
    # numeric document ids take the int64 path of the columnar reader: ties still break by
    # the id as text, descending ("9" before "10"), as trec_eval does
    qrels = write(tmp_path / "qrels", "1 0 9 1\n1 0 10 0\n1 0 100 1\n2 0 7 1\n")
    runs = [write(tmp_path / f"r{i}", body) for i, body in enumerate([
        "1 Q0 10 1 1.0 a\n1 Q0 9 2 1.0 a\n1 Q0 100 3 1.0 a\n2 Q0 7 1 0.5 a\n2 Q0 70 2 0.5 a\n",
        "1 Q0 100 1 2.0 b\n1 Q0 9 2 1.0 b\n1 Q0 10 3 1.0 b\n2 Q0 0 1 3 b\n2 Q0 7 2 3 b\n",
    ])]
    args = ["-q", "-m", "map", "-m", "recip_rank", "-m", "P.1", "-m", "relstring.3"]
    expected = b"".join(subprocess.run([trec_eval, *args, qrels, run], capture_output=True, check=True).stdout
                        for run in runs)
    assert invoke(*args, qrels, *runs).stdout_bytes == expected


def test_duplicates_follow_the_policy_in_every_run(tmp_path, route):
    qrels, runs, _ = _variants(tmp_path, "ties")
    first = Path(runs[0]).read_text().splitlines(keepends=True)[0]
    doubled = write(tmp_path / "doubled.txt", first + Path(runs[0]).read_text())
    many = [runs[0], doubled, runs[1]]
    assert_fails(invoke("-m", "map", qrels, *many), f"{doubled}:2:", "already given at line 1")
    for policy in ("first", "max"):
        args = ["-m", "map", "-q", "--on-duplicate", policy, qrels]
        together = invoke(*args, *many)
        assert together.exit_code == 0, together.stderr
        assert together.stdout == "".join(invoke(*args, run).stdout for run in many)


@pytest.mark.parametrize("jobs", ["1", "2", "3"])
def test_a_bad_line_names_its_run_and_line_and_nothing_is_written(tmp_path, jobs, route):
    qrels, runs, _ = _variants(tmp_path, "graded")
    lines = Path(runs[0]).read_text().splitlines(keepends=True)
    middle = len(lines) // 2
    bad = write(tmp_path / "bad.txt", "".join(lines[:middle]) + "q1 Q0 d1 1 high myrun\n" + "".join(lines[middle:]))
    worse = write(tmp_path / "worse.txt", "q1 Q0 d1\n")
    many = runs[:2] + [bad] + runs[2:] + [worse]
    out = tmp_path / "out.txt"
    result = invoke("-m", "map", "--jobs", jobs, qrels, *many, "--output", out)
    assert_fails(result, f"{bad}:{middle + 1}:", "a finite number as the score in field 5, not 'high'")
    assert str(worse) not in result.stderr
    assert not out.exists()


def test_warnings_name_their_run(tmp_path):
    qrels, runs, _ = _variants(tmp_path, "sparse", all_queries=True)  # qrels queries without results
    result = invoke("-m", "map", qrels, runs[0], runs[2])
    assert result.exit_code == 0, result.stderr
    warned = [line for line in result.stderr.splitlines() if "skipped" in line]
    assert [line.split(": warning: ")[0] for line in warned] == [f"evaltool: {runs[0]}", f"evaltool: {runs[2]}"]


def test_evaluate_many_equals_evaluate_and_raises_the_first_failure(tmp_path, route):
    qrels, runs, _ = _variants(tmp_path, "docids")
    measures = ["map", "ndcg_cut.10", "bpref", "recall.5"]
    ev = Evaluator(qrels, measures, jobs=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        many = ev.evaluate_many(runs, per_query=True)
        alone = [evaluate(qrels, run, measures, per_query=True) for run in runs]
    assert [r.to_dict(True) for r in many] == [r.to_dict(True) for r in alone]
    bad = [write(tmp_path / f"bad{i}.txt", f"q1 Q0 d1 1 {score} r\n") for i, score in enumerate(["x", "inf"])]
    with pytest.raises(EvaltoolError, match=f"{bad[0]}:1:"):
        ev.evaluate_many([runs[0], bad[0], runs[1], bad[1]])


def test_standard_input_is_one_run_among_files(tmp_path):
    qrels, runs, _ = _variants(tmp_path, "ties")
    text = Path(runs[0]).read_text()
    together = invoke("-m", "map", "-q", qrels, runs[1], "-", runs[2], input=text)
    assert together.exit_code == 0, together.stderr
    assert together.stdout == "".join(invoke("-m", "map", "-q", qrels, run).stdout for run in (runs[1], runs[0], runs[2]))
    assert_fails(invoke("-m", "map", qrels, "-", runs[1], "-", input=text), "standard input ('-') holds one run")


def test_pyarrow_reads_the_runs_only_when_they_are_big_together(tmp_path, monkeypatch):
    qrels, runs, _ = _variants(tmp_path, "graded")
    read = []
    real = columnar.read_run
    monkeypatch.setattr(columnar, "read_run", lambda path, *a, **k: read.append(path) or real(path, *a, **k))
    plain = runs[:3]
    assert invoke("-m", "map", qrels, *plain).exit_code == 0
    assert read == []  # small together: each read as a single small run is
    monkeypatch.setattr(kinds, "MANY_COLUMNAR_BYTES", sum(Path(r).stat().st_size for r in plain))
    assert invoke("-m", "map", qrels, *plain).exit_code == 0
    assert sorted(map(str, read)) == sorted(plain)
