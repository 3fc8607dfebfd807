"""Every spelling of issue 4 (trec_eval, ir_measures, the project's aliases): it parses, its
canonical form round-trips, it evaluates, and it prints under the name the user wrote.

The values themselves are checked against ir_measures in ``test_ir_measures_crosscheck.py``
and against the specification documents in ``test_seed_examples.py``; here an alias must
give exactly what its canonical form gives, and what the trec_eval measure of the same
meaning gives.
"""

from __future__ import annotations

import math

import pytest

from evaltool import evaluate, parse_measures
from evaltool.errors import MeasureError
from evaltool.measures import MEASURES, NAMED_MEASURES
from evaltool.names import AT_SUFFIX, TOKENS
from tests.support.helpers import ISSUE_IR_MEASURES, invoke

QRELS = {
    "q1": {"a": 2, "b": 0, "c": 1, "d": 3, "e": -1, "f": 1},
    "q2": {"g": 1, "h": 0, "i": 2},
    "q3": {"j": 0, "k": 0},
}
RUN = {
    "q1": {"a": 9.0, "x": 8.5, "b": 8.0, "c": 7.0, "e": 6.0, "y": 5.0, "d": 4.0},
    "q2": {"h": 3.0, "z": 2.0, "g": 1.0},
    "q3": {"j": 1.0, "w": 0.5},
}

# (spelling, canonical form, output names); the issue's list, in its order
TREC = [
    ("ndcg_cut.10", "ndcg_cut.10", ["ndcg_cut_10"]),
    ("P.5,10", "P.5,10", ["P_5", "P_10"]),
    ("P.10,5", "P.5,10", ["P_5", "P_10"]),
    ("map", "map", ["map"]),
    ("recip_rank", "recip_rank", ["recip_rank"]),
    ("ndcg.1=3,2=9", "ndcg.1=3,2=9", ["ndcg_1=3,2=9"]),
]
IR_MEASURES_ALIASES = [
    ("NDCG@10", "nDCG@10"), ("MAP", "AP"), ("MRR@10", "RR@10"), ("BPref", "Bpref"), ("RPrec(rel=2)", "Rprec(rel=2)"),
    ("Precision@5", "P@5"), ("Recall@10", "R@10"), ("SetRelP", "SetP(relative=True)"),
    ("P(cutoff=5)", "P@5"), ("RBP(p=0.5, rel=2)", "RBP(p=0.5,rel=2)"),
]
IR_MEASURES = ISSUE_IR_MEASURES + IR_MEASURES_ALIASES
PROJECT = [
    ("ndcg@10", "nDCG@10"),
    ("ndcg_at_10", "nDCG@10"),
    ("precision@5", "P@5"),
    ("precision_at_5", "P@5"),
    ("recall@10", "R@10"),
    ("recall_at_10", "R@10"),
    ("mrr", "RR"),
    ("mrr@10", "RR@10"),
    ("hits@5", "Hits@5"),
    ("hit_rate@5", "Success@5"),
    ("first_relevant_position", "FirstRelPos"),
    # the seeds' variants, as named parameters
    ("nDCG(discount='jarvelin')@6", "nDCG(discount='jarvelin')@6"),
    ("nDCG(ideal='ranking')@6", "nDCG(ideal='ranking')@6"),
    ("ndcg(ideal='ranking',discount='jarvelin')@6", "nDCG(discount='jarvelin',ideal='ranking')@6"),
    ("DCG(discount='jarvelin')@6", "DCG(discount='jarvelin')@6"),
    # scikit-learn's tie averaging, in either order of the parameters; the default is left out
    ("ndcg(ties='average',ideal='ranking')@6", "nDCG(ideal='ranking',ties='average')@6"),
    ("DCG(ties='average',log_base=10)@6", "DCG(log_base=10.0,ties='average')@6"),
    ("nDCG(ties='trec_eval')@6", "nDCG@6"),
    ("dcg_at_6", "DCG@6"),
    ("mrr(beyond='k+1')@5", "RR(beyond='k+1')@5"),
    ("RR(beyond='zero')@5", "RR@5"),
    ("map_at_100", "AP@100"),
    ("hits_at_3", "Hits@3"),
]
# the trec_eval measure each named spelling equals (same data, same value for every query)
SAME_AS_TREC = {
    "nDCG@10": "ndcg_cut.10", "AP": "map", "AP@100": "map_cut.100", "R@1000": "recall.1000", "RR": "recip_rank",
    "Bpref": "bpref", "Success@5": "success.5", "SetP": "set_P", "SetR": "set_recall", "SetF(beta=1)": "set_F",
    "NumRet": "num_ret", "NumRel": "num_rel", "NumRelRet": "num_rel_ret", "ndcg@10": "ndcg_cut.10",
    "precision@5": "P.5", "recall_at_10": "recall.10", "mrr": "recip_rank", "hit_rate@5": "success.5",
    "SetRelP": "set_relative_P",
}


