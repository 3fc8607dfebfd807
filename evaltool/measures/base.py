"""How a measure is declared, and the vectorised helpers kernels share.

A measure is one decorated kernel. The decorator records every fact about it: its
name, how its parameters are written, its defaults, how per-query values are combined
into the summary, and what it prints. The kernel takes the whole
:class:`~evaltool.ranking.RankedBatch` and returns one column per output name.

Two kinds of declaration share the decorator:

* trec_eval measures (``P``, ``ndcg_cut``...): parameters after a dot (``P.5,10``),
  trec_eval's output names (``P_5``);
* named-parameter measures in ir_measures' syntax (``nDCG(dcg='exp-log2')@10``), declared
  with ``options=``: each :class:`Option` is a parameter, ``@`` sets the one marked
  ``at``, ``aliases`` are the other spellings of the name (``NDCG``, ``ndcg``,
  ``ndcg_at_k`` for ``ndcg_at_10``). The output is named as the user wrote it.
"""

from __future__ import annotations

import math
from enum import Enum
from collections.abc import Callable

import numpy as np

from evaltool.errors import MeasureError

MIN_GEO_MEAN = 0.00001
TREC_EVAL = "trec_eval 10.0"
PYTREC = "ir_measures (pytrec_eval)"
INFAP_EPSILON = 0.00001


class Params(Enum):
    """How a measure's parameters are written after the dot (``-m name.params``)."""

    NONE = "none"  # map
    CUTOFFS = "cutoffs"  # P.5,10: positive integers, sorted, one output each
    FRACTIONS = "fractions"  # iprec_at_recall.0.1,0.5: numbers, sorted, one output each
    NUMBERS = "numbers"  # utility.1,-1,0,0: an ordered list, one output
    PAIRS = "pairs"  # ndcg.1=3,2=9 or rbp.p=0.8: name=value list, one output
    NAMED = "named"  # nDCG(dcg='exp-log2')@10: ir_measures syntax, one output as written


class Agg(Enum):
    """How per-query values become the summary value."""

    MEAN = "mean"
    SUM = "sum"
    GEOMETRIC = "geometric"  # kernel returns log values; summary is exp(mean)
    COUNT = "count"  # number of queries
    NONE = "none"  # no summary (relstring)
    RUNID = "runid"  # the run tag
    MEAN_DEFINED = "mean over queries with a value"  # nan (no value) is left out


class Better(Enum):
    """Which way a measure's value improves: what ``history check``, ``check --allow-improvement``,
    ``compare``'s wins and losses and the dashboard's colours read.

    Most measures are better higher; ranks and positions (``FirstRelPos``, ``ARP``) lower.
    Counts (``num_ret``, ``num_rel_ret``) and facts about the qrels or the judging rather than
    the ranking (``ideal_dcg``, ``Judged``, ``unj``, ``rbp_resid``) are neither: a change
    in them is a change, not a gain or a loss.

    >>> Better.HIGHER.gain(0.7, 0.5) > 0, Better.LOWER.gain(3.0, 2.0) < 0, Better.NEITHER.gain(5, 3)
    (True, True, None)
    """

    HIGHER = "higher"
    LOWER = "lower"
    NEITHER = "neither"

    def gain(self, new: float, old: float) -> float | None:
        """How much better ``new`` is than ``old`` (negative: worse); None when neither way is better."""
        if self is Better.NEITHER:
            return None
        return new - old if self is Better.HIGHER else old - new


_KIND_NAMES = {
    int: "an integer",
    float: "a number",
    bool: "True or False",
    str: "a string",
    dict: "a dict {grade: gain}",
}


class Declared:
    """Equality, hashing and repr by field, for the read-only declarations below: what their
    frozen dataclasses gave, without creating them at import (about 1.5 ms for Measure's 20
    fields, paid by every evaluation).

    >>> CUTOFF == Option("cutoff", int, doc="rank cutoff k (written @k)", at=True, minimum=1), CUTOFF == REL
    (True, False)
    """

    __slots__ = ()

    def _fields(self) -> tuple:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __eq__(self, other):
        return self._fields() == other._fields() if type(other) is type(self) else NotImplemented

    def __hash__(self):
        return hash(self._fields())

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"{type(self).__name__}({shown})"


