"""`evaltool bench` as a library call and on the console: the listener's events and the
progress line on a terminal."""

from __future__ import annotations

import io
import os

from evaltool.bench import BenchSettings, Listener, run_benchmark
from evaltool.cli.progress import Progress
from tests.support.helpers import query, write_queries


class Recorder(Listener):
    def __init__(self):
        self.events = []

    def loaded(self, queries, backend, plan):
        self.events.append(("loaded", len(queries), backend.kind, plan.names))

    def corpus_checked(self, unknown, corpus_size):
        self.events.append(("corpus", unknown, corpus_size))

    def started(self, total, pending, resumed):
        self.events.append(("started", total, [q.qid for q in pending], resumed))

    def finished(self, query, outcome):
        self.events.append(("finished", query.qid, outcome.error))

    def completed(self, result):
        self.events.append(("completed", result.report["metadata"]["failed_queries"]))


def test_run_benchmark_as_a_library_call_tells_its_listener_each_step(tmp_path):
    queries = [query(1, "q ok", ("rel1", "rel2")), query(2, "q boom", behaviour="boom")]
    path = write_queries(tmp_path / "q.json", queries)
    recorder = Recorder()
    settings = BenchSettings(path, "tests.support.helpers:search_with_corpus", out_dir=str(tmp_path / "out"),
                             concurrency=1)
    result = run_benchmark(settings, recorder)
    assert recorder.events == [
        ("loaded", 2, "python", ["precision@3", "precision@5", "recall@10", "mrr"]),
        ("corpus", {"1": ["rel2"]}, 3),
        ("started", 2, ["1", "2"], 0),
        ("finished", "1", None),
        ("finished", "2", None),  # search_with_corpus ignores the behaviour field: no failure
        ("completed", 0),
    ]
    # rel1 x1 rel2 x2 against {rel1, rel2}: P@3 = 2/3, MRR 1; against {rel1}: P@3 = 1/3
    assert result.report["aggregate_metrics"]["precision@3"] == (2 / 3 + 1 / 3) / 2
    assert result.report_path.startswith(str(tmp_path / "out" / "baseline_"))


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_progress_line_is_redrawn_on_a_terminal_only():
    screen = Terminal()
    progress = Progress(screen, total=4, done=1)
    progress.advance(failed=True)
    line = screen.getvalue().rsplit("\r", 1)[1]
    assert line.startswith("[" + "█" * 15 + "░" * 15 + "] 2/4  50%  1 failed  ") and line.endswith("s\x1b[K")
    progress.clear()
    assert screen.getvalue().endswith("\r\x1b[K")

    pipe = io.StringIO()
    Progress(pipe, total=4, done=0).advance(failed=False)
    assert pipe.getvalue() == ""


class CtrlCAtStart(Recorder):
    """Ctrl-C lands just as "Starting benchmark execution" is shown, before any query runs."""

    def started(self, total, pending, resumed):
        super().started(total, pending, resumed)
        raise KeyboardInterrupt


def test_ctrl_c_between_the_start_line_and_the_queries_is_an_interruption_with_a_checkpoint(tmp_path):
    import signal

    import pytest

    from evaltool.bench.checkpoint import checkpoint_path
    from evaltool.bench.execute import Interrupted

    path = write_queries(tmp_path / "q.json", [query(1, "q ok", ("rel1",)), query(2, "q two", ("rel2",))])
    settings = BenchSettings(path, "tests.support.helpers:search_with_corpus", out_dir=str(tmp_path / "out"), concurrency=1)
    with pytest.raises(Interrupted) as stop:
        run_benchmark(settings, CtrlCAtStart())
    assert stop.value.signum == signal.SIGINT
    # the checkpoint was written and closed: --resume starts from it and runs both queries
    assert os.path.exists(checkpoint_path(str(tmp_path / "out"), path))
    recorder = Recorder()
    settings = BenchSettings(path, "tests.support.helpers:search_with_corpus", out_dir=str(tmp_path / "out"), concurrency=1,
                             resume=True)
    run_benchmark(settings, recorder)
    assert ("started", 2, ["1", "2"], 0) in recorder.events
