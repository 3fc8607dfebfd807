"""Reading TREC qrels and run files: what the parsers tolerate (the ordering rules: test_ranking.py).

Every expected value below is worked out by hand in the comment next to it, from
trec_eval's rules: documents ordered by score descending, ties broken by document id
descending in byte order (``comp_sim_docno``), the rank column ignored, query ids
compared and printed in byte order, the run tag taken from the last content line.
"""

from __future__ import annotations

import gzip

import pytest

from evaltool import evaluate, read_qrels, read_run
from tests.support.helpers import invoke, rows, score, write

# q1: d1 relevant (1), d2 judged non-relevant (0), d3 relevant (2); q2: d4 relevant.
QRELS = "q1 0 d1 1\nq1 0 d2 0\nq1 0 d3 2\nq2 0 d4 1\n"
# q1 ranks d2 (0), d1 (1), d9 (not judged); q2 ranks d4 (1).
RUN = "q1 Q0 d2 1 3.0 runA\nq1 Q0 d1 2 2.0 runA\nq1 Q0 d9 3 1.0 runA\nq2 Q0 d4 1 5.0 runA\n"
# recip_rank: q1 first relevant at rank 2 -> 1/2, q2 -> 1; mean 3/4.
# num_ret 3 + 1 = 4; num_rel 2 + 1 = 3; num_rel_ret 1 + 1 = 2; relstring q1 '01-', q2 '1'.
EXPECTED = {"runid": "runA", "num_ret": 4, "num_rel": 3, "num_rel_ret": 2, "recip_rank": 0.75}
EXPECTED_PER_QUERY = {
    "q1": {"num_ret": 3, "num_rel": 2, "num_rel_ret": 1, "recip_rank": 0.5, "relstring": "01-"},
    "q2": {"num_ret": 1, "num_rel": 1, "num_rel_ret": 1, "recip_rank": 1.0, "relstring": "1"},
}
MEASURES = ["runid", "num_ret", "num_rel", "num_rel_ret", "recip_rank", "relstring"]


def assert_base_result(result):
    assert result.summary == EXPECTED
    assert result.per_query == EXPECTED_PER_QUERY


def test_reference_files_give_the_hand_computed_values(tmp_path):
    assert_base_result(score(tmp_path, QRELS, RUN, MEASURES))


# ---------------------------------------------------------------- tolerated layouts


def test_comment_and_blank_lines_are_skipped_in_both_files(tmp_path):
    qrels = (
        "# judgments for the test collection\n"
        "\n"
        "q1 0 d1 1\n"
        "   # an indented comment with four fields\n"
        "q1 0 d2 0\n"
        "#q1 0 d2 1\n"            # a commented-out judgment must not count
        "   \t  \n"
        "q1 0 d3 2\n"
        "\n\n"
        "q2 0 d4 1\n"
        "# trailing comment\n"
    )
    run = (
        "# run file header: qid Q0 docid rank score tag\n"
        "\n"
        "q1 Q0 d2 1 3.0 runA\n"
        "\t# q1 Q0 d0 1 99.0 commented\n"   # would become rank 1 (and the tag) if read
        "q1 Q0 d1 2 2.0 runA\n"
        "   \n"
        "q1 Q0 d9 3 1.0 runA\n"
        "#\n"
        "q2 Q0 d4 1 5.0 runA\n"
        "# q2 Q0 d8 1 9.0 commentedTag\n"
        "\n"
    )
    assert_base_result(score(tmp_path, qrels, run, MEASURES))


def test_tabs_and_several_spaces_between_fields(tmp_path):
    qrels = "q1\t0\td1\t1\nq1  0   d2 \t 0\n  q1 0 d3 2  \n\tq2\t\t0 d4\t1\t\n"
    run = ("q1\tQ0\td2\t1\t3.0\trunA\n"
           "q1   Q0  d1    2   2.0     runA   \n"
           " \t q1 Q0\t \td9 3 1.0 runA\n"
           "q2 Q0 d4 1 5.0\t\trunA\n")
    assert_base_result(score(tmp_path, qrels, run, MEASURES))


def test_crlf_line_endings(tmp_path):
    result = score(tmp_path, QRELS.replace("\n", "\r\n"), RUN.replace("\n", "\r\n"), MEASURES)
    assert_base_result(result)  # in particular the run tag is 'runA', not 'runA\r'


def test_no_final_newline(tmp_path):
    assert_base_result(score(tmp_path, QRELS.rstrip("\n"), RUN.rstrip("\n"), MEASURES))
    assert_base_result(score(tmp_path, QRELS.rstrip("\n").replace("\n", "\r\n"),
                             RUN.rstrip("\n").replace("\n", "\r\n"), MEASURES))


