#!/usr/bin/env bash
# Runs pid.nvim's test headless against a built pid binary: run.lua runs every case of
# cases/*.lua, in order, in one Neovim, with the harness lib.lua. It builds nothing:
#
#   go build -o bin/pid ./cmd/pid && bash editor/nvim/test/run.sh
#
# PID_BIN names the binary (default: bin/pid at the repository root); NVIM_TIMEOUT bounds the
# run (default 60 s); PID_NVIM_TEST_UNTIL=NN stops after the case whose name starts with NN.
# Exits non-zero if a check fails, the run times out or cannot start.
set -uo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
plugin="$(cd "$here/.." && pwd)"
root="$(cd "$plugin/../.." && pwd)"
PID_BIN="${PID_BIN:-$root/bin/pid}"
case "$PID_BIN" in
/*) ;;
*) PID_BIN="$PWD/$PID_BIN" ;;
esac
export PID_BIN
NVIM_TIMEOUT="${NVIM_TIMEOUT:-60}"

if [ ! -x "$PID_BIN" ]; then
	echo "pid.nvim test: no pid binary at $PID_BIN (build it: go build -o bin/pid ./cmd/pid, or set PID_BIN)" >&2
	exit 1
fi
for tool in nvim timeout; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "pid.nvim test: $tool is not installed" >&2
		exit 1
	fi
done

# Everything goes to a folder of this run: Neovim's own state and shada; the daemon's
# settings, remembered permissions, audit log and saved sessions (the test gives it
# PID_NVIM_TEST_XDG through setup{env}; a daemon that did not get that env would inherit
# Neovim's XDG_* below, still not the user's folders); the workspace nvim runs in.
# PID_NVIM_TEST_DUMP=1 prints the chat at the end; a failure prints the chat, the plugin's
# status (with the end of pid's stderr) and the notifications.
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/nvim/config" "$tmp/nvim/data" "$tmp/nvim/state" "$tmp/nvim/cache" "$tmp/pid" "$tmp/workspace"
export PID_NVIM_TEST_XDG="$tmp/pid"

echo "== $(nvim --version | head -n1), pid.nvim: $PID_BIN"
(cd "$tmp/workspace" && XDG_CONFIG_HOME="$tmp/nvim/config" XDG_DATA_HOME="$tmp/nvim/data" \
	XDG_STATE_HOME="$tmp/nvim/state" XDG_CACHE_HOME="$tmp/nvim/cache" \
	timeout -k 5 "$NVIM_TIMEOUT" nvim --headless -u NONE -i NONE -n \
	--cmd "set rtp+=$plugin" -c "luafile $here/run.lua" </dev/null) 2>&1
rc=$?
if [ "$rc" != 0 ]; then
	if [ "$rc" = 124 ]; then
		echo "FAIL pid.nvim test: timed out after ${NVIM_TIMEOUT}s" >&2
	else
		echo "FAIL pid.nvim test: exit code $rc" >&2
	fi
	exit 1
fi
