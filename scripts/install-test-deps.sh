#!/usr/bin/env bash
# Installs what the real-client tests (test/clients) need on a fresh Debian machine.
# Installing neovim needs root (or sudo). Node.js (v20+) and npm are expected to be installed.
#   - neovim from Debian (apt-get) when nvim is not on PATH
#   - the node tests' dependencies, exactly as pinned in their package-lock.json files (npm ci):
#     test/clients, editor/vscode, test/acp, test/mcp (the reference MCP server among them)
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v nvim >/dev/null 2>&1; then
	export DEBIAN_FRONTEND=noninteractive
	sudo=""
	if [ "$(id -u)" -ne 0 ]; then
		sudo="sudo"
	fi
	$sudo apt-get update
	$sudo apt-get install -y neovim
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

echo "install-test-deps: nvim $(nvim --version | head -n1 | sed 's/^NVIM //'), node $(node --version), npm $(npm --version)"
