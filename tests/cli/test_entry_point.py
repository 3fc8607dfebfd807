"""The process policies that ``evaltool``'s entry point (:func:`evaltool.__main__.main`) sets
before the command line loads: here, numpy's huge pages (off unless the environment says)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
QRELS = str(ROOT / "data" / "qrels.txt")
RUN = str(ROOT / "data" / "run.txt")

# runs an evaluation through the entry point, then reports what numpy was told
CHILD = f"""
import json, os, sys
import evaltool.__main__ as entry
sys.argv = ["evaltool", "-m", "map", {QRELS!r}, {RUN!r}]
try:
    entry.main()
except SystemExit as exit:
    code = exit.code
import numpy
core = getattr(numpy, "_core", None) or numpy.core
print(json.dumps({{"code": code, "variable": os.environ.get("NUMPY_MADVISE_HUGEPAGE"),
                  "huge_pages": bool(core.multiarray._get_madvise_hugepage())}}))
"""


def entry_point_policy(**variables) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "NUMPY_MADVISE_HUGEPAGE"}
    env.update(PYTHONPATH=str(ROOT), **variables)
    done = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_numpy_arrays_go_on_ordinary_pages_in_the_program():
    report = entry_point_policy()
    assert report == {"code": 0, "variable": "0", "huge_pages": False}


def test_the_environment_chooses_huge_pages_when_it_asks_for_them():
    report = entry_point_policy(NUMPY_MADVISE_HUGEPAGE="1")
    assert report == {"code": 0, "variable": "1", "huge_pages": True}


def test_importing_the_entry_point_changes_nothing():
    env = {k: v for k, v in os.environ.items() if k != "NUMPY_MADVISE_HUGEPAGE"}
    done = subprocess.run(
        [sys.executable, "-c", "import os, evaltool.__main__; print(os.environ.get('NUMPY_MADVISE_HUGEPAGE'))"],
        env={**env, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True, check=True,
    )
    assert done.stdout.strip() == "None"
