"""JSON output: ``{"measures", "summary", "per_query" (with -q), "meta"}``."""

from __future__ import annotations

import json
import math

from evaltool.evaluate import EvalResult


def _finite(obj):
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_finite(v) for v in obj]
    return obj


def format_json(result: EvalResult, per_query: bool = False) -> str:
    return json.dumps(_finite(result.to_dict(per_query)), indent=2, ensure_ascii=False) + "\n"
