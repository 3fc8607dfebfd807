"""The ordering rules alone (ranking.py), through files, dicts and the command line: documents by
score descending, ties by document id descending in byte order (trec_eval's ``comp_sim_docno``),
the rank column ignored, query ids compared and printed in byte order.

Every expected value is worked out by hand in the comment next to it.
"""

from __future__ import annotations

import numpy as np
import pytest

from evaltool import evaluate
from evaltool.io.frames import qrels_from_dict, run_from_dict
from evaltool.ranking import byte_key, rank
from tests.support.helpers import invoke, rows, score, write


def test_rank_column_is_ignored_for_ordering(tmp_path):
    qrels = "q1 0 dA 1\nq1 0 dB 0\nq1 0 dC 1\n"
    # file order dC, dA, dB; rank column says dA, dC, dB; scores say dB (0.9), dC (0.5), dA (0.1)
    run = "q1 Q0 dC 2 0.5 r\nq1 Q0 dA 1 0.1 r\nq1 Q0 dB 3 0.9 r\n"
    result = score(tmp_path, qrels, run, ["recip_rank", "P.1,2,3", "map", "relstring"])
    # by score: 0 1 1 -> recip_rank 1/2; P_1 0, P_2 1/2, P_3 2/3; AP (1/2 + 2/3) / 2 = 7/12
    assert result.per_query["q1"]["relstring"] == "011"
    assert result.summary == {
        "map": pytest.approx(7 / 12), "recip_rank": 0.5,
        "P_1": 0.0, "P_2": 0.5, "P_3": pytest.approx(2 / 3),
    }


TIE_CASES = [
    # (documents in file order with rank column ascending, relevant doc, expected relstring)
    # byte order: '9' (0x39) > '1' (0x31), so doc9 > doc10 and doc9 comes first;
    # numeric or "natural" ordering would put doc10 first.
    (["doc10", "doc9"], "doc10", "-1"),
    # 'a' (0x61) > 'B' (0x42): a first; case-insensitive descending would put B first.
    (["B", "a"], "B", "-1"),
    # 'é' is C3 A9 in UTF-8, above every ASCII byte: éclair before zebra.
    (["zebra", "éclair"], "zebra", "-1"),
    # '~' (0x7E) vs 'é' (0xC3): é first even though ASCII '~' sorts after all letters
    (["~", "é"], "~", "-1"),
    # prefix: 'd1' < 'd1x' (shorter first in byte order), so descending puts d1x first
    (["d1", "d1x"], "d1", "-1"),
    # '\u00e9' (2 bytes) vs '\u4e2d' (3 bytes, E4 B8 AD) vs 'Z'
    (["Z", "é", "中"], "Z", "--1"),
]


@pytest.mark.parametrize("docs,relevant,relstring", TIE_CASES, ids=[" ".join(c[0]) for c in TIE_CASES])
def test_tied_scores_order_by_docid_descending_in_byte_order(tmp_path, docs, relevant, relstring):
    qrels = f"q1 0 {relevant} 1\n"
    run = "".join(f"q1 Q0 {doc} {i} 1.5 r\n" for i, doc in enumerate(docs, 1))
    result = score(tmp_path, qrels, run, ["recip_rank", "relstring"])
    position = relstring.index("1") + 1
    assert result.per_query["q1"] == {"recip_rank": pytest.approx(1 / position), "relstring": relstring}
    # the same through the dict API, and whatever order the file lists the lines in
    reverse = "".join(f"q1 Q0 {doc} {i} 1.5 r\n" for i, doc in enumerate(reversed(docs), 1))
    assert score(tmp_path, qrels, reverse, ["relstring"]).per_query["q1"]["relstring"] == relstring
    as_dict = evaluate({"q1": {relevant: 1}}, {"q1": {d: 1.5 for d in docs}}, ["relstring"], per_query=True)
    assert as_dict.per_query["q1"]["relstring"] == relstring


