# fibkit: `make bench` runs the main job and `make test` every test; both first
# run `make setup`, which installs what they need (crates, the plot font, a
# C++ compiler for the C header's check, and a Python virtualenv for the
# bindings and the comparisons).
CARGO ?= cargo
PYTHON ?= python3
# The Python bindings' virtualenv (maturin, numpy, pytest; pytricia and pyasn
# to compare; pandas and pyarrow for the data-frame paths).
VENV := $(CURDIR)/target/py-venv

.PHONY: setup bench bench-lookup bench-parquet bench-records bench-serve install test test-python python test-c c install-c bench-c test-exhaustive test-loom test-miri test-tsan lint lint-polars fuzz fuzz-cmin

# The font is for `fibkit bench --plot` (text drawn from a TTF read at run time).
FONT ?= /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf

# The host's target triple: Miri and ThreadSanitizer build for it by name.
HOST := $(shell rustc -vV | sed -n 's/^host: //p')

# Each step says what it installs and why, on one line, before installing
# (cargo fetch speaks for itself); a step whose tools or modules are already
# there does nothing and says nothing, so that `make test` after the first
# run starts at once.
# HAS_MODULES exits 0 when the virtualenv finds every module named after it.
HAS_MODULES = $(VENV)/bin/python -c 'import importlib.util as u, sys; sys.exit(any(u.find_spec(m) is None for m in sys.argv[1:]))'
# APT_INSTALL installs Debian packages, updating the package lists only when
# the first try fails (apt-get missing: fails).
APT_INSTALL = command -v apt-get >/dev/null && { apt-get install -y -q $(1) >/dev/null || \
  { apt-get update -q >/dev/null && apt-get install -y -q $(1) >/dev/null; }; }

