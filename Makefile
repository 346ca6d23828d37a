# spaseq: `make run` runs the smart-grid example, `make test` runs the test suite.
# Both create .venv and install the project into it first; nothing else is needed.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
SG     := fixtures/smartgrid
SGKB   := build/smartgrid-kb

.PHONY: run test lint lint-rust test-rust docs dist bench bench-quick check-java check-rust kb-prepare browser broker clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

NATIVE := engine/native
# every crate of the workspace (engine/native/*/): its sources and manifests
NATIVE_SRC := $(shell find $(NATIVE) -path $(NATIVE)/target -prune -o \( -name '*.rs' -o -name Cargo.toml \) -print) $(NATIVE)/Cargo.lock
# Python writes bytecode (to __pycache__, which git ignores) even where the environment says
# not to (PYTHONDONTWRITEBYTECODE): the suite starts many spaseq and Spark worker
# processes, each of which would otherwise compile every module it imports again
unexport PYTHONDONTWRITEBYTECODE
# the PyO3 build and clippy find Python here; rustup's default place for cargo is searched too
export PYO3_PYTHON := $(abspath $(BIN)/python)
export PATH := $(HOME)/.cargo/bin:$(PATH)

# pip builds the native core (setuptools-rust, release mode) into the editable install
$(STAMP): pyproject.toml $(NATIVE_SRC) | $(BIN)/python check-rust
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,spark,server,rdflib,arrow,mqtt]'
	touch $(STAMP)

check-rust:
	@command -v cargo >/dev/null 2>&1 || { \
	  echo "error: building spaseq needs a Rust toolchain (cargo) for its native core: https://rustup.rs"; \
	  exit 2; }

check-java:
	@command -v java >/dev/null 2>&1 || { \
	  echo "note: Java is not installed; the Spark knowledge-base jobs will need it:"; \
	  echo "      apt-get install -y openjdk-17-jre-headless"; }

# the class archive small Spark jobs start from (spaseq kb prepare: recorded once per JDK and
# PySpark, ~30 s; instant when there); without Java or if recording fails, the jobs start slower
kb-prepare: $(STAMP)
	@if command -v java >/dev/null 2>&1 || [ -n "$$JAVA_HOME" ]; then \
	  $(BIN)/spaseq kb prepare || echo "note: no class archive: the Spark jobs will start slower"; \
	else echo "note: no Java: the class archive for the Spark jobs is not recorded"; fi

# the example's knowledge base, loaded by the Spark job into an embedded store (reused when
# kb.nt has not changed since)
$(SGKB)/CURRENT: $(SG)/kb.nt | $(STAMP)
	$(BIN)/spaseq kb load $(SG)/kb.nt --store $(SGKB) --graph http://smartgrid.org/db

run: $(STAMP) check-java kb-prepare $(SGKB)/CURRENT
	$(BIN)/spaseq run $(SG)/query.rq \
	  --stream S1=$(SG)/power.trig --stream S2=$(SG)/weather.trig --stream S3=$(SG)/storage.trig \
	  --kb-store $(SGKB) --format table
	@echo "note: spaseq is in $(BIN): run $(BIN)/spaseq, or 'source $(BIN)/activate' first"

lint: $(STAMP) lint-rust
	$(BIN)/ruff check engine plugin extension_functions tests benchmarks examples docs

lint-rust: $(STAMP)
	cd $(NATIVE) && cargo fmt --check && cargo clippy --all-targets --quiet -- -D warnings

test-rust: $(STAMP)
	cd $(NATIVE) && cargo test --quiet --workspace --exclude spaseq-python

# The benchmark suite (benchmarks/README.md): JSON and a PNG chart in benchmarks/results/.
BENCH_STAMP := $(VENV)/.bench-stamp
$(BENCH_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[test,spark,server,rdflib,arrow,mqtt,bench]'
	touch $(BENCH_STAMP)

bench: $(BENCH_STAMP)
	$(BIN)/python -m benchmarks

bench-quick: $(BENCH_STAMP)
	$(BIN)/python -m benchmarks --quick

# Debian's PACKAGES installed (as root, with apt-get) unless the shell test CHECK finds them;
# without root or apt-get, a note says which tests are skipped: $(call debian,CHECK,PACKAGES,TESTS)
debian = @{ $(1); } || { \
	  if command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
	    apt-get install -y -q $(2) >/dev/null 2>&1 || \
	      { apt-get update -q >/dev/null && apt-get install -y -q $(2) >/dev/null; }; \
	  else \
	    echo "note: $(2) missing: the $(3) tests are skipped"; \
	    echo "      apt-get install -y $(2)"; \
	  fi; }

# the browser tests (tests/server/test_browser.py) drive Debian's Chromium, headless
browser:
	$(call debian,command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1,chromium chromium-driver,browser)

# the MQTT tests (tests/mqtt/) start Debian's mosquitto broker on 127.0.0.1 themselves, and
# run the README's mosquitto_pub and mosquitto_sub commands
broker:
	$(call debian,{ command -v mosquitto >/dev/null 2>&1 || [ -x /usr/sbin/mosquitto ]; } && command -v mosquitto_pub >/dev/null 2>&1,mosquitto mosquitto-clients,MQTT)

# an sdist and an abi3 wheel (CPython 3.10+, this platform) in dist/, built from this tree
# (pypa/build; the wheel's Rust build reuses this tree's release artifacts): the wheel installs
# where there is no Rust (tests/docs/test_wheel.py)
dist: $(STAMP)
	rm -rf dist build/lib.* build/bdist.* && mkdir -p build
	$(BIN)/python -m build --sdist --wheel --outdir dist . >build/dist.log 2>&1 || \
	  { tail -40 build/dist.log; exit 1; }
	@ls dist

# the API reference (pdoc) built from the docstrings into build/docs; any warning fails it
docs: $(STAMP)
	$(BIN)/python docs/api_reference.py build/docs

test: $(STAMP) check-java kb-prepare browser broker lint test-rust docs
	HYPOTHESIS_PROFILE=ci $(BIN)/python -m pytest -n 2 --dist loadfile

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .ruff_cache .hypothesis $(NATIVE)/target engine/*.so
