# fibkit: `make bench` runs the main job and `make test` every test; both first
# run `make setup`, which installs what they need (crates, the plot font).
CARGO ?= cargo

.PHONY: setup bench test test-exhaustive lint

# The font is for `fibkit bench --plot` (text drawn from a TTF read at run time).
FONT ?= /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf

setup:
	$(CARGO) fetch
	@test -f $(FONT) || { command -v apt-get >/dev/null && \
	  { apt-get install -y fonts-dejavu-core || { apt-get update && apt-get install -y fonts-dejavu-core; }; }; } || \
	  echo "warning: no DejaVu Sans: install fonts-dejavu-core or set FIBKIT_FONT for fibkit bench --plot"

bench: setup
	$(CARGO) run --release -p fibkit-cli -- bench

test: setup
	$(CARGO) test --workspace --all-targets
	$(CARGO) test --workspace --doc

test-exhaustive:
	$(CARGO) test --release --workspace -- --ignored

lint:
	$(CARGO) clippy --workspace --all-targets -- -D warnings
