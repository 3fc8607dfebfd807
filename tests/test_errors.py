"""Every way input can be wrong: one clear message, exit code 2, no traceback, no output.

CLI messages name the file, the line (``path:N``), the text found and what was
expected. The Python API raises :class:`evaltool.EvaltoolError` subclasses carrying the
same facts as attributes.
"""

from __future__ import annotations

import gzip

import pytest

import evaltool
from evaltool import EvaltoolError, InputError, MeasureError, ParseError, evaluate
from tests.support.helpers import assert_fails, invoke, write

QRELS = "q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 1\n"
RUN = "q1 Q0 d1 1 2.0 r\nq1 Q0 d2 2 1.0 r\nq2 Q0 d3 1 1.0 r\n"


@pytest.fixture
def files(tmp_path):
    """Valid qrels and run paths, plus a writer for broken ones."""

    class Files:
        qrels = write(tmp_path / "qrels.txt", QRELS)
        run = write(tmp_path / "run.txt", RUN)

        @staticmethod
        def make(name, content):
            return write(tmp_path / name, content)

    return Files


def assert_parse_error(result, path, line, text, expected):
    return assert_fails(result, f"{path}:{line}:", f"found {text!r}", f"expected {expected}")


def test_valid_inputs_pass(files):
    result = invoke(files.qrels, files.run, "-m", "P.1")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "P_1                   \tall\t1.0000\n"  # both queries rank a relevant first


# ---------------------------------------------------------------- field counts


@pytest.mark.parametrize("bad", [
    "q1 0 d9",                  # 3 fields
    "q1 0 d9 1 extra",          # 5 fields
    "q1 0 d9 1 # note",         # a trailing comment is still a field: trec_eval wants exactly 4
    "q1 d9 1",
    "q1",
])
def test_qrels_line_with_wrong_field_count(files, bad):
    path = files.make("bad_qrels", f"# header\n{QRELS}\n{bad}\nq3 0 d1 1\n")
    # line 1 comment, 2-4 judgments, 5 blank, 6 the bad line
    assert_parse_error(invoke(path, files.run), path, 6, bad, "4 fields 'query_id iteration doc_id grade'")


@pytest.mark.parametrize("bad", ["q1 Q0 d9 3 0.5", "q1 Q0 d9 3", "q1"])
def test_run_line_with_too_few_fields(files, bad):
    path = files.make("bad_run", f"{RUN}{bad}\r\n")
    assert_parse_error(invoke(files.qrels, path), path, 4, bad,
                       "6 fields 'query_id iteration doc_id rank score run_tag'")


def test_run_error_on_stdin_names_stdin_and_line(files):
    result = invoke(files.qrels, "-", input=f"{RUN}q1 Q0 d9 3 0.5\n".encode())
    assert_parse_error(result, "<stdin>", 4, "q1 Q0 d9 3 0.5", "6 fields")


# ---------------------------------------------------------------- values


@pytest.mark.parametrize("grade", ["1.5", "x", "1_0", "1e3", "0x1", "--1", "+", "１", "½", "1,0"])
def test_non_integer_grade(files, grade):
    line = f"q1 0 d9 {grade}"
    path = files.make("bad_qrels", f"{QRELS}{line}\n")
    assert_parse_error(invoke(path, files.run), path, 4, line,
                       f"an integer grade in field 4, not {grade!r}")


def test_grade_out_of_the_64_bit_range(files):
    line = "q1 0 d9 99999999999999999999"
    path = files.make("bad_qrels", f"{line}\n")
    assert_parse_error(invoke(path, files.run), path, 1, line, "an integer grade between")


def test_signed_grades_are_integers(files):
    # '-1' (unjudged, in the pool) and '+2' are integers: accepted
    path = files.make("qrels_signed", "q1 0 d1 +2\nq1 0 d2 -1\n")
    result = invoke(path, files.run, "-m", "num_rel")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "num_rel               \tall\t1\n"


@pytest.mark.parametrize("score", ["abc", "nan", "NaN", "inf", "-inf", "Infinity", "1_0", "1e400", "0x10", "1,5"])
def test_score_that_is_not_a_finite_number(files, score):
    line = f"q1 Q0 d9 3 {score} r"
    path = files.make("bad_run", f"{RUN}{line}\n")
    assert_parse_error(invoke(files.qrels, path), path, 4, line,
                       f"a finite number as the score in field 5, not {score!r}")


