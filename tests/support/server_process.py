"""``evaltool serve`` as a real process on a free local port, for the HTTP and browser tests."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Server:
    """``python -m evaltool serve ARGS`` started in its own process group; ``url`` once it answers."""

    def __init__(self, *args: str, port: int | None = None, env: dict | None = None):
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        environment = {**os.environ, "PYTHONPATH": str(ROOT)}
        environment.pop("EVALTOOL_TOKEN", None)  # a token only when the test gives one
        environment.update(env or {})
        self.process = subprocess.Popen([sys.executable, "-m", "evaltool", "serve", "--port", str(self.port), *args],
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment,
                                        start_new_session=True)

    def wait_ready(self, timeout: float = 60) -> "Server":
        """Until the server answers (or its process ends: then AssertionError with what it printed)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"evaltool serve exited {self.process.returncode}: {self.process.stderr.read()}")
            try:
                with urllib.request.urlopen(f"{self.url}/api/suites", timeout=5):
                    return self
            except urllib.error.HTTPError:  # an answer (401 where reading needs a token): it is up
                return self
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                time.sleep(0.2)
        raise AssertionError(f"evaltool serve did not answer on {self.url} within {timeout} s")

    def get(self, path: str, headers: dict | None = None) -> tuple[int, dict, bytes]:
        try:
            request = urllib.request.Request(f"{self.url}{path}", headers=headers or {})
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, dict(response.headers), response.read()
        except urllib.error.HTTPError as error:
            return error.code, dict(error.headers), error.read()

    def stop(self, how: int = signal.SIGTERM, timeout: float = 5) -> tuple[int, str]:
        """Send ``how``; the exit code and stderr once the process ended (TimeoutExpired past ``timeout``)."""
        if self.process.poll() is None:
            self.process.send_signal(how)
        _, stderr = self.process.communicate(timeout=timeout)
        return self.process.returncode, stderr

    def kill(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.communicate()
