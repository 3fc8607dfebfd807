"""table, CSV, Markdown and LaTeX output parse back, escaping run names and query ids; --output.

Query ids and run names carry the characters each format treats specially. Data: one
relevant document per query at rank 1 (recip_rank 1) or rank 2 (recip_rank 0.5).
"""

from __future__ import annotations

import csv
import io
import json
import os
import re

import pytest

from tests.support.helpers import assert_fails, invoke

QIDS = ["q&1", "q_2%", "q#3|x", "q,4", 'q"5"', "q\\6", "[q7]", "q$8^{}~"]
NAMES = ["base & co", "50%_more", "#1|best", "a,b", 'say "hi"', "back\\slash", "[run]", "x$^{}~"]
RR = {qid: 1.0 if i % 2 == 0 else 0.5 for i, qid in enumerate(QIDS)}


@pytest.fixture
def files(tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"{q} 0 rel 1\n" for q in QIDS))
    runs = []
    for j in range(2):
        run = tmp_path / f"run{j}.txt"
        lines = []
        for qid, rr in RR.items():
            first, second = ("rel", "other") if (rr == 1.0) != (j == 1) else ("other", "rel")
            lines += [f"{qid} Q0 {first} 1 2.0 t", f"{qid} Q0 {second} 2 1.0 t"]
        run.write_text("\n".join(lines) + "\n")
        runs.append(str(run))
    return str(qrels), runs


def _eval(files, fmt):
    qrels, runs = files
    result = invoke(qrels, runs[0], "-q", "-m", "recip_rank", "-o", fmt)
    assert result.exit_code == 0, result.stderr
    return result.stdout


def _compare(files, fmt):
    qrels, runs = files
    names = [arg for name in NAMES[:2] for arg in ("--name", name)]
    result = invoke("compare", qrels, *runs, "-m", "recip_rank", *names, "-o", fmt)
    assert result.exit_code == 0, result.stderr
    return result.stdout


def _split_unescaped(line: str, separator: str, escapes) -> list[str]:
    """Cells of a row: split at separators not escaped, then undo the format's escapes."""
    cells, current, i = [], "", 0
    while i < len(line):
        for escaped, plain in escapes:
            if line.startswith(escaped, i):
                current += plain
                i += len(escaped)
                break
        else:
            if line[i] == separator:
                cells.append(current.strip())
                current = ""
            else:
                current += line[i]
            i += 1
    return cells + [current.strip()]


MARKDOWN_ESCAPES = [("\\" + ch, ch) for ch in "\\`*_[]<>#|&"]
LATEX_ESCAPES = [(r"\textbackslash{}", "\\"), (r"\textasciitilde{}", "~"), (r"\textasciicircum{}", "^"),
                 ("{[}", "["), ("{]}", "]")] + [("\\" + ch, ch) for ch in "&%$#_{}"]


def parse_markdown_table(text: str) -> list[list[str]]:
    """The first table: the run of lines from the first that starts with '|'."""
    lines = []
    for line in text.splitlines():
        if line.startswith("|"):
            lines.append(line)
        elif lines:
            break
    rows = [_split_unescaped(line.strip()[1:-1], "|", MARKDOWN_ESCAPES) for line in lines]
    assert all(re.fullmatch(r"-{3}:?", cell) for cell in rows[1]), rows[1]  # the alignment row
    return [rows[0]] + rows[2:]


def parse_latex_tabulars(text: str) -> list[list[list[str]]]:
    tables = re.findall(r"\\begin\{tabular\}\{([lr]+)\}\n(.*?)\n\\end\{tabular\}", text, flags=re.S)
    out = []
    for spec, body in tables:
        lines = body.split("\n")
        rules = [line for line in lines if line == "\\hline"]
        rows = [line for line in lines if line != "\\hline"]
        assert len(rules) == 3 and all(row.endswith(" \\\\") for row in rows)
        cells = [_split_unescaped(row[:-3], "&", LATEX_ESCAPES) for row in rows]
        assert all(len(c) == len(spec) for c in cells)
        out.append(cells)
    return out


# ---------------------------------------------------------------- eval


def test_eval_csv_parses_back(files):
    rows = list(csv.reader(io.StringIO(_eval(files, "csv"))))
    assert rows[0] == ["query", "recip_rank"]
    # per-query rows in trec_eval's (byte) order, then the summary
    assert [r[0] for r in rows[1:]] == sorted(QIDS, key=lambda q: q.encode()) + ["all"]
    assert {r[0]: float(r[1]) for r in rows[1:-1]} == RR
    assert float(rows[-1][1]) == sum(RR.values()) / len(RR)