class Option(Declared):
    """A named parameter of a named-parameter measure, as in ``nDCG(dcg='exp-log2')@10``.

    ``default`` None means "not given" (the kernel decides, e.g. ``rel`` falls back to
    ``-l``); ``at`` marks the parameter that ``@`` sets; ``required`` ones must be given;
    ``needs_at`` ones make sense only together with the ``@`` parameter. ``minimum`` and
    ``maximum`` bound a number inclusively, ``above`` exclusively.
    """

    __slots__ = (
        "name",
        "kind",
        "default",
        "choices",
        "doc",
        "at",
        "required",
        "minimum",
        "needs_at",
        "maximum",
        "above",
    )

    def __init__(
        self,
        name: str,
        kind: type,
        default: object = None,
        choices: tuple = (),
        doc: str = "",
        at: bool = False,
        required: bool = False,
        minimum: float | None = None,
        needs_at: bool = False,
        maximum: float | None = None,
        above: float | None = None,
    ):
        self.name, self.kind, self.default, self.choices, self.doc = name, kind, default, choices, doc
        self.at, self.required, self.minimum, self.maximum, self.above = at, required, minimum, maximum, above
        self.needs_at = needs_at  # a value other than the default needs the @ parameter too

    def check(self, value, owner: str, whole: str):
        """``value`` as this parameter holds it (dicts become sorted pairs), or MeasureError."""
        where = f"measure '{whole}': {self.name} of {owner}"
        if self.kind is dict:
            if not isinstance(value, dict) or not all(
                isinstance(k, int)
                and not isinstance(k, bool)
                and k >= 0
                and isinstance(v, (int, float))
                and not isinstance(v, bool)
                and math.isfinite(v)
                and v >= 0
                for k, v in value.items()
            ):
                raise MeasureError(f"{where} must be {_KIND_NAMES[dict]} with grades and gains >= 0, not {value!r}")
            return tuple(sorted((k, float(v)) for k, v in value.items() if k != v))
        if self.kind is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if not isinstance(value, self.kind) or (self.kind is not bool and isinstance(value, bool)):
            raise MeasureError(f"{where} must be {_KIND_NAMES[self.kind]}, not {value!r}")
        if self.kind is float and not math.isfinite(value):
            raise MeasureError(f"{where} must be a finite number, not {value!r}")
        if self.choices and value not in self.choices:
            raise MeasureError(f"{where} must be one of {', '.join(map(repr, self.choices))}, not {value!r}")
        if self.minimum is not None and value < self.minimum:
            raise MeasureError(f"{where} must be at least {self.minimum:g}, not {value!r}")
        if self.maximum is not None and value > self.maximum:
            raise MeasureError(f"{where} must be at most {self.maximum:g}, not {value!r}")
        if self.above is not None and value <= self.above:
            raise MeasureError(f"{where} must be above {self.above:g}, not {value!r}")
        return value

    def text(self, value) -> str:
        """How the canonical spelling writes ``value`` (ir_measures' repr)."""
        if self.kind is dict:
            return "{" + ",".join(f"{k}:{v:g}" for k, v in value) + "}"
        if self.at:
            return f"{value:g}" if isinstance(value, float) else str(value)
        return repr(value)

    def describe(self) -> str:
        default = "{}" if self.kind is dict else repr(self.default)
        shown = f"{self.name}={default}" if self.default is not None else self.name
        choices = f" (one of {', '.join(map(repr, self.choices))})" if self.choices else ""
        return f"{shown}{choices}: {self.doc}"


