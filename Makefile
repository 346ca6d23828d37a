# spaseq: `make run` runs the smart-grid example, `make test` runs the test suite.
# Both create .venv and install the project into it first; nothing else is needed.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
SG     := fixtures/smartgrid
SGKB   := build/smartgrid-kb

.PHONY: run test lint bench bench-quick check-java clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

check-java:
	@command -v java >/dev/null 2>&1 || { \
	  echo "note: Java is not installed; the Spark knowledge-base jobs will need it:"; \
	  echo "      apt-get install -y openjdk-17-jre-headless"; }

# the example's knowledge base, loaded by the Spark job into an embedded store (reused when
# kb.nt has not changed since)
$(SGKB)/CURRENT: $(SG)/kb.nt | $(STAMP)
	$(BIN)/spaseq kb load $(SG)/kb.nt --store $(SGKB) --graph http://smartgrid.org/db

run: $(STAMP) check-java $(SGKB)/CURRENT
	$(BIN)/spaseq run $(SG)/query.rq \
	  --stream S1=$(SG)/power.trig --stream S2=$(SG)/weather.trig --stream S3=$(SG)/storage.trig \
	  --kb-store $(SGKB) --format table

lint: $(STAMP)
	$(BIN)/ruff check engine plugin extension_functions tests benchmarks

# The benchmark suite (benchmarks/README.md): JSON and a PNG chart in benchmarks/results/.
BENCH_STAMP := $(VENV)/.bench-stamp
$(BENCH_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[test,bench]'
	touch $(BENCH_STAMP)

bench: $(BENCH_STAMP)
	$(BIN)/python -m benchmarks

bench-quick: $(BENCH_STAMP)
	$(BIN)/python -m benchmarks --quick

test: $(STAMP) check-java lint
	HYPOTHESIS_PROFILE=ci $(BIN)/python -m pytest

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .ruff_cache .hypothesis
