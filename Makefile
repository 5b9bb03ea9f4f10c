# Quick start: `make demo` (set up + harvest the fixtures + query + draw), `make test` (set up + run the tests).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
DEMO_STORE := .lineage/demo.lin
# The package's extras installed into the venv: `make install EXTRAS=test,dev,spark` adds pyspark for tests/spark
# (.ci/run does, before `make test`), which skip, saying why, without it.
EXTRAS ?= test,dev

.PHONY: demo test bench lint install clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# The stamp is rebuilt when pyproject.toml changes, so a new dependency is picked up by the next make.
$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[$(EXTRAS)]'
	touch $@

install: $(VENV)/.installed

# demo.svg needs Graphviz's `dot`: without it the demo says it skipped the picture, and why.
demo: install
	$(BIN)/lineage harvest fixtures/sql/warehouse --store $(DEMO_STORE)
	@echo; echo '$$ lineage up mart.sales_daily'
	@$(BIN)/lineage up mart.sales_daily --store $(DEMO_STORE) --format tree
	@echo; echo '$$ lineage down stg.pos_sales'
	@$(BIN)/lineage down stg.pos_sales --store $(DEMO_STORE) --format tree
	@echo; echo '$$ lineage up mart.sales_daily.revenue_usd'
	@$(BIN)/lineage up mart.sales_daily.revenue_usd --store $(DEMO_STORE) --format tree
	@echo; echo '$$ lineage up mart.sales_daily -o demo.graphml'
	@$(BIN)/lineage up mart.sales_daily --store $(DEMO_STORE) -o demo.graphml
	@echo; echo '$$ lineage up mart.sales_daily -o demo.svg'
	@if command -v dot >/dev/null 2>&1; then $(BIN)/lineage up mart.sales_daily --store $(DEMO_STORE) -o demo.svg; \
	else echo "demo.svg skipped: it is drawn by Graphviz's dot, which is not installed (apt-get install graphviz)"; fi
	@echo; echo '$$ lineage view mart.sales_daily -o demo.html'
	@$(BIN)/lineage view mart.sales_daily --store $(DEMO_STORE) -o demo.html

# The peer differential (tests/peer/test_peer_sqllineage.py) runs sqllineage's own SQL test suite: its sdist is
# fetched into .cache/peer by the first step of `make test` (a no-op once cached), so that pytest never needs
# the network (without the sdist that one test skips, saying why).  Likewise Mermaid's parser, which
# tests/emit/test_mermaid.py reads the flowcharts back with, is installed with npm into .cache/mermaid.
test: install
	@$(BIN)/python -m tests.peer.fetch
	@$(BIN)/python -m tests.emit.mermaid_fetch
	$(BIN)/python -m pytest

# Harvest throughput and cold queries (bench/run.py), then walks on the 1M-node / 5M-edge graph against
# SQLite, networkx and a compiled BFS (bench/graph.py: about 2 minutes on 2 cores once its inputs are
# cached in bench-out/; `make bench BENCH_ARGS=--small` for a quick run on a 100k-node graph), then a
# table answer with and without a walkplan on that graph (bench/plans.py), then `lineage serve` answering that
# graph's deep queries over loopback (bench/serve.py), then a harvest of a generated query log of a million
# rows: rows/s and peak RSS (bench/querylog.py: about a minute; its log is cached in bench-out/), and
# OpenLineage events pushed a second to a local consumer (bench/push.py), and the harvest on a local Spark against
# the local one (bench/spark.py: about 2 minutes; skipped without pyspark).
bench: install
	$(BIN)/python bench/harvest.py
	$(BIN)/python bench/run.py
	$(BIN)/python bench/graph.py $(BENCH_ARGS)
	$(BIN)/python bench/plans.py $(BENCH_ARGS)
	$(BIN)/python bench/serve.py $(BENCH_ARGS)
	$(BIN)/python bench/querylog.py
	$(BIN)/python bench/push.py
	$(BIN)/python bench/spark.py

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

clean:
	rm -rf $(VENV) .lineage demo.graphml demo.svg demo.html bench-out .pytest_cache .cache
