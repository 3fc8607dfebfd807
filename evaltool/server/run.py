"""Serving: the history opened once, the socket bound before the server starts (so a port in use is
one message, not a log of uvicorn's), and uvicorn stopping within seconds on SIGTERM or Ctrl-C.

>>> is_loopback("127.0.0.1"), is_loopback("::1"), is_loopback("localhost"), is_loopback("0.0.0.0")
(True, True, True, False)
"""

from __future__ import annotations

import ipaddress
import socket

from evaltool.errors import EvaltoolError

GRACE_SECONDS = 2  # open connections get this long to finish once a stop is asked for


def is_loopback(host: str) -> bool:
    """Whether every address ``host`` names is a loopback one (127.0.0.0/8, ::1)."""
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        pass
    try:
        found = socket.getaddrinfo(host, None)
    except OSError:
        return False
    return bool(found) and all(ipaddress.ip_address(entry[4][0].split("%")[0]).is_loopback for entry in found)


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host``:``port``; EvaltoolError naming the address when it cannot be had."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host.strip("[]"), port, type=socket.SOCK_STREAM)[0]
    except OSError as exc:
        raise EvaltoolError(f"--host {host}: cannot resolve it ({exc.strerror or exc})") from None
    listening = socket.socket(family, kind, proto)
    try:
        listening.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listening.bind(address)
        listening.listen(128)
    except OSError as exc:
        listening.close()
        raise EvaltoolError(
            f"cannot listen on {host}:{port}: {exc.strerror or exc}"
            + ("; choose another --port" if exc.errno == 98 else "")
        ) from None
    return listening


def serve(app, listening: socket.socket) -> None:
    """Run ``app`` on the bound socket until SIGTERM or Ctrl-C (uvicorn's handlers; open
    connections get :data:`GRACE_SECONDS`)."""
    import uvicorn

    config = uvicorn.Config(
        app,
        log_level="warning",
        access_log=False,
        lifespan="off",
        timeout_graceful_shutdown=GRACE_SECONDS,
        server_header=False,
    )
    uvicorn.Server(config).run(sockets=[listening])
