"""Compressed inputs are checked and parsed as they inflate, and the first error stops the
reading: a gzip of zeros is called binary after its first block, not after gigabytes; a run
with a duplicate on line 2 is reported without reading the rest. Files of several blocks
are parsed block by block, holding the columns read so far and one block of text.

How much of a file was read is counted through a wrapper around ``open``: no timing.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import random
import sys

import pytest

from evaltool import evaluate
from evaltool.errors import ParseError
from evaltool.io import columnar, common, kinds, trec
from tests.support.helpers import ROOT, assert_fails, invoke, require_shared


def _zstd(data: bytes) -> bytes:
    zstandard = pytest.importorskip("zstandard")
    return zstandard.ZstdCompressor().compress(data)


COMPRESS = {"gzip": gzip.compress, "bz2": bz2.compress, "xz": lzma.compress, "zstd": _zstd}


class _Counting(io.FileIO):
    """A file whose bytes read are added up in ``read_bytes`` (a class attribute)."""

    read_bytes = 0

    def readinto(self, buffer):
        n = super().readinto(buffer)
        type(self).read_bytes += n or 0
        return n


@pytest.fixture
def counted(monkeypatch):
    """Every file the readers of evaltool.io.common open is read through :class:`_Counting`."""
    _Counting.read_bytes = 0

    def counting_open(name, mode="r", *args, **kwargs):
        assert mode == "rb"
        return io.BufferedReader(_Counting(name, "r"))

    monkeypatch.setattr(common, "open", counting_open, raising=False)
    return _Counting


def _zeros(path, compression: str, megabytes: int) -> None:
    """``megabytes`` of NUL bytes, then a megabyte that does not compress (so that the file is
    large enough for a count of the bytes read to tell a first block from the whole), compressed
    a megabyte at a time."""
    chunk = bytes(1 << 20)
    noise = random.Random(0).randbytes(1 << 20)
    if compression == "zstd":
        path.write_bytes(_zstd(chunk * megabytes + noise))
        return
    opener = {"gzip": gzip.open, "bz2": bz2.open, "xz": lzma.open}[compression]
    with opener(path, "wb") as out:
        for _ in range(megabytes):
            out.write(chunk)
        out.write(noise)


@pytest.mark.parametrize("compression", list(COMPRESS))
def test_compressed_zeros_are_refused_from_the_first_block(tmp_path, counted, compression):
    path = tmp_path / f"zeros.{compression}"
    _zeros(path, compression, 64)
    size = path.stat().st_size
    with pytest.raises(ParseError, match=r"zeros\.\w+:1; expected a text file, not binary data \(a NUL byte at "
                                         r"byte 0\)"):
        trec.read_run(path)
    assert counted.read_bytes < size  # stopped after the first block
    counted.read_bytes = 0
    with pytest.raises(ParseError, match="not binary data"):
        trec.read_qrels(path)
    assert counted.read_bytes < size


def test_compressed_zeros_through_the_command_line(tmp_path):
    path = tmp_path / "zeros.gz"
    _zeros(path, "gzip", 64)
    assert_fails(invoke(ROOT / "data" / "qrels.txt", path), f"{path}:1; expected a text file, not binary data")
    assert_fails(invoke(path, ROOT / "data" / "run.txt"), f"{path}:1; expected a text file, not binary data")


def _run_lines(queries: int, depth: int, noise: bool = False) -> list[bytes]:
    """A run; ``noise``: random document ids after the first two lines, so that it compresses as
    little as real runs do (bz2 needs a 900 KB block of text before it gives anything)."""
    rng = random.Random(1)
    return [f"q{q} Q0 d{q}-{rng.getrandbits(48) if noise and q + r else r} {r + 1} {1000 - r}.5 tag\n".encode()
            for q in range(queries) for r in range(depth)]


@pytest.mark.parametrize("compression", list(COMPRESS))
def test_duplicate_on_line_2_stops_the_reading(tmp_path, counted, monkeypatch, compression):
    monkeypatch.setattr(common, "TEXT_BLOCK_BYTES", 1 << 16)
    lines = _run_lines(2000, 100, noise=True)  # 200,000 lines, ~8 MB of text
    lines[1] = lines[0]
    path = tmp_path / f"run.{compression}"
    path.write_bytes(COMPRESS[compression](b"".join(lines)))
    size = path.stat().st_size
    with pytest.raises(ParseError) as caught:
        trec.read_run(path)
    assert str(caught.value) == (f"{path}:2: found 'q0 Q0 d0-0 1 1000.5 tag'; expected each (query, document) "
                                 "pair once; query 'q0' document 'd0-0' was already given at line 1 (use "
                                 "--on-duplicate first|max to accept duplicates)")
    assert counted.read_bytes < size / 2


def test_duplicate_on_line_2_of_a_big_gzip_run_with_the_columnar_reader(tmp_path, monkeypatch):
    """The columnar reader hands a block with a repeated pair to the line reader at once."""
    monkeypatch.setattr(kinds, "COLUMNAR_MIN_BYTES", 0)
    monkeypatch.setattr(columnar, "RUN_BLOCK_BYTES", 1 << 16)
    blocks = []
    texts = columnar._texts

    def counted_texts(handle, size, buffers):
        for text in texts(handle, size, buffers):
            blocks.append(len(text))
            yield text

    monkeypatch.setattr(columnar, "_texts", counted_texts)
    lines = _run_lines(2000, 100)
    lines[1] = lines[0]
    path = tmp_path / "run.gz"
    path.write_bytes(gzip.compress(b"".join(lines)))
    assert columnar.read_run(path, jobs=1) is None
    assert 0 < sum(blocks) < len(b"".join(lines)) / 4
    assert_fails(invoke(ROOT / "data" / "qrels.txt", path), f"{path}:2: found 'q0 Q0 d0-0 1 1000.5 tag'")


@pytest.mark.parametrize("compression", ["plain", *COMPRESS])
def test_errors_far_in_name_their_line(tmp_path, monkeypatch, compression):
    """Line numbers carry over from block to block, for the line reader's errors and for a pair
    repeated in another block (whose text is read again from the file)."""
    monkeypatch.setattr(common, "TEXT_BLOCK_BYTES", 4096)
    monkeypatch.setattr(trec, "WHOLE_FILE_BYTES", 0)  # a plain file in blocks too
    lines = _run_lines(50, 40)  # 2,000 lines, ~60 KB: a few dozen blocks
    pack = (lambda data: data) if compression == "plain" else COMPRESS[compression]
    bad = list(lines)
    bad[1733] = b"q43 Q0 d43-13 14 x tag\n"
    path = tmp_path / "bad_score"
    path.write_bytes(pack(b"".join(bad)))
    with pytest.raises(ParseError, match=rf"{path}:1734: found 'q43 Q0 d43-13 14 x tag'; expected a finite number"):
        trec.read_run(path)
    again = [*lines, b"# a comment\n", lines[5].rstrip(b"\n")]  # line 6 given again at the end, no final newline
    path = tmp_path / "repeated"
    path.write_bytes(pack(b"".join(again)))
    with pytest.raises(ParseError) as caught:
        trec.read_run(path)
    assert str(caught.value).startswith(f"{path}:2002: found 'q0 Q0 d0-5 6 995.5 tag'; expected each (query, "
                                        "document) pair once; query 'q0' document 'd0-5' was already given at "
                                        "line 6")


def test_a_pair_repeated_in_another_block_of_stdin_names_both_lines(monkeypatch):
    """stdin cannot be read again: the message names the lines and the pair, without the text."""
    monkeypatch.setattr(common, "TEXT_BLOCK_BYTES", 4096)
    lines = _run_lines(50, 40)
    data = gzip.compress(b"".join([*lines, lines[5]]))
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    with pytest.raises(ParseError) as caught:
        trec.read_run("-")
    assert str(caught.value) == ("<stdin>:2001; expected each (query, document) pair once; query 'q0' document "
                                 "'d0-5' was already given at line 6 (use --on-duplicate first|max to accept "
                                 "duplicates)")


@pytest.fixture(scope="module")
def realdata():
    return require_shared("realdata")


@pytest.mark.parametrize("qrels,run", [
    ("qrels.dl19-passage.txt", "BM25.trec_results_dl19.txt"),
    ("qrels.dl19-passage.txt", "REP_LLAMA.trec_results_dl19.txt"),         # ties
    ("cast2019-train-with-duplicates.qrel", None),  # duplicates resolved, in the qrels and a run made of them
    ("cwl.qrels", "cwl.run"),                                               # odd spacing, no final newline
    ("qrels.cacm.txt", "cacm-bm25.txt"),
])
@pytest.mark.parametrize("policy", ["first", "max"])
def test_block_by_block_gives_the_whole_file_values(realdata, monkeypatch, tmp_path, qrels, run, policy):
    qrels = realdata / "qrels" / qrels
    if run is None:  # each judged document retrieved, with a score from its line; every 7th line twice
        run = tmp_path / "run.txt"
        run.write_bytes(b"".join(b"%s Q0 %s 0 %d.%d r\n" % (f[0], f[2], n % 13, n % 7) * (1 + (n % 7 == 0))
                                 for n, f in enumerate(line.split() for line in qrels.read_bytes().splitlines())))
    else:
        run = realdata / "runs" / run
    # comments, CRLF and a BEIR layout in some of the blocks
    beir = tmp_path / "beir.tsv"
    beir.write_bytes(b"query-id\tcorpus-id\tscore\r\n" + b"".join(
        b"%s\t%s\t%s\r\n" % (f[0], f[2], f[3]) + (b"# note\n" if i % 97 == 0 else b"")
        for i, f in enumerate(line.split() for line in qrels.read_bytes().splitlines() if line.strip())))
    measures = ["all_trec"]
    expected = [evaluate(q, run, measures, per_query=True, on_duplicate=policy) for q in (qrels, beir)]
    monkeypatch.setattr(common, "TEXT_BLOCK_BYTES", 1 << 12)
    monkeypatch.setattr(trec, "WHOLE_FILE_BYTES", 0)
    got = [evaluate(q, run, measures, per_query=True, on_duplicate=policy) for q in (qrels, beir)]
    for whole, blocks in zip(expected, got):
        assert blocks.per_query == whole.per_query
        assert blocks.summary == whole.summary
        assert blocks.meta["counts"] == whole.meta["counts"]


@pytest.mark.parametrize("kind", ["qrels", "run"])
def test_a_plain_file_of_several_blocks_is_parsed_in_one_piece(tmp_path, monkeypatch, kind):
    """Up to WHOLE_FILE_BYTES a plain file is read whole and parsed once (joining the parts of
    its blocks goes through Python dicts, ten times slower); the values are those read block
    by block, with the same messages."""
    lines = _run_lines(300, 100, noise=True)  # 30,000 lines, ~1.2 MB: the 256 KB first block and three more
    if kind == "qrels":
        lines = [b"%s 0 %s %d\n" % (f[0], f[2], n % 3) for n, f in enumerate(line.split() for line in lines)]
    path = tmp_path / kind
    path.write_bytes(b"".join(lines))
    read = trec.read_qrels if kind == "qrels" else trec.read_run
    monkeypatch.setattr(trec, "WHOLE_FILE_BYTES", 0)
    in_blocks = read(path)
    monkeypatch.setattr(trec, "WHOLE_FILE_BYTES", 64 << 20)
    with monkeypatch.context() as patched:
        patched.setattr(trec, "_joined", lambda parts: pytest.fail(f"parsed in {len(parts)} parts"))
        whole = read(path)
    assert whole.lines is None  # the array reader read it, in one piece
    text = lambda table: [(table.qid_vocab[q], d) for q, d in zip(table.qid_codes, table.doc_text(range(len(table)))
                                                                    if kind == "run" else
                                                                    [table.doc_vocab[c] for c in table.doc_codes])]
    assert text(whole) == text(in_blocks)
    values = (lambda table: table.grades.tolist()) if kind == "qrels" else (lambda table: table.scores.tolist())
    assert values(whole) == values(in_blocks)
    # an error far in: the same message either way
    path.write_bytes(b"".join(lines[:25000] + [lines[3]] + lines[25000:]))
    messages = []
    for size in (0, 64 << 20):
        monkeypatch.setattr(trec, "WHOLE_FILE_BYTES", size)
        with pytest.raises(ParseError) as caught:
            read(path)
        messages.append(str(caught.value))
    assert messages[0] == messages[1] and ":25001:" in messages[0]