def test_ties_break_only_within_equal_scores(tmp_path):
    # scores 2 2 1 1 1 0.5; ties: {b, a} -> b a; {Z, doc9, doc10} -> doc9 doc10 Z
    # grades: a 1, b 0, doc10 2, doc9 0, Z 3, z 1 -> relstring 0 1 0 2 3 1
    qrels = "q 0 a 1\nq 0 b 0\nq 0 doc10 2\nq 0 doc9 0\nq 0 Z 3\nq 0 z 1\n"
    run = ("q Q0 a 1 2 r\nq Q0 Z 2 1 r\nq Q0 z 3 0.5 r\n"
           "q Q0 doc10 4 1 r\nq Q0 b 5 2 r\nq Q0 doc9 6 1.0 r\n")
    result = score(tmp_path, qrels, run, ["relstring", "recip_rank", "P.2"])
    assert result.per_query["q"] == {"relstring": "010231", "recip_rank": 0.5, "P_2": 0.5}


def test_tie_rule_via_cli_relstring(tmp_path):
    # grades: Z 2, a 1, é 0; all tied: é, a, Z, then the lower-scored unjudged document
    qrels = write(tmp_path / "qrels", "q 0 Z 2\nq 0 a 1\nq 0 é 0\n")
    run = write(tmp_path / "run", "q Q0 Z 1 1.0 r\nq Q0 a 2 1.0 r\nq Q0 é 3 1.0 r\nq Q0 unj 4 0.5 r\n")
    result = invoke(*["-q", "-m", "relstring", "-m", "recip_rank", qrels, run])
    assert result.exit_code == 0, result.stderr
    assert rows(result.stdout) == [
        ("recip_rank", "q", "0.5000"), ("relstring", "q", "'012-'"), ("recip_rank", "all", "0.5000"),
    ]


def test_tie_rule_byte_order_holds_for_undecodable_bytes(tmp_path):
    # trec_eval 10.0 on these bytes: recip_rank 0.5 (0xFF > 0xF0, the undecodable id first)
    result = score(tmp_path, "q1 0 \xf0\x9f\x98\x80 1\n".encode("latin-1"),
                   b"q1 Q0 \xff 1 1.0 r\nq1 Q0 \xf0\x9f\x98\x80 2 1.0 r\n", ["recip_rank"])
    assert result.summary["recip_rank"] == 0.5
    # the same ids as dict keys (the surrogate escape of 0xFF, and U+1F600): the dict path compares bytes too,
    # with the tie in the dict's first position and in its second
    emoji, undecodable = b"\xf0\x9f\x98\x80".decode(), b"\xff".decode("utf-8", "surrogateescape")
    for ranking in ({undecodable: 1.0, emoji: 1.0}, {emoji: 1.0, undecodable: 1.0}):
        assert evaluate({"q1": {emoji: 1}}, {"q1": ranking}, ["recip_rank"]).summary["recip_rank"] == 0.5


def test_query_ids_and_per_query_output_sorted_in_byte_order(tmp_path):
    # byte order: '10' < '2' < '9' < 'B' < 'a' < 'é'
    qrels = "9 0 d 1\na 0 d 1\n10 0 d 1\né 0 d 1\n2 0 d 1\nB 0 d 1\n"
    run = "B Q0 d 1 1 r\n2 Q0 x 1 2 r\n2 Q0 d 2 1 r\né Q0 d 1 1 r\n10 Q0 d 1 1 r\na Q0 d 1 1 r\n9 Q0 d 1 1 r\n"
    order = ["10", "2", "9", "B", "a", "é"]
    result = score(tmp_path, qrels, run, ["recip_rank"])
    assert result.qids == order
    assert list(result.per_query) == order
    assert result.per_query["2"] == {"recip_rank": 0.5}
    out = invoke(*["-q", "-m", "recip_rank", tmp_path / "qrels", tmp_path / "run"])
    assert out.exit_code == 0, out.stderr
    printed = rows(out.stdout)
    assert [qid for _, qid, _ in printed] == order + ["all"]
    # mean of 1, 0.5, 1, 1, 1, 1 = 5.5 / 6
    assert printed[-1] == ("recip_rank", "all", "0.9167")


