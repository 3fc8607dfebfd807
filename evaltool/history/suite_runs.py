"""Running a suite: its current version written as a queries file, the benchmark runner, the record.

The version's queries are written to ``OUT/<suite>.v<version>.json`` (the name made safe for a
file system, with a digest of the real name so that two names never share a file), so the
runner's checkpoint beside it (``<suite>.v<version>.checkpoint.jsonl``) belongs to that
version alone and ``resume`` finishes exactly what was started. The execution is recorded under
the suite's name, as kind ``suite``, with the version it ran and what the search returned.
"""

from __future__ import annotations

import hashlib
import os
import re


def queries_file_stem(suite) -> str:
    """A file name stem for a suite version: its name reduced to safe characters, a digest, the version.

    >>> from evaltool.history.suites import Suite
    >>> queries_file_stem(Suite("<img src=x>", "b", [], {}, True, "", 3))
    'img_src_x-16c555b9.v3'
    """
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", suite.name).strip("._")[:60] or "suite"
    digest = hashlib.sha256(suite.name.encode("utf-8", "surrogateescape")).hexdigest()[:8]
    return f"{safe}-{digest}.v{suite.version}"


def write_queries_file(suite, out_dir: str) -> str:
    """Write the suite's shown version as a queries file in ``out_dir``; its path."""
    from evaltool.history.suites import export_text
    from evaltool.report.output import write_together

    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, queries_file_stem(suite) + ".json")
    write_together([(path, export_text(suite))])
    return path


def bench_settings(suite, queries_path: str, out_dir: str, *, backend: str | None = None, resume: bool = False):
    """The :class:`evaltool.bench.BenchSettings` of a suite run (``backend``: the spec to use instead
    of the suite's own, for a server that maps declared names to specs)."""
    from evaltool.bench.session import BenchSettings

    known = BenchSettings.__dataclass_fields__
    settings = {k: v for k, v in suite.settings.items() if k in known}
    settings["headers"] = tuple(settings.get("headers") or ())
    return BenchSettings(
        queries_path=queries_path,
        backend=backend or suite.backend,
        measures=tuple(suite.measures),
        out_dir=out_dir,
        resume=resume,
        run_name=suite.name,
        **settings,
    )


def run_suite(
    history,
    name: str,
    out_dir: str,
    *,
    version: int | None = None,
    listener=None,
    resume: bool = False,
    backend: str | None = None,
    overrides: dict | None = None,
    note: str | None = None,
    tags=None,
) -> tuple[object, int]:
    """Run suite ``name`` (its current ``version`` by default) and record it; (the BenchResult, the
    execution id). ``backend`` and ``overrides`` (BenchSettings fields) replace the suite's own, for
    a server that runs only what its operator declared. Raises EvaltoolError (a suite that cannot
    run) and :class:`evaltool.bench.Interrupted`."""
    from dataclasses import replace

    from evaltool.bench.session import run_benchmark
    from evaltool.history.recording import record_bench
    from evaltool.history.suites import get_suite, runnable

    suite = get_suite(history, name, version)
    runnable(suite)
    if suite.shown_version is not None:  # the version asked for (get_suite always says which)
        suite.version = suite.shown_version
    path = write_queries_file(suite, out_dir)
    settings = replace(bench_settings(suite, path, out_dir, backend=backend, resume=resume), **(overrides or {}))
    result = run_benchmark(settings, listener)
    execution_id = record_bench(
        result, history, name=suite.name, kind="suite", suite_version=suite.version, note=note, tags=tags
    )
    return result, execution_id
