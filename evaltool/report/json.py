"""JSON output, the one writer: any report object as indented JSON, nan and inf as ``null``.

``EvalResult.to_json``, ``Comparison.to_json`` and every ``-o json`` of the command line
write through :func:`dump_json`, so the library and the CLI give the same bytes.

>>> print(dump_json({"map": float("nan"), "P_5": 0.4}), end="")
{
  "map": null,
  "P_5": 0.4
}
"""

from __future__ import annotations

import json
import math


def _finite(obj):
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(v) for v in obj]
    return obj


def dump_json(obj, indent: int | None = 2) -> str:
    """``obj`` as JSON text ending in a newline; nan and inf (which JSON lacks) become null.

    ``indent=None`` writes one line (a JSONL record).
    """
    return json.dumps(_finite(obj), indent=indent, ensure_ascii=False, allow_nan=False) + "\n"
