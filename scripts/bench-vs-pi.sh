#!/usr/bin/env bash
# Runs pi's tool-execution benchmark (shared/bench/pi/bench.mjs) and pidbench back to back on
# this machine, then compares the two result files. `make bench-vs-pi` runs it.
#
# Environment (all optional):
#   PI_BENCH_DIR  pi's benchmark (bench.mjs, package.json, package-lock.json; default
#                 ../shared/bench/pi). It is copied into BENCH_CACHE and never written to.
#   BENCH_CACHE   where pi's benchmark is installed and run (default .cache/pibench)
#   BENCH_OUT     where the results go: pi.json pi.txt pid.json pid.txt compare.txt
#                 (default .cache/bench)
#   BENCH_ARGS    flags for both benchmarks, e.g. "--reps 3 --warmup 3" (both accept the
#                 same --reps, --warmup, --only, --llm, --convert)
#   PI_ONLY       workloads pi runs (default: those pidbench has; pi's W1-agentLoop, ORDER
#                 and SEM have no pid counterpart)
#   GO            the go command (default go)
#   GOGC          pidbench's GC target (default: the daemon's, 400; GOGC=100 is Go's default)
set -euo pipefail
cd "$(dirname "$0")/.."

GO=${GO:-go}
PI_BENCH_DIR=${PI_BENCH_DIR:-../shared/bench/pi}
BENCH_CACHE=${BENCH_CACHE:-.cache/pibench}
BENCH_OUT=${BENCH_OUT:-.cache/bench}
BENCH_ARGS=${BENCH_ARGS:-}
PI_ONLY=${PI_ONLY:-W1,W1k1,W2,W3,W4,W1-llmfull,W5t,W5}

die() { echo "bench-vs-pi: $*" >&2; exit 1; }

[ -f "$PI_BENCH_DIR/bench.mjs" ] || die "no pi benchmark at $PI_BENCH_DIR (set PI_BENCH_DIR)"
command -v node >/dev/null || die "node is not installed"

mkdir -p "$BENCH_CACHE" "$BENCH_OUT"
OUT=$(cd "$BENCH_OUT" && pwd)

# Copy pi's benchmark into the cache; the source may be read-only.
for f in bench.mjs package.json package-lock.json; do
	rm -f "$BENCH_CACHE/$f"
	cp "$PI_BENCH_DIR/$f" "$BENCH_CACHE/$f"
	chmod u+w "$BENCH_CACHE/$f"
done
# Install the pinned packages once per package-lock.json.
if ! cmp -s "$BENCH_CACHE/package-lock.json" "$BENCH_CACHE/.installed-lock.json"; then
	rm -rf "$BENCH_CACHE/node_modules"
fi
if [ ! -d "$BENCH_CACHE/node_modules/@mariozechner/pi-agent-core" ]; then
	if [ -d "$PI_BENCH_DIR/node_modules/@mariozechner/pi-agent-core" ] &&
		cmp -s "$PI_BENCH_DIR/package-lock.json" "$BENCH_CACHE/package-lock.json"; then
		echo "== copying $PI_BENCH_DIR/node_modules"
		rm -rf "$BENCH_CACHE/node_modules"
		cp -R "$PI_BENCH_DIR/node_modules" "$BENCH_CACHE/node_modules"
	else
		command -v npm >/dev/null || die "npm is not installed"
		echo "== npm ci in $BENCH_CACHE"
		(cd "$BENCH_CACHE" && npm ci --no-audit --no-fund)
	fi
	cp "$BENCH_CACHE/package-lock.json" "$BENCH_CACHE/.installed-lock.json"
fi

echo "== building pidbench"
"$GO" build -o "$OUT/pidbench" ./cmd/pidbench

echo "== pi: node bench.mjs $BENCH_ARGS --only $PI_ONLY --json $OUT/pi.json"
# shellcheck disable=SC2086 # BENCH_ARGS is a list of flags
(cd "$BENCH_CACHE" && node bench.mjs $BENCH_ARGS --only "$PI_ONLY" --json "$OUT/pi.json") | tee "$OUT/pi.txt"

echo
echo "== pid: pidbench $BENCH_ARGS -json $OUT/pid.json"
# shellcheck disable=SC2086
"$OUT/pidbench" $BENCH_ARGS -json "$OUT/pid.json" | tee "$OUT/pid.txt"

echo
echo "== compare"
"$OUT/pidbench" -compare "$OUT/pi.json" "$OUT/pid.json" | tee "$OUT/compare.txt"
