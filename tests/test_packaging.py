"""The package people install: the sdist and the wheel build, the wheel carries its data, and
installed in a fresh virtual environment it evaluates from outside the source tree.

The wheel is built as ``make dist`` builds it (``python -m build``: the sdist, then the wheel
from the unpacked sdist), without an isolated build environment so that no network is needed
(setuptools comes with the ``docs`` extra). The fresh environment gets evaltool from the wheel
only; its dependencies (numpy, pyarrow, ...) are lent by the test's own environment through a
path file, so the test runs offline, and evaltool's own import must come from the wheel.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import venv
import zipfile
from pathlib import Path

import pytest

from tests.support.helpers import ROOT

pytest.importorskip("build", reason="the docs extra (make test-deps installs it)")


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    done = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(ROOT)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return out


def _one(dist: Path, pattern: str) -> Path:
    found = sorted(dist.glob(pattern))
    assert len(found) == 1, found
    return found[0]


def test_the_wheel_carries_the_package_data_and_the_metadata(dist):
    wheel = _one(dist, "evaltool-*.whl")
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        metadata = z.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
        entry_points = z.read(next(n for n in names if n.endswith(".dist-info/entry_points.txt"))).decode()
    # the dashboard's and the HTML report's assets, the interface's translations
    for path in ("evaltool/report/assets/evaltool.js", "evaltool/report/assets/evaltool.css",
                 "evaltool/report/i18n.py", "evaltool/server/app.py", "evaltool/__main__.py", "evaltool/py.typed",
                 "evaltool/bench/data/bench_corpus.jsonl"):
        assert path in names, path
    assert not any(n.startswith(("tests/", "docs/", "tools/")) for n in names)
    assert "evaltool = evaltool.__main__:main" in entry_points
    for requirement in ("click", "numpy", "pyarrow", "scipy", "sqlalchemy"):
        assert f"Requires-Dist: {requirement}" in metadata, requirement
    assert "Provides-Extra: dashboard" in metadata and "Provides-Extra: postgres" in metadata
    assert "License-Expression: MIT" in metadata and "Classifier: Typing :: Typed" in metadata
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)


def test_the_sdist_has_what_the_wheel_is_built_from(dist):
    sdist = _one(dist, "evaltool-*.tar.gz")
    with tarfile.open(sdist) as t:
        names = {n.split("/", 1)[1] for n in t.getnames() if "/" in n}
    assert {"pyproject.toml", "README.md", "LICENSE", "evaltool/report/assets/evaltool.js"} <= names


def test_the_wheel_installed_in_a_fresh_venv_evaluates(dist, tmp_path):
    wheel = _one(dist, "evaltool-*.whl")
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)  # ensurepip: pip from the standard library, offline
    python = env_dir / "bin" / "python"
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    # from the wheel only (no index): the console script is written for the fresh interpreter
    done = subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--no-index", "--no-deps", str(wheel)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    # the dependencies lent by the test's environment, after the fresh site-packages: its .pth
    # files (the editable evaltool among them) are not read from a directory a path file names
    lender = next(p for p in map(Path, sys.path) if p.name == "site-packages" and (p / "numpy").is_dir())
    (site / "zz_dependencies.pth").write_text(f"{lender}\n")

    work = tmp_path / "elsewhere"
    work.mkdir()
    (work / "qrels.txt").write_text((ROOT / "data" / "qrels.txt").read_text())
    (work / "run.txt").write_text((ROOT / "data" / "run.txt").read_text())
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}

    where = subprocess.run([str(python), "-c", "import evaltool; print(evaltool.__file__)"], cwd=work,
                           capture_output=True, text=True, env=clean)
    assert Path(where.stdout.strip()).is_relative_to(env_dir), where.stdout + where.stderr

    script = env_dir / "bin" / "evaltool"
    console = subprocess.run([str(script), "qrels.txt", "run.txt", "-m", "map", "-o", "json"], cwd=work,
                             capture_output=True, text=True, env=clean)
    assert console.returncode == 0, console.stderr
    module = subprocess.run([str(python), "-m", "evaltool", "qrels.txt", "run.txt", "-m", "map", "-o", "json"],
                            cwd=work, capture_output=True, text=True, env=clean)
    assert module.returncode == 0, module.stderr
    assert json.loads(console.stdout) == json.loads(module.stdout)

    from evaltool import evaluate, read_qrels, read_run

    expected = evaluate(read_qrels(ROOT / "data" / "qrels.txt"), read_run(ROOT / "data" / "run.txt"), ["map"])
    assert json.loads(console.stdout)["summary"]["map"] == expected.summary["map"]

    # the bundled example backend, its corpus read from the installed package
    (work / "queries.json").write_text((ROOT / "data" / "bench_queries.json").read_text())
    bench = subprocess.run([str(script), "bench", "queries.json", "--backend", "evaltool.bench.examples:bm25_search",
                            "--out", "results"], cwd=work, capture_output=True, text=True, env=clean)
    assert bench.returncode == 0, bench.stdout[-2000:] + bench.stderr[-2000:]
    assert "Every expected id is in the corpus (35 ids)" in bench.stdout
    assert list((work / "results").glob("baseline_*.json"))

    version = subprocess.run([str(script), "--version"], cwd=work, capture_output=True, text=True, env=clean)
    assert version.returncode == 0 and "0." in version.stdout
