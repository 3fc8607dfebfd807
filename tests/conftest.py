"""Shared fixtures: every reading mode the core has, for suites that must pass in all of them;
the trec_eval oracle binary; a real browser for the dashboard's and the HTML reports' pages."""

from __future__ import annotations

import pytest

from tests.support.browser import headless_chromium
from tests.support.helpers import require_program

MODES = ("memory", "columnar", "stream")


@pytest.fixture(params=MODES)
def reading_mode(request, monkeypatch):
    """Returns extra CLI arguments; patches thresholds so small test files take each path.

    memory:   the line reader (files under the columnar threshold)
    columnar: pyarrow's reader for any file size (irregular files fall back to lines)
    stream:   --stream with tiny chunks, blocks and hash partitions
    """
    from evaltool.io import kinds, stream

    if request.param == "columnar":
        monkeypatch.setattr(kinds, "COLUMNAR_MIN_BYTES", 0)
        return []
    if request.param == "stream":
        monkeypatch.setattr(stream, "CHUNK_ROWS", 97)
        monkeypatch.setattr(stream, "BLOCK_BYTES", 4096)
        monkeypatch.setattr(stream, "BUCKET_BYTES", 8192)
        return ["--stream"]
    return []


@pytest.fixture(scope="session")
def trec_eval() -> str:
    """Path of the NIST trec_eval 10.0 binary on PATH (skips locally, fails under CI=true without it)."""
    return require_program("trec_eval", "build NIST trec_eval 10.0 with ../shared/tools/build-trec-eval, "
                                        "which prints its path, and put that folder on PATH")


@pytest.fixture(scope="module")
def browser():
    """A headless Chromium (tests/support/browser.py) that records console messages and network requests."""
    yield from headless_chromium()
