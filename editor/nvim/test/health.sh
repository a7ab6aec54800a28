#!/usr/bin/env bash
# Runs health.lua headless: the README's lazy.nvim spec and :checkhealth pid (issue 34), in a
# Neovim with no Go and no pid on PATH and XDG folders of this run, whose user settings name an
# Anthropic model keyed by PID_HEALTH_TEST_KEY. PID_BIN names the pid under test (default:
# bin/pid at the repository's root).
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
PID_BIN="${PID_BIN:-$root/bin/pid}"
case "$PID_BIN" in /*) ;; *) PID_BIN="$PWD/$PID_BIN" ;; esac
[ -x "$PID_BIN" ] || { echo "pid.nvim health test: no pid binary at $PID_BIN" >&2; exit 1; }
nvim="$(command -v nvim)" || { echo "pid.nvim health test: nvim is not installed" >&2; exit 1; }

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/config/pid" "$tmp/state" "$tmp/data" "$tmp/cache" "$tmp/workspace"
echo '{"model": {"provider": "anthropic", "id": "claude-health-test", "apiKeyEnv": "PID_HEALTH_TEST_KEY"}}' >"$tmp/config/pid/settings.json"
# PATH without Go and without a pid: the folders of the system's tools only.
path=""
for d in /usr/local/sbin /usr/local/bin /usr/sbin /usr/bin /sbin /bin; do
	[ -x "$d/go" ] || [ -x "$d/pid" ] || path="$path${path:+:}$d"
done

echo "== $("$nvim" --version | head -n1), :checkhealth pid and the README's lazy.nvim spec: $PID_BIN"
(cd "$tmp/workspace" && env PATH="$path" HOME="$tmp" XDG_CONFIG_HOME="$tmp/config" XDG_STATE_HOME="$tmp/state" \
	XDG_DATA_HOME="$tmp/data" XDG_CACHE_HOME="$tmp/cache" PID_REPO="$root" PID_BIN="$PID_BIN" \
	PID_HEALTH_DUMP="${PID_HEALTH_DUMP:-}" PID_HEALTH_TEST_KEY="sk-health-test-$$-not-a-real-key" \
	timeout -k 5 60 "$nvim" --headless -u NONE -i NONE -n -c "luafile $here/health.lua" </dev/null) 2>&1
rc=$?
[ "$rc" = 0 ] || { echo "FAIL pid.nvim health test: exit code $rc" >&2; exit 1; }