def test_undecodable_bytes_in_a_bad_line_do_not_crash(files):
    path = files.make("bad_qrels", b"q1 0 d\xff 1.5\n")
    stderr = assert_fails(invoke(path, files.run), f"{path}:1:", "an integer grade in field 4")
    assert "d" in stderr


# ---------------------------------------------------------------- empty files


@pytest.mark.parametrize("content", ["", "\n\n", "# only\n# comments\n", "   \n\t\n# c\r\n", "#"])
def test_qrels_without_judgments(files, content):
    path = files.make("empty_qrels", content)
    assert_fails(invoke(path, files.run), f"evaltool: {path};", "expected at least one judgment line",
                 "the file has none")


@pytest.mark.parametrize("content", ["", "\n", "# only a comment\n"])
def test_run_without_results(files, content):
    path = files.make("empty_run", content)
    assert_fails(invoke(files.qrels, path), f"evaltool: {path};", "expected at least one result line",
                 "the file has none")


def test_empty_run_on_stdin(files):
    assert_fails(invoke(files.qrels, "-", input=b""), "<stdin>", "at least one result line")


def test_empty_gzip_file(files):
    path = files.make("empty.gz", gzip.compress(b""))
    assert_fails(invoke(files.qrels, path), path, "at least one result line")


# ---------------------------------------------------------------- duplicates


def test_duplicate_in_run_names_both_lines(files):
    run = "# header\nq1 Q0 d1 1 2.0 r\n\nq1 Q0 d2 2 1.0 r\nq1 Q0 d1 3 0.5 r\n"
    path = files.make("dup_run", run)
    assert_parse_error(invoke(files.qrels, path), path, 5, "q1 Q0 d1 3 0.5 r",
                       "each (query, document) pair once; query 'q1' document 'd1' was already given at line 2")
    assert "--on-duplicate" in invoke(files.qrels, path).stderr


def test_duplicate_in_qrels_names_both_lines(files):
    path = files.make("dup_qrels", "q1 0 d1 0\r\nq2 0 d1 1\r\n# c\r\nq1 0 d1 1\r\n")
    assert_parse_error(invoke(path, files.run), path, 4, "q1 0 d1 1",
                       "each (query, document) pair once; query 'q1' document 'd1' was already given at line 1")


def test_same_docid_in_different_queries_is_no_duplicate(files):
    path = files.make("qrels2", "q1 0 d1 1\nq2 0 d1 1\n")
    assert invoke(path, files.run, "-m", "num_rel").exit_code == 0


DUP_QRELS = "q1 0 d1 1\nq1 0 d2 0\n"
# line 3 repeats d1 of line 1 with a higher score
DUP_RUN = "q1 Q0 d1 1 1.0 r\nq1 Q0 d2 2 2.0 r\nq1 Q0 d1 3 3.0 r\n"


@pytest.mark.parametrize("policy,recip_rank", [
    ("first", "0.5000"),  # keeps d1 at 1.0: d2 (2.0) then d1 -> relevant at rank 2
    ("max", "1.0000"),    # keeps d1 at 3.0: d1 first
])
def test_on_duplicate_in_run(files, policy, recip_rank):
    qrels = files.make("q", DUP_QRELS)
    run = files.make("dup_run", DUP_RUN)
    result = invoke(qrels, run, "--on-duplicate", policy, "-m", "recip_rank", "-m", "num_ret")
    assert result.exit_code == 0, result.stderr
    # two documents remain
    assert result.stdout == f"num_ret               \tall\t2\nrecip_rank            \tall\t{recip_rank}\n"
    assert result.stderr == (f"evaltool: note: 1 duplicate (query, document) rows in {run} "
                             f"resolved by --on-duplicate {policy}\n")


