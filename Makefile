# Two commands on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin

.PHONY: demo test venv test-deps bench bench-quick clean docs docs-serve docs-reference perf-page dist docs-deps format

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

venv: $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .

# the docs extra too: the test suite builds the site strictly and the wheel (tests/test_docs_site.py)
test-deps: $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[test,docs]'

docs-deps: $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[docs]'

# the documentation site into site/ (git-ignored); strict: a broken link or reference fails the build
docs: docs-deps
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir site

docs-serve: docs-deps
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs serve

# rewrite the generated reference pages (measures, command line, HTTP API) from the code,
# and the performance page from the newest full run in benchmarks/results/
docs-reference: docs-deps
	$(BIN)/python tools/docs_reference.py
	$(BIN)/python tools/perf_page.py

# docs/performance.md from the newest full run of `make bench` (after a new one: run this and commit both)
perf-page:
	$(PYTHON) tools/perf_page.py

# the sdist and the wheel into dist/
dist: docs-deps
	rm -rf dist
	$(BIN)/python -m build --outdir dist

# each demo line prints the command it runs (the same text: one argument list for both)
demo_run = echo "== evaltool $(1)" && $(BIN)/evaltool $(1)

demo: venv
	@$(call demo_run,data/qrels.txt data/run.txt)
	@$(call demo_run,data/qrels.txt data/run.txt -q -m ndcg_cut.10 -m P.5 -c)
	@$(call demo_run,data/rag/queries.jsonl data/rag/results.jsonl -m ndcg_cut.5 -m recall.5 -m recip_rank -q -o table)
	@history=$$(mktemp -d) && \
	  $(call demo_run,data/qrels.txt data/run.txt -c -m recip_rank -m ndcg_cut.10 -m P.5 --record --db $$history/history.sqlite --note 'make demo' > /dev/null) && \
	  $(call demo_run,history report --db $$history/history.sqlite --labels); \
	  status=$$?; rm -rf $$history; exit $$status

# the trec_eval oracle built from ../shared/tools as CI builds it (.ci/trec-eval-oracle says where,
# or why its tests skip); -rs: every skip's reason in one summary line per reason
test: test-deps
	@oracle=$$(.ci/trec-eval-oracle) && PATH="$${oracle:+$$oracle:}$$PATH" $(BIN)/python -m pytest -rs

# the package laid out as ruff lays it out (tests/test_tooling.py checks it), then its lint fixes
format: test-deps
	$(BIN)/ruff format evaltool
	$(BIN)/ruff check --fix evaltool

bench: test-deps
	$(BIN)/python benchmarks/run.py
	$(BIN)/python benchmarks/dashboard.py

# a quick look, not a result to keep: written under benchmarks/cache/, which git ignores
bench-quick: test-deps
	$(BIN)/python benchmarks/run.py --quick --results-dir benchmarks/cache/quick

clean:
	rm -rf $(VENV) build dist site *.egg-info .pytest_cache