def _groups_by_hand(scores: dict, judged: dict, max_ret=None, judged_only=False) -> dict:
    """{rank: (start, end)} of every judged retrieved doc: the positions its group of equal scores
    holds, walking trec_eval's order (score descending, id descending) after -M and -J."""
    order = sorted(scores, key=str.encode, reverse=True)
    order = sorted(order, key=lambda d: -scores[d])[:max_ret]
    if judged_only:
        order = [d for d in order if judged.get(d, -1) >= 0]
    out = {}
    for at, d in enumerate(order):
        if d in judged:
            members = [i for i, e in enumerate(order) if scores[e] == scores[d]]
            out[at] = (members[0], members[-1] + 1)
    return out


@pytest.mark.parametrize("options", [{}, {"max_ret": 7}, {"judged_only": True}, {"max_ret": 7, "judged_only": True}])
@pytest.mark.parametrize("shuffled", [False, True])
def test_tie_groups_of_every_stored_row(options, shuffled):
    """Each judged retrieved document knows the positions its group of equal scores holds."""

    from evaltool.io.frames import qrels_from_dict
    from evaltool.inputs import Run
    from evaltool.ranking import RankOptions, rank

    rng = np.random.default_rng(7)
    judged, scores = {}, {}
    for q in range(12):
        docs = [f"d{i}" for i in rng.choice(60, 30, replace=False)]
        judged[f"q{q}"] = {d: int(rng.integers(-1, 3)) for d in docs[:18]}
        scores[f"q{q}"] = {d: float(rng.integers(0, 4)) for d in docs[6:]}
    lines = [(q, d, s) for q, docs in scores.items() for d, s in docs.items()]
    if shuffled:
        lines = [lines[i] for i in rng.permutation(len(lines))]
    else:  # as systems write runs: by query, scores descending (ranking's no-sort path)
        lines.sort(key=lambda line: (line[0], -line[2]))
    qids, docids = sorted(scores), sorted({d for _, d, _ in lines})
    run = Run(qids, np.array([qids.index(q) for q, _, _ in lines]), docids,
              np.array([docids.index(d) for _, d, _ in lines]), np.array([s for _, _, s in lines]), None)
    batch = rank(qrels_from_dict(judged), run, RankOptions(**options)).batch
    start, end = batch.ties.bounds
    checked = tied = 0
    for i, qid in enumerate(batch.qids):
        expected = _groups_by_hand(scores[qid], judged[qid], options.get("max_ret"), options.get("judged_only", False))
        stored = range(batch.offsets[i], batch.offsets[i + 1])
        assert {int(batch.rank[r]): (int(start[r]), int(end[r])) for r in stored} == expected, qid
        checked += len(expected)
        tied += sum(e - s > 1 for s, e in expected.values())
    assert checked > 20 and tied > 10


def test_tie_groups_cost_nothing_unless_asked_for():
    """Ranking and the default measures never compute the groups; tie averaging does, once."""
    from evaltool import parse_measures
    from evaltool.io.frames import qrels_from_dict, run_from_dict
    from evaltool.ranking import rank

    batch = rank(qrels_from_dict({"q": {"a": 1, "b": 2}}), run_from_dict({"q": {"a": 1.0, "b": 1.0, "c": 1.0}})).batch
    for request in parse_measures(["official", "nDCG@2", "DCG(judged_only=True)@2", "nDCG(ideal='ranking')"]):
        request.compute(batch)
    assert "bounds" not in vars(batch.ties)
    [averaged] = parse_measures(["DCG(ties='average')@2"])
    # the group {c, b, a} holds positions 1..3; gains 1 and 2 average to 1 each: 1/1 + 1/log2(3)
    assert averaged.compute(batch)[0, 0] == pytest.approx(1 + 1 / np.log2(3), abs=1e-12)
    assert "bounds" in vars(batch.ties)