def test_eval_markdown_parses_back(files):
    rows = parse_markdown_table(_eval(files, "markdown"))
    assert rows[0] == ["query", "recip_rank"]
    assert {r[0]: float(r[1]) for r in rows[1:-1]} == RR
    assert rows[-1] == ["all", "0.7500"]


def test_eval_latex_escapes_and_counts_lines(files):
    text = _eval(files, "latex")
    assert r"q\&1" in text and r"q\_2\%" in text and r"q\#3|x" in text and r"q\textbackslash{}6" in text
    assert r"{[}q7{]}" in text and r"q\$8\textasciicircum{}\{\}\textasciitilde{}" in text
    (table,) = parse_latex_tabulars(text)
    body = text.split("\\begin{tabular}{lr}\n")[1].split("\n\\end{tabular}")[0]
    assert len(body.splitlines()) == 3 + 1 + len(QIDS) + 1  # rules, header, queries, summary
    assert {r[0]: float(r[1]) for r in table[1:-1]} == RR


def test_eval_table_is_aligned(files):
    lines = _eval(files, "table").splitlines()
    assert len({len(line) for line in lines}) == 1  # numbers right-aligned to one width
    assert lines[0].split() == ["query", "recip_rank"] and lines[-1].split() == ["all", "0.7500"]


# ---------------------------------------------------------------- integer ranks and missing values

# By hand: q1's first relevant document is at rank 2, q3's at rank 1, q2 retrieves none (no value);
# the summary is the mean rank over the queries that have one, (2 + 1) / 2 = 1.5.
RANK_QRELS = "q1 0 a 1\nq1 0 b 0\nq2 0 c 1\nq3 0 e 1\n"
RANK_RUN = "q1 Q0 x 1 3.0 t\nq1 Q0 a 2 2.0 t\nq2 Q0 d 1 1.0 t\nq3 Q0 e 1 1.0 t\n"
RANKS = {"q1": "2", "q2": "-nan", "q3": "1", "all": "1.5000"}


@pytest.fixture
def rank_files(tmp_path):
    (tmp_path / "qrels").write_text(RANK_QRELS)
    (tmp_path / "run").write_text(RANK_RUN)
    return str(tmp_path / "qrels"), str(tmp_path / "run")


def _ranks(rank_files, fmt, *options):
    result = invoke(*rank_files, "-q", "-m", "FirstRelPos", "-o", fmt, *options)
    assert result.exit_code == 0, result.stderr
    return result.stdout


def test_first_relevant_position_in_trec_format_is_an_integer_and_missing_is_trec_evals_nan(rank_files):
    # trec_eval prints a value that does not exist (its 0/0 cases) as glibc's '  -nan', counts as %ld
    assert _ranks(rank_files, "trec") == (
        "FirstRelPos           \tq1\t2\nFirstRelPos           \tq2\t  -nan\n"
        "FirstRelPos           \tq3\t1\nFirstRelPos           \tall\t1.5000\n")


def test_first_relevant_position_in_json_is_an_integer_and_missing_is_null(rank_files):
    parsed = json.loads(_ranks(rank_files, "json"))
    per_query = {qid: values["FirstRelPos"] for qid, values in parsed["per_query"].items()}
    assert per_query == {"q1": 2, "q2": None, "q3": 1}
    assert all(type(v) is int for v in (per_query["q1"], per_query["q3"]))
    assert parsed["summary"]["FirstRelPos"] == 1.5


@pytest.mark.parametrize("fmt", ["csv", "markdown", "latex", "table"])
def test_first_relevant_position_in_tables_is_an_integer_and_missing_is_trec_evals_nan(rank_files, fmt):
    text = _ranks(rank_files, fmt)
    if fmt == "csv":
        rows = list(csv.reader(io.StringIO(text)))
        summary = {**RANKS, "all": "1.5"}  # CSV writes floats in full
    elif fmt == "markdown":
        rows, summary = parse_markdown_table(text), RANKS
    elif fmt == "latex":
        (rows,), summary = parse_latex_tabulars(text), RANKS
    else:
        rows, summary = [line.split() for line in text.splitlines()], RANKS
    assert rows[0] == ["query", "FirstRelPos"]
    assert dict(rows[1:]) == summary


def test_first_relevant_position_in_html_is_an_integer_and_missing_is_trec_evals_nan(rank_files):
    text = _ranks(rank_files, "html")
    cells = re.findall(r'<tr(?: class="summary")?><td>(\w+)</td><td class="num" data-value="([^"]*)">([^<]*)</td></tr>',
                       text)
    assert cells == [("q1", "2", "2"), ("q2", "", "-nan"), ("q3", "1", "1"), ("all", "1.5", "1.5000")]