def per_query(spec: str, **options) -> list[dict]:
    result = evaluate(QRELS, RUN, [spec], per_query=True, **options)
    return [{name: values[name] for name in result.measures if name in values}
            for values in result.per_query.values()], result


def same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == b


@pytest.mark.parametrize("spec,canonical,names", TREC, ids=[t[0] for t in TREC])
def test_trec_eval_spelling(spec, canonical, names):
    requests = parse_measures([spec])
    assert [n for r in requests for n in r.names] == names
    assert [r.canonical for r in requests] == [canonical]
    again = parse_measures([canonical])
    assert [r.canonical for r in again] == [canonical]
    assert evaluate(QRELS, RUN, [spec]).summary == evaluate(QRELS, RUN, [canonical]).summary


@pytest.mark.parametrize("nickname", ["official", "all_trec", "set"])
def test_nicknames_round_trip(nickname):
    requests = parse_measures([nickname])
    canonical = [r.canonical for r in requests]
    assert [r.canonical for r in parse_measures(canonical)] == canonical
    assert evaluate(QRELS, RUN, [nickname]).summary == evaluate(QRELS, RUN, canonical).summary


@pytest.mark.parametrize("spec,canonical", IR_MEASURES + PROJECT, ids=[t[0] for t in IR_MEASURES + PROJECT])
def test_named_spelling(spec, canonical):
    [request] = parse_measures([spec])
    # prints back as the user wrote it (spaces dropped), whatever the canonical form
    assert request.names == ["".join(spec.split())]
    assert request.canonical == canonical
    [again] = parse_measures([canonical])
    assert again.canonical == canonical and again.measure is request.measure and again.values == request.values
    # evaluates with evaltool's core, to the same values as the canonical spelling
    got, result = per_query(spec)
    want, _ = per_query(canonical)
    assert len(got) == 3 or request.measure.name == "NumQ"
    name = request.names[0]
    assert list(result.summary) == [name]
    for mine, theirs in zip(got, want):
        if mine:
            assert same(mine[name], theirs[canonical])
    assert same(result.summary[name], evaluate(QRELS, RUN, [canonical]).summary[canonical])
    if spec in SAME_AS_TREC:
        trec = evaluate(QRELS, RUN, [SAME_AS_TREC[spec]], per_query=True)
        [trec_name] = trec.measures
        for mine, theirs in zip(got, trec.per_query.values()):
            assert mine[name] == theirs[trec_name]


def test_ir_measures_reads_the_same_canonical_form():
    """Where ir_measures knows a spelling, its repr is evaltool's canonical form."""
    ir_measures = pytest.importorskip("ir_measures")
    extensions = {"beta", "discount", "ideal", "beyond", "residual", "max_grade"}
    for spec, canonical in IR_MEASURES:
        if any(f"{e}=" in spec for e in extensions):
            continue  # evaltool's own parameters (SetF's beta is not in ir_measures 0.4)
        assert repr(ir_measures.parse_measure(spec.replace(" ", ""))) == canonical, spec


def test_every_alias_is_a_spelling():
    """Each declared name parses, and so does its ``_at_k`` form where declared.

    A bare name that is also a trec_eval name (``map``, ``ndcg``, ``recall``) is trec_eval's;
    with ``@k`` it is the named measure.
    """
    for m in NAMED_MEASURES.values():
        for alias in (m.name, *m.aliases):
            token = alias if isinstance(alias, str) else alias[0]
            at = m.at_option
            example = token
            if token.endswith(AT_SUFFIX):
                example = token[:-len(AT_SUFFIX)] + "_at_5"
            elif at is not None and (at.required or token in MEASURES):
                example = f"{token}@{'0.5' if at.kind is float else '5'}"
            required = [o for o in m.options if o.required and not o.at]
            if required:   # (C/W/L measures need max_rel)
                head, at_sign, tail = example.partition("@")
                example = head + "(" + ",".join(f"{o.name}=4" for o in required) + ")" + at_sign + tail
            [request] = parse_measures([example])
            assert request.measure is (MEASURES[token] if example in MEASURES else m), example
    assert set(TOKENS) >= set(NAMED_MEASURES)


