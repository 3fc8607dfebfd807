"""The history suite runs on both backends: a SQLite file, and a throwaway PostgreSQL cluster.

The cluster is made once per session with the server's own tools (initdb, pg_ctl from
PATH or Debian's /usr/lib/postgresql/*/bin), on a free local port with its socket in a
temporary folder, as the ``postgres`` user when the tests run as root (the server refuses
root). Each test gets a new database in it. When no server can be started the PostgreSQL
cases skip with the reason, and fail under CI=true (tests/support/helpers.py).
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import uuid

import pytest

from tests.support.helpers import missing


def _server_bin() -> str | None:
    found = shutil.which("initdb")
    if found:
        return os.path.dirname(found)
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                      key=lambda p: int(p.split("/")[-3]) if p.split("/")[-3].isdigit() else 0)
    return os.path.dirname(versions[-1]) if versions else None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Cluster:
    """A PostgreSQL cluster in a temporary folder, started and stopped by the tools of ``bindir``."""

    def __init__(self, bindir: str):
        self.bindir = bindir
        self.folder = tempfile.mkdtemp(prefix="evaltool-pg-")
        self.data = os.path.join(self.folder, "data")
        self.port = _free_port()
        self.prefix: list[str] = []
        if os.geteuid() == 0:
            import pwd

            try:
                owner = pwd.getpwnam("postgres")
            except KeyError:
                raise RuntimeError("running as root and there is no 'postgres' user to run the server as") from None
            os.chown(self.folder, owner.pw_uid, owner.pw_gid)
            self.prefix = ["runuser", "-u", "postgres", "--"]

    def _run(self, *args: str) -> None:
        done = subprocess.run([*self.prefix, *args], capture_output=True, text=True, timeout=120, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(args[:2])} failed: {(done.stderr or done.stdout).strip()[-400:]}")

    def start(self) -> None:
        self._run(os.path.join(self.bindir, "initdb"), "-D", self.data, "-U", "postgres", "-A", "trust",
                  "--no-sync", "-E", "UTF8", "--locale=C")
        options = f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1 -c fsync=off"
        self._run(os.path.join(self.bindir, "pg_ctl"), "-D", self.data, "-o", options,
                  "-l", os.path.join(self.folder, "server.log"), "-w", "-t", "60", "start")

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def create_database(self) -> str:
        import psycopg

        name = f"history_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def stop(self) -> None:
        try:
            self._run(os.path.join(self.bindir, "pg_ctl"), "-D", self.data, "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres_cluster():
    """A running cluster, or the reason there is none (the PostgreSQL cases skip, or fail in CI, with it)."""
    bindir = _server_bin()
    if bindir is None:
        yield "PostgreSQL server binaries (initdb, pg_ctl) not found; install Debian's postgresql package"
        return
    try:
        import psycopg  # noqa: F401
    except ImportError:
        yield "the psycopg driver is not installed: pip install 'evaltool[postgres]'"
        return
    cluster = Cluster(bindir)
    try:
        cluster.start()
    except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
        shutil.rmtree(cluster.folder, ignore_errors=True)
        yield f"cannot start a PostgreSQL cluster: {exc}"
        return
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def postgres_url(postgres_cluster):
    """A URL of a new, empty database on the session's cluster."""
    if isinstance(postgres_cluster, str):
        missing(postgres_cluster)
    return postgres_cluster.create_database()


@pytest.fixture(params=["sqlite", "postgresql"])
def db(request, tmp_path):
    """Where a test's history lives: a SQLite file, or a PostgreSQL database (skipped without a server)."""
    if request.param == "sqlite":
        return str(tmp_path / "history.sqlite")
    return request.getfixturevalue("postgres_url")
