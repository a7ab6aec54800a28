#!/usr/bin/env bash
# Fetches the newer Neovims the plugin's headless test also runs on (editor/nvim/test/run.sh)
# into .cache/nvim/SUITE/, from Debian's own packages: Neovim 0.10 (trixie, Debian 13) and the
# newest (sid). This machine's Debian (bookworm) has 0.7.2, and their binaries need a newer C
# library than it has: each is unpacked with trixie's or sid's glibc beside it, and
# .cache/nvim/SUITE/nvim runs it through that glibc's loader (--library-path: the processes it
# starts, pid among them, keep the system's). Nothing is installed on the system: apt-get
# works on lists of its own under .cache/nvim/apt. A suite fetched before is kept (delete its
# folder to fetch it again). install-test-deps.sh calls it; it fails when a suite cannot be had.
set -euo pipefail
cd "$(dirname "$0")/.."
cache="$PWD/.cache/nvim"
apt="$cache/apt"
mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial"
cat >"$apt/sources.list" <<LIST
deb http://deb.debian.org/debian trixie main
deb http://deb.debian.org/debian sid main
LIST
opts=(-o "Dir::Etc::sourcelist=$apt/sources.list" -o Dir::Etc::sourceparts=- -o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache" -o APT::Sandbox::User=root)

updated=""
fetch() { # SUITE PACKAGE...
	local suite=$1
	shift
	local dir="$cache/$suite"
	if [ -x "$dir/nvim" ] && "$dir/nvim" --version >/dev/null 2>&1; then
		return 0
	fi
	if [ -z "$updated" ]; then
		apt-get "${opts[@]}" -qq update
		updated=1
	fi
	rm -rf "$dir"
	mkdir -p "$dir/debs"
	local p
	for p in "$@"; do
		(cd "$dir/debs" && apt-get "${opts[@]}" -qq download "$p/$suite")
	done
	local d
	for d in "$dir"/debs/*.deb; do
		dpkg-deb -x "$d" "$dir/root"
	done
	rm -rf "$dir/debs"
	cat >"$dir/nvim" <<'WRAP'
#!/bin/sh
# Neovim of this folder, through the C library unpacked beside it (see scripts/fetch-nvim.sh).
here=$(dirname "$(readlink -f "$0")")
lib="$here/root/usr/lib/x86_64-linux-gnu"
VIMRUNTIME="$here/root/usr/share/nvim/runtime"
export VIMRUNTIME
exec "$lib/ld-linux-x86-64.so.2" --library-path "$lib" "$here/root/usr/bin/nvim" "$@"
WRAP
	chmod +x "$dir/nvim"
	echo "fetch-nvim: $("$dir/nvim" --version | head -n1) in $dir"
}

common=(neovim neovim-runtime libc6 libgcc-s1 libluajit-5.1-2 libunibilium4 libuv1t64 lua-lpeg lua-luv)
fetch trixie "${common[@]}" libmsgpack-c2 libtree-sitter0.22 libvterm0
fetch sid "${common[@]}" libtree-sitter0.26 libutf8proc3
