"""The example backend (BM25 over evaltool/bench/data/bench_corpus.jsonl) runs out of the box, as the
README shows, and the README's bench section documents every option."""

from __future__ import annotations

from tests.support.helpers import ROOT, bench, only_report, rescore


def test_example_bm25_backend_runs_out_of_the_box(tmp_path):
    result = bench(str(ROOT / "data" / "bench_queries.json"), "evaltool.bench.examples:bm25_search", tmp_path)
    assert result.exit_code == 0, result.stderr
    assert "✓ Every expected id is in the corpus (35 ids)" in result.stdout
    report, _ = only_report(tmp_path)
    assert report["metadata"]["total_queries"] == 16 and report["metadata"]["failed_queries"] == 0
    flat = next(e for e in report["detailed_results"] if e["query"] == "flat tyre inner tube")
    assert flat["returned_ids"][0] == "bike-puncture" and flat["metrics"]["mrr"] == 1.0
    assert rescore(report)["summary"] == report["aggregate_metrics"]
    # the README shows this run's summary: its metric lines must be what the run prints
    readme = (ROOT / "README.md").read_text()
    out = result.stdout
    shown = out[out.index("AGGREGATE METRICS:"):out.index("BY CATEGORY:")]
    assert shown in readme


def test_readme_has_a_bench_section_with_every_option():
    from evaltool.cli import main

    readme = (ROOT / "README.md").read_text()
    assert "evaltool bench QUERIES.json --backend SPEC" in readme
    assert "evaltool bench data/bench_queries.json --backend evaltool.bench.examples:bm25_search" in readme
    for param in main.get_command(None, "bench").params:
        if param.param_type_name == "option" and not param.hidden:
            assert any(opt in readme for opt in param.opts), param.opts


def test_example_backend_verbose_run_scores_the_query_it_answers_with_nothing(tmp_path):
    """BM25 finds no word of "stop my bike from squeaking" in the corpus: an empty answer, scored 0."""
    result = bench(str(ROOT / "data" / "bench_queries.json"), "evaltool.bench.examples:bm25_search", tmp_path, "-v")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.count("      Metrics: ") == 16
    report, _ = only_report(tmp_path)
    squeak = next(e for e in report["detailed_results"] if e["query"] == "stop my bike from squeaking")
    assert squeak["returned_ids"] == [] and squeak["error"] is None and squeak["metrics"]["mrr"] == 0.0
    assert report["aggregate_metrics"] == bench_plain(tmp_path / "plain")


def bench_plain(out) -> dict:
    """The same run without -v: the verbose blocks change nothing in the numbers."""
    result = bench(str(ROOT / "data" / "bench_queries.json"), "evaltool.bench.examples:bm25_search", out)
    assert result.exit_code == 0, result.stderr
    return only_report(out)[0]["aggregate_metrics"]
