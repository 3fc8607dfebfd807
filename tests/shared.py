"""The one place tests find what lives outside the package: ../shared (specification,
conformance and real data) and external programs (the trec_eval oracle).

Locally, tests that need one skip with a reason when it is missing; under CI=true they fail.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def shared_dir() -> Path | None:
    candidates = [os.environ.get("EVALTOOL_SHARED"), ROOT.parent / "shared", ROOT / "shared"]
    for candidate in candidates:
        if candidate and Path(candidate, "conformance").is_dir():
            return Path(candidate)
    return None


def require_program(name: str, hint: str) -> str:
    """Path of an executable on PATH; skip (locally) or fail (CI=true) when there is none."""
    path = shutil.which(name)
    if path is None:
        missing(f"{name} is not on PATH: {hint}")
    return path


def require_shared(*parts: str) -> Path:
    """Path inside ../shared; skip (locally) or fail (CI=true) when it is not there."""
    base = shared_dir()
    path = base.joinpath(*parts) if base else None
    if path is None or not path.exists():
        missing(f"../shared/{'/'.join(parts)} not found next to the repository (set EVALTOOL_SHARED)")
    return path


def missing(reason: str):
    """A component a test needs is not there: skip locally with the reason, fail under CI=true."""
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(reason)
    pytest.skip(reason)
