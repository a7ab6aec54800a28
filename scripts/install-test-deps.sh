#!/usr/bin/env bash
# Installs what the real-client tests (test/clients) need on a fresh Debian machine.
# Installing Debian packages needs root (or sudo). Node.js (v20+) and npm are expected to be installed.
#   - neovim, ripgrep and fd-find from Debian (apt-get) when nvim, rg or fdfind/fd is not on PATH
#   - the node tests' dependencies, exactly as pinned in their package-lock.json files (npm ci):
#     test/clients, editor/vscode, test/acp, test/mcp (the reference MCP server among them)
#   - Neovim 0.10 and the newest (Debian trixie's and sid's, with their C library beside them)
#     under .cache/nvim/, for the plugin's headless test on them too (scripts/fetch-nvim.sh)
set -euo pipefail
cd "$(dirname "$0")/.."

# Debian packages, installed together when any is missing: neovim for the Neovim tests,
# ripgrep and fd-find for the grep/find corpus test (tools/corpus_test.go), which compares
# pid's results with rg's and fd's. Debian names fd's binary fdfind.
need=()
command -v nvim >/dev/null 2>&1 || need+=(neovim)
command -v rg >/dev/null 2>&1 || need+=(ripgrep)
if ! command -v fdfind >/dev/null 2>&1 && ! command -v fd >/dev/null 2>&1; then
	need+=(fd-find)
fi
if [ "${#need[@]}" -gt 0 ]; then
	export DEBIAN_FRONTEND=noninteractive
	sudo=""
	if [ "$(id -u)" -ne 0 ]; then
		sudo="sudo"
	fi
	$sudo apt-get update
	$sudo apt-get install -y "${need[@]}"
fi

for tool in node npm; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "install-test-deps: $tool is not installed (need Node.js 20 or later with npm)" >&2
		exit 1
	fi
done

(cd test/clients && npm ci --no-audit --no-fund)
(cd editor/vscode && npm ci --no-audit --no-fund)
(cd test/acp && npm ci --no-audit --no-fund)
(cd test/mcp && npm ci --no-audit --no-fund)

bash scripts/fetch-nvim.sh

echo "install-test-deps: nvim $(nvim --version | head -n1 | sed 's/^NVIM //'), node $(node --version), npm $(npm --version); also $(.cache/nvim/trixie/nvim --version | head -n1) and $(.cache/nvim/sid/nvim --version | head -n1) in .cache/nvim"
