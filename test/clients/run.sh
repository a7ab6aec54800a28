#!/usr/bin/env bash
# Runs the real-client tests against a built pid binary: the vscode-jsonrpc test under node's
# test runner and the Neovim vim.lsp.rpc test headless. It builds nothing:
#
#   go build -o bin/pid ./cmd/pid && bash test/clients/run.sh
#
# PID_BIN names the binary (default: bin/pid at the repository root). The dependencies come
# from scripts/install-test-deps.sh (neovim, and `npm ci` here). Every run is bounded by
# timeout; the script exits non-zero if any test fails, times out or cannot start.
set -uo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
PID_BIN="${PID_BIN:-$root/bin/pid}"
case "$PID_BIN" in
/*) ;;
*) PID_BIN="$PWD/$PID_BIN" ;;
esac
export PID_BIN

# The daemons these tests start keep their settings, remembered permissions and audit log
# in a folder of this run, never in the user's.
xdg="$(mktemp -d)"
trap 'rm -rf "$xdg"' EXIT
export XDG_CONFIG_HOME="$xdg/config" XDG_STATE_HOME="$xdg/state"

NODE_TIMEOUT="${NODE_TIMEOUT:-120}"
NVIM_TIMEOUT="${NVIM_TIMEOUT:-60}"

if [ ! -x "$PID_BIN" ]; then
	echo "client tests: no pid binary at $PID_BIN (build it: go build -o bin/pid ./cmd/pid, or set PID_BIN)" >&2
	exit 1
fi
missing=0
for tool in node nvim timeout; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "client tests: $tool is not installed (run: bash scripts/install-test-deps.sh)" >&2
		missing=1
	fi
done
if [ ! -d "$here/node_modules/vscode-jsonrpc" ]; then
	echo "client tests: vscode-jsonrpc is not installed in $here (run: bash scripts/install-test-deps.sh)" >&2
	missing=1
fi
[ "$missing" = 0 ] || exit 1

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
failed=()

# explain prints why a run ended badly: a timeout, or its exit code.
explain() {
	local name="$1" rc="$2" limit="$3"
	if [ "$rc" = 124 ]; then
		echo "FAIL $name: timed out after ${limit}s" >&2
	else
		echo "FAIL $name: exit code $rc" >&2
	fi
}

echo "== node $(node --version), vscode-jsonrpc $(node -p "require('$here/node_modules/vscode-jsonrpc/package.json').version"): $PID_BIN"
# The spec reporter prints each test and, at the end, the summary lines (tests, pass, fail...);
# a failing test's details follow its line.
(cd "$here" && timeout -k 5 "$NODE_TIMEOUT" node --test --test-reporter=spec vscode_jsonrpc.test.js) 2>&1 | tee "$tmp/node.out"
rc=${PIPESTATUS[0]}
if [ "$rc" != 0 ]; then
	explain "node vscode-jsonrpc test" "$rc" "$NODE_TIMEOUT"
	failed+=("node")
fi

echo "== $(nvim --version | head -n1), vim.lsp.rpc: $PID_BIN"
# Neovim's state, shada and lsp.log go to a scratch folder; lsp.log holds pid's stderr.
mkdir -p "$tmp/xdg/config" "$tmp/xdg/data" "$tmp/xdg/state" "$tmp/xdg/cache"
(cd "$root" && XDG_CONFIG_HOME="$tmp/xdg/config" XDG_DATA_HOME="$tmp/xdg/data" \
	XDG_STATE_HOME="$tmp/xdg/state" XDG_CACHE_HOME="$tmp/xdg/cache" \
	timeout -k 5 "$NVIM_TIMEOUT" nvim --headless -u NONE -i NONE -n \
	-c "luafile $here/nvim_test.lua" </dev/null) 2>&1
rc=$?
if [ "$rc" != 0 ]; then
	explain "nvim vim.lsp.rpc test" "$rc" "$NVIM_TIMEOUT"
	for f in "$tmp/xdg/cache/nvim/lsp.log" "$tmp/xdg/state/nvim/lsp.log"; do
		if [ -s "$f" ]; then
			echo "-- tail of Neovim's lsp.log (pid's stderr is logged there):" >&2
			tail -n 40 "$f" >&2
		fi
	done
	failed+=("nvim")
fi

if [ "${#failed[@]}" -gt 0 ]; then
	echo "client tests FAILED: ${failed[*]}" >&2
	exit 1
fi
echo "client tests passed: node (vscode-jsonrpc), nvim (vim.lsp.rpc)"
