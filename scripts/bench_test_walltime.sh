#!/usr/bin/env bash
# Issue 29's test wall-time target: `cargo test --release` (the README's command) on a warm target
# dir, and after touching one file of clipforge-headers; before (main, 53 test binaries) and after
# (one binary), alternating in one run. usage: scripts/bench_test_walltime.sh BEFORE_TREE BEFORE_TGT AFTER_TREE AFTER_TGT OUT
set -u
A=$1; AT=$2; B=$3; BT=$4; OUT=$5
one() { # tree tgt label mode
  cd "$1"
  [ "$4" = touch ] && touch crates/headers/src/lib.rs
  local s e rc
  s=$(date +%s.%N)
  CARGO_TARGET_DIR=$2 nice -n 5 cargo test --release >"$OUT.$3.$4.log" 2>&1; rc=$?
  e=$(date +%s.%N)
  printf '%s\t%s\t%.1f s\trc=%s\tbuild %s\tload %s\n' "$3" "$4" "$(echo "$e - $s" | bc)" "$rc" \
    "$(grep -o 'target(s) in .*' "$OUT.$3.$4.log" | tail -1)" "$(cut -d' ' -f1 /proc/loadavg)" | tee -a "$OUT"
}
for tree in "$A:$AT" "$B:$BT"; do (cd "${tree%%:*}" && CARGO_TARGET_DIR=${tree#*:} cargo test --release --no-run >/dev/null 2>&1); done
one "$A" "$AT" before touch; one "$B" "$BT" after touch
one "$B" "$BT" after warm;   one "$A" "$AT" before warm