@pytest.mark.parametrize("policy,expected", [
    ("first", "num_rel               \tall\t0\nrecip_rank            \tall\t0.0000\n"),  # d1 graded 0
    ("max", "num_rel               \tall\t1\nrecip_rank            \tall\t1.0000\n"),    # d1 graded 2
])
def test_on_duplicate_in_qrels(files, policy, expected):
    qrels = files.make("dup_qrels", "q1 0 d1 0\nq1 0 d2 0\nq1 0 d1 2\nq1 0 d1 1\n")
    run = files.make("r", "q1 Q0 d1 1 1.0 r\n")
    result = invoke(qrels, run, "--on-duplicate", policy, "-m", "num_rel", "-m", "recip_rank")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == expected
    assert result.stderr == (f"evaltool: note: 2 duplicate (query, document) rows in {qrels} "
                             f"resolved by --on-duplicate {policy}\n")


def test_on_duplicate_max_keeps_earliest_on_equal_values(files):
    # equal maxima: the first line wins, so the result is the same as with 'first'
    qrels = files.make("q", "q1 0 d1 1\n")
    run = files.make("r", "q1 Q0 d1 1 2.0 tagA\nq1 Q0 d2 1 2.0 tagA\nq1 Q0 d1 1 2.0 tagB\n")
    result = evaluate(qrels, run, ["runid", "recip_rank"], on_duplicate="max")
    # d2 and d1 tie at 2.0: d2 > d1 in byte order, so d1 is second; the tag is still the last line's
    assert result.summary == {"runid": "tagB", "recip_rank": 0.5}
    assert result.meta["counts"]["run_duplicates_resolved"] == 1


def test_unknown_duplicate_policy(files):
    result = invoke(files.qrels, files.run, "--on-duplicate", "last")
    assert_fails(result, "--on-duplicate", "'last'", one_line=False)
    with pytest.raises(EvaltoolError, match="unknown duplicate policy 'last'; expected one of error, first, max"):
        evaluate(files.qrels, files.run, on_duplicate="last")


# ---------------------------------------------------------------- files that cannot be read


def test_nonexistent_files(files, tmp_path):
    missing = str(tmp_path / "nope.txt")
    assert_fails(invoke(missing, files.run), f"cannot read {missing}", "No such file")
    assert_fails(invoke(files.qrels, missing), f"cannot read {missing}", "No such file")
    assert_fails(invoke(files.qrels, files.run, "-Z", missing), f"cannot read {missing}", "No such file")


def test_directory_given_as_a_file(files, tmp_path):
    folder = tmp_path / "adir"
    folder.mkdir()
    for args, option in [((folder, files.run), "QRELS"), ((files.qrels, folder), "RUN"),
                         ((files.qrels, files.run, "-Z", folder), "-Z")]:
        assert_fails(invoke(*args), str(folder), "is a directory", option, one_line=False)
    with pytest.raises(EvaltoolError, match="(?i)is a directory") as caught:
        evaluate(str(folder), files.run)
    assert str(folder) in str(caught.value)


def test_judgments_from_stdin_are_refused(files):
    assert_fails(invoke("-", files.run, input=QRELS.encode()), "judgments from stdin", "give a file")


def _corrupt_deflate(data: bytes) -> bytes:
    broken = bytearray(gzip.compress(data * 50))
    for i in range(12, 30):
        broken[i] ^= 0xFF
    return bytes(broken)


CORRUPT_GZIP = {
    "truncated": gzip.compress(RUN.encode() * 20)[:25],
    "magic only": b"\x1f\x8bnot really gzip",
    "bad deflate data": _corrupt_deflate(RUN.encode()),
    "bad crc": (lambda b: b[:-8] + bytes([b[-8] ^ 0xFF]) + b[-7:])(gzip.compress(RUN.encode())),
}


@pytest.mark.parametrize("kind", list(CORRUPT_GZIP))
def test_corrupt_gzip(files, kind):
    path = files.make("broken.gz", CORRUPT_GZIP[kind])
    assert_fails(invoke(files.qrels, path), f"evaltool: {path};", "expected a readable gzip stream")
    assert_fails(invoke(path, files.run), f"evaltool: {path};", "expected a readable gzip stream")
    assert_fails(invoke(files.qrels, "-", input=CORRUPT_GZIP[kind]), "<stdin>", "a readable gzip stream")
    with pytest.raises(ParseError) as caught:
        evaluate(files.qrels, path)
    assert (caught.value.path, caught.value.line) == (path, None)


# ---------------------------------------------------------------- measures


