"""The dashboard's addresses: every link keeps the page language, so a reader who chose Spanish stays there.

>>> link("/suites/helpdesk", "es", version=2)
'/suites/helpdesk?version=2&lang=es'
>>> execution_link(7)
'/executions/7'
"""

from __future__ import annotations

from urllib.parse import urlencode


def link(path: str, lang: str, **params) -> str:
    """``path`` with ``params`` (None ones left out) and the page language (left out when English)."""
    pairs = [(k, str(v)) for k, v in params.items() if v is not None]
    if lang != "en":
        pairs.append(("lang", lang))
    return path + ("?" + urlencode(pairs) if pairs else "")


def execution_link(execution_id, lang: str = "en") -> str:
    """The page of one execution."""
    return link(f"/executions/{int(execution_id)}", lang)


def calibration_link(model: str, human: str, lang: str = "en") -> str:
    """The calibration page of a model's set against people's (:mod:`evaltool.server.calibration`)."""
    return link("/judging/calibration", lang, model=model, human=human)
