"""``evaltool check``, ``--save-reference`` and ``evaltool.testing.assert_matches``.

Hand-made data: q1 has relevant d1 ranked 2nd (recip_rank 0.5, P_5 0.2), q2 has relevant
d3 ranked 1st (recip_rank 1, P_5 0.2): summary recip_rank 0.75, P_5 0.2.
"""

from __future__ import annotations

import csv
import json
import shlex
from collections import defaultdict
from pathlib import Path
from types import SimpleNamespace

import pytest

import evaltool.testing
from tests.support.helpers import assert_fails, invoke, require_shared, write

QRELS = "q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 1\n"
RUN = "q1 Q0 d2 1 2.0 r\nq1 Q0 d1 2 1.0 r\nq2 Q0 d3 1 1.0 r\nq2 Q0 d4 2 0.5 r\n"
# q1's relevant d1 now first: recip_rank 1 for q1, summary 1.0
PERTURBED = "q1 Q0 d2 1 1.0 r\nq1 Q0 d1 2 2.0 r\nq2 Q0 d3 1 1.0 r\nq2 Q0 d4 2 0.5 r\n"


@pytest.fixture
def files(tmp_path):
    for name, content in (("qrels.txt", QRELS), ("run.txt", RUN), ("perturbed.txt", PERTURBED)):
        (tmp_path / name).write_text(content)
    return SimpleNamespace(qrels=tmp_path / "qrels.txt", run=tmp_path / "run.txt", perturbed=tmp_path / "perturbed.txt",
                           folder=tmp_path, make=lambda name, content: Path(write(tmp_path / name, content)))


def test_check_passes_on_the_reference_it_just_wrote(files):
    reference = files.folder / "ref.json"
    written = invoke(files.qrels, files.run, "-m", "recip_rank", "-m", "P.5", "--save-reference", reference)
    assert written.exit_code == 0, written.stderr
    assert written.stdout == "recip_rank            \tall\t0.7500\nP_5                   \tall\t0.2000\n"
    saved = json.loads(reference.read_text())
    assert saved["summary"] == {"recip_rank": 0.75, "P_5": pytest.approx(0.2)}
    assert saved["per_query"]["q1"]["recip_rank"] == 0.5  # per-query values always saved
    result = invoke("check", reference, files.qrels, files.run, "--per-query")
    assert result.exit_code == 0, result.stdout + result.stderr
    assert result.stdout == f"6 values checked against {reference} (tolerance 0.0001): 6 hold\n"


def test_check_fails_with_a_drift_table_when_the_run_changes(files):
    reference = files.folder / "ref.json"
    invoke(files.qrels, files.run, "-m", "recip_rank", "-m", "P.5", "--save-reference", reference)
    result = invoke("check", reference, files.qrels, files.perturbed, "--per-query")
    assert result.exit_code == 1
    table = [line.split() for line in result.stdout.splitlines()]
    assert table[0] == ["measure", "query", "reference", "current", "difference", "status"]
    assert table[1:3] == [["recip_rank", "all", "0.750000", "1.000000", "0.250000", "drift"],
                          ["recip_rank", "q1", "0.500000", "1.000000", "0.500000", "drift"]]
    assert "6 values checked" in result.stdout and "4 hold, 2 drifted" in result.stdout
    # the improvement is accepted with --allow-improvement, still listed
    allowed = invoke("check", reference, files.qrels, files.perturbed, "--per-query", "--allow-improvement")
    assert allowed.exit_code == 0 and "improved" in allowed.stdout and "2 improved (allowed)" in allowed.stdout
    # the other way round a drop is never allowed
    worse = files.folder / "better.json"
    invoke(files.qrels, files.perturbed, "-m", "recip_rank", "--save-reference", worse)
    assert invoke("check", worse, files.qrels, files.run, "--allow-improvement").exit_code == 1


def test_summary_only_unless_per_query(files):
    reference = files.make("ref.tsv", "recip_rank all 0.75\nrecip_rank q1 0.9\n")  # q1 is wrong (0.5)
    assert invoke("check", reference, files.qrels, files.run).exit_code == 0
    result = invoke("check", reference, files.qrels, files.run, "--per-query")
    assert result.exit_code == 1 and "q1" in result.stdout