def test_unknown_measure_suggests_close_names(files):
    stderr = assert_fails(invoke(files.qrels, files.run, "-m", "ndcg_cutt"), "unknown measure 'ndcg_cutt'",
                          "did you mean ndcg_cut")
    assert "ndcg_cut" in stderr.split("did you mean", 1)[1]
    assert_fails(invoke(files.qrels, files.run, "-m", "Map"), "unknown measure 'Map'", "did you mean map")
    assert_fails(invoke(files.qrels, files.run, "-m", "zzzz.5"), "unknown measure 'zzzz.5'",
                 "'evaltool measures' lists them")


@pytest.mark.parametrize("spec,expected", [
    ("P.", "measure 'P.': nothing after the '.'"),
    ("P.0", "measure 'P.0': cutoffs of P must be positive integers"),
    ("P.-5", "measure 'P.-5': cutoffs of P must be positive integers"),
    ("P.5,0", "measure 'P.5,0': cutoffs of P must be positive integers"),
    ("P.x", "measure 'P.x': parameter 'x' of P is not a finite number"),
    ("P.5,", "measure 'P.5,': parameter '' of P is not a finite number"),
    ("P.inf", "measure 'P.inf': parameter 'inf' of P is not a finite number"),
    ("P.nan", "measure 'P.nan': parameter 'nan' of P is not a finite number"),
    ("map.5", "measure 'map.5': map takes no parameters"),
    ("official.5", "measure 'official.5': the nickname official takes no parameters"),
    ("ndcg.1", "measure 'ndcg.1': ndcg takes name=value pairs such as 1=3,2=9"),
    ("ndcg.1=x", "measure 'ndcg.1=x': parameter 'x' of ndcg is not a finite number"),
    ("iprec_at_recall.nan", "parameter 'nan' of iprec_at_recall is not a finite number"),
    ("utility.1,2", "measure 'utility.1,2': utility takes 4 parameters, got 2"),
])
def test_measure_parameter_errors(files, spec, expected):
    assert_fails(invoke(files.qrels, files.run, "-m", spec), expected)
    with pytest.raises(MeasureError) as caught:
        evaluate(files.qrels, files.run, [spec])
    assert expected in str(caught.value)


def test_measure_errors_are_reported_before_reading_files(tmp_path):
    missing = str(tmp_path / "nope")
    assert_fails(invoke(missing, missing, "-m", "P.x"), "measure 'P.x'")


# ---------------------------------------------------------------- inputs that do not fit together


def test_no_common_queries(files):
    run = files.make("other_run", "x1 Q0 d1 1 1.0 r\nx2 Q0 d1 1 1.0 r\n")
    assert_fails(invoke(files.qrels, run), f"no query of {run} has judgments in {files.qrels}",
                 "'x1'", "'q1'")
    with pytest.raises(InputError, match="no query of"):
        evaluate(files.qrels, run)


@pytest.mark.parametrize("mode", [[], ["--stream"]])
def test_no_common_queries_with_complete(files, mode):
    """-c used to score every qrels query 0 and print 'map all 0.0000' (judgments of another collection)."""
    run = files.make("other_run", "x1 Q0 d1 1 1.0 r\nx2 Q0 d1 1 1.0 r\n")
    assert_fails(invoke(files.qrels, run, "-c", "-m", "map", *mode), f"no query of {run} has judgments in {files.qrels}")
    with pytest.raises(InputError, match="no query of"):
        evaluate(files.qrels, run, ["map"], complete=True, stream=bool(mode))


@pytest.mark.parametrize("line,expected", [
    ("q1 P_1 0.5", "4 fields 'query_id measure mean stddev'"),
    ("q1 P_1 0.5 0.1 extra", "4 fields 'query_id measure mean stddev'"),
    ("q1 P_1 mean 0.1", "numbers as mean and stddev"),
    ("q1 P_1 0.5 x", "numbers as mean and stddev"),
])
def test_bad_zscore_file_line(files, line, expected):
    path = files.make("zscores", f"q1 P_1 0.5 0.1\n\n{line}\n")
    assert_parse_error(invoke(files.qrels, files.run, "-m", "P.1", "-Z", path), path, 3, line, expected)


def test_empty_zscore_file(files):
    path = files.make("zscores", "\n")
    assert_fails(invoke(files.qrels, files.run, "-Z", path), f"{path};", "at least one")


# ---------------------------------------------------------------- Python API