@pytest.mark.parametrize("columnar", [False, True])
def test_runs_scored_in_turn_against_one_qrels_each_get_their_own_join(tmp_path, columnar):
    """The qrels' half of the join is kept from run to run; runs naming other queries or
    other documents must not reuse it. Hand values: A ranks q1's and q2's relevant
    document first (AP 1, 1); B has only q2, its relevant document second (AP 0.5; q1
    skipped); C ranks q1's relevant document second (AP 0.5; q2 skipped)."""
    from evaltool import Evaluator
    from evaltool.io import columnar as columnar_reader

    qrels = write(tmp_path / "qrels", "q1 0 11 1\nq1 0 12 0\nq2 0 13 1\n")
    runs = {
        "A": "q1 Q0 11 1 2.0 a\nq1 Q0 12 2 1.0 a\nq2 Q0 13 1 1.0 a\n",
        "B": "q2 Q0 14 1 2.0 b\nq2 Q0 13 2 1.0 b\n",
        "C": "q1 Q0 12 1 2.0 c\nq1 Q0 11 2 1.0 c\n",
    }
    paths = [write(tmp_path / name, text) for name, text in runs.items()]
    ev = Evaluator(qrels, ["map"])
    order = [paths[0], paths[1], paths[0], paths[2], paths[1]]
    with pytest.warns(Warning):
        if columnar:
            results = [ev.evaluate(columnar_reader.read_run(path, 1)) for path in order]
        else:
            results = ev.evaluate_many(order)
    assert [r.summary["map"] for r in results] == [1.0, 0.5, 1.0, 0.5, 0.5]


@pytest.mark.parametrize("levels", [2, 5, None])
def test_score_groups_of_positions_against_a_scan(levels):
    """[low, high) of every position of a (query, score)-ordered sequence is the run of equal
    (query, score) around it, found here by walking left and right; ``levels`` None: no ties."""
    from evaltool.ranking import _score_groups

    rng = np.random.default_rng(levels or 0)
    codes = np.repeat(np.arange(30), rng.integers(1, 12, 30))
    raw = rng.integers(0, levels, len(codes)) if levels else rng.permutation(len(codes))
    scores = np.concatenate([np.sort(raw[codes == q])[::-1] for q in range(30)]).astype(float)
    # equal scores across a query boundary must not join two groups
    scores[np.flatnonzero(np.diff(codes)) + 1] = scores[np.flatnonzero(np.diff(codes))]
    pos = np.arange(len(codes))
    first, low, high = _score_groups(codes, scores, pos)
    key = list(zip(codes.tolist(), scores.tolist()))
    for p in pos.tolist():
        lo, hi = p, p + 1
        while lo > 0 and key[lo - 1] == key[p]:
            lo -= 1
        while hi < len(key) and key[hi] == key[p]:
            hi += 1
        assert (low[p], high[p], first[p]) == (lo, hi, codes.tolist().index(codes[p])), p


def _tied_dicts(seed: int, unretrieved: int = 0, descending: bool = False, depth: int | None = None):
    """Queries of mixed depths, scores on a coarse grid (many ties), ids of mixed lengths and
    one that is not UTF-8 on disk (a surrogate escape, compared by its bytes); ``unretrieved``
    judged documents per query that the run does not hold (negative grades among them), a
    query without judgments, and with ``descending`` each query's documents in score order
    (``"trec"``: in the tie rule's order, ids descending by their bytes inside equal scores);
    ``depth``: every query that deep (a fixed-depth run)."""
    rng = np.random.default_rng(seed)
    qrels, run = {}, {}
    fixed = depth
    for q in range(15):
        depth = fixed or int(rng.integers(1, 40))
        docs = [f"d{int(rng.integers(0, 10 ** int(rng.integers(1, 4))))}_{i}" for i in range(depth)]
        if q == 3:
            docs[0] = "d\udcff"
        scores = {d: float(rng.integers(0, 4)) for d in docs}
        if descending == "trec":
            scores = dict(sorted(scores.items(), key=lambda item: (item[1], byte_key(item[0])), reverse=True))
        elif descending:
            scores = dict(sorted(scores.items(), key=lambda item: -item[1]))
        run[f"q{q}"] = scores
        qrels[f"q{q}"] = {d: int(rng.integers(0, 3)) for d in rng.choice(docs, size=min(depth, 6), replace=False)}
        qrels[f"q{q}"].update({f"u{q}_{i}": int(rng.integers(-1, 3)) for i in range(unretrieved)})
    if unretrieved:
        ids = [f"d{i}" for i in range(fixed or 2)]
        run["unjudged"] = dict.fromkeys(sorted(ids, reverse=True) if descending == "trec" else ids, 1.0)
    return qrels, run


TIED_MEASURES = ["map", "recip_rank", "ndcg", "P.5", "relstring", "nDCG(ties='average')@5"]


