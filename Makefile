# fibkit: `make bench` runs the main job and `make test` every test; both first
# run `make setup`, which installs what they need (crates, the plot font, and a
# Python virtualenv for the bindings and the comparisons).
CARGO ?= cargo
PYTHON ?= python3
# The Python bindings' virtualenv (maturin, numpy, pytest; pytricia and pyasn
# to compare; pandas and pyarrow for the data-frame paths).
VENV := $(CURDIR)/target/py-venv

.PHONY: setup bench bench-lookup install test test-python python test-exhaustive lint

# The font is for `fibkit bench --plot` (text drawn from a TTF read at run time).
FONT ?= /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf

setup:
	$(CARGO) fetch
	@test -f $(FONT) || { command -v apt-get >/dev/null && \
	  { apt-get install -y fonts-dejavu-core || { apt-get update && apt-get install -y fonts-dejavu-core; }; }; } || \
	  echo "warning: no DejaVu Sans: install fonts-dejavu-core or set FIBKIT_FONT for fibkit bench --plot"
	@test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q maturin numpy pytest
	@$(VENV)/bin/pip install -q pytricia || echo "warning: pytricia did not install: the Python tests skip their comparison with it"
	@$(VENV)/bin/pip install -q pyasn || echo "warning: pyasn did not install: make bench-lookup needs it"
	@$(VENV)/bin/pip install -q pandas pyarrow "dask[dataframe,distributed]" || echo "warning: pandas, pyarrow or dask did not install: their Python tests skip"
	@$(VENV)/bin/pip install -q ray || echo "warning: ray did not install: the README's Ray example is skipped"
	@command -v java >/dev/null || { command -v apt-get >/dev/null && \
	  { apt-get install -y -q openjdk-17-jre-headless || { apt-get update -q && apt-get install -y -q openjdk-17-jre-headless; }; }; } || \
	  echo "warning: no Java: the README's Spark example is skipped"
	@$(VENV)/bin/pip install -q pyspark || echo "warning: pyspark did not install: the README's Spark example is skipped"

bench: setup
	$(CARGO) run --release -p fibkit-cli -- bench

# `fibkit lookup` on 50 million random addresses against a Python loop with
# pyasn (needs ../shared/data/routeviews-2014-05-13.ipasn.gz, or TABLE=...).
TABLE ?= ../shared/data/routeviews-2014-05-13.ipasn.gz
bench-lookup: setup
	$(CARGO) build --release -p fibkit-cli
	$(VENV)/bin/python crates/fibkit-cli/bench_lookup.py target/release/fibkit $(TABLE)

# The `fibkit` command, into ~/.cargo/bin.
install:
	$(CARGO) install --locked --path crates/fibkit-cli

test: setup
	$(CARGO) test --workspace --all-targets
	$(CARGO) test --workspace --doc
	$(MAKE) test-python

# Builds the bindings (crates/fibkit-py, outside the workspace) into the
# virtualenv, optimised, as `import fibkit`.
python: setup
	cd crates/fibkit-py && VIRTUAL_ENV=$(VENV) CARGO_TARGET_DIR=$(CURDIR)/target/py $(VENV)/bin/maturin develop --release --quiet

test-python: python
	$(VENV)/bin/pytest -q --doctest-modules crates/fibkit-py/python crates/fibkit-py/tests

test-exhaustive:
	$(CARGO) test --release --workspace -- --ignored

lint:
	$(CARGO) clippy --workspace --all-targets -- -D warnings
	CARGO_TARGET_DIR=$(CURDIR)/target/py $(CARGO) clippy --manifest-path crates/fibkit-py/Cargo.toml -- -D warnings
