"""The progress line of a big read (issue 17): on standard error when it is a terminal (a
pseudo-terminal here), redrawn in place and cleared at the end; nothing when it is a pipe;
standard output the same bytes either way, JSON included.

The command runs in a subprocess whose threshold is lowered to 1 byte (the default, 100 MB,
would take a big file to reach); the file, ~3 MB, goes through the columnar reader (which
takes files from 2 MB on there, 8 MB by default) and, with --stream, through the streaming one.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pty = pytest.importorskip("pty", reason="pseudo-terminals are POSIX")

ROOT = Path(__file__).resolve().parents[2]
QUERIES, DEPTH = 200, 400
LOWERED = ("import sys; from evaltool.io import kinds, progress; progress.PROGRESS_MIN_BYTES = 1; "
           "kinds.COLUMNAR_MIN_BYTES = 2 << 20; "
           "from evaltool.cli import main; main(sys.argv[1:], prog_name='evaltool')")
BAR = "█░"


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cli-progress")
    (folder / "qrels.txt").write_text("".join(f"q{q} 0 d{q % 1000} 1\n" for q in range(QUERIES)))
    (folder / "run.txt").write_text("".join(f"q{q} Q0 d{(q * 7 + r) % 1000} {r + 1} {DEPTH - r}.25 tag\n"
                                            for q in range(QUERIES) for r in range(DEPTH)))
    return str(folder / "qrels.txt"), str(folder / "run.txt")


def run_cli(args, terminal: bool, lowered: bool = True) -> tuple[int, bytes, bytes]:
    """(exit code, stdout, stderr) with stderr on a pseudo-terminal or a pipe; stdout is a pipe."""
    command = [sys.executable, "-c", LOWERED] if lowered else [sys.executable, "-m", "evaltool"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    if not terminal:
        done = subprocess.run([*command, *args], capture_output=True, env=env, timeout=300)
        return done.returncode, done.stdout, done.stderr
    main_end, child_end = pty.openpty()
    process = subprocess.Popen([*command, *args], stdout=subprocess.PIPE, stderr=child_end, env=env)
    os.close(child_end)
    err = b""
    while True:
        try:
            chunk = os.read(main_end, 1 << 16)
        except OSError:  # the child closed the terminal (EIO on Linux)
            break
        if not chunk:
            break
        err += chunk
    os.close(main_end)
    out = process.stdout.read()
    process.stdout.close()
    return process.wait(timeout=300), out, err


@pytest.mark.parametrize("mode", [[], ["--stream"]])
def test_a_terminal_gets_one_line_redrawn_then_cleared(files, mode):
    code, out, err = run_cli([*files, "-m", "map", *mode], terminal=True)
    assert code == 0, err
    text = err.decode()
    *draws, cleared = text.split("\r")[1:]
    assert draws and all(draw.startswith("reading run.txt [") and draw.endswith("s\x1b[K") for draw in draws)
    assert all(set(draw.split("[", 1)[1].split("]", 1)[0]) <= set(BAR) for draw in draws)
    size = os.path.getsize(files[1]) / 1e6
    assert f"] {size:.0f}/{size:.0f} MB 100%" in draws[-1]  # the whole file read...
    assert cleared == "\x1b[K" and "\n" not in text  # ...then the line is cleared, nothing else
    assert out == run_cli([*files, "-m", "map", *mode], terminal=False)[1]


def test_a_pipe_gets_nothing(files):
    code, out, err = run_cli([*files, "-m", "map"], terminal=False)
    assert code == 0 and err == b""
    assert out.startswith(b"map                   \tall\t")


def test_json_on_stdout_stays_clean_when_stderr_is_a_terminal(files):
    code, out, err = run_cli([*files, "-m", "map", "-q", "-o", "json"], terminal=True)
    assert code == 0 and "reading run.txt" in err.decode()
    assert json.loads(out)["summary"]["map"] == json.loads(run_cli([*files, "-m", "map", "-q", "-o", "json"],
                                                                   terminal=False)[1])["summary"]["map"]


def test_a_small_file_shows_nothing_even_on_a_terminal(files):
    """The default threshold (100 MB) is far above this file."""
    code, _, err = run_cli([*files, "-m", "map"], terminal=True, lowered=False)
    assert code == 0 and err == b""


def test_an_error_clears_the_line_before_its_message(files, tmp_path):
    broken = tmp_path / "broken.txt"
    lines = Path(files[1]).read_text().splitlines(keepends=True)
    lines[-5] = "q1 Q0 broken\n"
    broken.write_text("".join(lines))
    code, out, err = run_cli([files[0], str(broken), "-m", "map"], terminal=True)
    text = err.decode()
    assert code == 2 and out == b""
    message = f"evaltool: {broken}:{len(lines) - 4}: found 'q1 Q0 broken'"
    assert message in text and text.split(message)[0].endswith("\r\x1b[K")  # the line was cleared first