def test_gzip_is_detected_by_magic_bytes_whatever_the_name(tmp_path):
    for qname, rname in [("qrels.gz", "run.gz"), ("qrels.txt", "run.txt"), ("qrels", "run.trec")]:
        q = write(tmp_path / qname, gzip.compress(QRELS.encode()))
        r = write(tmp_path / rname, gzip.compress(RUN.encode()))
        assert_base_result(evaluate(q, r, MEASURES, per_query=True))
    # a plain file named .gz is read as plain text
    q = write(tmp_path / "plain.gz", QRELS)
    r = write(tmp_path / "plain_run.gz", RUN)
    assert_base_result(evaluate(q, r, MEASURES, per_query=True))


def test_dash_reads_the_run_from_stdin(tmp_path):
    qrels = write(tmp_path / "qrels", QRELS)
    args = [qrels, "-", "-q", "-m", "recip_rank", "-m", "num_ret"]
    result = invoke(*args, input=RUN.encode())
    assert result.exit_code == 0, result.stderr
    assert rows(result.stdout) == [
        ("num_ret", "q1", "3"), ("recip_rank", "q1", "0.5000"),
        ("num_ret", "q2", "1"), ("recip_rank", "q2", "1.0000"),
        ("num_ret", "all", "4"), ("recip_rank", "all", "0.7500"),
    ]
    # gzip on stdin is recognised the same way
    zipped = invoke(*args, input=gzip.compress(RUN.encode()))
    assert zipped.exit_code == 0, zipped.stderr
    assert zipped.stdout == result.stdout


def test_docids_containing_hash_mid_line_are_kept_exactly(tmp_path):
    qrels = "q1 0 doc#1 1\nq1 0 #d2 0\nq1 0 d#3# 1\n"
    run = "q1 Q0 #d2 1 3.0 tag#1\nq1 Q0 doc#1 2 2.0 tag#1\nq1 Q0 d#3# 3 1.0 tag#1 # trailing words\n"
    q, r = write(tmp_path / "qrels", qrels), write(tmp_path / "run", run)
    assert read_qrels(q).doc_vocab == ["doc#1", "#d2", "d#3#"]
    assert read_run(r).doc_vocab == ["#d2", "doc#1", "d#3#"]
    result = evaluate(q, r, ["runid", "recip_rank", "num_rel_ret", "relstring"], per_query=True)
    # ranking #d2 (0), doc#1 (1), d#3# (1): first relevant at rank 2
    assert result.summary == {"runid": "tag#1", "num_rel_ret": 2, "recip_rank": 0.5}
    assert result.per_query["q1"]["relstring"] == "011"


def test_docids_are_compared_as_exact_strings(tmp_path):
    # files: case matters; 'D1' is judged, 'd1' and 'D1x' are not
    result = score(tmp_path, "q1 0 D1 1\n", "q1 Q0 d1 1 3.0 r\nq1 Q0 D1x 2 2.0 r\nq1 Q0 D1 3 1.0 r\n",
                   ["recip_rank", "relstring"])
    assert result.per_query["q1"] == {"recip_rank": pytest.approx(1 / 3), "relstring": "--1"}
    # dicts keep ids verbatim: 'D1 ' (trailing space) and 'd1' are not 'D1'
    result = evaluate({"q1": {"D1": 1}}, {"q1": {"D1 ": 3.0, "d1": 2.0, "D1": 1.0}},
                      ["recip_rank", "num_rel_ret", "num_ret"])
    assert result.summary == {"num_ret": 3, "num_rel_ret": 1, "recip_rank": pytest.approx(1 / 3)}
    result = evaluate({"q1": {"D1": 1}}, {"q1": {"D1 ": 3.0, "d1": 2.0}}, ["recip_rank", "num_rel_ret"])
    assert result.summary == {"num_rel_ret": 0, "recip_rank": 0.0}


def test_query_ids_are_exact_strings_too(tmp_path):
    # 'Q1' in the run is not 'q1' of the qrels: no common query, q1 is never scored
    result = score(tmp_path, "q1 0 d1 1\nq2 0 d2 1\n", "Q1 Q0 d1 1 1.0 r\nq2 Q0 d2 1 1.0 r\n",
                   ["recip_rank"])
    assert result.qids == ["q2"]
    assert result.meta["skipped_queries"] == ["q1"]
    assert result.meta["run_queries_without_judgments"] == ["Q1"]


def test_fields_after_the_run_tag_are_ignored(tmp_path):
    run = ("q1 Q0 d2 1 3.0 runA extra words 1 2 3\n"
           "q1 Q0 d1 2 2.0 runA 99.0\n"
           "q1 Q0 d9 3 1.0 runA nan inf\n"
           "q2 Q0 d4 1 5.0 runA # not a tag\n")
    assert_base_result(score(tmp_path, QRELS, run, MEASURES))


