"""Impression objects, the layout of a JSON array or of JSONL with one object per line: each
object is a result list shown for a query and the documents clicked in it."""

from __future__ import annotations

import json
import math
from array import array

import numpy as np

from evaltool.errors import ParseError
from evaltool.io import jsontext
from evaltool.io.clicks.builder import BATCH_ROWS, Builder
from evaltool.io.clicks.text import SURROGATE_ESCAPE, check_surrogates, json_lines, short, utf8
from evaltool.io.clicks.values import QUERY_ID_KEYS, QUERY_KEYS, RESULT_KEYS, id_text, seconds_of


class ObjectReader:
    """Impression objects (a result page shown and its clicks), one at a time, into the builder (buffered in arrays)."""

    def __init__(self, builder: Builder) -> None:
        self.b = builder
        self._reset()

    def _reset(self) -> None:
        self.imp_query, self.imp_time = array("i"), array("d")
        self.fields = {name: array("i") for name in self.b.field_names}
        self.s_imp, self.s_doc, self.s_pos = array("i"), array("Q"), array("i")
        self.c_imp, self.c_doc, self.c_time = array("i"), array("Q"), array("d")

    def flush(self) -> None:
        b = self.b
        codes = b.new_impressions(len(self.imp_query))
        b.imp_query.data[codes] = np.frombuffer(self.imp_query, np.int32)
        b.imp_time.data[codes] = np.frombuffer(self.imp_time, np.float64)
        for name, values in self.fields.items():
            b.field_code[name].data[codes] = np.frombuffer(values, np.int32)
        offset = int(codes[0]) if len(codes) else 0
        b.add_shown(
            np.frombuffer(self.s_imp, np.int32) + offset,
            np.frombuffer(self.s_doc, np.uint64),
            np.frombuffer(self.s_pos, np.int32),
        )
        c_imp = np.frombuffer(self.c_imp, np.int32) + offset
        b.add_clicks(
            c_imp,
            np.frombuffer(self.c_doc, np.uint64),
            np.zeros(len(c_imp), np.int32),
            np.frombuffer(self.c_time, np.float64),
        )
        self._reset()

    def add(self, obj, line) -> None:
        path, b = self.b.path, self.b
        text = lambda: short(json.dumps(obj, ensure_ascii=False))  # noqa: E731
        if not isinstance(obj, dict):
            raise ParseError(
                path,
                line,
                text(),
                "an impression object with 'consulta' or 'query', 'resultados' or 'results', and 'clicks'",
            )
        qid = next((id_text(obj[k]) for k in QUERY_ID_KEYS if k in obj), None) or next(
            (id_text(obj[k]) for k in QUERY_KEYS if k in obj), None
        )
        if qid is None:
            raise ParseError(path, line, text(), "a query: 'query_id', 'consulta' or 'query' (a non-empty text)")
        results = next((obj[k] for k in RESULT_KEYS if k in obj), None)
        if not isinstance(results, list):
            raise ParseError(path, line, text(), "'resultados' or 'results': the list of document ids shown")
        clicks = obj.get("clicks", [])
        if not isinstance(clicks, list):
            raise ParseError(path, line, text(), "'clicks': a list of clicked document ids")
        stamp = obj.get("timestamp")
        when = seconds_of(stamp) if stamp is not None else math.nan
        if when is None:
            raise ParseError(path, line, text(), "'timestamp': seconds or an ISO 8601 time")
        local = len(self.imp_query)
        self.imp_query.append(b.queries.code(qid))
        self.imp_time.append(when)
        for name in b.field_names:
            value = obj.get(name)
            self.fields[name].append(
                -1
                if value is None
                else b.field_vocab[name].code(value if isinstance(value, str) else json.dumps(value))
            )
        for position, doc in enumerate(results, 1):
            doc_id = id_text(doc)
            if doc_id is None:
                raise ParseError(
                    path, line, short(json.dumps(doc)), "document ids in the result list: texts or whole numbers"
                )
            self.s_imp.append(local)
            self.s_doc.append(b.docs.key(doc_id))
            self.s_pos.append(position)
        for click in clicks:
            when = math.nan
            if isinstance(click, dict):
                doc_id = id_text(click.get("doc_id"))
                if "timestamp" in click:
                    when = seconds_of(click["timestamp"])
                    if when is None:
                        raise ParseError(
                            path, line, short(json.dumps(click)), "a click timestamp: seconds or an ISO 8601 time"
                        )
            else:
                doc_id = id_text(click)
            if doc_id is None:
                raise ParseError(
                    path,
                    line,
                    short(json.dumps(click)),
                    'a clicked document id (a text or whole number, or {"doc_id": ...})',
                )
            self.c_imp.append(local)
            self.c_doc.append(b.docs.key(doc_id))
            self.c_time.append(when)
        b.counts["clicks_read"] += len(clicks)
        b.counts["events"] += 1 + len(clicks)
        if len(self.imp_query) >= BATCH_ROWS:
            self.flush()


def read_json_array(path: str, text: str, reader: ObjectReader) -> None:
    """Walk a JSON array element by element, so an error can name the element's line."""
    decoder = json.JSONDecoder()
    at = text.index("[") + 1
    line, counted = 1, 0

    def line_at(offset: int) -> int:
        nonlocal line, counted
        line += text.count("\n", counted, offset)
        counted = offset
        return line

    def skip(offset: int) -> int:
        while offset < len(text) and text[offset] in " \t\r\n":
            offset += 1
        return offset

    at = skip(at)
    escapes = SURROGATE_ESCAPE.search(text) is not None
    if at < len(text) and text[at] == "]":
        at += 1
    else:
        while True:
            try:
                obj, end = jsontext.raw_decode(decoder, text, at)
            except json.JSONDecodeError as exc:
                raise ParseError(
                    path, line_at(exc.pos), short(text[exc.pos : exc.pos + 40]), f"a JSON value ({exc.msg})"
                ) from None
            if escapes:
                check_surrogates(path, line_at(at), text[at:end], obj)
            reader.add(obj, line_at(at))
            at = skip(end)
            if at < len(text) and text[at] == ",":
                at = skip(at + 1)
                continue
            if at < len(text) and text[at] == "]":
                at += 1
                break
            if at >= len(text):
                raise ParseError(
                    path, line_at(at), None, "',' or ']' in the JSON array (the file ends before the array is closed)"
                )
            raise ParseError(path, line_at(at), short(text[at : at + 40]), "',' or ']' in the JSON array")
    at = skip(at)
    if at < len(text):
        raise ParseError(path, line_at(at), short(text[at : at + 40]), "nothing after the JSON array")


def read_records(records, builder: Builder) -> None:
    """A list of impression dicts (messages name each by its index)."""
    reader = ObjectReader(builder)
    for i, obj in enumerate(records):
        reader.add(obj, f"item {i}")
    reader.flush()


def read_json(path: str, opener, builder: Builder) -> None:
    """A JSON array of impression objects, walked element by element."""
    with opener() as raw:
        text = utf8(path, 1, raw.read())
    reader = ObjectReader(builder)
    read_json_array(path, text, reader)
    del text
    reader.flush()


def read_jsonl(path: str, opener, builder: Builder) -> None:
    """JSONL, an impression object a line."""
    objects = ObjectReader(builder)
    for number, _, obj in json_lines(path, opener):
        objects.add(obj, number)
    objects.flush()
