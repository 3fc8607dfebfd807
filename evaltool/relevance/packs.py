"""Packs: relevance judgments a benchmark defines for itself.

A pack is any object with

* ``is_relevant(query, item) -> grade``: the grade of one retrieved item for one query
  (an int, or a bool for 1/0; None leaves the item unjudged). ``query`` is an
  :class:`~evaltool.inputs.Query`, ``item`` an :class:`~evaltool.inputs.Item`;
* optionally ``total_relevant(query) -> int``: how many items are relevant (grade >=
  ``-l``, at least 1) in the whole collection, found or not. The ideal DCG and recall then
  count them all (should more items be found relevant than it says, as several turns of
  one relevant session can be, the found ones count); without it (or when it returns
  None) only the relevant items found in the results count, as with token F1;
* optionally ``applies(query) -> bool``: whether the pack judges this query at all
  (default: every query). A query no pack applies to falls through to token F1.

Packs are found through the entry-point group ``evaltool.packs`` (a class is
instantiated without arguments) or named on the command line as ``--pack module:attr``.
Without ``--pack`` every installed pack is consulted, in name order; the first that
applies to a query judges it. evaltool installs two, both binary and both by ids:

* ``locomo`` (:class:`LoCoMoPack`): a question's ``evidence`` dialogue ids;
* ``longmemeval`` (:class:`LongMemEvalPack`): a question's ``answer_corpus_ids``.

Whatever a pack raises or returns that is not a grade stops the evaluation with one
message naming the pack, the method, the query and the item.
"""

from __future__ import annotations

import importlib
import numbers
import re
from dataclasses import dataclass
from importlib.metadata import entry_points

from evaltool.inputs import Item, Query
from evaltool.errors import PackError

ENTRY_POINT_GROUP = "evaltool.packs"


def _place(path: str | None, line: int | None) -> str:
    if line is None:
        return ""
    return f" ({path}:{line})" if path else f" (line {line})"


@dataclass
class LoadedPack:
    """A pack object with the name it was found under; every call is checked.

    ``queries_path`` and ``results_path`` only serve the messages (file:line of the query
    and of the item).
    """

    name: str
    pack: object
    queries_path: str | None = None
    results_path: str | None = None

    def _where(self, query: Query, item: Item | None = None) -> str:
        text = f"query {query.qid!r}{_place(self.queries_path, query.line)}"
        if item is not None:
            text += f", item {item.docid!r}{_place(self.results_path, item.line)}"
        return text

    def _call(self, method: str, query: Query, *args):
        try:
            return getattr(self.pack, method)(query, *args)
        except Exception as exc:  # a plugin may raise anything: report it as bad input, with where
            raise PackError(
                f"pack {self.name!r} raised {type(exc).__name__}: {exc} in {method}() for {self._where(query, *args)}"
            ) from None

    def applies(self, query: Query) -> bool:
        if not hasattr(self.pack, "applies"):
            return True
        return bool(self._call("applies", query))

    def grade(self, query: Query, item: Item) -> int | None:
        value = self._call("is_relevant", query, item)
        if value is None:
            return None
        if not isinstance(value, numbers.Integral):
            raise PackError(
                f"pack {self.name!r}: is_relevant() returned {value!r} for {self._where(query, item)}; "
                "expected an integer grade, a bool or None"
            )
        return int(value)

    def total(self, query: Query) -> int | None:
        if not hasattr(self.pack, "total_relevant"):
            return None
        value = self._call("total_relevant", query)
        if value is not None and (isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0):
            raise PackError(
                f"pack {self.name!r}: total_relevant() returned {value!r} for {self._where(query)}; "
                "expected a whole number of 0 or more, or None"
            )
        return None if value is None else int(value)


def _instance(name: str, target) -> LoadedPack:
    if isinstance(target, type):
        try:
            target = target()
        except Exception as exc:
            raise PackError(f"pack {name!r}: {target.__name__}() raised {type(exc).__name__}: {exc}") from None
    if not callable(getattr(target, "is_relevant", None)):
        raise PackError(f"pack {name!r} has no is_relevant(query, item) method")
    return LoadedPack(name, target)


def installed() -> dict:
    """Entry points of the ``evaltool.packs`` group, by name."""
    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}


def _from_module(spec: str) -> LoadedPack:
    module_name, _, attr = spec.partition(":")
    try:
        target = importlib.import_module(module_name)
    except Exception as exc:
        raise PackError(f"--pack {spec}: cannot import module {module_name!r} ({type(exc).__name__}: {exc})") from None
    for part in attr.split("."):
        if not hasattr(target, part):
            raise PackError(f"--pack {spec}: module {module_name!r} has no attribute {attr!r}")
        target = getattr(target, part)
    return _instance(spec, target)