def test_api_parse_error_attributes(files):
    path = files.make("bad_qrels", "# c\nq1 0 d1 1\nq1 0 d2 high\n")
    with pytest.raises(ParseError) as caught:
        evaluate(path, files.run)
    error = caught.value
    assert isinstance(error, EvaltoolError)
    assert (error.path, error.line, error.text) == (path, 3, "q1 0 d2 high")
    assert error.expected == "an integer grade in field 4, not 'high'"
    assert str(error) == f"{path}:3: found 'q1 0 d2 high'; expected an integer grade in field 4, not 'high'"

    run = files.make("bad_run", "q1 Q0 d1 1 2.0 r\nq1 Q0 d1 2 1.0 r\n")
    with pytest.raises(ParseError) as caught:
        evaltool.read_run(run)
    assert (caught.value.path, caught.value.line) == (run, 2)
    assert "already given at line 1" in caught.value.expected

    empty = files.make("empty", "# nothing\n")
    with pytest.raises(ParseError) as caught:
        evaltool.read_qrels(empty)
    assert (caught.value.path, caught.value.line, caught.value.text) == (empty, None, None)


def test_api_error_classes(files, tmp_path):
    with pytest.raises(MeasureError):
        evaluate(files.qrels, files.run, ["nosuch"])
    with pytest.raises(MeasureError):
        evaluate(files.qrels, files.run, "P.x")
    with pytest.raises(EvaltoolError, match="cannot read") as caught:
        evaluate(str(tmp_path / "missing"), files.run)
    assert not isinstance(caught.value, ParseError)
    with pytest.raises(EvaltoolError, match="qrels must be a path, dict, DataFrame or pyarrow Table, not int"):
        evaluate(123, files.run)
    with pytest.raises(EvaltoolError, match="run must be a path, dict, DataFrame or pyarrow Table, not list"):
        evaluate(files.qrels, [("q1", "d1", 1.0)])


@pytest.mark.parametrize("value", [float("nan"), float("inf"), "abc", None, True])
def test_api_dict_bad_score(value):
    with pytest.raises(ParseError) as caught:
        evaluate({"q1": {"d1": 1}}, {"q1": {"d1": 1.0, "d2": value}})
    error = caught.value
    assert error.path == "<run dict>" and error.line is None
    assert error.text == f"query q1 document d2: {value!r}"
    assert error.expected == "a finite number as the score"


@pytest.mark.parametrize("value", [1.5, "1", None, float("nan"), 10**30])
def test_api_dict_bad_grade(value):
    with pytest.raises(ParseError) as caught:
        evaluate({"q1": {"d1": 1, "d2": value}}, {"q1": {"d1": 1.0}})
    assert caught.value.path == "<qrels dict>"
    assert caught.value.text == f"query q1 document d2: {value!r}"
    assert caught.value.expected.startswith("an integer grade")


def test_api_dict_shape_errors():
    with pytest.raises(ParseError, match="a dict {doc_id: value} per query"):
        evaluate({"q1": {"d1": 1}}, {"q1": [("d1", 1.0)]})
    with pytest.raises(ParseError, match="at least one row"):
        evaluate({}, {"q1": {"d1": 1.0}})
    with pytest.raises(ParseError, match="at least one row"):
        evaluate({"q1": {"d1": 1}}, {})


def test_api_dict_keys_that_collide_as_strings():
    # 1 and '1' both become query '1'
    with pytest.raises(ParseError, match=r"entries 1 and 2 \(counting from 1\) both give it"):
        evaluate({1: {"d": 1}, "1": {"d": 0}}, {"1": {"d": 1.0}})


def test_api_dataframe_errors():
    pd = pytest.importorskip("pandas")
    qrels = pd.DataFrame({"query_id": ["q1"], "doc_id": ["d1"], "relevance": [1]})
    with pytest.raises(EvaltoolError, match="needs columns query_id, doc_id and score; it has query_id, doc, score"):
        evaluate(qrels, pd.DataFrame({"query_id": ["q1"], "doc": ["d1"], "score": [1.0]}))
    with pytest.raises(EvaltoolError, match="needs columns query_id, doc_id and relevance"):
        evaluate(pd.DataFrame({"query_id": ["q1"], "doc_id": ["d1"]}), {"q1": {"d1": 1.0}})
    duplicated = pd.DataFrame({"query_id": ["q1", "q1", "q1"], "doc_id": ["d1", "d2", "d1"], "score": [1.0, 2.0, 3.0]})
    with pytest.raises(ParseError) as caught:
        evaluate(qrels, duplicated)
    assert caught.value.text == "query q1 document d1"
    assert "entries 1 and 3" in caught.value.expected
    # with a policy the same frame is accepted: max keeps d1 at 3.0, ranked first
    assert evaluate(qrels, duplicated, "recip_rank", on_duplicate="max").summary == {"recip_rank": 1.0}
    assert evaluate(qrels, duplicated, "recip_rank", on_duplicate="first").summary == {"recip_rank": 0.5}


