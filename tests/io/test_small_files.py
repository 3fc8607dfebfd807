"""The reader of small regular files (no Python object per token) against the truth.

A file without comment lines whose every line has the expected number of fields is read
by array operations over its bytes; anything else goes to the line reader. These tests
hold both to the values the files were written from, in every whitespace layout the
line reader accepts, and check that the fast reader was the one used (a run it reads
keeps no line numbers: ``lines is None``).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from evaltool.errors import ParseError
from evaltool.io.trec import read_qrels, read_run
from tests.support.helpers import SCENARIOS, generate

LAYOUTS = {
    "spaces": lambda fields: " ".join(fields) + "\n",
    "tabs": lambda fields: "\t".join(fields) + "\n",
    "crlf": lambda fields: " ".join(fields) + "\r\n",
    "ragged": lambda fields: "  " + "  \t ".join(fields) + " \n\n",   # leading, mixed and trailing blanks
    "vt-ff": lambda fields: "\x0b".join(fields) + "\x0c\n",           # C's isspace counts these too
}


def _lines(data: dict, layout, tag: str | None) -> str:
    rows = []
    for qid, docs in data.items():
        for rank, (doc, value) in enumerate(docs.items(), 1):
            doc = doc.replace("#", "%")  # '#' anywhere sends a file to the line reader
            fields = [qid, "Q0", doc, str(rank), repr(value), tag] if tag else [qid, "0", doc, str(value)]
            rows.append(layout(fields))
    return "".join(rows)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_values_are_those_the_files_were_written_from(tmp_path, scenario, layout):
    qrels, run = generate(scenario, 1)
    run_path, qrels_path = tmp_path / "run", tmp_path / "qrels"
    text = _lines(run, LAYOUTS[layout], "tag")
    run_path.write_bytes(text.rstrip("\n").encode() if layout == "spaces" else text.encode())  # no final newline
    qrels_path.write_text(_lines(qrels, LAYOUTS[layout], None), encoding="utf-8", newline="")

    got = read_run(run_path)
    assert got.lines is None  # the fast reader took it
    doc_text = got.doc_text(list(range(len(got))))
    assert {(got.qid_vocab[q], d): s for q, d, s in zip(got.qid_codes.tolist(), doc_text, got.scores.tolist())} == {
        (q, d.replace("#", "%")): s for q, docs in run.items() for d, s in docs.items()}
    assert got.runid == "tag"

    judged = read_qrels(qrels_path)
    assert judged.lines is None
    assert {(judged.qid_vocab[q], judged.doc_vocab[d]): g for q, d, g in
            zip(judged.qid_codes.tolist(), judged.doc_codes.tolist(), judged.grades.tolist())} == {
        (q, d.replace("#", "%")): g for q, docs in qrels.items() for d, g in docs.items()}


@pytest.mark.parametrize("token", ["1e3", "-0", "+1.5", ".5", "5.", "1E-3", "007", "-2.5e-310",
                                   "1.7976931348623157e308", "0.1000000000000000055511151231257827"])
def test_scores_are_the_numbers_strtod_reads(tmp_path, token):
    path = tmp_path / "run"
    path.write_text(f"q1 Q0 d1 1 {token} r\nq1 Q0 d2 2 0 r\n")
    run = read_run(path)
    assert run.lines is None
    assert dict(zip(run.doc_text(list(range(len(run)))), run.scores.tolist())) == {"d1": float(token), "d2": 0.0}


@pytest.mark.parametrize("token", ["1_0", "nan", "inf", "-Infinity", "0x10", "1.5x", "--1"])
def test_a_score_that_is_no_finite_number_is_named_with_its_line(tmp_path, token):
    path = tmp_path / "run"
    path.write_text(f"q1 Q0 d1 1 2.0 r\nq1 Q0 d2 2 {token} r\n")
    with pytest.raises(ParseError) as caught:
        read_run(path)
    assert (caught.value.path, caught.value.line) == (str(path), 2)
    assert f"a finite number as the score in field 5, not '{token}'" in str(caught.value)


def test_control_bytes_other_than_whitespace_belong_to_the_ids(tmp_path):
    path = tmp_path / "run"
    path.write_bytes(b"q1 Q0 d\x01 1 2.0 r\nq1 Q0 d\x1f 2 1.0 r\nq\x7f Q0 d 1 1.0 r\n")
    run = read_run(path)
    assert run.lines is None
    assert sorted(run.doc_vocab.tolist()) == [b"d", b"d\x01", b"d\x1f"]
    assert sorted(run.qid_vocab) == ["q1", "q\x7f"]


def test_ids_longer_than_eight_bytes_and_sharing_prefixes_stay_apart(tmp_path):
    docs = ["doc", "doc1", "document-0001", "document-00010", "document-0002", "é", "e"]
    path = tmp_path / "run"
    path.write_text("".join(f"q1 Q0 {d} {i} {10 - i} r\n" for i, d in enumerate(docs)), encoding="utf-8")
    run = read_run(path)
    assert run.lines is None
    assert run.doc_text(list(range(len(run)))) == docs


@pytest.mark.parametrize("count", range(1, 18))
def test_plain_decimals_of_every_length_are_the_doubles_float_reads(tmp_path, count):
    """``count`` digits (up to 15 read by array arithmetic, more by numpy's cast), signs,
    a point anywhere, leading zeros: every value bit for bit, the sign of zero too."""
    rng = np.random.default_rng(count)
    tokens = []
    for _ in range(400):
        text = "".join(str(d) for d in rng.integers(0, 10, count))
        at = int(rng.integers(0, count + 1))
        text = text[:at] + "." + text[at:] if rng.random() < 0.8 else text
        tokens.append(str(rng.choice(["", "", "-", "+"])) + text)
    path = tmp_path / "run"
    path.write_text("".join(f"q1 Q0 d{i} {i} {token} r\n" for i, token in enumerate(tokens)))
    run = read_run(path)
    assert run.lines is None
    got = dict(zip(run.doc_text(list(range(len(run)))), run.scores.tolist()))
    assert {d: (v, math.copysign(1, v)) for d, v in got.items()} == {
        f"d{i}": (float(t), math.copysign(1, float(t))) for i, t in enumerate(tokens)}


def _id_zoo(rng) -> list[bytes]:
    """Ids of every length from 1 to 40 bytes (8, 16, 24 and 32: word boundaries; past 32: sorted
    as bytes), sharing long prefixes, prefixes of one another, with UTF-8, control and high bytes."""
    stems = [b"FBIS3-", b"LA010189-", b"FR940104-0-", b"clueweb12-0000tw-00-", b"\xc3\xa9t\xc3\xa9", b"d\x01", b"\xff"]
    ids = set()
    while len(ids) < 3000:
        stem = stems[int(rng.integers(len(stems)))]
        tail = b"".join(bytes([int(c)]) for c in rng.choice(list(b"0123456789-az\x7f\xfe"), int(rng.integers(0, 24))))
        ids.add((stem + tail)[: int(rng.integers(1, 41))])
    ids.update([b"a" * 8, b"a" * 8 + b"\x01", b"a" * 16, b"a" * 7, b"b" * 32, b"b" * 33, b"b" * 31 + b"c"])
    return sorted(ids)


@pytest.mark.parametrize("longest", [8, 16, 32, 40])
def test_ids_are_sorted_by_their_bytes_at_every_length(tmp_path, longest):
    """The fast reader encodes ids as 8-byte words up to 32 bytes and as bytes beyond: either way
    its vocabulary is the distinct ids in byte order and each line's code names its own id."""
    rng = np.random.default_rng(longest)
    zoo = [i for i in _id_zoo(rng) if len(i) <= longest]
    docs = [zoo[int(k)] for k in rng.integers(0, len(zoo), 4000)]
    qids = [b"q%d" % k for k in rng.integers(0, 40, 4000)]
    rows = {(q, d): n for n, (q, d) in enumerate(zip(qids, docs))}  # each pair once
    path = tmp_path / "run"
    path.write_bytes(b"".join(b"%s Q0 %s %d %d.5 r\n" % (q, d, n, n) for (q, d), n in rows.items()))
    run = read_run(path)
    assert run.lines is None
    assert run.doc_vocab.tolist() == sorted({d for _, d in rows})
    assert [(run.qid_vocab[q].encode(), run.doc_vocab[d]) for q, d in zip(run.qid_codes, run.doc_codes)] == list(rows)
    qrels = tmp_path / "qrels"
    qrels.write_bytes(b"".join(b"%s 0 %s %d\n" % (q, d, n % 3) for (q, d), n in rows.items()))
    judged = read_qrels(qrels)
    assert judged.lines is None
    assert judged.doc_vocab == [d.decode("utf-8", "surrogateescape") for d in sorted({d for _, d in rows})]
    assert [(judged.qid_vocab[q], judged.doc_vocab[d], g) for q, d, g in
            zip(judged.qid_codes, judged.doc_codes, judged.grades.tolist())] == [
        (q.decode(), d.decode("utf-8", "surrogateescape"), n % 3) for (q, d), n in rows.items()]


@pytest.mark.parametrize("tokens", [["0", "1", "2", "3"], ["-1", "+2", "-0", "007", "10"],
                                    ["123456789012345678", "-123456789012345678", "9223372036854775807",
                                     "-9223372036854775808", "0000000000000000000001"]])
def test_grades_are_the_integers_int_reads(tmp_path, tokens):
    """One digit, signs and leading zeros, and the int64 extremes (more than 18 digits: numpy's cast)."""
    path = tmp_path / "qrels"
    path.write_text("".join(f"q1 0 d{i} {token}\n" for i, token in enumerate(tokens)))
    judged = read_qrels(path)
    assert judged.lines is None
    assert judged.grades.tolist() == [int(token) for token in tokens]


@pytest.mark.parametrize("token", ["2.0", "1e3", "+", "--1", "1_0", "9223372036854775808", "٣"])
def test_a_grade_that_is_no_integer_is_named_with_its_line(tmp_path, token):
    path = tmp_path / "qrels"
    path.write_text(f"q1 0 d1 1\nq1 0 d2 {token}\n", encoding="utf-8")
    with pytest.raises(ParseError) as caught:
        read_qrels(path)
    assert (caught.value.path, caught.value.line) == (str(path), 2)
    assert "grade" in caught.value.expected


@pytest.mark.parametrize("gap", [" ", "\t", "  ", " \t"])
@pytest.mark.parametrize("seed", range(4))
def test_a_line_of_another_field_count_is_named_even_when_the_tokens_add_up(tmp_path, gap, seed):
    """Lines of 3 and 5 fields hold two lines' worth of tokens, every one a distinct number (so
    that fields read four at a time would parse): the fast reader counts the fields of each line
    (one byte between tokens, as most files have, or more), and the line reader names the
    first line that is wrong."""
    rng = np.random.default_rng(seed)
    counts = [4] * 40
    first, second = sorted(rng.choice(40, 2, replace=False).tolist())
    counts[first], counts[second] = (3, 5) if rng.random() < 0.5 else (5, 3)
    lines = [gap.join(str(field * 1000 + n) for field in range(count)) for n, count in enumerate(counts)]
    path = tmp_path / "qrels"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ParseError) as caught:
        read_qrels(path)
    assert (caught.value.line, caught.value.text) == (first + 1, lines[first])
    assert "expected 4 fields" in str(caught.value)
