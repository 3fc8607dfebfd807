"""evaltool serve: the evaluation history as a dashboard and a JSON API (Starlette on uvicorn).

* :mod:`~evaltool.server.views`: one function per view, parameters in, a dict out; the
  registry of views with their addresses and parameters.
* :mod:`~evaltool.server.pages`: each view's dict as an HTML page.
* :mod:`~evaltool.server.app`: the ASGI app (routes, errors, security headers, assets,
  recording with a bearer token); :func:`create_app`.
* :mod:`~evaltool.server.params`, :mod:`~evaltool.server.openapi`: parameters declared
  once, parsed and described.
* :mod:`~evaltool.server.run`: serving with uvicorn until SIGTERM or Ctrl-C.

Starlette, uvicorn and plotly are the ``dashboard`` extra: ``pip install 'evaltool[dashboard]'``.
"""

from __future__ import annotations

DASHBOARD_HINT = "the dashboard needs Starlette, uvicorn and plotly: pip install 'evaltool[dashboard]'"


def create_app(history, **settings):
    """The ASGI app over an open history (see :func:`evaltool.server.app.create_app`)."""
    from evaltool.errors import EvaltoolError

    try:
        from evaltool.server.app import create_app as create
    except ImportError as exc:
        raise EvaltoolError(f"{DASHBOARD_HINT} ({exc})") from None
    return create(history, **settings)