class Measure(Declared):
    """One declared measure: every fact :func:`measure` records about its kernel (read-only)."""

    __slots__ = (
        "name",
        "kernel",
        "params",
        "default",
        "agg",
        "integer",
        "per_query",
        "on_missing",
        "doc",
        "family",
        "arity",
        "on_missing_bare",
        "options",
        "aliases",
        "percent",
        "same_as",
        "complete_summary",
        "subtopics",
        "check",
        "oracle",
        "better",
    )

    def __init__(
        self,
        name: str,
        kernel: Callable,
        params: Params = Params.NONE,
        default: tuple = (),
        agg: Agg = Agg.MEAN,
        integer: bool = False,
        per_query: bool = True,
        on_missing: float | str | None = None,
        doc: str = "",
        family: str = "",
        *,
        arity: int | None = None,
        on_missing_bare: float | str | None = None,
        options: tuple[Option, ...] = (),
        aliases: tuple = (),
        percent: bool = False,
        same_as: str | tuple | None = None,
        complete_summary: Callable | None = None,
        subtopics: bool = False,
        check: Callable | None = None,
        oracle: str = "",
        better: Better = Better.HIGHER,
    ):
        self.name, self.kernel, self.params, self.default, self.agg = name, kernel, params, default, agg
        self.integer, self.per_query, self.on_missing, self.doc, self.family = (
            integer,
            per_query,
            on_missing,
            doc,
            family,
        )
        self.arity = arity  # exact number of parameters, where the measure needs one
        self.on_missing_bare = on_missing_bare
        self.options = options  # named-parameter measures only
        self.aliases = aliases  # other spellings: "NDCG", "ndcg_at_k", ("SetRelP", {"relative": True})
        self.percent = percent  # reports that show percentages show this one as one (P, recall)
        self.same_as = same_as  # trec_eval measures: the named measure each output equals
        self.complete_summary = complete_summary  # with -c, the summary is this function of the qrels instead
        self.subtopics = subtopics  # the kernel reads judgments per subtopic (batch.intents)
        self.check = check  # named parameters: {name: value} -> what is wrong with them together
        self.oracle = oracle  # the peer whose numbers the tests compare it with ("same numbers as")
        self.better = better  # which way its value improves (Better)

    @property
    def equivalent(self) -> tuple[str, dict] | None:
        """(named measure, fixed parameters) that every output of this trec_eval measure equals, or None.

        A cutoff (``ndcg_cut_10``) sets the named measure's ``@`` parameter (``nDCG@10``).
        """
        if self.same_as is None:
            return None
        return (self.same_as, {}) if isinstance(self.same_as, str) else (self.same_as[0], dict(self.same_as[1]))

    @property
    def integer_summary(self) -> bool:
        """Whether the summary is an integer too: a sum or a count of integers is (``num_ret``), a mean is
        not (``FirstRelPos``: integer ranks, their mean 1.5)."""
        return self.integer and self.agg in (Agg.SUM, Agg.COUNT)

    def summary_line(self) -> str:
        return (self.doc.strip().splitlines() or [""])[0]

    @property
    def at_option(self) -> Option | None:
        return next((o for o in self.options if o.at), None)


REGISTRY: dict[str, Measure] = {}  # trec_eval measures, by trec_eval name
NAMED_REGISTRY: dict[str, Measure] = {}  # named-parameter measures, by canonical name


def measure(
    name: str,
    *,
    params: Params = Params.NONE,
    default: tuple = (),
    agg: Agg = Agg.MEAN,
    integer: bool = False,
    per_query: bool = True,
    on_missing=None,
    on_missing_bare=None,
    arity: int | None = None,
    options: tuple[Option, ...] | None = None,
    aliases: tuple = (),
    percent: bool = False,
    same_as: str | tuple | None = None,
    complete_summary: Callable | None = None,
    check: Callable | None = None,
    oracle: str | None = None,
    subtopics: bool = False,
    better: Better = Better.HIGHER,
):
    """Declare a measure. ``on_missing`` overrides the value of a query absent from the run (``-c``).

    ``on_missing_bare`` does the same only when the output name is the bare measure name:
    trec_eval resets the stand-in ranking of a missing query by exact name (``utility``,
    ``rbp_resid``, ``relstring``), so ``utility_1,-1,0,0`` keeps the value computed on it.
    With ``options`` the measure takes named parameters (ir_measures' syntax) and
    ``aliases`` lists its other spellings. ``percent`` marks a measure that reports read as
    a percentage; ``same_as`` names the named-parameter measure a trec_eval measure spells
    (``ndcg_cut`` is ``nDCG``, a cutoff being its ``@``), so both are one concept;
    ``complete_summary(qrels)`` replaces the summary under ``-c`` (trec_eval's ``num_rel``);
    ``check({name: value})`` says what is wrong with named parameters together (None if nothing).
    ``oracle`` names the peer whose numbers the tests compare the measure with (the README's
    "same numbers as"); trec_eval measures are trec_eval 10.0's.
    ``integer`` marks per-query values that are whole numbers (counts, ranks), printed as
    integers; a query without a value keeps nan; the summary is an integer too only for a
    sum or a count (:attr:`Measure.integer_summary`).
    ``subtopics`` marks a kernel that reads judgments per subtopic, so the qrels are read
    as subtopic qrels (:mod:`evaltool.io.subtopics`).
    ``better`` says which way the value improves (:class:`Better`): higher unless declared.
    """
    named = options is not None
    registry = NAMED_REGISTRY if named else REGISTRY

    def register(kernel):
        if name in registry:
            raise RuntimeError(f"measure {name} declared twice")
        registry[name] = Measure(
            name,
            kernel,
            Params.NAMED if named else params,
            tuple(default),
            agg,
            integer,
            per_query,
            on_missing,
            kernel.__doc__ or "",
            kernel.__module__.rsplit(".", 1)[-1],
            arity=arity,
            on_missing_bare=on_missing_bare,
            options=tuple(options or ()),
            aliases=tuple(aliases),
            percent=percent,
            same_as=same_as,
            complete_summary=complete_summary,
            check=check,
            oracle=oracle if oracle is not None else ("" if named else TREC_EVAL),
            subtopics=subtopics,
            better=better,
        )
        return kernel

    return register