def _from_files(tmp_path, qrels: dict, run: dict) -> dict:
    """The per-query values of TIED_MEASURES for ``qrels`` and ``run`` written as files and read back."""
    (tmp_path / "qrels").write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in qrels.items() for d, g in docs.items()),
                                    encoding="utf-8", errors="surrogateescape")
    (tmp_path / "run").write_text("".join(f"{q} Q0 {d} 1 {s} run\n" for q, docs in run.items() for d, s in docs.items()),
                                  encoding="utf-8", errors="surrogateescape")
    return evaluate(str(tmp_path / "qrels"), str(tmp_path / "run"), TIED_MEASURES, per_query=True).per_query


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("unretrieved, descending, depth", [(0, False, None), (60, False, None), (60, True, None),
                                                          (0, False, 30), (60, False, 30), (60, "trec", None),
                                                          (60, "trec", 30), (60, True, 30), (0, True, 30),
                                                          (0, "trec", None)])
def test_dict_runs_rank_ties_as_files_do(tmp_path, seed, unretrieved, descending, depth, monkeypatch):
    """A dict run's judged documents are ranked by counting the scores of their query (no sort);
    with the comparison budget at nothing, by sorting: both as the same run read from a file.
    With more judgments than retrieved documents, or a run in score order, the retrieved ones
    are looked up among the judged (and a run in score order ranked by position, ties by their
    ids unless the run holds them in the tie rule's order already). ``ties='average'`` reads the tie groups."""
    from evaltool import ranking

    qrels, run = _tied_dicts(seed, unretrieved, descending, depth)
    measures = TIED_MEASURES
    expected = _from_files(tmp_path, qrels, run)
    assert evaluate(qrels, run, measures, per_query=True).per_query == expected
    monkeypatch.setattr(ranking, "COMPARISONS_PER_SORT_STEP", 0)  # counting, whatever it costs
    assert evaluate(qrels, run, measures, per_query=True).per_query == expected
    monkeypatch.setattr(ranking, "_count_above", lambda *args: None)  # sorting
    assert evaluate(qrels, run, measures, per_query=True).per_query == expected


@pytest.mark.parametrize("descending", [True, "trec"])
def test_a_deep_dict_run_in_score_order_is_ranked_by_position(tmp_path, descending, monkeypatch):
    """More retrieved documents than judgments, each query in score order: the retrieved are looked
    up among the judged and ranked by position (ties by their ids), never counted nor sorted."""
    from evaltool import ranking

    qrels, run = _tied_dicts(4, 0, descending, 30)
    assert sum(map(len, run.values())) > sum(map(len, qrels.values()))
    measures = TIED_MEASURES
    expected = _from_files(tmp_path, qrels, run)

    def refused(*args):
        raise AssertionError("a run in score order is ranked by position")

    monkeypatch.setattr(ranking, "_count_above", refused)
    monkeypatch.setattr(ranking, "_rank_by_sort", refused)
    assert evaluate(qrels, run, measures, per_query=True).per_query == expected


@pytest.mark.parametrize("ids", [["\udcff", "\ue000"], ["\ue000", "\udcff"]])
def test_a_dict_run_in_score_order_breaks_ties_by_the_bytes_of_the_ids(ids):
    """An id from an undecodable byte (0xFF, a surrogate escape) is larger than U+E000 (bytes EE 80 80)
    though its code point is smaller: listed first or second, it ranks first. (Judgments outnumber
    the retrieved documents: the retrieved are looked up among them and ranked by position.)"""
    qrels = {"q": {"\udcff": 1, "\ue000": 0, **{f"u{i}": 1 for i in range(4)}}}
    run = {"q": {"top": 2.0, **dict.fromkeys(ids, 1.0)}}
    result = evaluate(qrels, run, ["recip_rank", "relstring"], per_query=True)
    assert result.per_query["q"] == {"recip_rank": 0.5, "relstring": "-10"}


