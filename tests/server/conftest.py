"""Shared by the dashboard's tests: the extra must be installed, and a history of known numbers
(tests/support/dashboard_data.py) served in-process by Starlette's TestClient, or by a real
``evaltool serve`` process (:func:`serve_dashboard`)."""

from __future__ import annotations

import pytest

from tests.support.dashboard_data import build, dashboard_client, require_dashboard
from tests.support.server_process import Server


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


@pytest.fixture(scope="module")
def serve_dashboard(tmp_path_factory):
    """``start(*options)``: a real ``evaltool serve --db HISTORY *options`` process on a free port
    over a fresh dashboard history, ready; its ``ids`` are the history's executions by name.
    Every server started is stopped when the module's tests are done."""
    servers = []

    def start(*options):
        db = str(tmp_path_factory.mktemp("served") / "history.sqlite")
        ids = build(db)
        server = Server("--db", db, *options)
        servers.append(server)
        server.wait_ready()
        server.ids = ids
        return server

    try:
        yield start
    finally:
        for server in servers:
            server.kill()
