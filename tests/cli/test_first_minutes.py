"""The first five minutes of a new user (issue 17): usage, measure order, outputs, Makefile, .gitignore."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.helpers import assert_fails, invoke

ROOT = Path(__file__).resolve().parents[2]
QRELS, RUN = str(ROOT / "data" / "qrels.txt"), str(ROOT / "data" / "run.txt")


def test_the_top_level_usage_lists_every_command_the_cli_package_defines():
    defined = set()
    for module in (ROOT / "evaltool" / "cli").glob("*.py"):
        defined.update(re.findall(r'@click\.command\("([\w-]+)"', module.read_text()))
    assert "bench" in defined
    usage = invoke().stderr  # no arguments: the usage, exit 2
    for name in sorted(defined):
        assert re.search(rf"^\s+{name}\s", usage, re.M), f"{name} is missing from the top-level usage"


def test_compare_keeps_the_measures_in_the_order_given(tmp_path):
    other = tmp_path / "other.txt"
    shutil.copy(RUN, other)
    result = invoke("compare", QRELS, RUN, other, "-m", "recip_rank", "-m", "map", "-m", "P.5", "-c", "-o", "json")
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert list(report["runs"]["run.txt"]) == ["recip_rank", "map", "P_5"]  # trec_eval's order: map, P_5, recip_rank
    table = invoke("compare", QRELS, RUN, other, "-m", "P.5", "-m", "map", "-c")
    assert table.stdout.splitlines()[0].split() == ["run", "P_5", "map"]


@pytest.mark.parametrize("where, message", [
    ("missing/ref.json", "no folder"),
    ("a-file/ref.json", "no folder"),  # the "folder" is a file
])
def test_an_unwritable_save_reference_fails_before_any_work(tmp_path, where, message):
    (tmp_path / "a-file").write_text("")
    target = tmp_path / where
    result = invoke(QRELS, RUN, "-m", "map", "--save-reference", target)
    assert_fails(result, f"--save-reference: cannot write {target}", message)
    result = invoke(QRELS, RUN, "-m", "map", "--output", target)
    assert_fails(result, f"--output: cannot write {target}", message)


def git(*args) -> str:
    return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True, check=True).stdout


@pytest.fixture
def checkout():
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")


def test_gitignore_lists_no_tracked_file(checkout):
    assert git("ls-files", "--cached", "--ignored", "--exclude-standard") == ""


def make_dry_run(target: str) -> list[str]:
    """The commands ``make TARGET`` would run, its prerequisites taken as done."""
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    done = ["-o", "venv", "-o", "test-deps", "-o", ".venv/bin/python"]
    result = subprocess.run(["make", "-n", *done, "-C", str(ROOT), target], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return [line for line in result.stdout.splitlines() if not line.startswith("make")]


def test_bench_quick_writes_where_git_ignores(checkout):
    [command] = make_dry_run("bench-quick")
    folder = re.search(r"--results-dir (\S+)", command).group(1)
    # git check-ignore exits 0 when the path is ignored
    assert subprocess.run(["git", "-C", str(ROOT), "check-ignore", "-q", f"{folder}/x.json"]).returncode == 0


def test_the_demo_echoes_the_commands_it_runs():
    text = "\n".join(make_dry_run("demo"))
    shown = list(re.finditer(r'echo "== evaltool ([^"]*)" && \.venv/bin/evaltool ', text))
    assert len(shown) >= 3 and len(shown) == text.count(".venv/bin/evaltool ")  # every command is shown
    for match in shown:
        assert text[match.end():].startswith(match.group(1)), match.group(1)
