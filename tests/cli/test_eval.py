"""The command line: help with examples for every command, the measures listing, the
version, and how -m, -n and the default measure set are understood.

Data for the measure tests: one query, one relevant document d1 ranked second behind the
unjudged d2. By hand: P_5 = 1/5, P_10 = 1/10, recip_rank = map = 1/2,
ndcg_cut_10 = (1 / log2(3)) / 1 = 0.6309.
"""

from __future__ import annotations

import csv
import io
import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import evaltool
from evaltool.cli import main
from evaltool.measures import MEASURES, NICKNAMES
from tests.support.helpers import assert_fails, invoke, rows

# trec_eval 10.0's default output (no -m): the 'official' measures with default parameters
OFFICIAL_NAMES = (
    ["runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank"]
    + [f"iprec_at_recall_{r:.2f}" for r in (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)]
    + [f"P_{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)]
)


@pytest.fixture
def files(tmp_path):
    qrels = tmp_path / "qrels"
    qrels.write_text("q1 0 d1 1\n")
    run = tmp_path / "run"
    run.write_text("q1 Q0 d2 1 2.0 myrun\nq1 Q0 d1 2 1.0 myrun\n")
    return str(qrels), str(run)


# ---------------------------------------------------------------- help


def test_every_command_has_help_with_an_example():
    names = main.list_commands(None)
    assert names, "no commands registered"
    example = re.compile(r"^\s*(cat .*\| )?evaltool( \S+)+", re.M)
    for name in names:
        command = main.get_command(None, name)
        assert command.help, f"command {name!r} has no help"
        assert example.search(command.help), f"help of {name!r} shows no 'evaltool ...' example"
        rendered = invoke(name, "--help")
        assert rendered.exit_code == 0, rendered.stderr
        assert example.search(rendered.stdout), f"'evaltool {name} --help' shows no example"
        assert rendered.stdout.startswith(f"Usage: evaltool {name} ")


def test_top_level_help():
    for args in (["--help"], ["-h"], []):
        result = invoke(*args)
        # no arguments: the usage on stderr and exit 2, as trec_eval and most CLIs do
        assert result.exit_code == (2 if not args else 0), (args, result.stderr)
        text = result.stderr if not args else result.stdout
        assert text.startswith("Usage: evaltool ")
        for name in main.list_commands(None):
            assert re.search(rf"^\s+{name}\s", text, re.M), name
        assert "evaltool QRELS RUN" in text


def test_eval_help_lists_the_trec_eval_options():
    result = invoke("eval", "--help")
    assert result.exit_code == 0
    for option in ("-m, --measure", "-q, --query-eval", "-c, --complete", "-n, --no-summary",
                   "-l, --level-for-rel", "-M, --max-retrieved", "-J, --judged-only",
                   "-N, --num-docs-in-coll", "-Z, --zscores", "-o, --format", "--on-duplicate"):
        assert option in result.stdout, option
    assert "evaltool qrels.txt run.txt -m ndcg_cut.10 -m P.5,10 -q" in result.stdout
    assert "--timings" not in result.stdout  # hidden benchmark option


def test_version_in_process_and_as_module():
    result = invoke("--version")
    assert result.exit_code == 0
    assert result.stdout == f"evaltool, version {evaltool.__version__}\n"
    process = subprocess.run([sys.executable, "-m", "evaltool", "--version"], capture_output=True,
                             text=True, timeout=60)
    assert process.returncode == 0, process.stderr
    assert process.stdout == f"evaltool, version {evaltool.__version__}\n"


def test_module_entry_point_evaluates(files):
    process = subprocess.run([sys.executable, "-m", "evaltool", *files, "-m", "P.5"], capture_output=True,
                             text=True, timeout=60)
    assert process.returncode == 0, process.stderr
    assert process.stdout == "P_5                   \tall\t0.2000\n"
    bad = subprocess.run([sys.executable, "-m", "evaltool", files[0], files[0]], capture_output=True,
                         text=True, timeout=60)
    assert bad.returncode == 2
    assert "Traceback" not in bad.stderr
    assert f"{files[0]}:1: found 'q1 0 d1 1'; expected 6 fields" in bad.stderr


# ---------------------------------------------------------------- measures command


def test_measures_lists_every_measure_and_nickname():
    result = invoke("measures")
    assert result.exit_code == 0, result.stderr
    trec_section = result.stdout.split("\n\n")[0]
    listed = [line.split()[0] for line in trec_section.splitlines()[1:]]
    assert listed == list(MEASURES)
    nicknames = [line for line in result.stdout.splitlines() if line.startswith("nicknames: ")]
    assert len(nicknames) == 1
    for name in NICKNAMES:
        assert name in nicknames[0]
    ndcg_cut = next(line for line in result.stdout.splitlines() if line.startswith("ndcg_cut "))
    assert "cutoffs (5,10,15,20,30,100,200,500,1000)" in ndcg_cut


def test_measures_documents_one_measure():
    result = invoke("measures", "-m", "ndcg_cut")
    assert result.exit_code == 0, result.stderr
    out = result.stdout
    assert out.startswith("ndcg_cut\n")
    assert "parameters: cutoffs (default 5,10,15,20,30,100,200,500,1000)" in out
    assert "summary: mean; per query: yes" in out
    # the whole docstring is shown (its formula and its example), dedented, as plain text
    doc = MEASURES["ndcg_cut"].doc
    for line in textwrap.dedent(doc.partition("\n")[2]).splitlines():
        assert line.replace("``", "").rstrip() in out, line
    assert doc.strip().splitlines()[0].replace("``", "") in out
    assert "``" not in out
    assert "DCG" in out
    # parameters after the name are ignored when documenting
    assert invoke("measures", "-m", "ndcg_cut.10").stdout == out
    assert invoke("measures", "--measure", "ndcg_cut").stdout == out


def test_measures_documents_a_nickname():
    result = invoke("measures", "-m", "official")
    assert result.exit_code == 0
    assert result.stdout == "official: " + " ".join(NICKNAMES["official"]) + "\n"


@pytest.mark.parametrize("name,hint", [
    ("nosuch", "unknown measure 'nosuch'; 'evaltool measures' lists them"),
    ("ndcg_cutt", "unknown measure 'ndcg_cutt'; did you mean ndcg_cut"),
    ("recip_rnak", "did you mean recip_rank"),
])
def test_measures_unknown_name_suggests(name, hint):
    result = invoke("measures", "-m", name)
    assert result.exit_code == 2
    assert result.stdout == ""
    assert hint in result.stderr
    assert result.stderr.count("\n") == 1


# ---------------------------------------------------------------- -m, -n and defaults


def test_attached_measure_value(files):
    result = invoke("-mndcg_cut.10", *files)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "ndcg_cut_10           \tall\t0.6309\n"


@pytest.mark.parametrize("args", [
    ["-m", "P.5,10"],
    ["-m", "P.10,5"],
    ["-m", "P.5", "-m", "P.10"],            # union of the cutoffs (trec_eval keeps one list)
    ["-mP.10", "-mP.5"],
    ["--measure", "P.5", "--measure=P.10"],
    ["-m", "P.5,10", "-m", "P.10"],
])
def test_cutoff_lists_and_repeated_measures(files, args):
    result = invoke(*files, *args)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "P_5                   \tall\t0.2000\nP_10                  \tall\t0.1000\n"


def test_repeated_different_measures_print_in_trec_eval_order(files):
    result = invoke(*files, "-m", "P.5", "-m", "recip_rank", "-m", "map")
    assert [name for name, _, _ in rows(result.stdout)] == ["map", "recip_rank", "P_5"]
    assert [value for _, _, value in rows(result.stdout)] == ["0.5000", "0.5000", "0.2000"]


def test_official_is_the_default(files):
    default = invoke(*files)
    assert default.exit_code == 0, default.stderr
    assert [name for name, _, _ in rows(default.stdout)] == OFFICIAL_NAMES
    assert invoke(*files, "-m", "official").stdout == default.stdout
    assert invoke("eval", *files).stdout == default.stdout
    values = {name: value for name, _, value in rows(default.stdout)}
    assert values["runid"] == "myrun"
    assert (values["num_q"], values["num_ret"], values["num_rel"], values["num_rel_ret"]) == ("1", "2", "1", "1")
    assert (values["map"], values["recip_rank"], values["P_5"], values["P_10"]) == ("0.5000", "0.5000", "0.2000", "0.1000")
    # precision is 1/2 at the only recall level reached (1.0), so every interpolated point is 1/2
    assert all(values[f"iprec_at_recall_{r:.2f}"] == "0.5000" for r in (0.0, 0.5, 1.0))


def test_no_summary(files):
    summary_only = invoke(*files, "-n", "-m", "P.5")
    assert summary_only.exit_code == 0
    assert summary_only.stdout == ""
    per_query = invoke(*files, "-n", "-q", "-m", "P.5", "-m", "num_q")
    assert per_query.exit_code == 0
    assert rows(per_query.stdout) == [("P_5", "q1", "0.2000")]  # num_q has no per-query row
    assert invoke(*files, "--no-summary", "-q", "-m", "P.5").stdout == per_query.stdout
    both = invoke(*files, "-q", "-m", "P.5")
    assert rows(both.stdout) == [("P_5", "q1", "0.2000"), ("P_5", "all", "0.2000")]


def test_attached_short_options(files):
    # -M1 keeps only d2: P_5 = 0; -l2 makes d1 (grade 1) non-relevant: P_5 = 0
    assert invoke(*files, "-M1", "-mP.5").stdout == "P_5                   \tall\t0.0000\n"
    assert invoke(*files, "-l2", "-mP.5").stdout == "P_5                   \tall\t0.0000\n"
    assert invoke(*files, "-qmP.5").stdout == "P_5                   \tq1\t0.2000\nP_5                   \tall\t0.2000\n"


# ---------------------------------------------------------------- several runs, qrels read once

# the runs a.txt, b.txt, c.txt of the fixture ``many`` (tests/cli/conftest.py)


def test_several_runs_print_what_consecutive_single_runs_print(many):
    qrels, folder = many
    runs = sorted(folder.iterdir())
    single = "".join(invoke("-m", "runid", "-m", "recip_rank", "-q", qrels, run).stdout for run in runs)
    together = invoke("-m", "runid", "-m", "recip_rank", "-q", qrels, *runs)
    assert together.exit_code == 0, together.stderr
    assert together.stdout == single
    assert [line.split("\t")[2] for line in together.stdout.splitlines() if line.startswith("runid")] == ["A", "B", "C"]


@pytest.mark.parametrize("given", ["folder", "glob"])
def test_a_directory_or_a_glob_gives_one_row_per_run(many, given):
    qrels, folder = many
    spec = folder if given == "folder" else f"{folder}/*.txt"
    result = invoke("-m", "recip_rank", "-m", "P.1", qrels, spec, "-o", "csv")
    assert result.exit_code == 0, result.stderr
    rows = list(csv.reader(io.StringIO(result.stdout)))
    assert rows[0] == ["run", "runid", "queries", "recip_rank", "P_1"]
    assert [(Path(r[0]).name, r[1], r[2], float(r[3]), float(r[4])) for r in rows[1:]] == [
        ("a.txt", "A", "2", 0.75, 0.5), ("b.txt", "B", "2", 0.75, 0.5), ("c.txt", "C", "2", 1.0, 1.0)]


def test_several_runs_as_json_are_a_list_of_single_run_objects(many):
    qrels, folder = many
    runs = sorted(folder.iterdir())
    together = json.loads(invoke("-m", "recip_rank", qrels, *runs, "-o", "json").stdout)
    assert [entry.pop("name") for entry in together] == ["a.txt", "b.txt", "c.txt"]  # each run's name, then its single-run object
    assert together == [json.loads(invoke("-m", "recip_rank", qrels, run, "-o", "json").stdout) for run in runs]


def test_several_runs_refuse_what_takes_one_and_name_empty_sources(many, tmp_path):
    qrels, folder = many
    empty = tmp_path / "empty"
    empty.mkdir()
    assert_fails(invoke(qrels, folder, "--save-reference", tmp_path / "ref.json"), "take one run", "3:")
    assert_fails(invoke(qrels, empty), str(empty), "is a directory with no run files")
    assert_fails(invoke(qrels, f"{folder}/*.nothing"), "no file matches")
    bad = folder / "d.txt"
    bad.write_text("q1 Q0 d1 1 x D\n")
    assert_fails(invoke(qrels, folder), f"{bad}:1:")
