"""The package people install: the sdist and the wheel build, the wheel carries its data, and
installed in a fresh virtual environment it evaluates from outside the source tree.

The wheel is built as ``make dist`` builds it (``python -m build``: the sdist, then the wheel
from the unpacked sdist), without an isolated build environment so that no network is needed
(setuptools comes with the ``docs`` extra); ``twine check`` reads both as PyPI would. The fresh
environment gets evaltool from the wheel only; its dependencies (numpy, pyarrow, ...) are lent
by the test's own environment through a path file, so the test runs offline, and evaltool's own
import must come from the wheel. httpx is not lent at first: ``evaltool bench`` over HTTP needs
the ``http`` extra (httpx's cancellable requests), and without it says so; lent afterwards (as
``pip install 'evaltool[http]'`` would add it), a benchmark over HTTP runs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import threading
import venv
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlparse

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


def test_twine_finds_the_sdist_and_the_wheel_fit_for_an_index(dist):
    pytest.importorskip("twine", reason="the test extra (make test-deps installs it)")
    files = [str(_one(dist, "evaltool-*.tar.gz")), str(_one(dist, "evaltool-*.whl"))]
    done = subprocess.run([sys.executable, "-m", "twine", "check", "--strict", *files], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert done.stdout.count("PASSED") == 2, done.stdout


def test_the_http_extra_is_declared_with_httpx(dist):
    with zipfile.ZipFile(_one(dist, "evaltool-*.whl")) as z:
        metadata = z.read(next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))).decode()
    assert "Provides-Extra: http" in metadata
    assert any(line.startswith("Requires-Dist: httpx") and 'extra == "http"' in line for line in metadata.splitlines())
    core = [line for line in metadata.splitlines() if line.startswith("Requires-Dist:") and "extra ==" not in line]
    assert not any("httpx" in line for line in core), core


def _lend(source: Path, into: Path, keep) -> Path:
    """A directory of links to the entries of ``source`` that ``keep`` accepts (a site-packages lent in part)."""
    into.mkdir()
    for entry in source.iterdir():
        if keep(entry.name):
            (into / entry.name).symlink_to(entry)
    return into


class Search(BaseHTTPRequestHandler):
    """GET /search?q=...&limit=N: the bundled BM25 example's ids as a JSON list."""

    def do_GET(self):
        from evaltool.bench.examples import bm25_search

        asked = parse_qs(urlparse(self.path).query)
        body = json.dumps([doc for doc, _ in bm25_search(asked["q"][0], limit=int(asked["limit"][0]))]).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


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
    lent = _lend(lender, tmp_path / "lent", lambda name: not name.startswith("httpx"))
    (site / "zz_dependencies.pth").write_text(f"{lent}\n")

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

    # over HTTP: without the http extra, a clear message and exit 2 before any query is sent
    server = ThreadingHTTPServer(("127.0.0.1", 0), Search)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/search"
    try:
        without = subprocess.run([str(script), "bench", "queries.json", "--backend", url, "--out", "over-http"],
                                 cwd=work, capture_output=True, text=True, env=clean)
        assert without.returncode == 2, without.stdout[-2000:] + without.stderr[-2000:]
        assert "pip install 'evaltool[http]'" in without.stderr and "Traceback" not in without.stderr
        assert not (work / "over-http").exists() or not list((work / "over-http").glob("baseline_*.json"))
        # with it (httpx lent as the extra would install it), the same benchmark runs over HTTP
        _lend(lender, tmp_path / "http-extra", lambda name: name.startswith("httpx"))
        (site / "zz_http_extra.pth").write_text(f"{tmp_path / 'http-extra'}\n")
        over_http = subprocess.run([str(script), "bench", "queries.json", "--backend", url, "--out", "over-http"],
                                   cwd=work, capture_output=True, text=True, env=clean)
    finally:
        server.shutdown()
    assert over_http.returncode == 0, over_http.stdout[-2000:] + over_http.stderr[-2000:]
    report = json.loads(next((work / "over-http").glob("baseline_*.json")).read_text())
    local = json.loads(next((work / "results").glob("baseline_*.json")).read_text())
    assert report["aggregate_metrics"] == local["aggregate_metrics"]   # the same search, reached over HTTP

    version = subprocess.run([str(script), "--version"], cwd=work, capture_output=True, text=True, env=clean)
    assert version.returncode == 0 and "0." in version.stdout
