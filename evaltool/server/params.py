"""Request parameters, declared once: each view's list parses the query string and describes it in OpenAPI.

A parameter that does not parse, or that the view does not take, is a :class:`RequestError`
(HTTP 400) that names it, the text found and what was expected. An empty value (a
date picker left blank) is the same as no value.

>>> parse({"limit": "20", "date_from": ""}, [LIMIT, OFFSET, DATE_FROM])
{'limit': 20, 'offset': 0, 'date_from': None}
>>> parse({"limit": "x"}, [LIMIT])
Traceback (most recent call last):
...
evaltool.server.params.RequestError: limit 'x': expected a whole number from 1 to 10000
"""

from __future__ import annotations

from dataclasses import dataclass

from evaltool.errors import EvaltoolError


class RequestError(EvaltoolError):
    """A request the server cannot answer as asked: ``status`` 400 (bad parameters) or 404 (no such thing).

    Raised with ``key`` (and its ``values``), the message is the catalogue's (:mod:`evaltool.report.i18n`),
    and :meth:`localized` gives it in another language; without, the message is the text given."""

    def __init__(self, message: str | None = None, status: int = 400, *, key: str | None = None, **values):
        from evaltool.report.i18n import t

        super().__init__(t(key, "en", **values) if key else message)
        self.status, self.key, self.values = status, key, values

    def localized(self, lang: str) -> str:
        from evaltool.report.i18n import t

        return t(self.key, lang, **self.values) if self.key else str(self)


@dataclass(frozen=True)
class Param:
    name: str
    kind: str  # date | string | integer | boolean | tag | ids
    description: str
    default: object = None
    repeat: bool = False
    minimum: int | None = None
    maximum: int | None = None
    required: bool = False
    where: str = "query"  # or "path"
    split: bool = False  # a repeatable value may also list several separated by spaces
    choices: tuple = ()  # the only values accepted, when given
    aliases: tuple = ()  # other names the parameter may be given by (the Spanish fecha_desde)

    def schema(self) -> dict:
        """The OpenAPI schema of the parameter's value."""
        item = {
            "date": {"type": "string", "format": "date"},
            "string": {"type": "string"},
            "integer": {"type": "integer"},
            "boolean": {"type": "boolean"},
            "tag": {"type": "string", "pattern": "^[^=]+=.*$"},
            "ids": {"type": "integer"},
        }[self.kind]
        if self.minimum is not None:
            item["minimum"] = self.minimum
        if self.maximum is not None or self.kind in ("integer", "ids"):
            item["maximum"] = self.maximum if self.maximum is not None else LARGEST
        if self.choices:
            item["enum"] = list(self.choices)
        if self.repeat or self.kind == "ids":
            return {"type": "array", "items": item}
        return {**item, **({"default": self.default} if self.default is not None else {})}

    def openapi(self) -> dict:
        return {
            "name": self.name,
            "in": self.where,
            "required": self.required or self.where == "path",
            "description": self.description,
            "schema": self.schema(),
            **({"explode": True} if self.repeat else {}),
        }


TRUE, FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")
LARGEST = 2**63 - 1  # the largest integer a database column holds: ids and offsets above it name nothing


