"""Reading back the HTML evaltool writes: tables as text cells, charts as their plotly figures, scripts."""

from __future__ import annotations

import json
from html.parser import HTMLParser


class Page(HTMLParser):
    """Tables (rows of cell texts, header included), figures (data-figure JSON), scripts and
    every URL-bearing attribute of one HTML page, as a browser's parser would read them."""

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.tables: list[list[list[str]]] = []
        self.figures: list[dict] = []
        self.chart_names: list[str | None] = []
        self.scripts: list[dict] = []
        self.urls: list[str] = []
        self.elements: list[str] = []
        self.meta: dict[str, str] = {}
        self._row: list[str] | None = None
        self._cell: list[str] | None = None
        self._script: dict | None = None
        self.feed(text)
        self.close()

    def handle_starttag(self, name, attrs):
        attrs = dict(attrs)
        self.elements.append(name)
        for key in ("src", "href", "action", "srcset", "poster", "data"):
            if attrs.get(key):
                self.urls.append(attrs[key])
        if name == "table":
            self.tables.append([])
        elif name == "tr":
            self._row = []
        elif name in ("td", "th"):
            self._cell = []
        elif name == "script":
            self._script = {"attrs": attrs, "text": []}
        elif name == "meta" and attrs.get("http-equiv"):
            self.meta[attrs["http-equiv"]] = attrs.get("content", "")
        if "data-figure" in attrs:
            self.figures.append(json.loads(attrs["data-figure"]))
            self.chart_names.append(attrs.get("data-chart"))

    def handle_endtag(self, name):
        if name in ("td", "th") and self._cell is not None and self._row is not None:
            self._row.append("".join(self._cell).strip())
            self._cell = None
        elif name == "tr" and self._row is not None:
            self.tables[-1].append(self._row)
            self._row = None
        elif name == "script" and self._script is not None:
            self.scripts.append({"attrs": self._script["attrs"], "text": "".join(self._script["text"])})
            self._script = None

    def handle_data(self, data):
        if self._script is not None:
            self._script["text"].append(data)
        elif self._cell is not None:
            self._cell.append(data)

    def figures_named(self, name: str) -> list[dict]:
        return [f for f, n in zip(self.figures, self.chart_names) if n == name]