setup:
	$(CARGO) fetch
	@test -f $(FONT) || { echo "setup: fonts-dejavu-core, the font of fibkit bench --plot (apt-get)"; \
	  $(call APT_INSTALL,fonts-dejavu-core); } || \
	  echo "warning: no DejaVu Sans: install fonts-dejavu-core or set FIBKIT_FONT for fibkit bench --plot"
	@test -x $(VENV)/bin/python || { echo "setup: a Python virtualenv in target/py-venv for the bindings and their tests"; \
	  $(PYTHON) -m venv $(VENV); }
	@{ test -x $(VENV)/bin/maturin && $(HAS_MODULES) numpy pytest; } || \
	  { echo "setup: maturin, numpy and pytest to build and test the Python bindings (pip)"; \
	    $(VENV)/bin/pip install -q maturin numpy pytest; }
	@$(HAS_MODULES) pytricia || { echo "setup: pytricia, which the Python tests compare fibkit with (pip)"; \
	  $(VENV)/bin/pip install -q pytricia; } || \
	  echo "warning: pytricia did not install: the Python tests skip their comparison with it"
	@$(HAS_MODULES) pyasn || { echo "setup: pyasn, which make bench-lookup times fibkit against (pip)"; \
	  $(VENV)/bin/pip install -q pyasn; } || \
	  echo "warning: pyasn did not install: make bench-lookup needs it"
	@$(HAS_MODULES) pandas pyarrow dask distributed || \
	  { echo "setup: pandas, pyarrow and dask for the data-frame paths and the README's Dask example (pip)"; \
	    $(VENV)/bin/pip install -q pandas pyarrow "dask[dataframe,distributed]"; } || \
	  echo "warning: pandas, pyarrow or dask did not install: their Python tests skip"
	@$(HAS_MODULES) maxminddb mmdb_writer _geoip_geolite2 || \
	  { echo "setup: maxminddb, mmdb-writer and python-geoip-geolite2 (a GeoLite2-City file), which the records tests compare fibkit with (pip)"; \
	    $(VENV)/bin/pip install -q maxminddb mmdb-writer python-geoip-geolite2; } || \
	  echo "warning: maxminddb, mmdb-writer or python-geoip-geolite2 did not install: the MaxMind DB tests skip"
	@$(HAS_MODULES) duckdb duckdb_extensions duckdb_extension_inet polars polars_iptools || \
	  { echo "setup: duckdb with its inet extension, polars and polars-iptools, for the records' SQL function tests and make bench-records (pip)"; \
	    $(VENV)/bin/pip install -q "duckdb==1.5.5" "duckdb-extensions==1.5.5" "duckdb-extension-inet==1.5.5" "polars==2.1.0" "polars-iptools==0.2.2"; } || \
	  echo "warning: duckdb or polars did not install: their tests skip and make bench-records cannot run"
	@$(HAS_MODULES) ray || { echo "setup: ray for the README's Ray example (pip)"; \
	  $(VENV)/bin/pip install -q ray; } || \
	  echo "warning: ray did not install: the README's Ray example is skipped"
	@command -v java >/dev/null || { echo "setup: openjdk-17-jre-headless, the Java of the README's Spark example (apt-get)"; \
	  $(call APT_INSTALL,openjdk-17-jre-headless); } || \
	  echo "warning: no Java: the README's Spark example is skipped"
	@$(HAS_MODULES) pyspark || { echo "setup: pyspark for the README's Spark example (pip)"; \
	  $(VENV)/bin/pip install -q pyspark; } || \
	  echo "warning: pyspark did not install: the README's Spark example is skipped"
	@{ test -x /usr/sbin/bird && command -v gobgpd >/dev/null; } || \
	  { echo "setup: bird2 and gobgpd, the routing daemons fibkit's BGP tests peer with (apt-get)"; \
	    $(call APT_INSTALL,bird2 gobgpd); } || \
	  echo "warning: bird2 or gobgpd did not install: the BGP tests that need them say skipped"
	@command -v ip >/dev/null || { echo "setup: iproute2, whose ip the kernel mirror's tests run in network namespaces (apt-get)"; \
	  $(call APT_INSTALL,iproute2); } || \
	  echo "warning: no ip: the kernel mirror's tests (fibkit-sources, tests/netlink.rs) are skipped"
	@command -v curl >/dev/null || { echo "setup: curl, the HTTP client fibkit serve's tests ask with (apt-get)"; \
	  $(call APT_INSTALL,curl); } || \
	  echo "warning: no curl: fibkit serve's tests that ask with it are skipped"
	@command -v wrk >/dev/null || { echo "setup: wrk, which make bench-serve loads fibkit serve with (apt-get)"; \
	  $(call APT_INSTALL,wrk); } || \
	  echo "warning: no wrk: make bench-serve cannot run"
	@command -v $(CXX) >/dev/null || { echo "setup: g++, to check that fibkit.h compiles as C++ in make test-c (apt-get)"; \
	  $(call APT_INSTALL,g++); } || \
	  echo "warning: no C++ compiler: make test-c cannot check that fibkit.h compiles as C++"

bench: setup
	$(CARGO) run --release -p fibkit-cli -- bench

# The shared data folder (real tables; a relative path is taken from the
# repository root). Every test, example and command that reads it looks
# here: FIBKIT_DATA=/an/empty/dir runs them all without the data.
FIBKIT_DATA ?= ../shared/data
export FIBKIT_DATA

# `fibkit lookup` on 50 million random addresses against a Python loop with
# pyasn (needs $(FIBKIT_DATA)/routeviews-2014-05-13.ipasn.gz, or TABLE=...).
TABLE ?= $(FIBKIT_DATA)/routeviews-2014-05-13.ipasn.gz
bench-lookup: setup
	$(CARGO) build --release -p fibkit-cli
	$(VENV)/bin/python crates/fibkit-cli/bench_lookup.py target/release/fibkit $(TABLE)

# fibkit serve's figures: binary batches, single addresses beside a server
# answering a constant (the ceiling), a snapshot written and opened.
bench-serve: setup
	$(CARGO) build --release -p fibkit-cli --bin fibkit --example constant_http
	$(VENV)/bin/python crates/fibkit-cli/bench_serve.py target/release/fibkit target/release/examples/constant_http $(TABLE)