def _shared_judgments(seed: int, most: int):
    """qrels and run text where documents are judged for up to ``most`` queries each, with a
    judgment given twice (resolved), judged documents no run retrieves, run queries without
    judgments, judgments of queries the run lacks, and negative grades."""
    rng = np.random.default_rng(seed)
    pool = [f"FBIS3-{i}" for i in range(60)] + [f"LA0101{i:02d}-00{i % 7}" for i in range(40)] + ["7", "0", "12"]
    qrels, run = [], []
    shared = 5  # judged and retrieved in `most` queries
    for q in range(12):
        judged = set(rng.choice(len(pool), size=int(rng.integers(1, 30)), replace=False).tolist()) - {shared}
        qrels += [f"q{q} 0 {pool[d]} {int(rng.integers(-1, 3))}\n" for d in judged if q < 10 or d % 3 == 0]
        retrieved = set(rng.choice(len(pool), size=int(rng.integers(1, 40)), replace=False).tolist()) - {shared}
        run += [f"q{q if q != 11 else 'x'} Q0 {pool[d]} {r} {float(rng.integers(0, 5))} tag\n"
                for r, d in enumerate(sorted(retrieved))]
    qrels += [f"q{q} 0 {pool[shared]} 1\n" for q in range(most)] + [qrels[0]]  # a judgment given twice
    run += [f"q{q} Q0 {pool[shared]} 99 2.5 tag\n" for q in range(most)]
    return "".join(qrels), "".join(run)


@pytest.mark.parametrize("reader", ["lines", "text", "columnar"])
@pytest.mark.parametrize("most", [1, 3, 8, 12])
@pytest.mark.parametrize("seed", [1, 2])
def test_the_key_table_join_gives_what_the_binary_searches_give(tmp_path, monkeypatch, reader, most, seed):
    """A run keyed by dictionary codes is joined with the qrels through a table, the others
    through sorted keys: the same (query, rank, grade) rows whatever the reader and however
    many queries judge a document (over JUDGED_IN_QUERIES_MAX: the searches answer)."""
    from evaltool import ranking
    from evaltool.io import kinds

    qrels, run = _shared_judgments(seed, most)
    if reader == "lines":
        run = "# the line reader\n" + run
    if reader == "columnar":
        monkeypatch.setattr(kinds, "COLUMNAR_MIN_BYTES", 0)
    qrels_path, run_path = write(tmp_path / "qrels", qrels), write(tmp_path / "run", run)
    measures = ["all_trec", "relstring"]
    by_table = evaluate(qrels_path, run_path, measures, per_query=True, on_duplicate="first")
    monkeypatch.setattr(ranking, "KEY_TABLE_FACTOR", 0)
    by_search = evaluate(qrels_path, run_path, measures, per_query=True, on_duplicate="first")
    assert by_table.per_query == by_search.per_query and by_table.summary == by_search.summary
    assert by_table.summary["num_rel_ret"] > 0


@pytest.mark.parametrize("block", [1, 7, 1 << 16])
@pytest.mark.parametrize("seed", [4, 5])
def test_counting_scores_of_a_query_against_a_scan(seed, block, monkeypatch):
    """``_count_above`` and ``_tied_members`` against a plain scan of each query: ragged depths,
    empty queries, the last query ending the array, few distinct scores (ties), blocks of any size."""
    from evaltool import ranking

    monkeypatch.setattr(ranking, "BLOCK_CELLS", block)
    monkeypatch.setattr(ranking, "COMPARISONS_PER_SORT_STEP", 0)  # counting, whatever it costs
    rng = np.random.default_rng(seed)
    lengths = rng.integers(0, 12, size=30)
    lengths[-1] = 11  # the deepest query last: its window reaches the end of the array
    starts = np.concatenate(([0], np.cumsum(lengths)))
    scores = rng.integers(0, 4, size=int(starts[-1])).astype(np.float64)
    codes = np.repeat(np.flatnonzero(lengths), 3)
    values = scores[starts[codes] + rng.integers(0, lengths[codes])]
    higher, equal = ranking._count_above(scores, starts, lengths, codes, values)
    segments = [scores[starts[c] : starts[c + 1]] for c in codes.tolist()]
    assert higher.tolist() == [int((s > v).sum()) for s, v in zip(segments, values.tolist())]
    assert equal.tolist() == [int((s == v).sum()) for s, v in zip(segments, values.tolist())]
    pair, member = ranking._tied_members(scores, starts, lengths, codes, values)
    expected = [(i, int(starts[c]) + j) for i, (c, v) in enumerate(zip(codes.tolist(), values.tolist()))
                for j in np.flatnonzero(segments[i] == v).tolist()]
    assert list(zip(pair.tolist(), member.tolist())) == expected


