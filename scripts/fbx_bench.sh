#!/usr/bin/env bash
# FBX import timings (docs/BENCHMARKS.md, "FBX import"): a timed CLI run per measurement, release
# build without the GUI. Usage: scripts/fbx_bench.sh [DATA_DIR] (default ../shared/data).
#   1. `convert` of isaacgymenvs-cmu/01_01_cmu.fbx (2,752 frames at 120 fps, 38 bones): import +
#      .acl.sjson export, 7 runs, min and median wall time.
#   2. `compress` of the whole fbx/ folder (28 files, 34 clips) with --no-skip, 3 runs: batch
#      throughput (import + compression + verification + output), files/s and MB/s.
set -euo pipefail
cd "$(dirname "$0")/.."
DATA="${1:-$(cd .. && pwd)/shared/data}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/clipforge-target}"
cargo build --release --no-default-features --quiet
BIN="$CARGO_TARGET_DIR/release/clipforge"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
now() { date +%s.%N; }
stats() { sort -n | awk '{a[NR]=$1} END {printf "min %.3f s, median %.3f s (%d runs)\n", a[1], a[int((NR+1)/2)], NR}'; }

CMU="$DATA/fbx/isaacgymenvs-cmu/01_01_cmu.fbx"
echo "convert $(basename "$CMU") ($(stat -c %s "$CMU") bytes):"
for _ in 1 2 3 4 5 6 7; do
  t0=$(now); "$BIN" convert "$CMU" -o "$TMP/cmu.acl.sjson" >/dev/null 2>&1; t1=$(now)
  echo "$t1 - $t0" | bc -l
done | stats

FILES=$(find "$DATA/fbx" -name '*.fbx' | wc -l)
BYTES=$(find "$DATA/fbx" -name '*.fbx' -printf '%s\n' | awk '{s+=$1} END {print s}')
echo "compress fbx/ ($FILES files, $BYTES bytes), --no-skip, $(nproc) cores:"
for _ in 1 2 3; do
  rm -rf "$TMP/out"
  t0=$(now); "$BIN" compress "$DATA/fbx" -o "$TMP/out" --no-skip >/dev/null 2>"$TMP/err" || true; t1=$(now)
  echo "$t1 - $t0" | bc -l
done | stats | tee "$TMP/batch"
med=$(sed -E 's/.*median ([0-9.]+) s.*/\1/' "$TMP/batch")
awk -v f="$FILES" -v b="$BYTES" -v t="$med" 'BEGIN {printf "throughput (median): %.1f files/s, %.2f MB/s\n", f/t, b/t/1e6}'
grep -E "^[0-9]+ clips:|^raw |^wall " "$TMP/err" || true