def load_pack(spec: str) -> LoadedPack:
    """``module:attr``, or the name of an installed pack."""
    if ":" in spec:
        return _from_module(spec)
    found = installed()
    if spec not in found:
        known = ", ".join(sorted(found)) or "none"
        raise PackError(f"no pack named {spec!r} (installed: {known}); name one of them or give module:attr")
    try:
        target = found[spec].load()
    except Exception as exc:
        raise PackError(f"pack {spec!r} ({found[spec].value}) cannot be loaded: {type(exc).__name__}: {exc}") from None
    return _instance(spec, target)


def load_packs(specs=None) -> list[LoadedPack]:
    """The packs named (or pack objects given), else every installed pack in name order."""
    if not specs:
        return [load_pack(name) for name in sorted(installed())]
    return [load_pack(s) if isinstance(s, str) else _instance(type(s).__name__, s) for s in specs]


# ---------------------------------------------------------------- the packs evaltool ships


def _id_list(query: Query, *keys: str):
    """The first of ``keys`` in the query's metadata, else in the query object; None when absent."""
    key = next((k for k in keys if k in query.metadata or k in query.fields), keys[0])
    value = query.metadata.get(key, query.fields.get(key))
    if value is None:
        return None
    values = value if isinstance(value, list) else [value]
    if any(isinstance(v, (bool, dict, list)) or v is None for v in values):
        raise ValueError(f"'{key}' should be an id or a list of ids, not {value!r}")
    return {str(v).strip() for v in values} - {""}


class LoCoMoPack:
    """LoCoMo (Maharana et al., ACL 2024, arXiv:2402.17753): judged by dialogue evidence.

    Each LoCoMo question lists its ``evidence``: the dialogue turns that answer it, as ids
    ``D<session>:<turn>`` (``["D1:3", "D2:8"]``), in the query's ``metadata`` (or at the top
    level of the query object, where LoCoMo's own files keep it). A retrieved item is
    relevant (grade 1) when one of its dialogue ids is evidence: its ``docid``, the ids
    ``D<n>:<n>`` written inside the docid (``conv-26_D1:3``), and ``metadata.dia_id`` /
    ``metadata.dia_ids``. The number of relevant items is the number of evidence turns.

    >>> pack = LoCoMoPack()
    >>> q = Query("q1", metadata={"evidence": ["D1:3", "D2:8"]})
    >>> pack.is_relevant(q, Item("q1", "conv-26_D1:3")), pack.is_relevant(q, Item("q1", "D1:30")), pack.total_relevant(q)
    (1, 0, 2)
    """

    DIALOGUE_ID = re.compile(r"(?<![A-Za-z0-9])D\d+:\d+(?!\d)")

    def applies(self, query: Query) -> bool:
        return bool(_id_list(query, "evidence"))

    def is_relevant(self, query: Query, item: Item) -> int:
        ids = {item.docid, *self.DIALOGUE_ID.findall(item.docid)}
        for key in ("dia_id", "dia_ids"):
            value = item.metadata.get(key)
            ids.update(str(v) for v in (value if isinstance(value, list) else [value]) if v is not None)
        return int(bool(ids & _id_list(query, "evidence")))

    def total_relevant(self, query: Query) -> int:
        return len(_id_list(query, "evidence"))


class LongMemEvalPack:
    """LongMemEval (Wu et al., ICLR 2025, arXiv:2410.10813): judged by answer-corpus ids.

    A question lists ``answer_corpus_ids`` (or ``answerCorpusIds``, as memorybench writes it):
    the ids of the history sessions holding its answer, in ``metadata`` (or at the top level
    of the query object). A retrieved item is
    relevant (grade 1) when its corpus id (``metadata.corpus_id``, else its ``docid``) is
    one of them, or is a turn of one of them (``<session id>_<turn number>``). The number
    of relevant items is the number of answer sessions. A question that lists none (an
    abstention question) has nothing relevant and scores 0; LongMemEval's own retrieval
    metrics leave those questions out, so drop them from the queries file to match.

    >>> pack = LongMemEvalPack()
    >>> q = Query("q1", metadata={"answer_corpus_ids": ["answer_4be1_1"]})
    >>> pack.is_relevant(q, Item("q1", "answer_4be1_1_3")), pack.is_relevant(q, Item("q1", "noans_9")), pack.total_relevant(q)
    (1, 0, 1)
    >>> pack.total_relevant(Query("q2", metadata={"answerCorpusIds": ["s1", "s2"]}))
    2
    """

    KEYS = ("answer_corpus_ids", "answerCorpusIds")

    TURN_SUFFIX = re.compile(r"_\d+$")

    def applies(self, query: Query) -> bool:
        return _id_list(query, *self.KEYS) is not None

    def is_relevant(self, query: Query, item: Item) -> int:
        corpus_id = str(item.metadata.get("corpus_id") or item.docid)
        wanted = _id_list(query, *self.KEYS)
        return int(corpus_id in wanted or self.TURN_SUFFIX.sub("", corpus_id) in wanted)

    def total_relevant(self, query: Query) -> int:
        return len(_id_list(query, *self.KEYS))
