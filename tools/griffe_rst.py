"""A griffe extension for the Python API pages: evaltool's docstrings are reStructuredText
(``literals``, :func:`roles`, doctest examples); the site renders Markdown. Each docstring
goes through the same conversion as the generated measure pages (tools/docs_reference.py):
roles become code, doctest examples fenced code blocks (``>>>`` would otherwise read as a
Markdown quote)."""

from __future__ import annotations

import sys
from pathlib import Path

import griffe

sys.path.insert(0, str(Path(__file__).resolve().parent))
from docs_reference import markdown


class RstDocstrings(griffe.Extension):
    def on_object(self, *, obj, **kwargs):
        if obj.docstring is not None and obj.docstring.value:
            obj.docstring.value = markdown(obj.docstring.value)
