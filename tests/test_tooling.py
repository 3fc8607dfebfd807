"""Lint, format and type check of the package, run by the suite so that every full run catches a violation.

The rules are in pyproject.toml ([tool.ruff], [tool.mypy]); both tools are in the ``test`` extra.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *args], cwd=REPO, capture_output=True, text=True, timeout=1800)


def test_ruff_finds_nothing_in_the_package():
    done = _run("ruff", "check", "--no-cache", "--output-format", "concise", "evaltool")
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_package_is_formatted_as_ruff_formats_it():
    """One layout for everyone's code, so a change's diff shows what it changes (``ruff format evaltool`` fixes it)."""
    done = _run("ruff", "format", "--check", "--no-cache", "evaltool")
    assert done.returncode == 0, done.stdout + done.stderr


def test_mypy_finds_nothing_in_the_package():
    done = _run("mypy")  # packages = ["evaltool"] in pyproject.toml
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Success" in done.stdout
