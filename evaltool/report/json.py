"""JSON output: ``{"measures", "summary", "per_query" (with -q), "meta"}``."""

from __future__ import annotations

import json
import math

from evaltool.evaluation import EvalResult


def _finite(obj):
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(v) for v in obj]
    return obj


def dump_json(obj) -> str:
    """Any report object as indented JSON; nan and inf (which JSON lacks) become null."""
    return json.dumps(_finite(obj), indent=2, ensure_ascii=False) + "\n"


def format_json(result: EvalResult, per_query: bool = False) -> str:
    return dump_json(result.to_dict(per_query))