def test_runid_is_the_tag_of_the_last_content_line(tmp_path):
    # the tag differs per line; the last content line belongs to q1 (not the last query
    # in sorted order) and is followed by a comment and blank lines that must not count
    run = ("q2 Q0 d4 1 5.0 first\n"
           "q1 Q0 d2 1 3.0 second\n"
           "q1 Q0 d1 2 2.0 third\n"
           "q1 Q0 d9 3 1.0 last extra\n"
           "# q1 Q0 dz 4 0.5 commented\n"
           "\n")
    result = score(tmp_path, QRELS, run, ["runid"])
    assert result.summary == {"runid": "last"}
    assert result.meta["runid"] == "last"


def test_qrels_reader_keeps_file_order_and_physical_line_numbers(tmp_path):
    # the reader itself does not sort (that is the ranking's job); lines count comments and blanks
    qrels = read_qrels(write(tmp_path / "q", "# c\n9 0 b 1\n\n10 0 a 0\r\n"))
    assert qrels.qid_vocab == ["9", "10"]
    assert qrels.lines.tolist() == [2, 4]
    assert qrels.grades.tolist() == [1, 0]


# ---------------------------------------------------------------- large files

# Some megabytes of results and judgments for queries the other file does not know:
# large enough for any bulk reader to take over from the line-by-line one. The results
# of the real queries must not change.
PAD_LINES = 120_000


@pytest.fixture(scope="module")
def run_padding() -> str:
    return "".join(f"runpad{i // 30} Q0 doc{i % 30} {i % 30 + 1} {30 - i % 30}.5 tag\n" for i in range(PAD_LINES))


@pytest.fixture(scope="module")
def qrels_padding() -> str:
    return "".join(f"qrelspad{i // 30} 0 document{i % 30} {i % 3}\n" for i in range(PAD_LINES))


VARIANTS = ["plain", "crlf", "tabs", "extra fields", "gzip"]


def _variant(text: str, variant: str):
    if variant == "crlf":
        return text.replace("\n", "\r\n")
    if variant == "tabs":
        return text.replace(" ", "\t")
    if variant == "gzip":
        return gzip.compress(text.encode())
    return text


@pytest.mark.parametrize("variant", VARIANTS)
def test_large_files_read_like_small_ones(tmp_path, run_padding, qrels_padding, variant):
    assert len(run_padding) > 3_000_000 and len(qrels_padding) > 3_000_000
    run = run_padding + RUN
    if variant == "extra fields":
        run = run.replace("runA\n", "runA x y\n").replace("tag\n", "tag 1 2\n")
    qrels = qrels_padding + QRELS
    for q, r in [(QRELS, run), (qrels, RUN), (qrels, run)]:
        result = score(tmp_path, _variant(q, variant), _variant(r, variant), MEASURES)
        assert_base_result(result)
    assert len(result.meta["run_queries_without_judgments"]) == PAD_LINES // 30
    assert len(result.meta["skipped_queries"]) == PAD_LINES // 30


def test_large_run_files_keep_the_tie_rule_and_exact_ids(tmp_path, run_padding):
    # as test_ties_break_only_within_equal_scores, behind a few megabytes of other queries
    qrels = "q 0 a 1\nq 0 b 0\nq 0 doc10 2\nq 0 doc9 0\nq 0 Z 3\nq 0 z 1\nq 0 é 1\n"
    run = ("q Q0 a 1 2 r\nq Q0 Z 2 1 r\nq Q0 z 3 0.5 r\nq Q0 A 3 0.5 r\n"
           "q Q0 doc10 4 1 r\nq Q0 b 5 2 r\nq Q0 doc9 6 1.0 r\nq Q0 é 7 0.25 last\n")
    # b a doc9 doc10 Z z A é -> grades 0 1 0 2 3 1 - 1
    result = score(tmp_path, qrels, run_padding + run, ["runid", "relstring.8"])
    assert result.per_query["q"] == {"relstring_8": "010231-1"}
    assert result.summary == {"runid": "last"}


def test_large_run_files_with_numeric_docids_compare_them_as_text(tmp_path):
    # '7' and '07' are different documents; '9' sorts above '10' in a tie
    padding = "".join(f"runpad{i // 30} Q0 {i % 30} {i % 30 + 1} {30 - i % 30}.5 tag\n" for i in range(PAD_LINES))
    qrels = "q 0 07 1\nq 0 10 1\n"
    run = "q Q0 7 1 3.0 r\nq Q0 10 2 2.0 r\nq Q0 9 3 2.0 r\nq Q0 07 4 1.0 r\n"
    # 7 (-), 9 (-), 10 (1), 07 (1)
    result = score(tmp_path, qrels, padding + run, ["relstring", "recip_rank"])
    assert result.per_query["q"] == {"relstring": "--11", "recip_rank": pytest.approx(1 / 3)}
