"""What ``evaltool measures`` prints about named-parameter measures: names, aliases, parameters, formula."""

from __future__ import annotations

import textwrap

from evaltool.measures import NAMED_MEASURES
from evaltool.measures.base import Measure


def spellings(m: Measure) -> list[str]:
    """The aliases of ``m`` as they are written (``ndcg_at_k``, ``SetRelP = SetP(relative=True)``)."""
    out = []
    for alias in m.aliases:
        if isinstance(alias, str):
            out.append(alias)
        else:
            token, fixed = alias
            out.append(f"{token} = {m.name}({','.join(f'{k}={v!r}' for k, v in fixed.items())})")
    return out


def signature(m: Measure) -> str:
    """``nDCG(dcg, gains, judged_only, discount, ideal)@cutoff``: how the measure is written."""
    at = m.at_option
    named = [o.name for o in m.options if not o.at]
    text = m.name + (f"({', '.join(named)})" if named else "")
    if at is not None:
        text += f"@{at.name}" if at.required else f"[@{at.name}]"
    return text


def listing() -> list[str]:
    """One line per named-parameter measure: how it is written, its aliases, its first doc line."""
    lines = [f"{'named measure':<56}  {'aliases':<38}  description"]
    for m in NAMED_MEASURES.values():
        aliases = ", ".join(a if isinstance(a, str) else a[0] for a in m.aliases)
        lines.append(f"{signature(m):<56}  {aliases:<38}  {m.summary_line()}")
    return lines


def document(m: Measure) -> str:
    """The full text for ``evaltool measures -m NAME`` of a named-parameter measure."""
    first, _, rest = m.doc.strip("\n").partition("\n")
    lines = [m.name, f"  written: {signature(m)}  (ir_measures' syntax; the output is named as written)"]
    if m.aliases:
        lines.append(f"  aliases: {', '.join(spellings(m))}")
    lines.append("  parameters:" + ("" if m.options else " none"))
    lines += [f"    {o.describe()}" for o in m.options]
    lines.append(f"  summary: {m.agg.value}; per query: {'yes' if m.per_query else 'no'}")
    lines += ["", first.strip(), textwrap.dedent(rest).rstrip()]
    return "\n".join(lines).rstrip() + "\n"
