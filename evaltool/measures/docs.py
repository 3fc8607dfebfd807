"""What ``evaltool measures`` prints: every measure's names, parameters and documentation, as plain text.

Docstrings are written in reStructuredText for Sphinx and doctest; a terminal gets them
without the markup (``-c`` instead of ````-c````, no ``====`` table rules), and tables
whose columns fit their widest cell, however long a default is.

>>> plain("Gains as ``-m ndcg.1=3`` gives, see :func:`~evaltool.evaluate`.")
'Gains as -m ndcg.1=3 gives, see evaltool.evaluate.'
>>> print("\\n".join(table([("name", "default"), ("P", "5,10,15,20,30,100,200,500,1000"), ("map", "")])))
name  default
P     5,10,15,20,30,100,200,500,1000
map
"""

from __future__ import annotations

import re
import textwrap

from evaltool.measures import MEASURES, NAMED_MEASURES, NICKNAMES
from evaltool.measures.base import Measure, Params

_ROLE = re.compile(r":[a-z]+:`~?([^`]+)`")
_LITERAL = re.compile(r"``([^`]+)``")
_RULE = re.compile(r"^\s*=+(\s+=+)*\s*$")


def plain(text: str) -> str:
    """``text`` without reStructuredText markup: literals and roles as their text, table rules dropped."""
    text = _LITERAL.sub(r"\1", _ROLE.sub(r"\1", text))
    return "\n".join(line for line in text.split("\n") if not _RULE.match(line))


def table(rows) -> list[str]:
    """Rows of cells as lines, each column as wide as its widest cell, two spaces apart."""
    rows = [tuple(str(cell) for cell in row) for row in rows]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in rows]


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


def _defaults(m: Measure) -> str:
    return ",".join(f"{v:g}" if isinstance(v, float) else str(v) for v in m.default)


def _equivalent(m: Measure) -> str:
    """``nDCG@k`` for ``ndcg_cut``: the named spelling of a trec_eval measure, '' if none."""
    if m.equivalent is None:
        return ""
    name, fixed = m.equivalent
    text = name + (f"({','.join(f'{k}={v!r}' for k, v in fixed.items())})" if fixed else "")
    return text + ("@k" if m.params is Params.CUTOFFS else "")


def listing() -> list[str]:
    """Every measure: trec_eval's (name, parameters, same as, first doc line), nicknames, then the named ones."""
    trec = [("measure", "parameters (default)", "same as", "description")]
    for m in MEASURES.values():
        defaults = _defaults(m)
        trec.append(
            (m.name, m.params.value + (f" ({defaults})" if defaults else ""), _equivalent(m), plain(m.summary_line()))
        )
    named = [("named measure", "aliases", "description")]
    for m in NAMED_MEASURES.values():
        aliases = ", ".join(a if isinstance(a, str) else a[0] for a in m.aliases)
        named.append((signature(m), aliases, plain(m.summary_line())))
    nicknames = "nicknames: " + "; ".join(f"{k} ({len(v)} measures)" for k, v in NICKNAMES.items())
    return [*table(trec), "", nicknames, "", *table(named)]


def _body(m: Measure) -> list[str]:
    first, _, rest = m.doc.strip("\n").partition("\n")
    return ["", plain(first.strip()), plain(textwrap.dedent(rest)).rstrip()]


def document(m: Measure) -> str:
    """The full text for ``evaltool measures -m NAME``: how it is written, parameters, summary, docstring."""
    if m.params is not Params.NAMED:
        defaults = _defaults(m)
        lines = [m.name, f"  parameters: {m.params.value}{f' (default {defaults})' if defaults else ''}"]
        if m.equivalent is not None:
            lines.append(f"  same as: {_equivalent(m)} (ir_measures' syntax)")
    else:
        lines = [m.name, f"  written: {signature(m)}  (ir_measures' syntax; the output is named as written)"]
        if m.aliases:
            lines.append(f"  aliases: {', '.join(spellings(m))}")
        lines.append("  parameters:" + ("" if m.options else " none"))
        lines += [f"    {plain(o.describe())}" for o in m.options]
    lines.append(f"  summary: {m.agg.value}; per query: {'yes' if m.per_query else 'no'}")
    return "\n".join(lines + _body(m)).rstrip() + "\n"
