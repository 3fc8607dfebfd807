"""A UTF-8 byte-order mark before the first line of a TREC qrels or run is not part of the
first query id, in every way a file is read. It used to be: DL19's BM25 run lost its first
line's match (nDCG@10 0.5053 for 0.5058), and a qrels' first query was never met."""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
import shlex
import shutil
import subprocess
import sys

import pytest

from evaltool import evaluate
from evaltool.io.common import BOM
from tests.support.helpers import ROOT, invoke, require_shared

QRELS, RUN = "qrels/qrels.dl19-passage.txt", "runs/BM25.trec_results_dl19.txt"
PUBLISHED = "ndcg_cut_10           \tall\t0.5058\n"  # ../shared/realdata/published.tsv: BM25 on DL19


def _zstd(data: bytes) -> bytes:
    zstandard = pytest.importorskip("zstandard")
    return zstandard.ZstdCompressor().compress(data)


COMPRESSIONS = {"plain": lambda data: data, "gzip": gzip.compress, "bz2": bz2.compress, "xz": lzma.compress,
                "zstd": _zstd}
SUFFIX = {"plain": "", "gzip": ".gz", "bz2": ".bz2", "xz": ".xz", "zstd": ".zst"}


@pytest.fixture(scope="module")
def realdata():
    return require_shared("realdata")


def _with_bom(tmp_path, source, compression: str) -> str:
    path = tmp_path / (source.name + ".bom" + SUFFIX[compression])
    path.write_bytes(COMPRESSIONS[compression](BOM + source.read_bytes()))
    return str(path)


@pytest.mark.parametrize("compression", list(COMPRESSIONS))
@pytest.mark.parametrize("where", ["run", "qrels", "both"])
def test_bom_in_every_reader(tmp_path, realdata, reading_mode, compression, where):
    qrels, run = realdata / QRELS, realdata / RUN
    plain = invoke("-q", "-m", "ndcg_cut.10", "-m", "num_ret", qrels, run, *reading_mode)
    assert PUBLISHED in plain.stdout
    bom_qrels = _with_bom(tmp_path, qrels, compression) if where != "run" else qrels
    bom_run = _with_bom(tmp_path, run, compression) if where != "qrels" else run
    got = invoke("-q", "-m", "ndcg_cut.10", "-m", "num_ret", bom_qrels, bom_run, *reading_mode)
    assert got.exit_code == 0, got.stderr
    assert got.stdout == plain.stdout
    assert got.stderr == ""


def test_bom_in_a_run_read_from_stdin(realdata):
    data = BOM + (realdata / RUN).read_bytes()
    got = invoke("-m", "ndcg_cut.10", realdata / QRELS, "-", input=data)
    assert got.exit_code == 0, got.stderr
    assert got.stdout == PUBLISHED and got.stderr == ""
    got = invoke("-m", "ndcg_cut.10", realdata / QRELS, "-", input=gzip.compress(data))
    assert got.stdout == PUBLISHED and got.stderr == ""


@pytest.mark.skipif(shutil.which("bash") is None, reason="process substitution needs bash")
@pytest.mark.parametrize("compress", ["cat", "gzip -c"])
def test_bom_through_pipes(tmp_path, realdata, compress):
    """<(...) of a file with a BOM, plain and compressed, qrels and run: read whole once, BOM dropped."""
    qrels = _with_bom(tmp_path, realdata / QRELS, "plain")
    run = _with_bom(tmp_path, realdata / RUN, "plain")
    line = (f"{shlex.quote(sys.executable)} -m evaltool -m ndcg_cut.10 <({compress} {shlex.quote(qrels)}) "
            f"<({compress} {shlex.quote(run)})")
    done = subprocess.run(["bash", "-c", line], env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout == PUBLISHED and done.stderr == ""


def test_bom_in_python_paths_and_many_runs(tmp_path, realdata):
    run = _with_bom(tmp_path, realdata / RUN, "plain")
    result = evaluate(_with_bom(tmp_path, realdata / QRELS, "gzip"), run, ["ndcg_cut.10"])
    assert round(result.summary["ndcg_cut_10"], 4) == 0.5058
    many = invoke("-m", "ndcg_cut.10", "-o", "csv", realdata / QRELS, run, realdata / RUN)
    assert many.exit_code == 0, many.stderr
    values = [round(float(line.rsplit(",", 1)[1]), 4) for line in many.stdout.splitlines()[1:]]
    assert values == [0.5058, 0.5058]


def test_bom_with_the_dask_engine(tmp_path, realdata):
    pytest.importorskip("distributed", reason="the Dask engine needs the dask extra: pip install 'evaltool[dask]'")
    for compression in ("plain", "gzip"):
        run = _with_bom(tmp_path, realdata / RUN, compression)
        got = invoke("-m", "ndcg_cut.10", "--engine", "dask", "--partitions", "3", realdata / QRELS, run)
        assert got.exit_code == 0, got.stderr
        assert got.stdout == PUBLISHED and got.stderr == "", compression


def test_a_bom_later_in_the_file_is_part_of_an_id(tmp_path):
    """Only the first bytes of a file can be a byte-order mark; elsewhere U+FEFF is a character of an id."""
    qrels = tmp_path / "qrels.txt"
    qrels.write_bytes(b"q1 0 d1 1\n" + BOM + b"q2 0 d2 1\n")
    run = tmp_path / "run.txt"
    run.write_bytes(BOM + b"q1 Q0 d1 1 1.0 r\nq2 Q0 d2 1 1.0 r\n")
    got = invoke("-q", "-m", "P.1", qrels, run)
    assert got.stdout.splitlines() == ["P_1                   \tq1\t1.0000", "P_1                   \tall\t1.0000"]
    assert "\ufeffq2" in got.stderr  # that qrels query has no results in the run
