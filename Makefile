# pid's build. `make demo` shows pid at work; `make test` runs every test.
GO ?= go
BIN := bin

.PHONY: all build test vet demo bench bench-vs-pi clean

all: build

build:
	$(GO) build -o $(BIN)/pid ./cmd/pid

vet:
	$(GO) vet ./...

# Every test: Go tests with the race detector (fixtures and real-binary tests included), then
# the real editor clients (vscode-jsonrpc under node, headless Neovim), the Neovim plugin's
# headless test, the ACP face with the official ACP SDK (every message validated against the
# schema), and the VS Code extension's type check and tests, all against bin/pid.
# scripts/install-test-deps.sh installs what the clients need on a fresh machine.
test: vet build
	bash scripts/install-test-deps.sh
	$(GO) test -race -count=1 ./...
	bash test/clients/run.sh
	bash editor/nvim/test/run.sh
	cd test/acp && PID_BIN="$(CURDIR)/$(BIN)/pid" timeout -k 5 120 node --test --test-reporter=spec
	cd editor/vscode && npm run typecheck && PID_BIN=$(CURDIR)/$(BIN)/pid timeout -k 5 180 npm test

# The newcomer's first command: pid driven through a scripted session over real pipes.
demo: build
	$(GO) run ./cmd/piddemo -pid $(BIN)/pid

clean:
	rm -rf $(BIN)

# Benchmarks (see docs/performance.md). `make bench` runs pid's tool-execution benchmark;
# `make bench-vs-pi` runs pi's (from PI_BENCH_DIR, installed under .cache/pibench) and pid's
# back to back and prints the pi/pid ratios. BENCH_ARGS passes flags to both, e.g.
# `make bench-vs-pi BENCH_ARGS="--reps 3 --warmup 3"`.
PI_BENCH_DIR ?= ../shared/bench/pi
BENCH_ARGS ?=

bench:
	$(GO) run ./cmd/pidbench $(BENCH_ARGS)

bench-vs-pi:
	GO="$(GO)" PI_BENCH_DIR="$(PI_BENCH_DIR)" BENCH_ARGS="$(BENCH_ARGS)" ./scripts/bench-vs-pi.sh
