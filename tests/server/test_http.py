"""``evaltool serve`` as a user runs it: a process on a free port, spoken to over real HTTP,
stopped by SIGTERM or Ctrl-C within 5 seconds; its messages for a port in use, a missing
history and a non-loopback address without a token."""

from __future__ import annotations

import json
import signal
import socket

import pytest

from tests.support.dashboard_data import build
from tests.support.server_process import Server, free_port
from tests.support.helpers import invoke


@pytest.fixture(scope="module")
def history_file(tmp_path_factory):
    db = str(tmp_path_factory.mktemp("served") / "history.sqlite")
    build(db)
    return db


def test_serve_over_http_and_stop_on_sigterm(history_file):
    server = Server("--db", history_file)
    try:
        server.wait_ready()
        status, headers, body = server.get("/api/report?date_from=2025-01-01&date_to=2025-01-31")
        assert status == 200 and headers["content-type"].startswith("application/json")
        expected = invoke("history", "report", "--db", history_file, "--from", "2025-01-01", "--to", "2025-01-31",
                          "--labels", "-o", "json")
        assert json.loads(body) == json.loads(expected.stdout)
        status, headers, body = server.get("/")
        assert status == 200 and b"Comparative report" in body and "'self'" in headers["content-security-policy"]
        status, _, body = server.get("/api/report?date_from=2025-02-31")
        assert status == 400 and "date_from" in json.loads(body)["error"]
        assert server.get("/static/plotly.min.js")[0] == 200
        idle = socket.create_connection(("127.0.0.1", server.port))  # a keep-alive client must not hold the stop
        code, stderr = server.stop(signal.SIGTERM, timeout=5)
        idle.close()
    finally:
        server.kill()
    assert code in (0, -signal.SIGTERM), (code, stderr)
    assert f"at http://127.0.0.1:{server.port}/" in stderr
    assert "Traceback" not in stderr and "not a loopback address" not in stderr


def test_ctrl_c_stops_it_and_an_open_address_without_token_warns(history_file):
    server = Server("--db", history_file, "--host", "0.0.0.0")
    try:
        server.wait_ready()
        code, stderr = server.stop(signal.SIGINT, timeout=5)
    finally:
        server.kill()
    assert "warning: --host 0.0.0.0 is not a loopback address and no --token is set" in stderr
    assert "readable by anyone who can reach it" in stderr
    assert "Traceback" not in stderr
    assert code in (0, 130), (code, stderr)


def test_with_a_token_no_warning_and_remote_recording(history_file, tmp_path):
    import urllib.request

    db = str(tmp_path / "new.sqlite")  # a server that records may start a new history
    server = Server("--db", db, "--host", "0.0.0.0", env={"EVALTOOL_TOKEN": "t0ken"})
    try:
        server.wait_ready()
        body = json.dumps({"summary": {"recip_rank": 0.5}, "per_query": {"a": {"recip_rank": 0.5}}}).encode()
        request = urllib.request.Request(f"{server.url}/api/executions?name=remote", data=body, method="POST",
                                         headers={"Authorization": "Bearer t0ken", "Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=30) as response:
            assert response.status == 201
            created = json.loads(response.read())
        assert server.get(created["url"])[0] == 401  # reading needs the token too
        status, _, stored = server.get(created["url"], {"Authorization": "Bearer t0ken"})
        assert status == 200 and json.loads(stored)["name"] == "remote"
        _, stderr = server.stop()
    finally:
        server.kill()
    assert "not a loopback address" not in stderr
    assert "writing needs a token: default (operator); reading needs a token too (--public-read opens it)" in stderr


def test_port_in_use_and_missing_history_are_one_message(history_file, tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        result = invoke("serve", "--db", history_file, "--port", port)
    assert result.exit_code == 2 and f"cannot listen on 127.0.0.1:{port}" in result.stderr, result.stderr
    assert "choose another --port" in result.stderr
    result = invoke("serve", "--db", tmp_path / "none.sqlite", "--port", free_port())
    assert result.exit_code == 2 and "no history there" in result.stderr, result.stderr
    assert not (tmp_path / "none.sqlite").exists()


def test_public_read_on_an_open_address_warns_which(history_file):
    server = Server("--db", history_file, "--host", "0.0.0.0", "--token", "ci=t0ken", "--public-read")
    try:
        server.wait_ready()
        assert server.get("/api/report")[0] == 200
        evil = server.get("/api/report", {"Host": "rebound.example"})
        assert evil[0] == 400 and b"does not answer for the host" in evil[2]  # DNS rebinding, over real HTTP
        _, stderr = server.stop()
    finally:
        server.kill()
    assert ("warning: --host 0.0.0.0 is not a loopback address and --public-read is set: the dashboard is "
            "readable by anyone who can reach it") in stderr
    assert "writing needs a token: ci (operator); reading is open to all who reach it (--public-read)" in stderr
