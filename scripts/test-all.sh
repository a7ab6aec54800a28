#!/usr/bin/env bash
# The body of `make test`: three lanes side by side, each mostly waiting on the daemons,
# editors and browser it starts (one after the other they kept the 2-core machine about a
# third busy):
#   - Go: the Go tests (race detector, fixtures and real-binary tests included), the longest;
#   - clients: vscode-jsonrpc under node, the Neovim plugin headless (on Debian's 0.7.2, then
#     0.10 and the newest), the ACP face with the official SDK, the reference MCP server, the
#     VS Code extension's type check and tests, then vet, lint and the six platforms' builds
#     (cross), which need no lane of their own;
#   - e2e: the end-to-end tests in a real VS Code and a real Neovim (make e2e).
# (On CI, stop 41: the Go tests took 586 s, vet and lint 90 s after them, the clients' tests
# about 360 s with the end-to-end run (596 s) after them in the same lane: 1074 s in all.)
# The end-to-end output streams as it comes; the other two lanes' is printed when all three
# are done, then what failed once more, then a line with each lane's exit code. It fails when
# a lane fails. Run from the repository's root by make (GO and BIN come from it).
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
clientslog=$(mktemp)
# The end-to-end run writes what failed there (each failing file's summary) to this file.
export E2E_FAILURES
E2E_FAILURES=$(mktemp)
trap 'rm -f "$golog" "$clientslog" "$E2E_FAILURES"' EXIT
start=$SECONDS

# The Go lane. ./rpc/ is named first so that its tests start first: they are the longest
# package by far (450-560 s of a 650-740 s lane, mostly waiting on the daemons they start),
# and in ./...'s order they started late, after most of the others had run.
go_lane() {
	PID_REQUIRE_SANDBOX=1 PID_REQUIRE_CORPUS_TOOLS=1 "$GO" test -race -count=1 -timeout 25m ./rpc/ ./...
	local rc=$?
	echo "(the Go tests ended $((SECONDS - start)) s after the start)"
	return $rc
}
go_lane >"$golog" 2>&1 &
gopid=$!

# The clients' lane. The Neovim plugin's headless test runs on the newer Neovims too (0.10
# and the newest, fetched by scripts/install-test-deps.sh): Debian here has 0.7.2, the
# plugin's floor, and most people run 0.10+. It used to run before the end-to-end run, in
# the same lane, which it kept waiting 150-200 s.
clients() {
	set -e
	bash test/clients/run.sh
	bash editor/nvim/test/run.sh
	for suite in trixie sid; do
		# Without it PATH would fall back to Debian's 0.7.2, and this pass on the wrong Neovim.
		[ -x ".cache/nvim/$suite/nvim" ] || { echo "no .cache/nvim/$suite/nvim: scripts/install-test-deps.sh did not install it"; return 1; }
		echo "=== the Neovim plugin's headless test on $(.cache/nvim/$suite/nvim --version | head -n1) ==="
		PATH="$PWD/.cache/nvim/$suite:$PATH" NVIM_TIMEOUT=300 bash editor/nvim/test/run.sh
	done
	PID_BIN="$BIN/pid" bash editor/nvim/test/health.sh
	(cd test/acp && PID_BIN="$BIN/pid" PID_TESTMCP_BIN="$BIN/pidtestmcp" timeout -k 5 120 node --test --test-reporter=spec)
	(cd test/mcp && PID_BIN="$BIN/pid" timeout -k 5 120 node --test --test-reporter=spec)
	(cd editor/vscode && npm run typecheck && PID_BIN="$BIN/pid" timeout -k 5 180 npm test)
	echo "=== make vet lint cross ==="
	make --no-print-directory vet lint cross GO="$GO"
}
( (clients); rc=$?; echo "(the clients' lane ended $((SECONDS - start)) s after the start)"; exit $rc ) >"$clientslog" 2>&1 &
clientspid=$!

# The end-to-end lane, in the foreground.
make --no-print-directory e2e
e2erc=$?
echo "(the end-to-end lane ended $((SECONDS - start)) s after the start)"

wait "$clientspid"
clientsrc=$?
echo
echo "=== the clients' tests, then make vet lint cross (run alongside the tests above) ==="
cat "$clientslog"
wait "$gopid"
gorc=$?
echo
echo "=== go test -race -count=1 ./rpc/ ./... (run alongside the tests above) ==="
cat "$golog"
echo
# What failed, once more and briefly at the very end: the output runs to thousands of lines,
# and CI shows only its last 80 or so.
if [ "$gorc" -ne 0 ] || [ "$clientsrc" -ne 0 ] || [ "$e2erc" -ne 0 ]; then
	echo "=== what failed, in brief (the whole of it is above) ==="
	grep -E -A4 -e '^\s*--- FAIL' -e '^panic:' "$golog" | cut -c1-300 | head -n 25
	grep -E -A4 -e '^not ok' -e '✖' -e 'npm ERR' -e 'Error [0-9]+$' "$clientslog" | cut -c1-300 | head -n 20
	[ -s "$E2E_FAILURES" ] && head -n 30 "$E2E_FAILURES"
fi
echo "=== make test: go test exit $gorc; clients, vet, lint and cross exit $clientsrc; end-to-end exit $e2erc ==="
[ "$gorc" -eq 0 ] && [ "$clientsrc" -eq 0 ] && [ "$e2erc" -eq 0 ]
