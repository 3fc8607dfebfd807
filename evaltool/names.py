"""Measure names as users write them, resolved against the registry: one grammar, three spellings.

* trec_eval: ``name`` or ``name.params`` (``P.5,10``, ``ndcg.1=3,2=9``,
  ``iprec_at_recall.0.1,0.5``) or a nickname (``official``, ``all_trec``, ``set``).
  Output names are trec_eval's (``P_5``), in trec_eval's order.
* ir_measures: ``Name``, ``Name(param=value, ...)``, ``Name@k`` or both (``nDCG@10``,
  ``P(rel=2)@5``, ``nDCG(gains={0:0,1:1,2:3})@10``); values are Python literals, as
  ir_measures reads them.
* aliases, declared on the measures themselves: ir_measures' (``NDCG``, ``MAP``, ``MRR``,
  ``SetRelP``, ``NumRelRet``) and the project's (``ndcg@10``, ``ndcg_at_10``, ``mrr``,
  ``hits@5``, ``hit_rate@5``, ``first_relevant_position``). An alias declared as
  ``name_at_k`` is also written ``name_at_10``.

A trec_eval name wins where both worlds have it (``map``, ``Rprec``, ``infAP``, ``ndcg``,
``recall``: they mean the same). Every other spelling prints under the name the user
wrote (spaces removed), after the trec_eval measures, in the order given.
``Request.canonical`` is the one spelling of a request: trec_eval's with sorted
parameters, or ir_measures' ``repr`` (defaults left out, aliases resolved).

One deliberate difference from trec_eval: several ``-m`` for the same cutoff measure
take the union of their cutoffs (``-m P.5 -m P.10`` gives P_5 and P_10); explicit
parameters still replace the defaults a nickname brings.

>>> [r.names for r in parse_measures(["P.10,5", "map", "P.5,20"])]
[['map'], ['P_5', 'P_10', 'P_20']]
>>> [(r.names[0], r.canonical) for r in parse_measures(["ndcg_at_10", "NumRelRet", "P(rel=2)@5"])]
[('ndcg_at_10', 'nDCG@10'), ('NumRelRet', 'NumRet(rel=1)'), ('P(rel=2)@5', 'P(rel=2)@5')]
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Iterable
from functools import cache, lru_cache

from evaltool import measures
from evaltool.errors import MeasureError, clip, quote
from evaltool.measures import DEFAULT_SETS, NICKNAMES, TREC_ORDER, named_measure, trec_measure
from evaltool.measures.base import Measure, Params, Request

AT_SUFFIX = "_at_k"


@cache
def _spellings() -> tuple[dict[str, tuple[Measure, dict]], dict[str, tuple[Measure, dict]]]:
    """Every name of a named-parameter measure -> (measure, fixed parameters); and the ``name_at_k`` ones.

    Built on first need, importing every family: a trec_eval name or a canonical named one
    (``nDCG@10``) is found without them, by :func:`~evaltool.measures.trec_measure` and
    :func:`~evaltool.measures.named_measure`.
    """
    tokens: dict[str, tuple[Measure, dict]] = {}
    at_tokens: dict[str, tuple[Measure, dict]] = {}
    for m in measures.NAMED_MEASURES.values():
        for alias in (m.name, *m.aliases):
            token, fixed = (alias, {}) if isinstance(alias, str) else alias
            table = at_tokens if token.endswith(AT_SUFFIX) else tokens
            key = token[: -len(AT_SUFFIX)] if token.endswith(AT_SUFFIX) else token
            if key in table:
                raise RuntimeError(f"measure name {token} declared by both {table[key][0].name} and {m.name}")
            table[key] = (m, dict(fixed))
    return tokens, at_tokens


def __getattr__(name: str):
    if name in ("TOKENS", "AT_TOKENS"):  # every spelling of the named measures, for whoever lists them
        return _spellings()[name == "AT_TOKENS"]
    raise AttributeError(f"module 'evaltool.names' has no attribute {name!r}")


_AT_FORM = re.compile(r"^([A-Za-z][A-Za-z0-9_]*?)_at_(.+)$")
_LOOKALIKE_DIGITS = str.maketrans({"O": "0", "o": "0", "l": "1", "I": "1", "i": "1", "S": "5", "s": "5", "B": "8"})


class UnknownMeasure(MeasureError):
    """No measure has this name (the message gets its suggestions from :func:`parse_measures`)."""


def _literal(node, whole: str):
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError):
        raise MeasureError(
            f"measure {quote(whole)}: {clip(ast.unparse(node))} is not a literal value "
            "(numbers, 'strings', True/False, {grade: gain})"
        ) from None


def _split_named(text: str, whole: str) -> tuple[str, dict, object]:
    """``Name(key=value,...)@at`` -> (name, {key: value}, at); ``name_at_10`` -> (name, {}, 10)."""
    form = _AT_FORM.match(text)
    if form and form.group(1) in _spellings()[1]:
        try:
            return AT_SUFFIX + form.group(1), {}, ast.literal_eval(form.group(2))
        except (ValueError, SyntaxError):
            raise UnknownMeasure(whole) from None
    try:
        node = ast.parse(text, mode="eval").body
    except SyntaxError:
        raise UnknownMeasure(whole) from None
    at, args = None, {}
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
        at, node = _literal(node.right, whole), node.left
    if isinstance(node, ast.Call):
        if node.args or any(k.arg is None for k in node.keywords):
            raise MeasureError(
                f"measure {quote(whole)}: parameters are written name=value, as in nDCG(dcg='exp-log2')@10"
            )
        args = {k.arg: _literal(k.value, whole) for k in node.keywords}
        node = node.func
    if not isinstance(node, ast.Name):
        raise UnknownMeasure(whole)
    return node.id, args, at


def _named_request(whole: str) -> Request:
    """A named-parameter request from any of its spellings; UnknownMeasure if the name is unknown."""
    text = "".join(whole.split())
    token, args, at = _split_named(text, whole)
    if token.startswith(AT_SUFFIX):
        m, fixed = _spellings()[1][token[len(AT_SUFFIX) :]]
    elif (m := named_measure(token)) is not None:  # a canonical name: its family alone is imported
        fixed = {}
    elif token in _spellings()[0]:
        m, fixed = _spellings()[0][token]
    else:
        raise UnknownMeasure(whole)
    options = {o.name: o for o in m.options}
    for key in args:
        if key not in options:
            takes = ", ".join(o.name for o in m.options) or "no parameters"
            raise MeasureError(f"measure {quote(whole)}: {m.name} has no parameter {key} (it takes {takes})")
    for key, value in fixed.items():
        if key in args and args[key] != value:
            raise MeasureError(f"measure {quote(whole)}: {token} means {m.name}({key}={value!r})")
        args[key] = value
    at_option = m.at_option
    if at is not None:
        if at_option is None:
            raise MeasureError(f"measure {quote(whole)}: {m.name} takes no @ parameter")
        args[at_option.name] = at  # overrides the same parameter in parentheses, as ir_measures reads it
    values = []
    for option in m.options:
        if option.name in args:
            value = option.check(args[option.name], m.name, whole)
        elif option.required:
            how = f"{m.name}@{'k' if option.kind is int else 'r'}" if option.at else f"{m.name}({option.name}=...)"
            raise MeasureError(f"measure {quote(whole)}: {m.name} needs its {option.name}: {how}")
        else:
            value = option.default
        values.append((option.name, value))
    given = dict(values)
    for option in m.options:
        if option.needs_at and given[option.name] != option.default and given[at_option.name] is None:
            raise MeasureError(
                f"measure {quote(whole)}: {option.name} needs a cutoff, as in {m.name}"
                f"({option.name}={given[option.name]!r})@10"
            )
    problem = m.check(given) if m.check else None
    if problem:
        raise MeasureError(f"measure {quote(whole)}: {problem}")
    return Request(m, tuple(values), spelling=text)


def finite_float(text: str) -> float | None:
    """``text`` as a finite float, or None (not a number, nan, inf)."""
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _number(text: str, measure: str, whole: str) -> float:
    value = finite_float(text)
    if value is None:
        raise MeasureError(f"measure {quote(whole)}: parameter {quote(text)} of {measure} is not a finite number")
    return value


def _parse_values(measure, text: str, whole: str):
    items = text.split(",")
    kind = measure.params
    if kind is Params.CUTOFFS:
        numbers = [_number(item, measure.name, whole) for item in items]
        if not all(v >= 1 for v in numbers):
            raise MeasureError(f"measure {quote(whole)}: cutoffs of {measure.name} must be positive integers")
        return [int(v) for v in numbers]
    if kind is Params.FRACTIONS:
        return [_number(item, measure.name, whole) for item in items]
    if kind is Params.NUMBERS:
        if measure.arity is not None and len(items) != measure.arity:
            raise MeasureError(
                f"measure {quote(whole)}: {measure.name} takes {measure.arity} "
                f"parameter{'s' if measure.arity > 1 else ''}, got {len(items)}"
            )
        return [_number(item, measure.name, whole) for item in items]
    pairs = []
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise MeasureError(
                f"measure {quote(whole)}: {measure.name} takes name=value pairs such as 1=3,2=9 or p=0.8"
            )
        pairs.append((key, _number(value, measure.name, whole)))
    return pairs


def trec_output_spelling(name: str) -> str | None:
    """The ``-m`` spelling of a trec_eval output name (``P_5`` -> ``P.5``), or None if it is not one.

    trec_eval prints a parameterised measure as ``name_params``; pytrec_eval and ir_measures
    take that form as input too, so evaltool does. The longest measure name that prefixes
    the text wins (``map_cut_10`` is ``map_cut.10``, not ``map`` with ``cut_10``). Parameters
    hold a digit, so a misspelt name (``ndcg_cutt``) is not taken for one.

    >>> [trec_output_spelling(n) for n in ["P_5", "ndcg_cut_5,10", "iprec_at_recall_0.10", "utility_1,-1,0,0", "map"]]
    ['P.5', 'ndcg_cut.5,10', 'iprec_at_recall.0.10', 'utility.1,-1,0,0', None]
    """
    bases = [m for m in measures.MEASURES.values() if m.params is not Params.NONE and name.startswith(m.name + "_")]
    if not bases:
        return None
    base = max(bases, key=lambda m: len(m.name)).name
    params = name[len(base) + 1 :]
    return f"{base}.{params}" if any(c.isdigit() for c in params) else None


def _valid(spec: str) -> bool:
    try:
        parse_measures([spec], suggestions=False)
    except MeasureError:
        return False
    return True


def suggest(spec: str) -> str:
    """``; did you mean X?`` with the closest valid spellings of ``spec``, or a pointer to the list.

    A value with letters that look like digits is read as those digits (``ndcg@1O`` ->
    ``ndcg@10``); a misspelt name is matched against every name and alias, keeping what
    follows it (``nDGC@10`` -> ``nDCG@10``).
    """
    for marker in ("@", "_at_", "."):
        head, found, tail = spec.rpartition(marker) if marker != "." else spec.partition(marker)
        if found and head and tail:
            fixed = head + found + tail.translate(_LOOKALIKE_DIGITS)
            if fixed != spec and _valid(fixed):
                return f"; did you mean {fixed}?"
    import difflib

    head = re.match(r"[A-Za-z0-9_]*", spec).group(0)
    rest = spec[len(head) :]
    known = [*measures.MEASURES, *NICKNAMES, *_spellings()[0]]
    close = [name + rest for name in difflib.get_close_matches(head, known, n=6, cutoff=0.6)]
    close = [c for c in dict.fromkeys(close) if _valid(c)][:3]
    return f"; did you mean {' or '.join(close)}?" if close else "; 'evaltool measures' lists them"


def find_measure(spec: str) -> Measure | None:
    """The measure any spelling names (``ndcg_cut.10``, ``ndcg_cut_10``, ``nDCG(dcg='exp-log2')@10``, ``mrr``); None if unknown."""
    found = trec_measure(spec.partition(".")[0])
    if found is not None:
        return found
    if spec in _spellings()[0]:
        return _spellings()[0][spec][0]
    try:
        return _named_request(spec).measure
    except MeasureError:
        printed = trec_output_spelling(spec)
        return trec_measure(printed.partition(".")[0]) if printed else None


def prints_as_written(name: str) -> bool:
    """True when ``name`` is a named-parameter spelling, so the output name is also its ``-m`` spelling.

    >>> [prints_as_written(n) for n in ["ndcg_at_5", "nDCG@10", "ndcg_cut_10", "P_5", "map"]]
    [True, True, False, False, False]
    """
    if trec_measure(name.partition(".")[0]) is not None or name in NICKNAMES:
        return False
    try:
        return _named_request(name).names == [name]
    except MeasureError:
        return False


def direction(spelling: str):
    """Which way the measure behind any spelling improves (:class:`~evaltool.measures.base.Better`);
    None when no measure has that name.

    >>> [direction(s).value for s in ["ndcg_cut_10", "mrr", "FirstRelPos", "ARP", "num_ret", "NumRelRet"]]
    ['higher', 'higher', 'lower', 'lower', 'neither', 'neither']
    >>> direction("nonsense") is None
    True
    """
    found = find_measure(spelling)
    return found.better if found is not None else None


@lru_cache(maxsize=4096)
def measure_identity(spelling: str) -> str | None:
    """The one name of the measure (and parameters) behind any spelling of a single output; None if unknown.

    The canonical spelling of what :func:`resolve` finds: trec_eval names and output names,
    ir_measures names and aliases of one measure agree (ir_measures' canonical spelling
    where a named measure exists, else trec_eval's).

    >>> [measure_identity(s) for s in ["recip_rank", "mrr", "RR", "ndcg_cut_10", "ndcg_cut.10", "ndcg@10", "P_5"]]
    ['RR', 'RR', 'RR', 'nDCG@10', 'nDCG@10', 'nDCG@10', 'P@5']
    >>> measure_identity("map_cut_100"), measure_identity("P.5,10"), measure_identity("nonsense")
    ('AP@100', None, None)
    """
    try:
        return _resolved(spelling, suggestions=False).canonical
    except MeasureError:
        return None


def parse_measures(specs: Iterable[str] | None, *, suggestions: bool = True) -> list[Request]:
    """Resolve ``-m`` arguments to requests: trec_eval's in its output order, then the others as given.

    Parameters
    ----------
    specs : iterable of str or None
        Measure names in any accepted spelling (``ndcg_cut.10``, ``nDCG@10``, ``mrr``,
        nicknames such as ``official``); None or empty: trec_eval's default set.
    suggestions : bool
        Whether an unknown name's error suggests the closest known names.

    Returns
    -------
    list of Request
        One request per measure and parameter set; trec_eval's first, in the order it prints them.

    Raises
    ------
    MeasureError
        An unknown name, or parameters the measure does not take.

    Examples
    --------
    >>> [r.names for r in parse_measures(["nDCG@10", "P.5,10", "mrr"])]
    [['P_5', 'P_10'], ['nDCG@10'], ['mrr']]
    """
    specs = list(specs) if specs else list(DEFAULT_SETS["eval"])
    marked: set[str] = set()
    explicit: dict[str, list] = {}
    named: dict[str, Request] = {}
    for whole in specs:
        name, dot, text = whole.partition(".")
        if name in NICKNAMES:
            if dot:
                raise MeasureError(f"measure {quote(whole)}: the nickname {name} takes no parameters")
            marked.update(NICKNAMES[name])
            continue
        measure = trec_measure(name)
        if measure is None:
            try:
                request = _named_request(whole)
            except UnknownMeasure:
                printed = trec_output_spelling(whole)
                if printed is None:
                    raise MeasureError(
                        f"unknown measure {quote(whole)}{suggest(whole) if suggestions else ''}"
                    ) from None
                name, dot, text = printed.partition(".")
                measure = trec_measure(name)
            else:
                named.setdefault(request.names[0], request)
                continue
        marked.add(name)
        if not dot:
            continue
        if text == "":
            raise MeasureError(f"measure {quote(whole)}: nothing after the '.'; give parameters or drop the dot")
        if measure.params is Params.NONE:
            raise MeasureError(f"measure {quote(whole)}: {name} takes no parameters")
        explicit.setdefault(name, []).append((text, _parse_values(measure, text, whole)))

    requests = []
    for name in TREC_ORDER:
        if name not in marked:
            continue
        measure = trec_measure(name)
        given = explicit.get(name)
        if measure.params in (Params.CUTOFFS, Params.FRACTIONS):
            values = sorted({v for _, vs in given for v in vs}) if given else sorted(measure.default)
            requests.append(Request(measure, tuple(values)))
        elif measure.params in (Params.NUMBERS, Params.PAIRS):
            if not given:
                requests.append(Request(measure, measure.default))
            seen = set()
            for text, values in given or ():
                if text not in seen:
                    seen.add(text)
                    requests.append(Request(measure, tuple(values), text))
        else:
            requests.append(Request(measure))
    return requests + list(named.values())


def resolve(spelling: str) -> tuple[Measure, tuple]:
    """The measure and parameters behind one output value, whatever its spelling: ``(measure, params)``.

    Every spelling of one concept resolves alike, so whatever is keyed on a measure (a
    ``--labels`` threshold) finds it under any name: trec_eval's ``ndcg_cut.10`` and its
    output name ``ndcg_cut_10``, ir_measures' ``nDCG@10`` and the aliases ``ndcg@10``,
    ``ndcg_at_10`` all give nDCG with cutoff 10. A trec_eval measure that spells a
    named-parameter one (declared with ``same_as``) resolves to that one. ``params`` holds
    (name, value) pairs, defaults included. A spelling with several outputs (``P.5,10``,
    ``official``) is a MeasureError, as is an unknown one.

    >>> resolve("ndcg_cut_10") == resolve("ndcg_cut.10") == resolve("nDCG@10") == resolve("ndcg_at_10")
    True
    >>> resolve("mrr") == resolve("recip_rank") == resolve("RR")
    True
    >>> measure, params = resolve("P_5")
    >>> measure.name, dict(params)["cutoff"]
    ('P', 5)
    """
    request = _resolved(spelling)
    return request.measure, tuple(request.values)


def _resolved(spelling: str, *, suggestions: bool = True) -> Request:
    """The request of :func:`resolve`: a trec_eval measure that spells a named one becomes that one."""
    requests = parse_measures([spelling], suggestions=suggestions)
    outputs = [name for r in requests for name in r.names]
    if len(outputs) != 1:
        raise MeasureError(f"measure '{spelling}' gives {len(outputs)} values ({', '.join(outputs)}); name one")
    [request] = requests
    m = request.measure
    if m.params is Params.NAMED or m.equivalent is None or (m.params is not Params.CUTOFFS and request.values):
        return request
    name, given = m.equivalent
    named = named_measure(name)
    if m.params is Params.CUTOFFS:
        given[named.at_option.name] = request.values[0]
    return Request(named, tuple((o.name, given.get(o.name, o.default)) for o in named.options))