def test_tsv_reference_with_comments_header_and_tolerance(files):
    reference = files.make("ref.tsv", "# typed in from a paper\nmeasure\tqid\tvalue\n\nP_5\tall\t0.2\n"
                                      "recip_rank all 0.7501   # no: a trailing comment is a 4th field\n")
    assert_fails(invoke("check", reference, files.qrels, files.run), f"{reference}:5:", "3 fields")
    reference = files.make("ref.tsv", "# typed in\nmeasure qid value\nP_5 all 0.2\nrecip_rank all 0.7501\n")
    assert invoke("check", reference, files.qrels, files.run).exit_code == 0  # |0.75 - 0.7501| <= 1e-4
    assert invoke("check", reference, files.qrels, files.run, "--tolerance", "5e-5").exit_code == 1


def test_trec_eval_output_is_a_reference(files):
    reference = files.folder / "ref.trec"
    # relstring is text, printed quoted ('1000000000'): compared as text
    reference.write_text(invoke(files.qrels, files.run, "-q", "-m", "recip_rank", "-m", "num_ret",
                                "-m", "relstring").stdout)
    assert "'01" in reference.read_text()
    assert invoke("check", reference, files.qrels, files.run, "--per-query").exit_code == 0
    assert invoke("check", reference, files.qrels, files.perturbed, "--per-query").exit_code == 1


def test_json_reference_brings_its_options(files):
    # with -c, q3 (judged, not retrieved) counts: recip_rank (0.5 + 1 + 0) / 3
    files.qrels.write_text(QRELS + "q3 0 d9 1\n")
    reference = files.folder / "ref.json"
    invoke(files.qrels, files.run, "-c", "-m", "recip_rank", "--save-reference", reference)
    assert json.loads(reference.read_text())["summary"]["recip_rank"] == pytest.approx(0.5)
    assert invoke("check", reference, files.qrels, files.run).exit_code == 0
    # an option given on the command line wins: -l 2 makes no document relevant
    assert invoke("check", reference, files.qrels, files.run, "-l", "2").exit_code == 1


def test_output_formats_of_check(files):
    reference = files.make("ref.tsv", "recip_rank all 0.8\nP_5 all 0.2\n")
    out = json.loads(invoke("check", reference, files.qrels, files.run, "-o", "json").stdout)
    assert out["ok"] is False and out["checked"] == 2 and out["held"] == 1
    assert out["drifts"] == [{"measure": "recip_rank", "query": "all", "reference": 0.8, "current": 0.75,
                              "difference": pytest.approx(-0.05), "status": "drift"}]
    rows = list(csv.reader(invoke("check", reference, files.qrels, files.run, "-o", "csv").stdout.splitlines()))
    assert rows[0] == ["measure", "query", "reference", "current", "difference", "status"]
    assert rows[1][:4] == ["recip_rank", "all", "0.8", "0.75"] and rows[1][5] == "drift"


def test_missing_query_is_a_drift(files):
    reference = files.make("ref.tsv", "recip_rank q7 1.0\n")
    result = invoke("check", reference, files.qrels, files.run, "--per-query")
    assert result.exit_code == 1 and "missing" in result.stdout


# ---------------------------------------------------------------- the Python helper


def test_assert_matches_passes_and_fails_readably(files):
    evaltool.testing.assert_matches({"recip_rank": 0.75, ("recip_rank", "q2"): 1.0}, str(files.qrels),
                                    str(files.run), per_query=True)
    with pytest.raises(AssertionError) as failure:
        evaltool.testing.assert_matches({"recip_rank": 0.75, ("recip_rank", "q1"): 0.5}, str(files.qrels),
                                        str(files.perturbed), per_query=True)
    message = str(failure.value)
    assert message.startswith("2 of 2 values drifted from <reference> (tolerance 0.0001):")
    assert "recip_rank  q1      0.500000  1.000000    0.500000  drift" in message