def test_missing_values_read_back_as_nan_by_pandas(rank_files):
    pandas = pytest.importorskip("pandas")
    frame = pandas.read_csv(io.StringIO(_ranks(rank_files, "csv")), index_col="query")
    assert frame["FirstRelPos"].isna().tolist() == [False, True, False, False]


def test_a_summary_without_any_rank_is_missing_and_groups_average_ranks(rank_files, tmp_path):
    qrels, _ = rank_files
    nothing = tmp_path / "nothing.run"
    nothing.write_text("q2 Q0 d 1 1.0 t\n")
    result = invoke(qrels, str(nothing), "-c", "-m", "FirstRelPos")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "FirstRelPos           \tall\t  -nan\n"
    assert json.loads(invoke(qrels, str(nothing), "-c", "-m", "FirstRelPos", "-o", "json").stdout)[
        "summary"] == {"FirstRelPos": None}
    topics = tmp_path / "topics.tsv"
    topics.write_text("qid\tkind\nq1\ta\nq2\tb\nq3\ta\n")
    grouped = _ranks(rank_files, "trec", "--group-by", "kind", "--topics", str(topics)).splitlines()
    # group a: ranks 2 and 1 (mean 1.5); group b: q2 alone, no rank
    assert "FirstRelPos           \tkind=a\t1.5000" in grouped and "FirstRelPos           \tkind=b\t  -nan" in grouped


# ---------------------------------------------------------------- compare


def test_compare_csv_parses_back_with_awkward_names(files):
    rows = list(csv.DictReader(io.StringIO(_compare(files, "csv"))))
    assert [r["run"] for r in rows] == NAMES[:2]
    # run1 swaps which queries rank the relevant document first: RR 0.5 where run0 has 1 and back
    base, other = rows
    assert float(base["mean"]) == float(other["mean"]) == 0.75 and base["delta"] == ""
    assert (other["wins"], other["ties"], other["losses"]) == ("4", "0", "4")


def test_compare_markdown_and_latex_parse_back(files):
    markdown = parse_markdown_table(_compare(files, "markdown"))
    assert markdown[0] == ["run", "recip_rank"]
    assert [r[0] for r in markdown[1:]] == NAMES[:2]
    assert markdown[2][1] == "0.7500 (+0.0000)"
    latex = parse_latex_tabulars(_compare(files, "latex"))
    assert len(latex) == 2  # the main table and the paired differences
    assert [r[0] for r in latex[0][1:]] == NAMES[:2] and latex[1][1][:2] == [NAMES[1], "recip_rank"]


@pytest.mark.parametrize("name", NAMES)
def test_every_awkward_name_survives_every_format(files, name):
    qrels, runs = files
    out = {}
    for fmt in ("csv", "markdown", "latex", "table"):
        result = invoke("compare", qrels, *runs, "-m", "recip_rank", "--name", "plain", "--name", name, "-o", fmt)
        assert result.exit_code == 0, result.stderr
        out[fmt] = result.stdout
    assert list(csv.reader(io.StringIO(out["csv"])))[2][1] == name
    assert parse_markdown_table(out["markdown"])[2][0] == name
    assert parse_latex_tabulars(out["latex"])[0][2][0] == name
    assert out["table"].splitlines()[2].startswith(name)


# ---------------------------------------------------------------- --output


def test_output_writes_the_file_atomically(files, tmp_path):
    qrels, runs = files
    target = tmp_path / "out" / "report.csv"
    target.parent.mkdir()
    target.write_text("old contents\n")
    result = invoke(qrels, runs[0], "-q", "-m", "recip_rank", "-o", "csv", "--output", target)
    assert result.exit_code == 0 and result.stdout == ""
    assert target.read_text() == _eval(files, "csv")
    assert os.listdir(target.parent) == ["report.csv"]  # no temporary file left behind
    compared = tmp_path / "out" / "compare.md"
    assert invoke("compare", qrels, *runs, "-m", "recip_rank", "-o", "markdown", "--output", compared).exit_code == 0
    assert compared.read_text().startswith("| run | recip\\_rank |")


def test_output_into_a_missing_folder_fails_cleanly(files, tmp_path):
    qrels, runs = files
    target = tmp_path / "no" / "such" / "file.csv"
    assert_fails(invoke(qrels, runs[0], "-o", "csv", "--output", target), f"cannot write {target}")
    assert not target.parent.exists()