def test_output_order_trec_first_then_as_given():
    result = evaluate(QRELS, RUN, ["mrr", "P.5", "nDCG@10", "map", "ndcg@10", "mrr"])
    assert result.measures == ["map", "P_5", "mrr", "nDCG@10", "ndcg@10"]


def test_named_parameters_follow_the_options_of_the_whole_run():
    """``rel`` falls back to -l; ``judged_only`` adds to -J what -J already did."""
    for level in (1, 2):
        assert per_query("P@5", relevance_level=level)[0] == [
            {"P@5": v["P_5"]} for v in evaluate(QRELS, RUN, ["P.5"], per_query=True,
                                                relevance_level=level).per_query.values()]
    explicit, _ = per_query("P(rel=2)@5", relevance_level=1)
    trec = evaluate(QRELS, RUN, ["P.5"], per_query=True, relevance_level=2).per_query
    assert [v["P(rel=2)@5"] for v in explicit] == [v["P_5"] for v in trec.values()]
    judged, _ = per_query("nDCG(judged_only=True)@3")
    trec = evaluate(QRELS, RUN, ["ndcg_cut.3"], per_query=True, judged_only=True).per_query
    assert [v["nDCG(judged_only=True)@3"] for v in judged] == [v["ndcg_cut_3"] for v in trec.values()]


def test_cli_prints_names_as_written(tmp_path):
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in QRELS.items() for d, g in docs.items()))
    run.write_text("".join(f"{q} Q0 {d} 0 {s} tag\n" for q, docs in RUN.items() for d, s in docs.items()))
    result = invoke(*[str(qrels), str(run), "-m", "P.5", "-m", "nDCG@10", "-m", "ndcg_at_10",
                                       "-m", "RBP(p=0.5, rel=2)"])
    assert result.exit_code == 0, result.output
    names = [line.split("\t")[0].rstrip() for line in result.output.splitlines()]
    assert names == ["P_5", "nDCG@10", "ndcg_at_10", "RBP(p=0.5,rel=2)"]


@pytest.mark.parametrize("spec,message", [
    ("ndcg@1O", "unknown measure 'ndcg@1O'; did you mean ndcg@10?"),
    ("nDGC@10", "unknown measure 'nDGC@10'; did you mean nDCG@10?"),
    ("precision_at_1O", "unknown measure 'precision_at_1O'; did you mean precision_at_10?"),
    ("mrrr", "unknown measure 'mrrr'; did you mean mrr"),
    ("nosuchthing@5", "unknown measure 'nosuchthing@5'; 'evaltool measures' lists them"),
    ("P(rel=2)", "measure 'P(rel=2)': P needs its cutoff: P@k"),
    ("nDCG(foo=1)@10", "nDCG has no parameter foo (it takes cutoff, dcg, gains, judged_only, discount, ideal, ties)"),
    ("nDCG(dcg='exp')@10", "dcg of nDCG must be one of 'log2', 'exp-log2', not 'exp'"),
    ("DCG(ties='random')@10", "ties of DCG must be one of 'trec_eval', 'average', not 'random'"),
    ("P@0", "cutoff of P must be at least 1, not 0"),
    ("P@2.5", "cutoff of P must be an integer, not 2.5"),
    ("NumQ@5", "NumQ takes no @ parameter"),
    ("SetRelP(relative=False)", "SetRelP means SetP(relative=True)"),
    ("RR(beyond='k+1')", "beyond needs a cutoff"),
    ("nDCG(gains={1:-1})@10", "gains of nDCG must be a dict {grade: gain} with grades and gains >= 0"),
    ("P(2)@5", "parameters are written name=value"),
    ("P(rel=x)@5", "x is not a literal value"),
])
def test_bad_spellings(tmp_path, spec, message):
    with pytest.raises(MeasureError) as caught:
        parse_measures([spec])
    assert message in str(caught.value)
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text("q 0 a 1\n")
    run.write_text("q Q0 a 0 1.0 tag\n")
    result = invoke(*[str(qrels), str(run), "-m", spec])
    assert result.exit_code == 2
    assert result.output.count("\n") == 1 and result.output.startswith("evaltool: ")
    assert message in result.output


