"""What the command line loads: ``--help`` without numpy, a small evaluation without the
machinery built for big files or other inputs, and numpy with one BLAS thread.

Each case runs the command line in a fresh interpreter and reports the modules it
imported (no timing here: performance is measured by ``make bench``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
QRELS = str(ROOT / "data" / "qrels.txt")
RUN = str(ROOT / "data" / "run.txt")
CHILD = """
import json, os, runpy, sys
args, report = json.loads(sys.argv[1]), sys.argv[2]
sys.argv = ["evaltool", *args]
try:
    runpy.run_module("evaltool", run_name="__main__")
except SystemExit as exc:
    code = exc.code
with open(report, "w") as out:
    json.dump({"code": code, "modules": sorted(sys.modules), "blas": os.environ.get("OPENBLAS_NUM_THREADS")}, out)
"""
BLAS_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "GOTO_NUM_THREADS")


def loaded(tmp_path, *args, **env) -> dict:
    report = tmp_path / "report.json"
    environ = {k: v for k, v in os.environ.items() if k not in BLAS_VARIABLES}
    environ.update(PYTHONPATH=str(ROOT), **env)
    subprocess.run([sys.executable, "-c", CHILD, json.dumps(list(args)), str(report)], env=environ, cwd=tmp_path,
                   stdout=subprocess.DEVNULL, check=True)
    return json.loads(report.read_text())


def under(modules, *packages) -> list[str]:
    return [m for m in modules if m.split(".")[0] in packages or m.startswith(tuple(p + "." for p in packages))]


def test_help_imports_no_numerical_library(tmp_path):
    child = loaded(tmp_path, "--help")
    assert child["code"] == 0
    assert under(child["modules"], "numpy", "pyarrow", "scipy", "pandas") == []


@pytest.mark.parametrize("measures", [["-m", "map", "-m", "ndcg_cut.10", "-m", "P.10", "-m", "recip_rank"], []])
def test_a_small_evaluation_imports_only_what_it_uses(tmp_path, measures):
    child = loaded(tmp_path, QRELS, RUN, *measures)
    assert child["code"] == 0
    modules = child["modules"]
    assert "numpy" in modules
    # pyarrow is for big files, scipy for compare, numpy.ma for nothing (np.unique imports it on numpy >= 2.3)
    assert under(modules, "pyarrow", "scipy", "pandas", "numpy.ma", "sqlalchemy", "plotly") == []
    assert [m for m in modules if m in ("evaltool.io.topics", "evaltool.report.output", "evaltool.report.html",
                                        "evaltool.compare", "evaltool.history", "evaltool.io.stream")] == []
    # TREC files: no JSON readers, no judging machinery for queries files, no subtopic qrels
    assert [m for m in modules if m in ("evaltool.io.jsonl", "evaltool.relevance.token_f1",
                                        "evaltool.relevance.qrels", "evaltool.io.subtopics", "csv")] == []
    if measures:  # only the families that declare the measures asked for (ap, dcg, precision, rr)
        families = {m.rsplit(".", 1)[1] for m in modules if m.startswith("evaltool.measures.")}
        assert families - {"base", "sets", "restrict"} == {"ap", "dcg", "precision", "rr"}


def test_numpy_runs_one_blas_thread_unless_the_user_chose(tmp_path):
    assert loaded(tmp_path, "--help")["blas"] == "1"
    assert loaded(tmp_path, "--help", OPENBLAS_NUM_THREADS="3")["blas"] == "3"
    assert loaded(tmp_path, "--help", OMP_NUM_THREADS="2")["blas"] is None


def test_a_medium_run_with_text_ids_is_read_without_pyarrow_or_pandas(tmp_path):
    """A Robust-sized run (here 2.8 MB, text ids, ties) is parsed by the text reader: importing
    pyarrow (and, for a tie among text ids, pandas through pa.array) cost more than its parse."""
    lines = [f"{q} Q0 FBIS3-{q * 7919 + i} {i + 1} {100 - (i // 2) / 1000:.4f} robust\n"
             for q in range(301, 371) for i in range(1000)]
    (tmp_path / "run").write_text("".join(lines))
    (tmp_path / "qrels").write_text("".join(f"{q} 0 FBIS3-{q * 7919 + 5} 1\n{q} 0 LA-{q} 0\n" for q in range(301, 371)))
    assert (tmp_path / "run").stat().st_size > 2 << 20  # pyarrow read files from 2 MB on (and imported pandas here)
    child = loaded(tmp_path, "qrels", "run", "-m", "map", "-m", "recip_rank")
    assert child["code"] == 0
    assert under(child["modules"], "pyarrow", "pandas", "scipy") == []


COLLECTOR_CHILD = """
import atexit, gc, json, runpy, sys
args, report = json.loads(sys.argv[1]), sys.argv[2]
def at_exit():  # registered before the program's own: runs after them
    with open(report, "w") as out:
        json.dump({"threshold": gc.get_threshold(), "frozen": gc.get_freeze_count(), "enabled": gc.isenabled()}, out)
atexit.register(at_exit)
sys.argv = ["evaltool", *args]
runpy.run_module("evaltool", run_name="__main__")
"""


def test_the_program_collects_less_and_not_over_its_modules_at_exit(tmp_path):
    """Young collections every 10,000 new containers, not Python's 700; at exit the loaded
    objects are frozen (out of the final collections' view) after every other exit handler;
    the collector stays on."""
    report = tmp_path / "report.json"
    done = subprocess.run([sys.executable, "-c", COLLECTOR_CHILD, json.dumps([QRELS, RUN, "-m", "map"]), str(report)],
                          env=dict(os.environ, PYTHONPATH=str(ROOT)), cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("map ")
    child = json.loads(report.read_text())
    assert child["threshold"][0] == 10_000 and child["enabled"]
    assert child["frozen"] > 10_000  # every object of the loaded modules
