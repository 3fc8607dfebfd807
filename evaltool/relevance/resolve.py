"""Relevance resolution: which source judges each query, turned into one ordinary Qrels.

For every query of a queries file the first source that applies wins (``--relevance
auto``; ``qrels``, ``pack`` or ``token-f1`` allow one source only):

A. **qrels** — the query's own ``relevant_ids`` / ``qrels`` (an empty list too: nothing
   is relevant), or the relevant ids its results carry: memorybench keeps a question's
   ground truth on the result side, as ``metadata.relevantIds`` (or
   ``relevantChunkIds``) of a results line, and every item of the query that carries
   the list must carry the same one (a queries file that also lists the query's
   relevant ids must list the same ones). Its relevant items are all the relevant items,
   found or not, so the ideal DCG and recall count every one of them (|REL|). A TREC
   qrels file as the first input judges every query this way.
B. **pack** — the first pack (:mod:`evaltool.relevance.packs`) that applies grades every
   retrieved item; ``total_relevant(query)`` adds the relevant items it did not find.
C. **token-f1** — a query with an expected answer: an item whose text reaches the
   F1 threshold against the answer (:mod:`evaltool.relevance.token_f1`) is relevant
   (grade 1), any other item with a text is not (grade 0); an item without text stays
   unjudged. Its relevant items are those found among all retrieved items (the total
   that recall and the ideal DCG count); with ``f1_depth=K`` (``--f1-total top-k``, the
   rule of the RAG evaluation seed: "the relevant items found in the top K") only the
   top K items of each query, ranked by trec_eval's rule, are judged by F1 and every
   item below them is not relevant, so the total is what the top K holds.

Without qrels, and for a pack without ``total_relevant``, the relevant items are only
those found in the results: the ideal DCG is built from them alone and nDCG and recall
may be overestimated for those queries (:attr:`Resolution.found_only`).

The judgments become rows of one :class:`~evaltool.inputs.Qrels`
(:class:`~evaltool.relevance.qrels.QrelsBuilder`), which :func:`evaltool.ranking.rank`
and the measures then use exactly as a TREC qrels file: there is one implementation of
every measure, whatever judged the queries.
"""

from __future__ import annotations

import json

import numpy as np

from evaltool.inputs import Item, Qrels, Run
from evaltool.errors import EvaltoolError, InputError, ParseError

# the judging machinery (QrelsBuilder, token F1) is imported by _Judge, for queries files only:
# a TREC qrels file judges its queries itself
DEFAULT_THRESHOLD = 0.3  # token F1 from which an item is relevant (--f1-threshold)
QRELS, PACK, TOKEN = "qrels", "pack", "token-f1"
STRATEGIES = (QRELS, PACK, TOKEN)
MODES = {"auto": (QRELS, PACK, TOKEN), "qrels": (QRELS,), "pack": (PACK,), "token-f1": (TOKEN,)}
LACKS = {QRELS: "no relevant_ids or qrels", PACK: "no pack applies", TOKEN: "no expected answer"}
# memorybench's keys for a question's relevant ids on each of its results (metadata of a results line)
RESULT_RELEVANT_KEYS = ("relevantIds", "relevantChunkIds")


def lacking(mode: str) -> str:
    """Why a query cannot be judged under ``mode``: ``no relevant_ids or qrels, no pack applies, ...``."""
    return ", ".join(LACKS[s] for s in MODES[mode])


class Resolution:
    """The judgments of every query, and where each came from.

    ``strategies`` maps each judged query to ``qrels``, ``pack`` or ``token-f1``;
    ``packs`` the queries a pack judged to the pack's name; ``found_only`` holds the
    queries whose relevant items are only those found; ``unjudged`` the queries of the
    queries file no source could judge; ``qrels_only`` says qrels judged every query (a
    qrels input: what the other attributes then hold need not be counted query by query).
    (A plain class: every evaluation creates one, and creating a dataclass costs its start-up
    half a millisecond.)
    """

    def __init__(
        self,
        qrels: Qrels,
        run: Run,
        strategies: dict[str, str],
        packs: dict[str, str] | None = None,
        found_only: set[str] | None = None,
        unjudged: list[str] | None = None,
        items_without_text: int = 0,
        qrels_only: bool = False,
    ):
        self.qrels, self.run, self.strategies, self.qrels_only = qrels, run, strategies, qrels_only
        self.packs = {} if packs is None else packs
        self.found_only = set() if found_only is None else found_only
        self.unjudged = [] if unjudged is None else unjudged
        self.items_without_text = items_without_text


def check_options(mode: str, f1_threshold: float) -> None:
    if mode not in MODES:
        raise EvaltoolError(f"relevance {mode!r}: expected one of {', '.join(MODES)}")
    if not 0 <= f1_threshold <= 1:
        raise EvaltoolError(f"F1 threshold {f1_threshold}: expected a number from 0 to 1")


