#!/usr/bin/env bash
# The body of `make test`: the Go tests (race detector, fixtures and real-binary tests
# included) run side by side with the clients' tests (vscode-jsonrpc under node, the Neovim
# plugin headless, the ACP face with the official SDK, the reference MCP server, the VS Code
# extension's type check and tests) and the end-to-end tests in a real VS Code and a real
# Neovim. Both halves mostly wait (on the daemons they start, on a browser): one after the
# other they kept the 2-core machine about a third busy for 12 minutes. The clients' output
# streams as it comes; the Go tests' is printed when both halves are done. It fails when
# either half fails. Run from the repository's root by make (GO and BIN come from it).
# PID_REQUIRE_SANDBOX=1: the sandbox tests (sandbox/, workspace/launch, tools/, cmd/pid) fail instead of
# skipping on a kernel that cannot give pid's sandbox (no Landlock, no user namespaces), so
# make test is never green on a machine where the sandbox went untested.
# GORACE=atexit_sleep_ms=0: a program built with -race sleeps a second as it exits (so that
# other goroutines' race reports can still print), and every test binary, every race-built
# pid the tests start and every sandbox helper they re-execute paid it: 20-40% of an rpc test
# that starts daemons (TestTornLastLine 4.6 s -> 2.6 s). A race is reported when it happens,
# and still makes the program exit 66, so nothing is lost.
export GORACE=atexit_sleep_ms=0
set -uo pipefail
GO=${GO:-go}
BIN=${BIN:-$PWD/bin}
golog=$(mktemp)
trap 'rm -f "$golog"' EXIT

# The Go lane. ./rpc/ is named first so that its tests start first: they are the longest
# package by far (450-500 s of a 735 s lane, mostly waiting on the daemons they start), and
# in ./...'s order they started late, after most of the others had run. vet and lint come
# after the tests in this lane, and the six platforms' builds (cross) at the end of the
# clients' lane, rather than all three before every lane: they kept both lanes waiting about
# three minutes (make test 15.5 min -> 14.2 min at load 6-17 with all three after the Go
# tests, whose lane then ended last, at 827 s against 682 s; split between the two lanes as
# here, 12.2 min at load 9-16).
start=$SECONDS
go_lane() {
	PID_REQUIRE_SANDBOX=1 PID_REQUIRE_CORPUS_TOOLS=1 "$GO" test -race -count=1 -timeout 25m ./rpc/ ./...
	local rc=$?
	echo "(the Go tests ended $((SECONDS - start)) s after the start)"
	echo "=== make vet lint ==="
	make --no-print-directory vet lint GO="$GO" || rc=1
	echo "(vet and lint ended $((SECONDS - start)) s after the start)"
	return $rc
}
go_lane >"$golog" 2>&1 &
gopid=$!

# The Neovim plugin's headless test on the newer Neovims too (0.10 and the newest, fetched by
# scripts/install-test-deps.sh): Debian here has 0.7.2, the plugin's floor, and most people run
# 0.10+. They run one after the other beside the clients' lane (each mostly waits on pid).
newer_nvims() {
	set -e
	for suite in trixie sid; do
		# Without it PATH would fall back to Debian's 0.7.2, and this lane pass on the wrong Neovim.
		[ -x ".cache/nvim/$suite/nvim" ] || { echo "no .cache/nvim/$suite/nvim: scripts/install-test-deps.sh did not install it"; return 1; }
		echo "=== the Neovim plugin's headless test on $(.cache/nvim/$suite/nvim --version | head -n1) ==="
		PATH="$PWD/.cache/nvim/$suite:$PATH" NVIM_TIMEOUT=300 bash editor/nvim/test/run.sh
	done
}
nvimlog=$(mktemp)
trap 'rm -f "$golog" "$nvimlog"' EXIT
( (newer_nvims); rc=$?; echo "(the newer Neovims' lane ended $((SECONDS - start)) s after the start)"; exit $rc ) >"$nvimlog" 2>&1 &
nvimpid=$!

clients() {
	set -e
	bash test/clients/run.sh
	bash editor/nvim/test/run.sh
	PID_BIN="$BIN/pid" bash editor/nvim/test/health.sh
	(cd test/acp && PID_BIN="$BIN/pid" PID_TESTMCP_BIN="$BIN/pidtestmcp" timeout -k 5 120 node --test --test-reporter=spec)
	(cd test/mcp && PID_BIN="$BIN/pid" timeout -k 5 120 node --test --test-reporter=spec)
	(cd editor/vscode && npm run typecheck && PID_BIN="$BIN/pid" timeout -k 5 180 npm test)
	make --no-print-directory e2e
	echo "=== make cross ==="
	make --no-print-directory cross GO="$GO"
}
(clients)
clientsrc=$?
echo "(the clients' and end-to-end lane ended $((SECONDS - start)) s after the start)"

wait "$nvimpid"
nvimrc=$?
echo
cat "$nvimlog"
wait "$gopid"
gorc=$?
echo
echo "=== go test -race -count=1 ./rpc/ ./..., then make vet lint (run alongside the tests above) ==="
cat "$golog"
echo
echo "=== make test: go test, vet and lint exit $gorc, clients, end-to-end and cross exit $clientsrc, Neovim 0.10 and newest exit $nvimrc ==="
[ "$gorc" -eq 0 ] && [ "$clientsrc" -eq 0 ] && [ "$nvimrc" -eq 0 ]