def json_object(body: bytes) -> dict:
    """A request body that must be a JSON object; anything else (not UTF-8, not JSON, nested deeper than
    the parser follows, another JSON value) is a 400 naming what was wrong.

    >>> json_object(b'{"name": "helpdesk"}')
    {'name': 'helpdesk'}
    >>> try:
    ...     json_object(b"[" * 5000)
    ... except RequestError as exc:
    ...     print(exc.status, str(exc)[:45])
    400 the body is not JSON (JSON nested 5000 levels
    """
    from evaltool.io import jsontext

    try:
        data = jsontext.loads(body.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise RequestError(f"the body is not UTF-8 text (byte {exc.start})") from None
    except ValueError as exc:
        raise RequestError(f"the body is not JSON ({str(exc)[:200]})") from None
    if not isinstance(data, dict):
        raise RequestError("the body must be a JSON object")
    return data


def _integer(param: Param, text: str) -> int:
    low = param.minimum if param.minimum is not None else 0
    high = param.maximum if param.maximum is not None else LARGEST
    shown = f"{text[:40]!r}..." if len(text) > 40 else repr(text)
    if len(text) > 40:  # far beyond any bound, and int() of a long text costs time
        raise RequestError(key="param.integer", name=param.name, text=shown, low=low, high=high)
    try:
        value = int(text)
    except ValueError:
        raise RequestError(key="param.integer", name=param.name, text=shown, low=low, high=high) from None
    if value < low or value > high:
        raise RequestError(key="param.integer", name=param.name, text=shown, low=low, high=high)
    return value


def _date(param: Param, text: str) -> str:
    """``text`` if the history can use it as either end of a range (:func:`evaltool.history.dates.range_bounds`:
    ISO-8601, from 1000-01-01 to 9999-12-30; the calendar's edges are refused)."""
    from evaltool.history.dates import OutsideDates, range_bounds

    try:
        range_bounds(text, text)
    except OutsideDates:
        raise RequestError(key="param.date_outside", name=param.name, text=repr(text[:200])) from None
    except EvaltoolError:
        raise RequestError(key="param.date", name=param.name, text=repr(text[:200])) from None
    return text


def _value(param: Param, text: str):
    if param.kind == "integer":
        return _integer(param, text)
    if param.kind == "date":
        return _date(param, text)
    if param.kind == "boolean":
        if text.lower() not in TRUE + FALSE:
            raise RequestError(f"{param.name} {text!r}: expected true or false (1 or 0)")
        return text.lower() in TRUE
    if param.kind == "tag":
        key, sep, _ = text.partition("=")
        if not sep or not key.strip():  # as the command line's --tag refuses '=v'
            raise RequestError(f"{param.name} {text[:200]!r}: expected KEY=VALUE with a non-empty KEY")
    if param.choices and text not in param.choices:
        raise RequestError(f"{param.name} {text[:200]!r}: expected one of {', '.join(param.choices)}")
    if param.kind == "ids":
        return [_integer(param, part.strip()) for part in text.split(",") if part.strip()]
    return text


def parse(query, params, path: dict | None = None) -> dict:
    """The parameters of a request: ``query`` a mapping or Starlette's QueryParams (several values
    per name), ``path`` the path parameters; every name in ``params`` is in the result."""
    getlist = query.getlist if hasattr(query, "getlist") else (lambda name: [query[name]] if name in query else [])
    known = {name for p in params for name in (p.name, *p.aliases)}
    unknown = sorted(set(query.keys()) - known)
    if unknown:
        accepted = ", ".join(p.name for p in params if p.where == "query") or "none"
        raise RequestError(f"unknown parameter {unknown[0][:200]!r}; this address takes: {accepted}")
    out = {}
    for param in params:
        if param.where == "path":
            texts = [str(path[param.name])]
        else:
            given = [name for name in (param.name, *param.aliases) if any(t.strip() for t in getlist(name))]
            if len(given) > 1:
                raise RequestError(f"{given[0]} and {given[1]} are the same parameter; give one of them")
            texts = [t for name in given for t in getlist(name) if t.strip()]
        if param.kind == "ids":
            out[param.name] = [i for t in texts for i in _value(param, t)]
        elif param.repeat:  # a form's text field may hold several, separated by spaces
            out[param.name] = [_value(param, part) for t in texts for part in (t.split() if param.split else [t])]
        elif len(texts) > 1:
            raise RequestError(f"{param.name} is given {len(texts)} times; give it once")
        else:
            out[param.name] = _value(param, texts[0].strip()) if texts else param.default
        if param.required and out[param.name] in (None, []):
            raise RequestError(f"{param.name} is required: {param.description}")
    if out.get("date_from") and out.get("date_to"):
        _ordered(out["date_from"], out["date_to"])
    return out


def _ordered(date_from: str, date_to: str) -> None:
    from evaltool.history.dates import range_bounds

    try:
        range_bounds(date_from, date_to)
    except EvaltoolError:
        raise RequestError(key="param.date_order", low=date_from, high=date_to) from None


DATE_FROM = Param(
    "date_from",
    "date",
    "first day (YYYY-MM-DD) or moment (ISO-8601, UTC unless it says) included; also fecha_desde",
    aliases=("fecha_desde",),
)
DATE_TO = Param(
    "date_to",
    "date",
    "last day included (a date alone: the whole day), or a moment; also fecha_hasta",
    aliases=("fecha_hasta",),
)
NAME = Param("name", "string", "only executions of this name")
TAG = Param("tag", "tag", "only executions with this tag, KEY=VALUE; repeatable (all must match)", repeat=True)
MEASURE = Param(
    "measure",
    "string",
    "a measure column (recorded name such as ndcg_cut_10, or ndcg_cut.10); "
    "repeatable, or several separated by spaces; default every measure recorded",
    repeat=True,
    split=True,
)
LABELS = Param(
    "labels",
    "boolean",
    "label rows good / fair / poor and the summary efficient / acceptable / needs improvement (false: null labels)",
    default=True,
)
LANG = Param(
    "lang",
    "string",
    "language of the page's words and of the labels: en, or es (Bueno / Regular / Mejorable)",
    default="en",
    choices=("en", "es"),
)
LIMIT = Param("limit", "integer", "executions per page", default=1000, minimum=1, maximum=10000)
OFFSET = Param("offset", "integer", "executions skipped before the page", default=0, minimum=0)
EXECUTION_ID = Param("id", "integer", "an execution id", where="path", minimum=1)
TEST = Param("test", "string", "paired test: t, wilcoxon, randomization or bootstrap", default="t")
CORRECTION = Param(
    "correction", "string", "multiple-testing correction over the measures: holm, bonferroni, bh, none", default="holm"
)
