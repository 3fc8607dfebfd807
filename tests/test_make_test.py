"""``make test`` on a newcomer's machine: the trec_eval oracle is built from ../shared/tools as
CI builds it (one script, .ci/trec-eval-oracle, for both), or one line says why its tests
will skip and how to get trec_eval; pytest runs with ``-rs`` so skips give their reasons.
And test modules share code through support modules, never by importing one another."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
from pathlib import Path

from tests.support.helpers import ROOT, missing

SCRIPT = ROOT / ".ci" / "trec-eval-oracle"


def _run_script(tmp_path, shared: Path, builder: str | None = None):
    """The oracle script with $EVALTOOL_SHARED = ``shared`` and a PATH that has no trec_eval."""
    if builder is not None:
        (shared / "tools").mkdir(parents=True)
        tool = shared / "tools" / "build-trec-eval"
        tool.write_text(builder)
        tool.chmod(0o755)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for program in ("dirname", "bash"):
        (bin_dir / program).symlink_to(shutil.which(program))
    env = {"PATH": str(bin_dir), "EVALTOOL_SHARED": str(shared), "HOME": str(tmp_path)}
    return subprocess.run([shutil.which("bash"), str(SCRIPT)], capture_output=True, text=True, env=env, timeout=60)


def test_the_oracle_is_built_from_shared_tools_into_build_oracle(tmp_path):
    binary = tmp_path / "built" / "trec_eval-10.0" / "trec_eval"
    # a stand-in for ../shared/tools/build-trec-eval: it is given build/oracle and prints the binary's path
    builder = f'#!/bin/sh\n[ "$1" = "{ROOT}/build/oracle" ] || exit 3\necho {binary}\n'
    done = _run_script(tmp_path, tmp_path / "shared", builder)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"{binary.parent}\n"
    assert done.stderr == f"oracle: trec_eval 10.0 at {binary}\n"


def test_without_shared_tools_or_trec_eval_one_line_says_why_the_oracle_tests_skip(tmp_path):
    done = _run_script(tmp_path, tmp_path / "nowhere")
    assert done.returncode == 0 and done.stdout == ""
    assert done.stderr.count("\n") == 1
    assert "tests that compare with trec_eval will skip" in done.stderr
    assert f"no {tmp_path / 'nowhere'}/tools/build-trec-eval" in done.stderr
    assert "build NIST trec_eval 10.0" in done.stderr and "put its folder on PATH" in done.stderr


def test_a_failed_build_says_so(tmp_path):
    done = _run_script(tmp_path, tmp_path / "shared", "#!/bin/sh\necho 'build-trec-eval: needs gcc and make' >&2\nexit 1\n")
    assert done.stdout == ""
    assert "needs gcc and make" in done.stderr and "could not build it" in done.stderr and "will skip" in done.stderr


def test_make_test_and_ci_take_the_oracle_from_the_same_script():
    if shutil.which("make") is None:
        missing("make is not on PATH")
    recipe = subprocess.run(["make", "-n", "test"], cwd=ROOT, capture_output=True, text=True, timeout=60).stdout
    line = next(line for line in recipe.splitlines() if "pytest" in line)
    assert ".ci/trec-eval-oracle" in line and "-m pytest -rs" in line
    assert "$(.ci/trec-eval-oracle)" in (ROOT / ".ci" / "run").read_text()
    assert os.access(SCRIPT, os.X_OK)


def test_no_test_module_imports_another():
    offenders = []
    for path in sorted((ROOT / "tests").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else \
                [alias.name for alias in node.names] if isinstance(node, ast.Import) else []
            offenders += [f"{path.relative_to(ROOT)} imports {name}" for name in names
                          if name.startswith("tests.") and name.rsplit(".", 1)[-1].startswith("test_")]
    assert offenders == []