def _in_rank_order(items: list[Item]) -> list[Item]:
    """A query's items as trec_eval ranks them: score descending, then document id descending
    (a results file that gives ranks only is ordered by rank, score = -rank)."""
    from evaltool.ranking import byte_key

    by_rank = any(item.score is None for item in items)
    return sorted(items, key=lambda item: (-item.rank if by_rank else item.score, byte_key(item.docid)), reverse=True)


def _items_by_query(results) -> dict[str, list[Item]]:
    """The retrieved items of every query; a TREC run's items have ids and scores only."""
    if not isinstance(results, Run):  # the Results of a JSONL file
        items = results.items
    else:
        run = results
        docids = run.doc_text(np.arange(len(run)))
        lines = run.lines if run.lines is not None else [None] * len(run)
        items = [
            Item(run.qid_vocab[q], d, float(s), line=None if line is None else int(line))
            for q, d, s, line in zip(run.qid_codes.tolist(), docids, run.scores.tolist(), lines)
        ]
    grouped: dict[str, list[Item]] = {}
    for item in items:
        grouped.setdefault(item.qid, []).append(item)
    return grouped


class _Judge:
    """Applies the sources to one query after another, collecting rows and provenance."""

    def __init__(self, queries, results, packs, f1_threshold: float, relevance_level: int, f1_depth: int | None = None):
        self.queries, self.packs_given, self.threshold = queries, packs, f1_threshold
        self.depth = f1_depth
        self.level = max(relevance_level, 1)
        self.results, self.grouped = results, None
        self.results_path = results.path if isinstance(results, Run) else results.run.path
        from evaltool.relevance.qrels import QrelsBuilder

        self.builder = QrelsBuilder(queries.path)
        self.loaded = None
        self.pack_of: dict[str, str] = {}
        self.found_only: set[str] = set()
        self.without_text = 0

    def items(self, qid: str) -> list[Item]:
        if self.grouped is None:
            self.grouped = _items_by_query(self.results)
        return self.grouped.get(qid, [])

    def packs(self):
        if self.loaded is None:
            from evaltool.relevance.packs import load_packs

            self.loaded = load_packs(self.packs_given)
            for pack in self.loaded:
                pack.queries_path, pack.results_path = self.queries.path, self.results_path
        return self.loaded

    def carried(self, qid: str) -> tuple[set[str], Item] | None:
        """The relevant ids the results of ``qid`` carry (``metadata.relevantIds``) and the first item
        that carries them; None when none does. Every item that carries a list must carry the same set."""
        if isinstance(self.results, Run):  # a TREC run's lines have no metadata
            return None
        found = None
        for item in self.items(qid):
            given = [key for key in RESULT_RELEVANT_KEYS if item.metadata.get(key) is not None]
            if not given:
                continue
            where = f"metadata.{given[0]}"
            if len(given) > 1:
                raise ParseError(
                    self.results_path,
                    item.line,
                    None,
                    f"either 'metadata.{given[0]}' or 'metadata.{given[1]}', not both",
                )
            value = item.metadata[given[0]]
            if not isinstance(value, list) or any(isinstance(d, bool) or not isinstance(d, (str, int)) for d in value):
                raise ParseError(
                    self.results_path,
                    item.line,
                    json.dumps(value),
                    f"'{where}' as a list of document ids (strings or integers)",
                )
            ids = {str(d) for d in value}
            if found is None:
                found = (ids, item)
            elif ids != found[0]:
                raise ParseError(
                    self.results_path,
                    item.line,
                    json.dumps(value),
                    f"the relevant ids of query {qid!r} that line {found[1].line} gives in its "
                    f"'{where}' ({len(found[0])} ids): each result of a query carries the same list",
                )
        return found

    def qrels(self, query) -> bool:
        carried = self.carried(query.qid)
        if query.relevant is None and carried is None:
            return False
        if query.relevant is None:
            ids, first = carried
            for docid in sorted(ids):
                self.builder.add(query.qid, docid, 1, first.line)
            return True
        if carried is not None and carried[0] != {d for d, g in query.relevant.items() if g >= self.level}:
            ids, first = carried
            raise InputError(
                f"{self.results_path}:{first.line}: the relevant ids of query {query.qid!r} on its "
                f"results ({len(ids)} ids) differ from those in {self.queries.path}:{query.line} "
                f"({sum(g >= self.level for g in query.relevant.values())} ids); give them once, "
                "or the same in both"
            )
        for docid, grade in query.relevant.items():
            self.builder.add(query.qid, docid, grade, query.line)
        return True

    def pack(self, query) -> bool:
        pack = next((p for p in self.packs() if p.applies(query)), None)
        if pack is None:
            return False
        relevant = 0
        for item in self.items(query.qid):
            grade = pack.grade(query, item)
            if grade is not None:
                self.builder.add(query.qid, item.docid, grade, item.line)
                relevant += grade >= self.level
        total = pack.total(query)
        if total is None:
            self.found_only.add(query.qid)
        elif total > relevant:
            self.builder.add_unretrieved(query.qid, total - relevant, self.level, query.line)
        self.pack_of[query.qid] = pack.name
        return True

    def token_f1(self, query) -> bool:
        if not query.answers:
            return False
        from evaltool.relevance.token_f1 import best_f1, tokens

        answers = [tokens(answer) for answer in query.answers]
        items = self.items(query.qid)
        below = set()
        if self.depth is not None:
            ranked = _in_rank_order(items)
            below = {id(item) for item in ranked[self.depth :]}
        for item in items:
            if id(item) in below:
                self.builder.add(query.qid, item.docid, 0, item.line)
                continue
            if item.text is None:
                self.without_text += 1
                continue
            self.builder.add(query.qid, item.docid, int(best_f1(answers, item.text) >= self.threshold), item.line)
        self.found_only.add(query.qid)
        return True

    def judge(self, query, order) -> str | None:
        """The strategy that judged ``query`` (None: none applies); a judged query always has a row."""
        before = len(self.builder.rows)
        source = {QRELS: self.qrels, PACK: self.pack, TOKEN: self.token_f1}
        strategy = next((s for s in order if source[s](query)), None)
        if strategy is not None and len(self.builder.rows) == before:
            self.builder.add_placeholder(query.qid, query.line)
        return strategy