def test_unknown_name_exact_line(tmp_path):
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text("q 0 a 1\n")
    run.write_text("q Q0 a 0 1.0 tag\n")
    result = invoke(*[str(qrels), str(run), "-m", "ndcg@1O"])
    assert (result.exit_code, result.output) == (2, "evaltool: unknown measure 'ndcg@1O'; did you mean ndcg@10?\n")


def test_measures_command_documents_every_name_alias_and_parameter():
    listing = invoke(*["measures"])
    assert listing.exit_code == 0
    named_section = listing.output.split("\n\n")[-1]
    for m in NAMED_MEASURES.values():
        line = next(line for line in named_section.splitlines() if line.startswith(m.name + "(")
                    or line.startswith(m.name + "@") or line.startswith(m.name + "[") or line.split()[0] == m.name)
        for alias in m.aliases:
            assert (alias if isinstance(alias, str) else alias[0]) in line
    for spec in ["nDCG", "ndcg@10", "ndcg_at_10", "nDCG(dcg='exp-log2')@10", "mrr", "SetRelP", "hits@5",
                 "first_relevant_position"]:
        out = invoke(*["measures", "-m", spec])
        assert out.exit_code == 0, out.output
        m = parse_measures([spec])[0].measure
        assert out.output.startswith(m.name + "\n")
        for option in m.options:
            assert f"    {option.name}" in out.output
        assert m.summary_line() in out.output   # the formula line
        assert ">>> " in out.output             # and the worked example
    assert "discount='log2' (one of 'log2', 'jarvelin')" in invoke(*["measures", "-m", "nDCG"]).output
    bad = invoke(*["measures", "-m", "ndcg@1O"])
    assert (bad.exit_code, bad.output) == (2, "evaltool: unknown measure 'ndcg@1O'; did you mean ndcg@10?\n")


def test_check_and_stream_take_named_spellings(tmp_path):
    """--save-reference then check finds the named measures again; --stream prints the same."""
    qrels, run, ref = tmp_path / "qrels", tmp_path / "run", tmp_path / "ref.json"
    qrels.write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in QRELS.items() for d, g in docs.items()))
    run.write_text("".join(f"{q} Q0 {d} 0 {s} tag\n" for q, docs in RUN.items() for d, s in docs.items()))
    spellings = ["nDCG@10", "ndcg_at_5", "mrr", "RBP(p=0.5,rel=2)", "first_relevant_position", "P.5"]
    args = [str(qrels), str(run), "-q", *[a for s in spellings for a in ("-m", s)]]
    saved = invoke(*[*args, "--save-reference", str(ref)])
    assert saved.exit_code == 0, saved.output
    streamed = invoke(*[*args, "--stream"])
    assert streamed.output == saved.output
    checked = invoke(*["check", str(ref), str(qrels), str(run), "--per-query"])
    assert checked.exit_code == 0, checked.output
    assert "hold" in checked.output


def test_every_measure_declares_which_way_it_improves():
    """Declared once, on the measure: counts and text are neither, ranks lower, the rest higher; every
    spelling of a measure reads the same direction (names.direction)."""
    from evaltool.measures.base import Agg, Better
    from evaltool.names import direction

    for m in [*MEASURES.values(), *NAMED_MEASURES.values()]:
        assert isinstance(m.better, Better), m.name
        if m.agg in (Agg.SUM, Agg.COUNT, Agg.RUNID, Agg.NONE):
            assert m.better is Better.NEITHER, m.name
    lower = sorted(m.name for m in [*MEASURES.values(), *NAMED_MEASURES.values()] if m.better is Better.LOWER)
    assert lower == ["ARP", "FirstRelPos"]
    for spellings, better in [(("num_ret", "NumRet", "num_rel_ret", "NumRelRet", "num_q"), Better.NEITHER),
                              (("FirstRelPos", "FirstRelPos(rel=2)", "ARP"), Better.LOWER),
                              (("ndcg_cut.10", "ndcg_cut_10", "nDCG@10", "ndcg@10", "mrr", "P_5", "map"),
                               Better.HIGHER)]:
        assert {s: direction(s) for s in spellings} == dict.fromkeys(spellings, better)
    assert direction("no_such_measure") is None
