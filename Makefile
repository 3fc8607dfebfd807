# Two commands on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin

.PHONY: demo test venv test-deps bench bench-quick clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

venv: $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .

test-deps: $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[test]'

demo: venv
	@echo "== evaltool data/qrels.txt data/run.txt -m official"
	$(BIN)/evaltool data/qrels.txt data/run.txt
	@echo "== evaltool data/qrels.txt data/run.txt -q -m ndcg_cut.10 -m P.5 -c"
	$(BIN)/evaltool data/qrels.txt data/run.txt -q -m ndcg_cut.10 -m P.5 -c
	@echo "== evaltool data/rag/queries.jsonl data/rag/results.jsonl -m ndcg_cut.5 -m recall.5 -m recip_rank -q -o table"
	$(BIN)/evaltool data/rag/queries.jsonl data/rag/results.jsonl -m ndcg_cut.5 -m recall.5 -m recip_rank -q -o table
	@echo "== evaltool data/qrels.txt data/run.txt -c -m recip_rank -m ndcg_cut.10 -m P.5 --record --db HISTORY; evaltool history report --db HISTORY --labels"
	@history=$$(mktemp -d) && \
	  $(BIN)/evaltool data/qrels.txt data/run.txt -c -m recip_rank -m ndcg_cut.10 -m P.5 --record \
	    --db $$history/history.sqlite --note "make demo" > /dev/null && \
	  $(BIN)/evaltool history report --db $$history/history.sqlite --labels; \
	  status=$$?; rm -rf $$history; exit $$status

test: test-deps
	$(BIN)/python -m pytest

bench: test-deps
	$(BIN)/python benchmarks/run.py
	$(BIN)/python benchmarks/dashboard.py

bench-quick: test-deps
	$(BIN)/python benchmarks/run.py --quick

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
