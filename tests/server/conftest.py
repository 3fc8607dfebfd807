"""Shared by the dashboard's tests: the extra must be installed, and a history of known numbers
(tests/dashboard_data.py) served in-process by Starlette's TestClient."""

from __future__ import annotations

import pytest

from tests.dashboard_data import build, dashboard_client, require_dashboard


@pytest.fixture(scope="module", autouse=True)
def _dashboard_installed():
    require_dashboard()


@pytest.fixture(scope="module")
def history_file(tmp_path_factory):
    """The dashboard history: its path and the ids of its executions by name."""
    db = str(tmp_path_factory.mktemp("dashboard") / "history.sqlite")
    return db, build(db)


@pytest.fixture(scope="module")
def client(history_file):
    """The dashboard over it without a token (read-only), in-process."""
    from evaltool.history import open_history
    from evaltool.server import create_app

    history = open_history(history_file[0])
    with dashboard_client(create_app(history)) as test_client:
        yield test_client
    history.close()