def test_assert_matches_reads_reference_files_and_options(files):
    files.qrels.write_text(QRELS + "q3 0 d9 1\n")
    reference = files.make("ref.tsv", "recip_rank all 0.5\n")  # needs -c
    evaltool.testing.assert_matches(reference, files.qrels, files.run, complete=True)
    with pytest.raises(AssertionError):
        evaltool.testing.assert_matches(reference, files.qrels, files.run)


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize("content,line,expected", [
    ("map all\n", 1, "3 fields 'measure qid value'"),
    ("# c\nmap all 0.3 x\n", 2, "3 fields"),
    ("map all 0.3x\n", 1, "a number as the value in field 3, not '0.3x'"),
    ("map all 0.3\nP_5 all 0.1\nmap all 0.4\n", 3, "one value for map all; line 1 gives 0.3"),
    ("P_5 all 0.2\nfoo_bar all 0.3\n", 2, "a measure evaltool computes"),
    ("recip_rank all 0.7\nP_x all 0.3\n", 2, "a measure evaltool computes"),
])
def test_bad_reference_line_is_named(files, content, line, expected):
    reference = files.make("ref.tsv", content)
    assert_fails(invoke("check", reference, files.qrels, files.run), f"{reference}:{line}:", expected)


@pytest.mark.parametrize("content,expected", [
    ("", "at least one 'measure qid value' line"),
    ("# nothing\n", "at least one"),
    ('{"summary": 3}', "an object with a 'summary'"),
    ('{"summary": {"map": "x"}}', "a number"),
    ('{"summary": {"map": 0.3}, ', "valid JSON"),
])
def test_bad_reference_file(files, content, expected):
    reference = files.make("ref", content)
    assert_fails(invoke("check", reference, files.qrels, files.run), str(reference), expected)


def test_missing_files(files):
    missing = files.folder / "none.json"
    assert_fails(invoke("check", missing, files.qrels, files.run), f"cannot read {missing}")
    reference = files.make("ref.tsv", "P_5 all 0.2\n")
    assert_fails(invoke("check", reference, files.qrels, missing), f"cannot read {missing}")


def test_per_query_only_reference_without_per_query(files):
    reference = files.make("ref.tsv", "P_5 q1 0.2\n")
    assert_fails(invoke("check", reference, files.qrels, files.run), "nothing to check", "--per-query")


# ---------------------------------------------------------------- published numbers as the reference


def _published_groups():
    """published.tsv rows grouped by (run, qrels, trec_eval args): one reference each."""
    path = require_shared("realdata", "published.tsv")
    groups = defaultdict(list)
    with open(path, newline="") as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            groups[(row["run"], row["qrels"], row["trec_eval_args"])].append(row)
    return path.parent, groups


def test_published_values_are_reproduced_as_references(tmp_path, monkeypatch):
    folder, groups = _published_groups()
    monkeypatch.chdir(folder)
    checked = 0
    for i, ((run, qrels, args), rows) in enumerate(groups.items()):
        reference = tmp_path / f"reference{i}.tsv"
        lines = ["# measure qid value, from published.tsv", "measure\tqid\tvalue"]
        lines += sorted({f"{r['measure']}\t{r['qid']}\t{r['published']}" for r in rows})
        reference.write_text("\n".join(lines) + "\n")
        result = invoke("check", reference, qrels, run, *shlex.split(args), "--per-query", "--tolerance", "1e-4")
        assert result.exit_code == 0, (run, args, result.stdout, result.stderr)
        checked += int(result.stdout.split()[0])
    assert checked == len({(r["run"], r["trec_eval_args"], r["measure"], r["qid"])
                           for rows in groups.values() for r in rows})


def test_published_boundary_case_is_within_the_tolerance_only(tmp_path, monkeypatch):
    """DL21 BM25 map: published 0.1357, exact 0.13575064: holds at 1e-4, drifts at 5e-5."""
    folder = require_shared("realdata")
    monkeypatch.chdir(folder)
    reference = tmp_path / "dl21.tsv"
    reference.write_text("map all 0.1357\n")
    args = ["check", reference, "qrels/qrels.dl21-passage.txt", "runs/BM25.trec_results_dl21.txt",
            "-c", "-M", "100", "-l", "2"]
    assert invoke(*args).exit_code == 0
    drifted = invoke(*args, "--tolerance", "5e-5")
    assert drifted.exit_code == 1 and "0.135751" in drifted.stdout


