"""Tables as aligned text, CSV, Markdown and LaTeX. Formatting only.

A :class:`Report` is a few :class:`Table` s and notes (the query-set policy, a legend).
Cells are text, integers, floats or None (empty). Floats print with the table's
``digits`` in text, Markdown and LaTeX, and in full (``repr``) in CSV, which is for
programs; nan (no value) prints ``-nan`` everywhere, as trec_eval prints it (pandas'
``read_csv`` and Python's ``float`` read it back as nan). Every format escapes what it must, so that run names and query ids with
``& % _ # | , "`` and the like come back unchanged when the output is parsed:

* CSV: the ``csv`` module's quoting (RFC 4180); notes are left out.
* Markdown: a backslash before each of ``\\ ` * _ [ ] < > # | &``; notes are paragraphs.
* LaTeX: ``\\& \\% \\$ \\# \\_ \\{ \\}``, ``{[}``, ``\\textbackslash{}`` etc.; one ``tabular``
  per table (``\\hline`` rules, no packages needed); notes are ``%`` comments.
"""

from __future__ import annotations

import io
import math

from evaltool.report.trec import MISSING

FORMATS = ("table", "csv", "markdown", "latex")

MARKDOWN_SPECIAL = set("\\`*_[]<>#|&")
LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "[": "{[}",
    "]": "{]}",  # a row starting with '[' would be read as the optional argument of \\
}


# plain classes, not dataclasses: every command imports this module, and creating a dataclass
# costs a start-up about a millisecond
class Table:
    def __init__(self, header: list[str], rows: list[list], title: str | None = None, digits: int = 4):
        self.header, self.rows, self.title, self.digits = header, rows, title, digits


class Report:
    def __init__(self, tables: list[Table], notes: list[str] | None = None):
        self.tables, self.notes = tables, [] if notes is None else notes


def _is_number(value) -> bool:
    """Numbers, and text that reads as one (a p-value written 3.1e-06)."""
    if isinstance(value, str):
        try:
            float(value)
        except ValueError:
            return False
        return True
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def cell_text(value, digits: int = 4, exact: bool = False) -> str:
    """One cell as text: '' for None, integers as they are, floats rounded unless ``exact``, nan as trec_eval.

    >>> cell_text(2), cell_text(0.5), cell_text(float("nan")), cell_text(None)
    ('2', '0.5000', '-nan', '')
    """
    if value is None:
        return ""
    if isinstance(value, float):
        if math.isnan(value):
            return MISSING
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value) if exact else f"{value:.{digits}f}"
    return str(value)


def p_text(p) -> str:
    """A p-value as every report writes it (compare, ``history diff``, the dashboard): four
    decimals from 0.001 up, two significant digits in scientific notation below (0.0000
    would hide 2.3e-06; 0.00063 and 0.0006 would be one value written two ways); ``0`` for
    a p that underflowed to zero; '' when there is none, ``-nan`` when it is undefined.

    >>> [p_text(p) for p in (0.5, 0.0463, 0.0012, 0.00063, 2.3e-06, 0.0, None, float("nan"))]
    ['0.5000', '0.0463', '0.0012', '6.3e-04', '2.3e-06', '0', '', '-nan']
    """
    if p is None or p != p:
        return cell_text(p)
    if p == 0:
        return "0"
    return f"{p:.4f}" if p >= 1e-3 else f"{p:.1e}"


def _plain(text: str) -> str:
    """Control characters (a newline in a file name) would break the row: show them escaped."""
    return "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in text)


def escape_markdown(text: str) -> str:
    return "".join("\\" + ch if ch in MARKDOWN_SPECIAL else ch for ch in _plain(text))


def escape_latex(text: str) -> str:
    return "".join(LATEX_SPECIAL.get(ch, ch) for ch in _plain(text))


def _numeric_columns(table: Table) -> list[bool]:
    """A column is right-aligned when every filled cell in it is a number."""
    out = []
    for j in range(len(table.header)):
        filled = [row[j] for row in table.rows if row[j] is not None]
        out.append(bool(filled) and all(_is_number(v) for v in filled))
    return out


def _texts(table: Table, escape) -> tuple[list[str], list[list[str]]]:
    header = [escape(h) for h in table.header]
    rows = [[escape(cell_text(v, table.digits)) for v in row] for row in table.rows]
    return header, rows


def _shown(report: Report) -> list[Table]:
    """Text, Markdown and LaTeX leave out tables without rows (a check where all values hold)."""
    return [table for table in report.tables if table.rows]


def render_text(report: Report) -> str:
    blocks = []
    for table in _shown(report):
        header, rows = _texts(table, _plain)
        numeric = _numeric_columns(table)
        widths = [max(len(r[j]) for r in [header, *rows]) for j in range(len(header))]
        lines = [table.title] if table.title else []
        for row in [header, *rows]:
            cells = [c.rjust(w) if right else c.ljust(w) for c, w, right in zip(row, widths, numeric)]
            lines.append("  ".join(cells).rstrip())
        blocks.append("\n".join(lines))
    blocks += [_plain(note) for note in report.notes]
    return "\n\n".join(blocks) + "\n" if blocks else ""


def render_csv(report: Report) -> str:
    if len(report.tables) != 1:
        raise ValueError("a CSV report holds exactly one table")
    import csv

    table = report.tables[0]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(table.header)
    writer.writerows([cell_text(v, exact=True) for v in row] for row in table.rows)
    return out.getvalue()


def render_markdown(report: Report) -> str:
    blocks = []
    for table in _shown(report):
        header, rows = _texts(table, escape_markdown)
        rule = ["---:" if right else "---" for right in _numeric_columns(table)]
        lines = [f"**{escape_markdown(table.title)}**", ""] if table.title else []
        lines += ["| " + " | ".join(row) + " |" for row in [header, rule, *rows]]
        blocks.append("\n".join(lines))
    blocks += [escape_markdown(note) for note in report.notes]
    return "\n\n".join(blocks) + "\n" if blocks else ""


def render_latex(report: Report) -> str:
    blocks = []
    for table in _shown(report):
        header, rows = _texts(table, escape_latex)
        spec = "".join("r" if right else "l" for right in _numeric_columns(table))
        lines = [f"% {_plain(table.title)}"] if table.title else []
        lines += [f"\\begin{{tabular}}{{{spec}}}", "\\hline", " & ".join(header) + " \\\\", "\\hline"]
        lines += [" & ".join(row) + " \\\\" for row in rows]
        lines += ["\\hline", "\\end{tabular}"]
        blocks.append("\n".join(lines))
    blocks += ["\n".join(f"% {line}" for line in _plain(note).splitlines()) for note in report.notes]
    return "\n\n".join(blocks) + "\n" if blocks else ""


RENDERERS = {"table": render_text, "csv": render_csv, "markdown": render_markdown, "latex": render_latex}


def render(report: Report, fmt: str) -> str:
    return RENDERERS[fmt](report)