def test_ideal_gains_of_a_gain_table_that_reverses_the_grades():
    """The judged grades come in descending order, which orders the default gains; a gain table
    may reverse them (grade 1 gains 5, grade 2 gains 1): the ideal ranking sorts the gains."""
    import math

    qrels = {"q": {"a": 1, "b": 2, "c": 0}, "r": {"d": 2, "e": 1}}
    run = {"q": {"b": 2.0, "a": 1.0, "c": 0.5}, "r": {"e": 2.0, "d": 1.0}}
    ideal = 5 + 1 / math.log2(3)  # a (5) first, then b (1)
    result = evaluate(qrels, run, ["ndcg.1=5,2=1"], per_query=True).per_query
    assert result["q"]["ndcg_1=5,2=1"] == pytest.approx((1 + 5 / math.log2(3)) / ideal, abs=1e-15)
    assert result["r"]["ndcg_1=5,2=1"] == 1.0  # e (5) above d (1): the ideal order
    assert evaluate(qrels, run, ["ndcg"], per_query=True).per_query["q"]["ndcg"] == 1.0  # b (2) above a (1)


@pytest.mark.parametrize("seed", range(6))
def test_score_steps_against_a_scan_of_each_query(seed):
    """Whether every query's scores never rise, and the rows tying with the row before them in their
    query, found from the query starts alone: as a scan of each query finds them, equal scores
    across two queries (the last row of one, the first of the next) never tie, empty queries
    (a first one too) hold no row."""
    from evaltool.ranking import _continuing, _score_steps

    rng = np.random.default_rng(seed)
    lengths = rng.integers(0, 6, size=int(rng.integers(1, 12)))
    lengths[0] = 0 if seed % 2 else lengths[0]
    scores = np.concatenate([np.sort(rng.integers(0, 3, size=n).astype(float))[::-1] for n in lengths] + [[]])
    if seed % 3 == 0 and len(scores) > 1:
        scores[-1] = scores[0] + 1.0  # a rising step, unless it crosses into another query
    starts = np.concatenate(([0], np.cumsum(lengths)))
    codes = np.repeat(np.arange(len(lengths)), lengths)
    descending, tied = _score_steps(scores, starts)
    assert tied.tolist() == _continuing(codes, scores).tolist()
    rising = [i for i in range(1, len(scores)) if codes[i] == codes[i - 1] and scores[i] > scores[i - 1]]
    assert descending == (not rising)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("options", [{}, {"relevance_level": 2}, {"judged_only": True}, {"max_ret": 3}])
def test_relevant_rows_first_relevant_rank_and_ap_against_a_scan(seed, options):
    """The batch's relevant rows (where each query's start, how many) give each query's first relevant
    rank and average precision as a scan of its ranking does; queries with none, runs with none."""
    from evaltool.measures.ap import sum_of_precision_at_relevant
    from evaltool.measures.rr import first_relevant_rank
    from evaltool.ranking import RankOptions

    qrels, run = _tied_dicts(seed, unretrieved=3, descending=seed % 2 == 0)
    if seed == 3:
        qrels = {q: {d: min(g, 0) for d, g in docs.items()} for q, docs in qrels.items()}  # nothing relevant
    ranking = rank(qrels_from_dict(qrels), run_from_dict(run), RankOptions(**options))
    batch = ranking.batch
    level = options.get("relevance_level", 1)
    for q in range(batch.n_queries):
        ranks = batch.rank[batch.offsets[q]:batch.offsets[q + 1]]
        grades = batch.rel[batch.offsets[q]:batch.offsets[q + 1]]
        relevant = [int(r) for r, g in zip(ranks, grades) if g >= level]
        assert first_relevant_rank(batch)[q] == (relevant[0] if relevant else -1)
        assert batch.num_rel_ret[q] == len(relevant)
        expected = 0.0
        for i, r in enumerate(relevant, 1):
            expected += i / (r + 1.0)
        assert sum_of_precision_at_relevant(batch)[q] == expected