# The `fibkit` command, into ~/.cargo/bin.
install:
	$(CARGO) install --locked --path crates/fibkit-cli

test: setup
	$(CARGO) test --workspace --all-targets
	$(CARGO) test --workspace --doc
	$(MAKE) test-c
	$(MAKE) test-python

# The C library (crates/fibkit-c): libfibkit.so and libfibkit.a in
# target/release, the header in crates/fibkit-c/include.
C_HEADER := crates/fibkit-c/include/fibkit.h
C_FLAGS := -std=c11 -O2 -Wall -Wextra -Werror -pedantic -pthread -Icrates/fibkit-c/include
VERSION := $(shell sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
PREFIX ?= /usr/local

c:
	$(CARGO) build --release -p fibkit-c

# Installs the library, the header and fibkit.pc under PREFIX (DESTDIR
# for staging), for `pkg-config --cflags --libs fibkit`.
install-c: c
	install -d $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/include
	install -m 644 target/release/libfibkit.a $(DESTDIR)$(PREFIX)/lib/
	install -m 755 target/release/libfibkit.so $(DESTDIR)$(PREFIX)/lib/
	install -m 644 $(C_HEADER) $(DESTDIR)$(PREFIX)/include/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' crates/fibkit-c/fibkit.pc.in \
	  > $(DESTDIR)$(PREFIX)/lib/pkgconfig/fibkit.pc

# fibkit through the C API beside DPDK's rte_lpm and rte_fib on one table
# (crates/fibkit-c/examples/bench_dpdk.c; DPDK from Debian's libdpdk-dev,
# fibkit alone when pkg-config finds no libdpdk), then `fibkit bench` on the
# same engines, keys and tests, its figures beside the C API's
# (bench_compare.py). ARGS: e.g. --nexthops 239.
# DPDK's headers are GNU C, not ISO C: the benchmark builds as gnu11.
BENCH_C_FLAGS := -std=gnu11 -O2 -march=native -Wall -Wextra -pthread -Icrates/fibkit-c/include
bench-c: c
	$(CARGO) build --release -p fibkit-cli
	mkdir -p target/c
	@if pkg-config --exists libdpdk; then \
	  echo "building with DPDK $$(pkg-config --modversion libdpdk)"; \
	  $(CC) $$(pkg-config --cflags libdpdk) $(BENCH_C_FLAGS) -DFIBKIT_WITH_DPDK crates/fibkit-c/examples/bench_dpdk.c \
	    target/release/libfibkit.a $$(pkg-config --libs libdpdk) -ldl -lm -o target/c/bench_dpdk; \
	else \
	  echo "pkg-config finds no libdpdk (apt-get install libdpdk-dev): building for fibkit alone"; \
	  $(CC) $(BENCH_C_FLAGS) crates/fibkit-c/examples/bench_dpdk.c target/release/libfibkit.a -ldl -lm \
	    -o target/c/bench_dpdk; \
	fi
	target/c/bench_dpdk $(TABLE) $(ARGS) --json target/c/bench_dpdk.json
	$(PYTHON) crates/fibkit-c/examples/bench_compare.py target/release/fibkit $(TABLE) target/c/bench_dpdk.json $(ARGS)

# The C tests: the header compiles warning-free as C11 and as C++11; the
# test program runs linked to libfibkit.a and to libfibkit.so (on the 2014
# table too when $(FIBKIT_DATA) has it), the C example of docs/c.md runs, and
# a C program follows BIRD and the kernel's table (tests/sources.rs).
# The library is built with the workspace's features and test targets, as
# make test's cargo test builds them: with `-p fibkit-c` alone cargo
# resolves other features and builds the dependencies again (4 minutes of
# CI on two cores).
test-c:
	$(CARGO) build --profile test --workspace --all-targets
	$(CC) -std=c11 -Wall -Wextra -Werror -pedantic -fsyntax-only -x c $(C_HEADER)
	$(CXX) -std=c++11 -Wall -Wextra -Werror -pedantic -fsyntax-only -x c++ $(C_HEADER)
	mkdir -p target/c
	$(CC) $(C_FLAGS) crates/fibkit-c/tests/test_fibkit.c target/debug/libfibkit.a -ldl -lm -o target/c/test_fibkit_static
	$(CC) $(C_FLAGS) crates/fibkit-c/tests/test_fibkit.c -Ltarget/debug -lfibkit -Wl,-rpath,$(CURDIR)/target/debug \
	  -o target/c/test_fibkit_shared
	target/c/test_fibkit_static $(TABLE)
	target/c/test_fibkit_shared
	awk '/^```c$$/ {keep = 1; next} /^```$$/ {keep = 0} keep' docs/c.md > target/c/readme_example.c
	$(CC) $(C_FLAGS) target/c/readme_example.c target/debug/libfibkit.a -ldl -lm -o target/c/readme_example
	test "$$(target/c/readme_example | tr '\n' ' ')" = "2 2 1 0 3 no route yet "
	FIBKIT_C_LIBRARY=$(CURDIR)/target/debug/libfibkit.a $(CARGO) test --workspace --test sources

# Builds the bindings (crates/fibkit-py, outside the workspace) into the
# virtualenv, optimised, as `import fibkit`.
python: setup
	@echo "python: maturin builds the bindings (release; about two minutes from scratch on two cores)"
	cd crates/fibkit-py && VIRTUAL_ENV=$(VENV) CARGO_TARGET_DIR=$(CURDIR)/target/py $(VENV)/bin/maturin develop --release
	@echo "python: maturin builds the Polars plugin, fibkit-polars (release; Polars itself makes it long the first time)"
	cd crates/fibkit-polars && VIRTUAL_ENV=$(VENV) CARGO_TARGET_DIR=$(CURDIR)/target/polars $(VENV)/bin/maturin develop --release

# tests/test_client.py runs target/debug/fibkit serve (or target/release's,
# if newer) for fibkit.Client to ask: it is built first, as make test's
# cargo test builds it (the test profile, the workspace's targets), so that
# after make test it is there already; `cargo build -p fibkit-cli` would
# build every dependency again in the dev profile.
test-python: python
	$(CARGO) build --profile test --workspace --all-targets
	$(VENV)/bin/pytest -q --doctest-modules crates/fibkit-py/python crates/fibkit-polars/python crates/fibkit-py/tests

# Records beside their anchors (maxminddb, DuckDB's inet join,
# polars-iptools) on GeoLite2-City: a benchmark, minutes; not part of make test.
bench-records: python
	$(VENV)/bin/python crates/fibkit-py/bench_records.py

# The Parquet-to-Parquet pipelines (fibkit.dask.enrich_parquet, Spark's
# mapInArrow) per worker against one process on the same files, and the
# patterns that send rows between processes: minutes; not part of make test.
bench-parquet: python
	$(VENV)/bin/python crates/fibkit-py/bench_parquet.py

# clippy on the Polars plugin checks all of Polars first (8 minutes on two
# cores): a target of its own, run before a change to the plugin lands, so
# that CI's lint stays within its time.
lint-polars:
	$(CARGO) fmt --manifest-path crates/fibkit-polars/Cargo.toml --check
	CARGO_TARGET_DIR=$(CURDIR)/target/polars $(CARGO) clippy --release --manifest-path crates/fibkit-polars/Cargo.toml -- -D warnings

# The loom model of the reclamation protocol (crates/fibkit/src/router/model.rs):
# the protocol's atomics become loom's under `--cfg loom`, in a target
# directory of their own.
test-loom:
	RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=$(CURDIR)/target/loom $(CARGO) test --release -p fibkit --lib router::model

# Miri (nightly, with its miri and rust-src components): every engine on a
# tiny table of both families, scalar and batch lookups through the
# portable paths (FIBKIT_SIMD=off) and its file written and opened, and
# every in-place engine following updates through the router, in place and
# in atomic batches (compiled::tiny), and the lookup arrays' and the SIMD
# helpers' own tests
# (those reach the AVX2 kernels directly): every `unsafe` block they reach
# checked for undefined behaviour. MIRI_TESTS chooses others (the engines'
# own unit tests build tables too large to interpret in minutes), and
# FIBKIT_TINY_ENGINES=d16r,lulea (say) runs compiled::tiny's pairs that hold
# one of those engines, and those engines' updates (MIRI_TESTS="compiled::tiny
# --nocapture" shows each as it ends). Not part of make test.
# Aliasing is checked with Tree Borrows: under Stacked Borrows, Miri's
# default, the per-entry loops over a DXR's 2^16 direct entries ran about
# ten times slower (docs/hardening.md), so that compiled::tiny's first pair
# did not end in 20 minutes; MIRI_BORROWS= checks with Stacked Borrows.
# Interior mutability is tracked by reference, not by byte: byte by byte,
# Miri visits every element of an array of atomics each time a reference
# to the array is made (each lookup makes one): 2,000 reads of a 2^14-entry
# array took 69 s, against 0.5 s by reference. The lookup arrays hold
# atomics only, where the two ways agree (docs/hardening.md);
# MIRI_BORROWS=-Zmiri-tree-borrows tracks bytes.
# Leaks are not reported: opening a file checks its tables on rayon's
# global pool, whose threads live until the process ends.
MIRI_TESTS ?= compiled::tiny base::simd base::mem
MIRI_BORROWS ?= -Zmiri-tree-borrows -Zmiri-tree-borrows-no-precise-interior-mut
# cargo miri runs a test with the environment of the test's build, not of
# the run, MIRIFLAGS among it, and cargo sees no change that would build it
# again: the target cleans fibkit's own build first (its dependencies stay),
# and FIBKIT_TINY_ENGINES goes in as Miri's own setting. Two runs at once
# each want a folder of their own (MIRI_DIR=target/miri-b), or the second's
# clean removes the first's build.
MIRI_DIR ?= $(CURDIR)/target/miri
MIRI_ENGINES = $(if $(FIBKIT_TINY_ENGINES),-Zmiri-env-set=FIBKIT_TINY_ENGINES=$(FIBKIT_TINY_ENGINES))
test-miri:
	@rustup +nightly component list --installed | grep -q '^miri' || \
	  { echo "test-miri: the nightly toolchain's miri and rust-src (rustup)"; rustup component add --toolchain nightly miri rust-src; }
	$(CARGO) +nightly clean -q -p fibkit --target-dir $(MIRI_DIR)/miri --target $(HOST)
	MIRIFLAGS="-Zmiri-disable-isolation -Zmiri-env-set=FIBKIT_SIMD=off -Zmiri-ignore-leaks $(MIRI_BORROWS) $(MIRI_ENGINES)" \
	  CARGO_TARGET_DIR=$(MIRI_DIR) \
	  $(CARGO) +nightly miri test -p fibkit --lib -- $(MIRI_TESTS)

# ThreadSanitizer (nightly, std rebuilt with it) on the tests that race
# readers against a writer: the router's readers during batches, atomic
# batches, IPv6 updated in place; the first report fails the target. The
# batch paths run portable (TSAN_SIMD=off): the sanitizer does not see a
# SIMD gather's reads, so it would report the nodes read after one as
# unordered with the writer (docs/hardening.md). Not part of make test.
TSAN_SIMD ?= off
test-tsan:
	@rustup +nightly component list --installed | grep -q '^rust-src' || \
	  { echo "test-tsan: the nightly toolchain's rust-src, to rebuild std with ThreadSanitizer (rustup)"; rustup component add --toolchain nightly rust-src; }
	RUSTFLAGS="-Zsanitizer=thread -C target-cpu=x86-64-v3" TSAN_OPTIONS="halt_on_error=1 report_signal_unsafe=0" FIBKIT_SIMD=$(TSAN_SIMD) \
	  CARGO_TARGET_DIR=$(CURDIR)/target/tsan $(CARGO) +nightly test -Zbuild-std --target $(HOST) -p fibkit \
	  --test updates --test atomic_batches --test updates6_live -- readers race generation

test-exhaustive:
	$(CARGO) test --release --workspace -- --ignored

# Fuzzing (cargo-fuzz, libFuzzer; fuzz/README.md): `make fuzz` runs each
# target of FUZZ_TARGETS (default: all) for FUZZ_SECONDS in turn, from its
# committed corpus fuzz/corpus/TARGET and its seeds fuzz/seeds/TARGET, new
# inputs going into the corpus; `make fuzz-cmin` then minimises each corpus
# in place, so that the next campaign starts where this one ended. cargo-fuzz
# needs nightly features: RUSTC_BOOTSTRAP lets the stable compiler give them.
FUZZ_SECONDS ?= 600
FUZZ_TARGETS ?= $(sort $(basename $(notdir $(wildcard fuzz/fuzz_targets/*.rs))))
FUZZ := RUSTC_BOOTSTRAP=1 $(CARGO) fuzz
# The longest input of a target: a compiled FIB seed is up to 314 KB, a BGP
# stream several messages of up to 4 KiB; 4 KiB else.
FUZZ_MAX_LEN = case $$target in (fib_file) echo 400000;; (bgp_session) echo 16384;; (*) echo 4096;; esac

fuzz:
	@command -v cargo-fuzz >/dev/null || { echo "fuzz: cargo-fuzz, the fuzz targets' runner (cargo install)"; \
	  $(CARGO) install cargo-fuzz; }
	@for target in $(FUZZ_TARGETS); do \
	  mkdir -p fuzz/corpus/$$target; \
	  seeds=$$(test -d fuzz/seeds/$$target && echo fuzz/seeds/$$target); \
	  echo "fuzz: $$target for $(FUZZ_SECONDS) s"; \
	  $(FUZZ) run -O $$target fuzz/corpus/$$target $$seeds -- \
	    -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 -max_len=$$($(FUZZ_MAX_LEN)) || exit 1; \
	done

# Corpus inputs past FUZZ_KEEP_KIB are not kept: fib_file's engine files of
# 185 to 314 KB, which its seeds bring back at each campaign's start, would
# make the corpus tens of MiB.
FUZZ_KEEP_KIB ?= 64

fuzz-cmin:
	@for target in $(FUZZ_TARGETS); do \
	  test -d fuzz/corpus/$$target || continue; \
	  echo "fuzz-cmin: $$target"; \
	  $(FUZZ) cmin -O $$target fuzz/corpus/$$target -- -max_len=$$($(FUZZ_MAX_LEN)) || exit 1; \
	  find fuzz/corpus/$$target -type f -size +$(FUZZ_KEEP_KIB)k -delete; \
	done
	du -sh --apparent-size fuzz/corpus

lint:
	$(CARGO) fmt --all --check
	$(CARGO) fmt --manifest-path crates/fibkit-py/Cargo.toml --check
	$(CARGO) fmt --manifest-path crates/fibkit-polars/Cargo.toml --check
	$(CARGO) fmt --manifest-path fuzz/Cargo.toml --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings
	CARGO_TARGET_DIR=$(CURDIR)/target/py $(CARGO) clippy --manifest-path crates/fibkit-py/Cargo.toml -- -D warnings
	for package in fibkit fibkit-cli fibkit-peers fibkit-c; do RUSTDOCFLAGS="-D warnings" $(CARGO) doc --no-deps -p $$package || exit 1; done
	RUSTDOCFLAGS="-D warnings" CARGO_TARGET_DIR=$(CURDIR)/target/py $(CARGO) doc --no-deps --manifest-path crates/fibkit-py/Cargo.toml