# the parameters many named-parameter measures share (ir_measures' names and meanings)
CUTOFF = Option("cutoff", int, doc="rank cutoff k (written @k)", at=True, minimum=1)
CUTOFF_REQUIRED = Option("cutoff", int, doc="rank cutoff k (written @k; required)", at=True, required=True, minimum=1)
REL = Option("rel", int, doc="minimum grade that counts as relevant (default: -l, which defaults to 1)", minimum=0)
JUDGED_ONLY = Option("judged_only", bool, False, doc="drop retrieved documents without a judgment first (as -J)")


class Settings:
    """The parameters of one named-parameter request, as attributes (``p.cutoff``, ``p.rel``)."""

    def __init__(self, pairs):
        self.__dict__.update(pairs)

    @classmethod
    def defaults(cls, options, **given) -> Settings:
        """Every option at its default, except those ``given``."""
        return cls([(o.name, given.get(o.name, o.default)) for o in options])

    def __repr__(self) -> str:
        return f"Settings({self.__dict__})"


class Request(Declared):
    """A measure with resolved parameters; knows its output names and its canonical spelling.

    For a named-parameter measure ``values`` holds every (option, value) pair, defaults
    included, and ``spelling`` what the user wrote (the output name).
    """

    __slots__ = ("measure", "values", "printable", "spelling")

    def __init__(self, measure: Measure, values: tuple = (), printable: str | None = None, spelling: str | None = None):
        self.measure, self.values, self.printable, self.spelling = measure, values, printable, spelling

    @property
    def names(self) -> list[str]:
        m = self.measure
        if m.params is Params.NAMED:
            return [self.spelling or self.canonical]
        if m.params is Params.CUTOFFS:
            return [f"{m.name}_{c}" for c in self.values]
        if m.params is Params.FRACTIONS:
            return [f"{m.name}_{c:3.2f}" for c in self.values]
        if self.printable is not None:
            return [f"{m.name}_{self.printable}"]
        return [m.name]

    @property
    def canonical(self) -> str:
        """The one spelling every equivalent request has: ``P.5,10``, ``nDCG(gains={2:3})@10``."""
        m = self.measure
        if m.params is Params.NAMED:
            given = dict(self.values)
            shown = [f"{o.name}={o.text(given[o.name])}" for o in m.options if not o.at and given[o.name] != o.default]
            at = m.at_option
            text = m.name + (f"({','.join(shown)})" if shown else "")
            return text + (f"@{at.text(given[at.name])}" if at and given[at.name] is not None else "")
        if m.params in (Params.CUTOFFS, Params.FRACTIONS):
            if self.values == tuple(sorted(m.default)):
                return m.name
            return f"{m.name}." + ",".join(f"{v:g}" if isinstance(v, float) else str(v) for v in self.values)
        if m.params in (Params.NUMBERS, Params.PAIRS) and self.printable is not None:
            return f"{m.name}.{self.printable}"
        return m.name

    def compute(self, batch):
        params = Settings(self.values) if self.measure.params is Params.NAMED else self.values
        out = self.measure.kernel(batch, params)
        reset = self.measure.on_missing_bare
        bare = reset is not None and self.names == [self.measure.name] and batch.missing.any()
        if isinstance(out, list):
            return [reset if bare and batch.missing[i] else v for i, v in enumerate(out)]
        out = np.asarray(out, dtype=np.float64).reshape(batch.n_queries, -1)
        if bare:
            out = out.copy()
            out[batch.missing] = reset
        return out


# ---------------------------------------------------------------- shared helpers

_LOG2 = np.zeros(0)