def resolve(
    judgments,
    results,
    *,
    mode: str = "auto",
    packs=None,
    f1_threshold: float = DEFAULT_THRESHOLD,
    relevance_level: int = 1,
    f1_depth: int | None = None,
) -> Resolution:
    """Judge every query of ``judgments`` (a Qrels, or the Queries of a queries file)
    against ``results`` (a Run, or the Results of a JSONL file).

    ``packs``: pack names or ``module:attr`` specs or pack objects (default: every installed pack).
    ``f1_depth``: token F1 judges only each query's top ``f1_depth`` items (see the module docstring).
    """
    check_options(mode, f1_threshold)
    run = results if isinstance(results, Run) else results.run
    if isinstance(judgments, Qrels):
        if mode not in ("auto", "qrels"):
            raise InputError(
                f"--relevance {mode} judges the queries of a queries file (JSON or JSONL with qid, "
                f"answer, metadata, ...); {judgments.path} is a qrels file"
            )
        return Resolution(judgments, run, dict.fromkeys(judgments.queries_with(), QRELS), qrels_only=True)
    judge = _Judge(judgments, results, packs, f1_threshold, relevance_level, f1_depth)
    if mode == "pack" and not judge.packs():
        raise InputError("--relevance pack: no pack is installed; name one with --pack module:attr")
    strategies, unjudged = {}, []
    for query in judgments.queries:
        strategy = judge.judge(query, MODES[mode])
        if strategy is None:
            unjudged.append(query.qid)
        else:
            strategies[query.qid] = strategy
    if not strategies:
        raise InputError(f"no query of {judgments.path} can be judged with --relevance {mode} ({lacking(mode)})")
    qrels = judge.builder.build(lambda ids: run.keys_for(ids) >= 0)
    return Resolution(qrels, run, strategies, judge.pack_of, judge.found_only, unjudged, judge.without_text)


def strategy_used(counts: dict[str, int]) -> str:
    """The one strategy that judged every query, or ``mixed``."""
    used = [s for s in STRATEGIES if counts.get(s)]
    return used[0] if len(used) == 1 else "mixed"


def relevance_meta(
    resolution: Resolution | None,
    qids: list[str],
    qrels: Qrels,
    *,
    mode: str,
    relevance_level: int,
    cutoffs: list[int],
    f1_threshold: float,
    inputs: dict,
) -> dict:
    """The provenance summary of the evaluated queries ``qids`` (the strategies count those)."""
    counts = dict.fromkeys(STRATEGIES, 0)
    packs: dict[str, int] = {}
    found_only = []
    if resolution is None or resolution.qrels_only:
        counts[QRELS] = len(qids)
    else:
        for qid in qids:
            counts[resolution.strategies.get(qid, QRELS)] += 1
        for qid in qids:
            name = resolution.packs.get(qid)
            if name:
                packs[name] = packs.get(name, 0) + 1
        found_only = [q for q in qids if q in resolution.found_only]
    relevant_qids = qrels.memo.get(("relevant", relevance_level))
    if relevant_qids is None:
        relevant_qids = frozenset(qrels.queries_with(qrels.grades >= relevance_level))
        qrels.memo["relevant", relevance_level] = relevant_qids
    return {
        "strategy_used": strategy_used(counts),
        "strategy_counts": counts,
        "queries_with_relevant": len(relevant_qids.intersection(qids)),
        "total": len(qids),
        "k": cutoffs,
        "f1_threshold": f1_threshold,
        "mode": mode,
        "inputs": inputs,
        "packs": packs,
        "relevant_found_only": len(found_only),
        "unjudged_queries": list(resolution.unjudged) if resolution else [],
        "items_without_text": resolution.items_without_text if resolution else 0,
    }
