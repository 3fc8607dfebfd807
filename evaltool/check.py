"""Today's numbers against reference numbers: a list of drifts (what ``evaltool check`` runs).

A reference is either the JSON that ``evaltool ... --format json`` prints (or
``--save-reference`` writes), or a text file of ``measure qid value`` lines, so that
published numbers can be typed in (``qid`` is ``all`` for the summary; ``#`` starts a
comment; an optional first line ``measure qid value`` is a header). trec_eval's own
output has this layout too.

The measures to compute are read off the reference's output names: an output name
(``ndcg_cut_10``) is also a spelling of its measure. A JSON reference also brings the options it was made with
(``-c``, ``-l``, ...); options given explicitly take precedence.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field

from evaltool.errors import EvaltoolError, InputError, ParseError, quote
from evaltool.io import jsontext
from evaltool.measures import MEASURES
from evaltool.measures.base import Agg

SUMMARY = "all"
# evaluate() keywords a JSON reference's meta.options may carry
OPTION_KEYS = ("relevance_level", "complete", "max_ret", "judged_only", "num_docs_in_coll", "zscores", "on_duplicate")
# what each of them must be, as -o json writes it
OPTION_TYPES = {
    "relevance_level": (int, "a whole number"),
    "complete": (bool, "true or false"),
    "max_ret": (int, "a whole number or null"),
    "judged_only": (bool, "true or false"),
    "num_docs_in_coll": (int, "a whole number"),
    "zscores": (str, "a file name or null"),
    "on_duplicate": (str, "error, first or max"),
}
NULLABLE_OPTIONS = ("max_ret", "zscores")
TEXT_MEASURES = {name for name, m in MEASURES.items() if m.agg in (Agg.RUNID, Agg.NONE)}


@dataclass
class Reference:
    """Reference values by (output name, query id); ``lines`` says where each came from."""

    path: str
    values: dict[tuple[str, str], float | str]
    lines: dict[tuple[str, str], int | None] = field(default_factory=dict)
    options: dict = field(default_factory=dict)

    @property
    def names(self) -> list[str]:
        return list(dict.fromkeys(name for name, _ in self.values))


@dataclass
class Drift:
    measure: str
    query: str
    reference: float | str | None
    current: float | str | None
    status: str  # drift, improved (allowed), missing

    @property
    def difference(self) -> float | None:
        if isinstance(self.reference, (int, float)) and isinstance(self.current, (int, float)):
            return self.current - self.reference
        return None


@dataclass
class CheckResult:
    reference: str
    tolerance: float
    allow_improvement: bool
    checked: int
    drifts: list[Drift]

    @property
    def failures(self) -> list[Drift]:
        return [d for d in self.drifts if d.status != "improved"]

    @property
    def ok(self) -> bool:
        return not self.failures

    def to_dict(self) -> dict:
        return {
            "reference": self.reference,
            "tolerance": self.tolerance,
            "allow_improvement": self.allow_improvement,
            "checked": self.checked,
            "held": self.checked - len(self.drifts),
            "ok": self.ok,
            "drifts": [
                {
                    "measure": d.measure,
                    "query": d.query,
                    "reference": d.reference,
                    "current": d.current,
                    "difference": d.difference,
                    "status": d.status,
                }
                for d in self.drifts
            ],
        }


def _value(text: str, name: str):
    """A number (``nan``/``-nan`` as trec_eval prints it), or the text of runid/relstring
    (trec_eval quotes relstring: ``'1010000000'``)."""
    if name not in TEXT_MEASURES:
        return float(text)
    return text[1:-1] if len(text) >= 2 and text[0] == text[-1] == "'" else text


def _from_json(path: str, data) -> Reference:
    if not isinstance(data, dict) or not isinstance(data.get("summary"), dict):
        raise ParseError(path, None, None, "the JSON evaltool prints with --format json: an object with a 'summary'")
    values: dict = {}
    entries = [(SUMMARY, data["summary"])]
    per_query = data.get("per_query") or {}
    if not isinstance(per_query, dict):
        raise ParseError(path, None, None, "'per_query' as an object {query id: {measure: value}}")
    entries += list(per_query.items())
    for qid, row in entries:
        if not isinstance(row, dict):
            raise ParseError(path, None, f"{qid}: {json.dumps(row)[:60]}", "an object {measure: value}")
        for name, value in row.items():
            if value is None:
                value = math.nan
            if isinstance(value, bool) or not isinstance(value, (int, float, str)):
                raise ParseError(path, None, f"{qid} {name}: {json.dumps(value)[:60]}", "a number")
            if isinstance(value, str) and name not in TEXT_MEASURES:
                raise ParseError(path, None, f"{qid} {name}: {quote(value)}", "a number")
            values[(name, qid)] = value
    meta = data.get("meta") or {}
    options = meta.get("options") or {} if isinstance(meta, dict) else {}
    options = {k: v for k, v in options.items() if k in OPTION_KEYS} if isinstance(options, dict) else {}
    for key, value in options.items():
        kinds, expected = OPTION_TYPES[key]
        if not (value is None and key in NULLABLE_OPTIONS) and (
            isinstance(value, bool) != (kinds is bool) or not isinstance(value, kinds)
        ):
            raise ParseError(path, None, f"meta.options.{key}: {json.dumps(value)[:60]}", expected)
    return Reference(path, values, dict.fromkeys(values), options)


def _from_text(path: str, text: str) -> Reference:
    values: dict = {}
    lines: dict = {}
    seen_content = False
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        fields = line.split()
        if not seen_content and fields[0].lower() == "measure":
            seen_content = True
            continue
        seen_content = True
        if len(fields) != 3:
            raise ParseError(path, number, line, "3 fields 'measure qid value'")
        name, qid, text_value = fields
        try:
            value = _value(text_value, name)
        except ValueError:
            raise ParseError(path, number, line, f"a number as the value in field 3, not {quote(text_value)}") from None
        key = (name, qid)
        if key in values and not _holds(values[key], value, 0.0):
            raise ParseError(path, number, line, f"one value for {name} {qid}; line {lines[key]} gives {values[key]}")
        values[key] = value
        lines.setdefault(key, number)
    if not values:
        raise ParseError(path, None, None, "at least one 'measure qid value' line")
    return Reference(path, values, lines)


def read_reference(path) -> Reference:
    """Read a JSON or ``measure qid value`` reference file (gzip is fine)."""
    from evaltool.io.textfiles import read_text

    name, text = read_text(path)
    if text.lstrip().startswith("{"):
        try:
            parsed = jsontext.loads(text)
        except json.JSONDecodeError as exc:
            raise ParseError(
                name,
                exc.lineno,
                text.splitlines()[exc.lineno - 1][:80] if text.splitlines() else "",
                f"valid JSON ({exc.msg})",
            ) from None
        return _from_json(name, parsed)
    return _from_text(name, text)


def reference_from_mapping(values: dict, path: str = "<reference>") -> Reference:
    """A reference given in code: ``{measure: value}`` (summary values), ``{(measure, qid): value}``,
    or the ``--format json`` layout (``{"summary": ..., "per_query": ...}``)."""
    if isinstance(values.get("summary"), dict):
        return _from_json(path, values)
    flat = {}
    for key, value in values.items():
        flat[key if isinstance(key, tuple) else (key, SUMMARY)] = value
    return Reference(path, flat, dict.fromkeys(flat))


def reference_measures(reference: Reference) -> list[str]:
    """``-m`` arguments that compute every name in the reference; unknown names name their line."""
    from evaltool.names import parse_measures

    for name in reference.names:  # an output name is also a spelling of its measure (P_5, ndcg_cut_10, nDCG@10)
        line = next((reference.lines.get(k) for k in reference.values if k[0] == name), None)
        try:
            produced = [n for r in parse_measures([name]) for n in r.names]
        except EvaltoolError as exc:
            raise ParseError(reference.path, line, name, f"a measure evaltool computes ({exc})") from None
        if name not in produced:
            raise ParseError(
                reference.path, line, name, f"a measure output name; -m {name} gives {', '.join(produced)}"
            )
    return list(reference.names)


def _holds(reference, current, tolerance: float) -> bool:
    if isinstance(reference, str) or isinstance(current, str):
        return reference == current
    if math.isnan(reference) or math.isnan(current):
        return math.isnan(reference) and math.isnan(current)
    return abs(current - reference) <= tolerance * (1 + 1e-9)


def _improved(name: str, current: float, expected: float) -> bool:
    """Whether ``current`` is better than ``expected`` for the measure output ``name``."""
    from evaltool.names import direction

    better = direction(name)
    gain = better.gain(current, expected) if better is not None else None
    return gain is not None and gain > 0


def check(
    reference: Reference,
    qrels,
    run,
    *,
    tolerance: float = 1e-4,
    per_query: bool = False,
    allow_improvement: bool = False,
    **options,
) -> CheckResult:
    """Evaluate ``run`` as the reference asks and list every value that moved past ``tolerance``.

    Summary values (query ``all``) are always checked, per-query values with ``per_query``.
    ``allow_improvement`` accepts values better than the reference, as each measure declares
    (higher for most, lower for ranks such as FirstRelPos and ARP; a count such as
    ``num_ret`` never improves, it only drifts); they are still listed, as ``improved``.
    """
    from evaltool.evaluation import evaluate

    if not (isinstance(tolerance, (int, float)) and tolerance >= 0 and math.isfinite(tolerance)):
        raise EvaltoolError(f"tolerance must be a non-negative number, not {tolerance!r}")
    wanted = {key: value for key, value in reference.values.items() if per_query or key[1] == SUMMARY}
    if not wanted:
        raise InputError(f"{reference.path}: nothing to check: it holds per-query values only; add --per-query")
    merged = {**reference.options, **options}
    result = evaluate(qrels, run, reference_measures(reference), per_query=True, **merged)
    table = result.per_query
    drifts = []
    for (name, qid), expected in wanted.items():
        current = result.summary.get(name) if qid == SUMMARY else table.get(qid, {}).get(name)
        if current is None:
            drifts.append(Drift(name, qid, expected, None, "missing"))
            continue
        if _holds(expected, current, tolerance):
            continue
        improved = (
            allow_improvement
            and not isinstance(current, str)
            and not isinstance(expected, str)
            and _improved(name, current, expected)
        )
        drifts.append(Drift(name, qid, expected, current, "improved" if improved else "drift"))
    return CheckResult(reference.path, tolerance, allow_improvement, len(wanted), drifts)