def log2_int(n) -> np.ndarray:
    """log2 of non-negative integers from the C library (bit-identical to trec_eval)."""
    global _LOG2
    n = np.asarray(n, dtype=np.int64)
    top = int(n.max()) + 1 if n.size else 1
    table = _LOG2  # one reference: a thread growing the table meanwhile cannot shrink this one
    if top > len(table):
        size = max(top, 2 * len(table), 1024)
        table = _LOG2 = np.array([-math.inf] + [math.log2(i) for i in range(1, size)])
    return table[n]


def discount(rank) -> np.ndarray:
    """trec_eval's DCG discount of 0-based ``rank``: log2(rank + 2)."""
    return log2_int(np.asarray(rank, dtype=np.int64) + 2)


def powers(p: float, n: int) -> np.ndarray:
    """p**0 .. p**n by repeated multiplication, the way trec_eval accumulates them."""
    steps = np.full(n + 1, p, dtype=np.float64)
    steps[0] = 1.0
    return np.cumprod(steps)


def safe_div(num, den) -> np.ndarray:
    """num / den where den != 0, else 0 (trec_eval leaves such values at zero).

    >>> safe_div(np.array([1.0, 2.0]), np.array([4, 0])).tolist(), safe_div(np.array([3.0]), 2).tolist()
    ([0.25, 0.0], [1.5])
    """
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    nonzero = den != 0
    if (num.ndim or den.ndim) and nonzero.all():  # nothing left at zero: the division alone
        return num / den
    out = np.zeros(np.broadcast(num, den).shape)
    np.divide(num, den, out=out, where=nonzero)
    return out


def stack_columns(columns: list) -> np.ndarray:
    """``np.column_stack(columns)``: one column per array; a single one-dimensional array becomes
    its one column as it is (a view, no copy), the common case of one cutoff.

    >>> stack_columns([np.array([1.0, 2.0])]).tolist(), stack_columns([np.array([1, 2]), np.array([3, 4])]).tolist()
    ([[1.0], [2.0]], [[1, 3], [2, 4]])
    """
    if len(columns) == 1 and np.ndim(columns[0]) == 1:
        return np.asarray(columns[0]).reshape(-1, 1)
    return np.column_stack(columns)


def segment_cumsum(values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Running sum within each CSR segment, added in order like a C loop."""
    values = np.asarray(values, dtype=np.float64)
    lengths = np.diff(offsets)
    n = len(values)
    if n == 0:
        return values.copy()
    width = int(lengths.max())
    seg = np.repeat(np.arange(len(lengths)), lengths)
    pos = np.arange(n) - offsets[seg]
    if len(lengths) * width <= 4 * n + 1_000_000:
        grid = np.zeros((len(lengths), width))
        grid[seg, pos] = values
        return np.cumsum(grid, axis=1)[seg, pos]
    cum = np.cumsum(values)
    before = np.concatenate(([0.0], cum))[offsets[:-1]]
    return cum - before[seg]


def pair_gains(pairs: tuple) -> dict[int, float]:
    """Gains given as ``level=gain`` pairs; names that are not integers are other parameters."""
    gains = {}
    for key, value in pairs:
        body = key[1:] if key[:1] in "+-" else key
        if body.isdigit():
            level = int(key)
            if level < 0:
                raise MeasureError(f"a gain for the negative relevance level {level} is not supported")
            gains[level] = value
    return gains


def gain_function(table=(), exponential: bool = False):
    """The one grade-to-gain mapping of every graded measure.

    A grade gains itself unless ``table`` (``{grade: gain}`` or pairs) gives its gain;
    negative grades (judged "unjudged") and documents outside the qrels gain 0. With
    ``exponential`` the result g becomes 2^g - 1 (Burges et al. 2005, gdeval's ``exp-log2``).

    >>> gain_function({1: 3.0})(np.array([2, 1, 0, -1])).tolist()
    [2.0, 3.0, 0.0, 0.0]
    >>> gain_function((), exponential=True)(np.array([3, 1, -2])).tolist()
    [7.0, 1.0, 0.0]
    """
    table = dict(table)

    def gain_of(grades) -> np.ndarray:
        grades = np.asarray(grades)
        gains = np.maximum(grades, 0, dtype=np.float64)  # (a grade is an integer: exact as a float)
        for grade, gain in table.items():
            gains[grades == grade] = gain
        return np.exp2(gains) - 1.0 if exponential else gains

    return gain_of


def pair_value(pairs: tuple, name: str, default: float) -> float:
    for key, value in pairs:
        if key == name:
            return value
    return default
