"""A griffe extension for the Python API pages: evaltool's docstrings are reStructuredText
(``literals``, :func:`roles`, doctest examples), with numpydoc sections (Parameters, Returns,
Raises, Examples) in the public functions; the site renders Markdown. Each docstring's numpydoc
sections become a bold title and a table (an entry per parameter, return value or exception;
Examples and the others their text), then the whole goes through the same conversion as the
generated measure pages (tools/docs_reference.py): roles become code, doctest examples fenced
code blocks (``>>>`` would otherwise read as a Markdown quote). A docstring without sections
is left as it was: griffe's own numpy parser is not used, so nothing else of the RST text is
read as a section."""

from __future__ import annotations

import re
import sys
import textwrap
from pathlib import Path

import griffe

sys.path.insert(0, str(Path(__file__).resolve().parent))
from docs_reference import markdown

# section title -> the header of its table (None: the section's text as it is)
SECTIONS = {
    "Parameters": ("Parameter", "Type", "Description"),
    "Other Parameters": ("Parameter", "Type", "Description"),
    "Returns": ("Type", "Description"),
    "Yields": ("Type", "Description"),
    "Raises": ("Exception", "When"),
    "Warns": ("Warning", "When"),
    "Examples": None,
    "Notes": None,
    "See Also": None,
}
UNDERLINE = re.compile(r"^-{3,}$")


def _is_title(lines: list[str], i: int) -> bool:
    return (
        lines[i] in SECTIONS and i + 1 < len(lines) and bool(UNDERLINE.match(lines[i + 1]))
        and len(lines[i + 1]) >= len(lines[i]) - 1
    )


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _entries(title: str, body: list[str]) -> list[str]:
    """The lines of one Parameters / Returns / Raises section as a Markdown table."""
    entries: list[tuple[str, list[str]]] = []
    for line in body:
        if line.strip() and not line.startswith((" ", "\t")):
            entries.append((line.strip(), []))
        elif line.strip() and entries:
            entries[-1][1].append(line.strip())
    header = SECTIONS[title]
    rows = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for head, description in entries:
        text = _cell(" ".join(description))
        if len(header) == 3:
            name, _, kind = head.partition(" : ")
            names = ", ".join(f"`{n.strip()}`" for n in name.split(","))
            rows.append(f"| {names} | {_cell(kind.strip())} | {text} |")
        else:
            name, _, kind = head.partition(" : ")
            shown = f"`{name}`: {kind}" if kind else (f"`{name}`" if title in ("Raises", "Warns") else name)
            rows.append(f"| {_cell(shown)} | {text} |")
    return rows


def numpy_sections(doc: str) -> str:
    """``doc`` with its numpydoc sections as Markdown (a docstring without any comes back as it was).

    >>> print(numpy_sections("Add.\\n\\n    Parameters\\n    ----------\\n    a, b : int\\n        The terms.\\n"))
    Add.
    <BLANKLINE>
    **Parameters**
    <BLANKLINE>
    | Parameter | Type | Description |
    |---|---|---|
    | `a`, `b` | int | The terms. |
    <BLANKLINE>
    """
    first, _, rest = doc.strip("\n").partition("\n")
    lines = [first.strip(), *textwrap.dedent(rest).split("\n")]
    if not any(_is_title(lines, i) for i in range(len(lines))):
        return doc
    out: list[str] = []
    i = 0
    while i < len(lines):
        if not _is_title(lines, i):
            out.append(lines[i])
            i += 1
            continue
        title, i = lines[i], i + 2
        body = []
        while i < len(lines) and not _is_title(lines, i):
            body.append(lines[i])
            i += 1
        while body and not body[-1].strip():
            body.pop()
        out += [f"**{title}**", ""]
        out += body if SECTIONS[title] is None else _entries(title, body)
        out.append("")
    return "\n".join(out)


class RstDocstrings(griffe.Extension):
    def on_object(self, *, obj, **kwargs):
        if obj.docstring is not None and obj.docstring.value:
            obj.docstring.value = markdown(numpy_sections(obj.docstring.value))
