"""Helpers shared by the `evaltool bench` tests: write a queries file, run the command, read the report."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from click.testing import CliRunner

from evaltool.cli import main


def write_queries(path: Path, queries: list[dict]) -> str:
    path.write_text(json.dumps(queries, indent=1))
    return str(path)


def query(qid, text, expected=("rel1",), category="A", difficulty="easy", **fields) -> dict:
    out = {"id": qid, "query": text, "category": category, "difficulty": difficulty}
    if isinstance(expected, dict):
        out["qrels"] = expected
    else:
        out["relevant_ids"] = list(expected)
    out.update(fields)
    return out


def invoke(*args):
    result = CliRunner().invoke(main, [str(a) for a in args], prog_name="evaltool")
    assert "Traceback" not in result.stderr, result.stderr
    return result


def bench(queries_path, backend, out_dir, *args):
    return invoke("bench", queries_path, "--backend", backend, "--out", out_dir, *args)


def only_report(out_dir) -> tuple[dict, Path]:
    reports = sorted(Path(out_dir).glob("baseline_*.json"))
    assert len(reports) == 1, reports
    return json.loads(reports[0].read_text()), reports[0]


def rescore(report: dict) -> dict:
    """evaltool itself, running the report's own re-score command with ``-q -o json``."""
    command = shlex.split(report["metadata"]["rescore"])
    assert command[0] == "evaltool"
    result = invoke("-q", "-o", "json", *command[1:])
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)
