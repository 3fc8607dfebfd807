"""A measure concept is declared once, and every name the tool prints is a name it accepts.

* trec_eval measures that spell a named-parameter measure (``ndcg_cut`` is ``nDCG@k``,
  ``recip_rank`` is ``RR``) give the same value for every query, and ``resolve`` maps all
  spellings of one concept to one (measure, parameters);
* trec_eval's output names (``P_5``, ``ndcg_cut_5,10``) are accepted as input, as
  pytrec_eval and ir_measures accept them;
* ``@`` overrides the same parameter given in parentheses, as ir_measures parses;
* ``-M`` below 0 is refused;
* ``evaltool measures`` prints plain, aligned text; help texts name the default sets.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from evaltool import evaluate, parse_measures
from evaltool.errors import EvaltoolError, MeasureError
from evaltool.measures import DEFAULT_SETS, MEASURES, NAMED_MEASURES
from evaltool.measures.base import Params
from evaltool.names import resolve
from tests.support.helpers import assert_fails, invoke

QRELS = {
    "q1": {"a": 2, "b": 0, "c": 1, "d": 3, "e": -1, "f": 1},
    "q2": {"g": 1, "h": 0, "i": 2},
    "q3": {"j": 0, "k": 0},
    "q4": {"m": 1},
}
RUN = {
    "q1": {"a": 9.0, "x": 8.5, "b": 8.0, "c": 7.0, "e": 6.0, "y": 5.0, "d": 4.0},
    "q2": {"h": 3.0, "z": 2.0, "g": 2.0},
    "q3": {"j": 1.0, "w": 0.5},
    "q4": {"n": 1.0},
}


def random_data(seed: int):
    """Graded and negative grades, tied scores, a query without relevant documents."""
    rng = np.random.default_rng(seed)
    qrels, run = {}, {}
    for q in range(12):
        docs = [f"d{i}" for i in range(30)]
        qrels[f"q{q}"] = {d: int(rng.integers(-1, 4)) for d in rng.choice(docs, 15, replace=False)}
        if q == 0:
            qrels["q0"] = {d: min(g, 0) for d, g in qrels["q0"].items()}
        run[f"q{q}"] = {d: float(rng.integers(0, 6)) for d in rng.choice(docs, 20, replace=False)}
    return qrels, run


# ---------------------------------------------------------------- one concept, one kernel


def _equivalent_spelling(m, param) -> str:
    name, fixed = m.equivalent
    inside = ",".join(f"{k}={v!r}" for k, v in fixed.items())
    text = name + (f"({inside})" if inside else "")
    return text + (f"@{param}" if param is not None else "")


SPELLED = [m for m in MEASURES.values() if m.equivalent is not None]


@pytest.mark.parametrize("m", SPELLED, ids=[m.name for m in SPELLED])
@pytest.mark.parametrize("seed", [0, 1])
def test_trec_eval_spelling_equals_its_named_measure(m, seed):
    qrels, run = random_data(seed)
    params = [5, 10] if m.params is Params.CUTOFFS else [None]
    for param in params:
        trec = m.name if param is None else f"{m.name}.{param}"
        named = _equivalent_spelling(m, param)
        for options in ({}, {"relevance_level": 2}, {"judged_only": True}):
            a = evaluate(qrels, run, [trec], per_query=True, **options)
            b = evaluate(qrels, run, [named], per_query=True, **options)
            [name_a], [name_b] = a.measures, b.measures
            for qid in a.per_query:
                if name_a in a.per_query[qid]:
                    assert a.per_query[qid][name_a] == b.per_query[qid][name_b], (trec, named, qid, options)
            assert resolve(trec) == resolve(named)


def test_the_kernels_are_shared():
    """ndcg_cut and recip_rank are computed by the named kernels, not by copies of them."""
    import inspect

    from evaltool.measures import dcg, rr

    assert inspect.getmodule(MEASURES["ndcg_cut"].kernel) is dcg
    assert "normalised_dcg" in inspect.getsource(MEASURES["ndcg_cut"].kernel)
    assert inspect.getmodule(MEASURES["recip_rank"].kernel) is rr
    assert "named_reciprocal_rank" in inspect.getsource(MEASURES["recip_rank"].kernel)


def test_resolve_keys_on_the_measure_not_its_spelling():
    ndcg = {resolve(s) for s in ["ndcg_cut.10", "ndcg_cut_10", "nDCG@10", "NDCG@10", "ndcg@10", "ndcg_at_10"]}
    rr = {resolve(s) for s in ["recip_rank", "RR", "MRR", "mrr"]}
    p5 = {resolve(s) for s in ["P.5", "P_5", "P@5", "precision@5", "precision_at_5", "Precision@5"]}
    assert len(ndcg) == len(rr) == len(p5) == 1
    assert len(ndcg | rr | p5) == 3
    measure, params = resolve("ndcg_cut_10")
    assert measure is NAMED_MEASURES["nDCG"] and dict(params)["cutoff"] == 10
    assert resolve("nDCG@5") != resolve("nDCG@10")
    assert resolve("set_relative_P") == resolve("SetRelP")
    assert resolve("bpref")[0] is NAMED_MEASURES["Bpref"]
    assert resolve("gm_map")[0] is MEASURES["gm_map"]       # no named twin: its own declaration
    assert resolve("ndcg.1=3")[0] is MEASURES["ndcg"]       # trec_eval's gain parameters: its own


@pytest.mark.parametrize("spec,message", [
    ("P.5,10", "measure 'P.5,10' gives 2 values (P_5, P_10); name one"),
    ("official", "gives"),
    ("nosuch", "unknown measure 'nosuch'"),
])
def test_resolve_refuses_what_is_not_one_value(spec, message):
    with pytest.raises(MeasureError, match=re.escape(message)):
        resolve(spec)


def test_facts_live_on_the_declaration():
    assert sorted(m.name for m in MEASURES.values() if m.percent) == ["P", "recall"]
    assert sorted(m.name for m in NAMED_MEASURES.values() if m.percent) == ["P", "R"]
    assert [m.name for m in MEASURES.values() if m.complete_summary] == ["num_rel"]
    # -c -l 2: num_rel's summary counts every grade above 0 (trec_eval), whatever -l says
    result = evaluate(QRELS, RUN, ["num_rel"], complete=True, relevance_level=2)
    assert result.summary["num_rel"] == 7


# ---------------------------------------------------------------- default sets and help texts


def test_default_sets_are_named_and_help_is_generated_from_them():
    for command, specs in DEFAULT_SETS.items():
        assert parse_measures(list(specs)), command
    assert [n for r in parse_measures(None) for n in r.names] == [
        n for r in parse_measures(list(DEFAULT_SETS["eval"])) for n in r.names]
    from evaltool.compare import compare_runs

    cmp = compare_runs(QRELS, [RUN, RUN], names=["a", "b"])
    assert list(cmp.measures) == [n for r in parse_measures(list(DEFAULT_SETS["compare"])) for n in r.names]
    for command, name in (("compare", "compare"), ("bench", "bench"), ("eval", "eval")):
        text = " ".join(invoke(command, "--help").output.split())
        assert f"Default: {', '.join(DEFAULT_SETS[name])}." in text, command


# ---------------------------------------------------------------- a name the tool prints is a name it accepts

OUTPUT_NAMES = [
    ("P_5", "P.5", ["P_5"]),
    ("ndcg_cut_10", "ndcg_cut.10", ["ndcg_cut_10"]),
    ("ndcg_cut_5,10", "ndcg_cut.5,10", ["ndcg_cut_5", "ndcg_cut_10"]),
    ("map_cut_100", "map_cut.100", ["map_cut_100"]),
    ("iprec_at_recall_0.10", "iprec_at_recall.0.10", ["iprec_at_recall_0.10"]),
    ("relative_P_5", "relative_P.5", ["relative_P_5"]),
    ("utility_1,-1,0,0", "utility.1,-1,0,0", ["utility_1,-1,0,0"]),
    ("ndcg_1=3,2=9", "ndcg.1=3,2=9", ["ndcg_1=3,2=9"]),
    ("rbp_p=0.8", "rbp.p=0.8", ["rbp_p=0.8"]),
]


@pytest.mark.parametrize("printed,spec,names", OUTPUT_NAMES, ids=[o[0] for o in OUTPUT_NAMES])
def test_trec_eval_output_names_are_accepted(printed, spec, names):
    assert [n for r in parse_measures([printed]) for n in r.names] == names
    assert evaluate(QRELS, RUN, [printed]).summary == evaluate(QRELS, RUN, [spec]).summary


def test_every_printed_name_is_accepted():
    result = evaluate(QRELS, RUN, ["all_trec", "ndcg.1=3", "utility.2,-1,0,0", "set_F.0.5", "Rprec_mult.0.5",
                                   "nDCG@10", "ndcg_at_5", "mrr", "RBP(p=0.5,rel=2)"])
    for name in result.measures:
        assert [n for r in parse_measures([name]) for n in r.names] == [name], name


def test_pytrec_eval_accepts_the_same_output_names():
    pytrec_eval = pytest.importorskip("pytrec_eval")
    for printed, _, names in OUTPUT_NAMES[:4]:
        evaluator = pytrec_eval.RelevanceEvaluator({"q": {"a": 1}}, {printed})
        got = evaluator.evaluate({"q": {"a": 1.0}})["q"]
        assert sorted(got) == sorted(names)


def test_output_names_on_the_command_line(tmp_path):
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text("q 0 a 1\nq 0 b 1\n")
    run.write_text("q Q0 x 1 3.0 t\nq Q0 a 2 2.0 t\n")
    result = invoke(qrels, run, "-m", "P_5", "-m", "ndcg_cut_5,10")
    assert result.exit_code == 0, result.output
    assert [line.split()[0] for line in result.output.splitlines()] == ["P_5", "ndcg_cut_5", "ndcg_cut_10"]
    # a misspelt name is still unknown, with a suggestion, not read as parameters
    bad = invoke(qrels, run, "-m", "ndcg_cutt")
    assert bad.exit_code == 2 and "unknown measure 'ndcg_cutt'; did you mean ndcg_cut" in bad.output
    doc = invoke("measures", "-m", "ndcg_cut_10")
    assert doc.exit_code == 0 and doc.output.startswith("ndcg_cut\n")


# ---------------------------------------------------------------- ir_measures: @ after parentheses


@pytest.mark.parametrize("spec,canonical", [
    ("nDCG(dcg='exp-log2',cutoff=20)@10", "nDCG(dcg='exp-log2')@10"),
    ("P(cutoff=20)@5", "P@5"),
    ("RR(cutoff=3)@10", "RR@10"),
])
def test_at_overrides_the_parameter_in_parentheses(spec, canonical):
    [request] = parse_measures([spec])
    assert request.canonical == canonical
    assert request.names == [spec]
    [again] = parse_measures([canonical])
    assert again.values == request.values
    assert evaluate(QRELS, RUN, [spec]).summary[spec] == evaluate(QRELS, RUN, [canonical]).summary[canonical]
    ir_measures = pytest.importorskip("ir_measures")
    assert repr(ir_measures.parse_measure(spec)) == canonical


# ---------------------------------------------------------------- -M below 0


def test_negative_max_ret_is_refused(tmp_path):
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text("q 0 a 1\n")
    run.write_text("q Q0 a 1 3.0 t\n")
    other = tmp_path / "other"
    other.write_text("q Q0 b 1 3.0 t\n")
    for command in ([], ["compare"]):
        args = [*command, qrels, run, *([other] if command else []), "-M", "-5"]
        assert_fails(invoke(*args), "evaltool: maximum documents per query (-M) -5: expected 0 or more\n")
    with pytest.raises(EvaltoolError, match=r"\(-M\) -1: expected 0 or more"):
        evaluate(QRELS, RUN, ["P.5"], max_ret=-1)
    assert evaluate(QRELS, RUN, ["num_ret"], max_ret=0).summary == {"num_ret": 0}


# ---------------------------------------------------------------- evaltool measures: plain, aligned


def _columns(header: str) -> list[int]:
    return [m.start() for m in re.finditer(r"(?:^|(?<=  ))\S", header)]


def test_measures_listing_is_aligned_plain_text():
    result = invoke("measures")
    assert result.exit_code == 0
    out = result.output
    assert "``" not in out and ":func:" not in out and ":mod:" not in out
    for block in out.split("\n\n"):
        lines = block.splitlines()
        if len(lines) < 2:
            continue
        starts = _columns(lines[0])
        for line in lines[1:]:
            for start in starts[1:]:
                # every cell starts at its column: two spaces (or more) before it, text right at it
                assert line[start - 2:start] == "  ", (lines[0], line)
    iprec = next(line for line in out.splitlines() if line.startswith("iprec_at_recall "))
    assert "fractions (0,0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9,1)" in iprec


@pytest.mark.parametrize("name", [*MEASURES, *NAMED_MEASURES])
def test_each_measure_document_is_plain_text(name):
    out = invoke("measures", "-m", name).output
    assert "``" not in out and not re.search(r"^\s*=====", out, re.MULTILINE), out
    assert math.isfinite(len(out)) and ">>> " in out


# ---------------------------------------------------------------- every declaration documents itself


@pytest.mark.parametrize("m", [*MEASURES.values(), *NAMED_MEASURES.values()],
                         ids=[*(f"trec:{n}" for n in MEASURES), *(f"named:{n}" for n in NAMED_MEASURES)])
def test_every_docstring_states_edge_cases_a_citation_and_an_example(m):
    doc = m.doc
    assert "Edge cases:" in doc, m.name
    assert re.search(r"\b(19|20)\d\d\b|m_\w+\.c", doc), f"{m.name}: no citation (a year, or trec_eval's source file)"
    assert ">>> " in doc, m.name
    assert not re.search(r"seed 0\d\d|SPEC-\d", doc), f"{m.name}: cites a document a reader cannot resolve"