# ---------------------------------------------------------------- large files

# Megabytes of valid lines for queries the qrels do not know, before the bad line: a bulk
# reader for large files must reject exactly what the line-by-line reader rejects.
PAD_LINES = 120_000


@pytest.fixture(scope="module")
def padding() -> str:
    return "".join(f"pad{i // 30} Q0 doc{i % 30} {i % 30 + 1} {30 - i % 30}.5 tag\n" for i in range(PAD_LINES))


@pytest.mark.parametrize("score", ["abc", "nan", "NaN", "-nan", "NA", "null", "N/A", "inf", "-inf", "1_0"])
def test_bad_score_deep_in_a_large_run(files, padding, score):
    line = f"q1 Q0 d9 3 {score} r"
    path = files.make("big_run", f"{padding}{RUN}{line}\n")
    assert len(padding) > 3_000_000
    assert_parse_error(invoke(files.qrels, path), path, PAD_LINES + 4, line,
                       f"a finite number as the score in field 5, not {score!r}")


@pytest.mark.parametrize("grade", ["1.5", "nan", "NA", "null", "x"])
def test_bad_grade_deep_in_a_large_qrels(files, grade):
    qrels_padding = "".join(f"qrelspad{i // 30} 0 document{i % 30} {i % 3}\n" for i in range(PAD_LINES))
    path = files.make("big_qrels", f"{qrels_padding}{QRELS}q1 0 d9 {grade}\n")
    assert_parse_error(invoke(path, files.run), path, PAD_LINES + 4, f"q1 0 d9 {grade}",
                       f"an integer grade in field 4, not {grade!r}")


def test_bad_grade_and_duplicate_deep_in_large_files(files, padding):
    qrels_padding = "".join(f"qrelspad{i // 30} 0 document{i % 30} {i % 3}\n" for i in range(PAD_LINES))
    assert len(qrels_padding) > 3_000_000
    path = files.make("big_qrels", f"{qrels_padding}{QRELS}q1 0 d9 1.5\n")
    assert_parse_error(invoke(path, files.run), path, PAD_LINES + 4, "q1 0 d9 1.5", "an integer grade in field 4")
    path = files.make("big_run", f"{padding}{RUN}q1 Q0 d1 9 0.5 r\n")
    assert_parse_error(invoke(files.qrels, path), path, PAD_LINES + 4, "q1 Q0 d1 9 0.5 r",
                       f"each (query, document) pair once; query 'q1' document 'd1' "
                       f"was already given at line {PAD_LINES + 1}")


def test_negative_relevance_level_is_refused(tmp_path):
    """trec_eval would count documents outside the qrels as relevant (-1 >= -1); we refuse."""
    qrels = tmp_path / "q.txt"
    run = tmp_path / "r.txt"
    qrels.write_text("q 0 a 1\n")
    run.write_text("q Q0 a 1 1.0 t\n")
    result = invoke(*["-l", "-1", str(qrels), str(run)])
    assert result.exit_code == 2
    assert "relevance level (-l) -1: expected 0 or more" in result.stderr
    assert "Traceback" not in result.output


# ---------------------------------------------------------------- long lines, compression, binary data

LONG = "x" * 100_000


@pytest.mark.parametrize("mode", [[], ["--stream"]])
def test_a_100kb_bad_run_line_is_quoted_in_200_characters(files, mode):
    """The message used to quote the line and its field whole: 200 KB on stderr."""
    path = files.make("long_run", f"{RUN}q1 Q0 d9 1 {LONG} r\n")
    message = assert_fails(invoke(files.qrels, path, *mode), f"{path}:4: found 'q1 Q0 d9 1 xxx",
                           "... (100013 characters); expected a finite number as the score in field 5, not 'xxx",
                           "... (100000 characters)")
    assert len(message) < 700


