# fibkit: `make setup` installs what the build needs, `make bench` runs the
# main job, `make test` runs every test.
CARGO ?= cargo

.PHONY: setup bench test test-exhaustive lint

setup:
	$(CARGO) fetch

bench:
	$(CARGO) run --release -p fibkit-cli -- bench

test:
	$(CARGO) test --workspace --all-targets
	$(CARGO) test --workspace --doc

test-exhaustive:
	$(CARGO) test --release --workspace -- --ignored

lint:
	$(CARGO) clippy --workspace --all-targets -- -D warnings