def test_parameterised_output_names_map_back_to_measures(files):
    """A reference's output names (ndcg_1=3,2=9, utility_1,-1,0,0, iprec_at_recall_0.10...) are recomputed."""
    reference = files.folder / "ref.json"
    specs = ["ndcg.1=3,2=9", "rbp.p=0.8", "set_F.0.5", "utility.1,-1,0,0", "Rprec_mult.0.5", "success.1",
             "map_cut.7", "iprec_at_recall.0.1", "relative_P.5", "gm_map", "runid"]
    written = invoke(files.qrels, files.run, "-q", *[a for s in specs for a in ("-m", s)], "--save-reference", reference)
    assert written.exit_code == 0, written.stderr
    names = json.loads(reference.read_text())["measures"]
    assert {"ndcg_1=3,2=9", "utility_1,-1,0,0", "iprec_at_recall_0.10", "rbp_p=0.8", "runid"} <= set(names)
    result = invoke("check", reference, files.qrels, files.run, "--per-query")
    assert result.exit_code == 0, result.stdout


def test_allow_improvement_reads_each_measures_direction(files):
    """FirstRelPos is better lower: q1's relevant document moving from rank 2 to rank 1 (mean 1.5 -> 1.0)
    is an improvement, the way back a drift; a count (num_ret, 4 retrieved) never improves."""
    reference = files.folder / "ref.json"
    invoke(files.qrels, files.run, "-m", "FirstRelPos", "--save-reference", reference)
    assert json.loads(reference.read_text())["summary"] == {"FirstRelPos": 1.5}
    allowed = invoke("check", reference, files.qrels, files.perturbed, "--allow-improvement")
    assert allowed.exit_code == 0 and "2 improved (allowed)" not in allowed.stdout, allowed.stdout
    assert [line.split()[-1] for line in allowed.stdout.splitlines()[1:2]] == ["improved"], allowed.stdout
    worse = files.folder / "better.json"
    invoke(files.qrels, files.perturbed, "-m", "FirstRelPos", "--save-reference", worse)
    dropped = invoke("check", worse, files.qrels, files.run, "--allow-improvement")
    assert dropped.exit_code == 1 and "drift" in dropped.stdout, dropped.stdout
    counts = files.make("counts.tsv", "num_ret all 3\n")  # the run retrieves 4: more is not better
    drifted = invoke("check", counts, files.qrels, files.run, "--allow-improvement")
    assert drifted.exit_code == 1 and "drift" in drifted.stdout, drifted.stdout


@pytest.mark.parametrize("options, shown", [
    ({"relevance_level": "1"}, 'meta.options.relevance_level: "1"'), ({"complete": 1}, "meta.options.complete: 1"),
    ({"max_ret": 1.5}, "meta.options.max_ret: 1.5"), ({"on_duplicate": ["x"]}, 'meta.options.on_duplicate: ["x"]'),
])
def test_a_json_reference_with_options_of_the_wrong_type(tmp_path, options, shown):
    """A reference's options go to evaluate(): a text relevance level ended in a TypeError (tests/support/fuzzing.py)."""
    from tests.support.helpers import ROOT, assert_fails, invoke, write

    reference = write(tmp_path / "ref.json", json.dumps({"summary": {"map": 0.49}, "meta": {"options": options}}))
    assert_fails(invoke("check", reference, ROOT / "data" / "qrels.txt", ROOT / "data" / "run.txt"), reference, shown)
    fine = write(tmp_path / "fine.json", json.dumps({"summary": {"map": 0.4907}, "meta": {"options": {"max_ret": None}}}))
    assert invoke("check", fine, ROOT / "data" / "qrels.txt", ROOT / "data" / "run.txt").exit_code == 0