def test_a_100kb_bad_qrels_line_is_quoted_in_200_characters(files):
    path = files.make("long_qrels", f"{QRELS}q1 0 {LONG}\n")
    message = assert_fails(invoke(path, files.run), f"{path}:4: found 'q1 0 xxx", "... (100005 characters)",
                           "expected 4 fields")
    assert len(message) < 700
    with pytest.raises(ParseError) as caught:
        evaluate(path, files.run)
    assert caught.value.text == f"q1 0 {LONG}"  # the attribute keeps the whole text


def test_a_100kb_bad_jsonl_line_is_short(files):
    path = files.make("results.jsonl", '{"qid": "q1", "docid": "d1", "score": 1}\n{"qid": "q1", "docid": "' + LONG + '", ')
    message = assert_fails(invoke(files.qrels, path), f"{path}:2: found ", "expected one JSON object per line")
    assert len(message) < 700


COMPRESSORS = {
    "bz2": lambda data: __import__("bz2").compress(data),
    "xz": lambda data: __import__("lzma").compress(data),
    "zstd": lambda data: pytest.importorskip("zstandard").ZstdCompressor().compress(data),
}


@pytest.mark.parametrize("kind", list(COMPRESSORS))
@pytest.mark.parametrize("mode", [[], ["--stream"]])
def test_bz2_xz_and_zstd_are_read(files, kind, mode):
    plain = invoke(files.qrels, files.run, "-q", "-m", "map", *mode)
    run = files.make(f"run.{kind}", COMPRESSORS[kind](RUN.encode()))
    qrels = files.make(f"qrels.{kind}", COMPRESSORS[kind](QRELS.encode()))
    packed = invoke(qrels, run, "-q", "-m", "map", *mode)
    assert packed.exit_code == 0, packed.stderr
    assert packed.stdout == plain.stdout and "map" in plain.stdout


@pytest.mark.parametrize("kind", ["bz2", "xz", "zstd"])
def test_truncated_bz2_xz_and_zstd(files, kind):
    data = COMPRESSORS[kind]((RUN * 50).encode())
    path = files.make(f"broken.{kind}", data[: len(data) // 2])
    assert_fails(invoke(files.qrels, path), f"evaltool: {path};", f"expected a readable {kind} stream")
    if kind != "zstd":  # zstandard's stream reader stops at a truncated frame without an error
        assert_fails(invoke(files.qrels, path, "--stream"), f"evaltool: {path};", "a readable compressed stream")


def test_zstd_without_its_package(files, monkeypatch):
    import sys

    path = files.make("run.zst", COMPRESSORS["zstd"](RUN.encode()))
    monkeypatch.setitem(sys.modules, "zstandard", None)  # as if not installed
    for mode in ([], ["--stream"]):
        assert_fails(invoke(files.qrels, path, *mode),
                     f"evaltool: {path}: unsupported compression (zstd): install the zstandard package")


@pytest.mark.parametrize("content,what", [
    (b"PK\x03\x04\x14\x00\x00\x00" + b"\x00" * 30, "a zip archive"),
    (b"7z\xbc\xaf\x27\x1c\x00\x04" + b"\x00" * 30, "a 7z archive"),
    (b"PAR1\x15\x04" + b"\x00" * 30, "a Parquet file"),
])
def test_archives_are_named(files, content, what):
    path = files.make("run.bin", content)
    for mode in ([], ["--stream"]):
        assert_fails(invoke(files.qrels, path, *mode), f"evaltool: {path}: {what}, not a text file; unpack it first")
    assert_fails(invoke(path, files.run), f"evaltool: {path}: {what}, not a text file")


@pytest.mark.parametrize("mode", [[], ["--stream"]])
def test_binary_data_is_named(files, mode):
    path = files.make("run.bin", RUN.encode() + b"\x00\x01\x02\xff" * 8)
    assert_fails(invoke(files.qrels, path, *mode), f"evaltool: {path}:4; expected a text file, not binary data "
                                                   f"(a NUL byte at byte {len(RUN)})")
    assert_fails(invoke(path, files.run), f"{path}:4; expected a text file, not binary data")
