#!/usr/bin/env bash
# The whole "never fails" sweep (issue 11): every real clip of $CLIPFORGE_DATA (ACL regression
# transform clips, BVH, glTF) at every threshold, through the release CLI, one JSON report per
# (set, threshold); prints failures, the worst max_error_cm (at and between samples), the worst
# max_error_at_samples_cm, bytes and wall time per threshold. Then the test sweep
# (crates/anim/tests/it/codec_sweep.rs). Run niced; figures in docs/BENCHMARKS.md.
#
#   scripts/codec_sweep.sh [OUT_DIR]     (CLIPFORGE_DATA defaults to ../shared/data)
set -euo pipefail
cd "$(dirname "$0")/.."
export CLIPFORGE_DATA="${CLIPFORGE_DATA:-$(cd .. && pwd)/shared/data}"
OUT="${1:-$(mktemp -d)}"
JOBS="${JOBS:-2}"
cargo build --release --no-default-features --bin clipforge
BIN="${CARGO_TARGET_DIR:-target}/release/clipforge"
mkdir -p "$OUT"
printf '%-8s %-15s %6s %6s %12s %14s %14s %8s\n' threshold set clips failed bytes max_error_cm at_samples_cm wall_s
for t in 0.001 0.003 0.01 0.03 0.1 1.0; do
  for set in acl-regression bvh gltf; do
    rep="$OUT/$set-$t.json"
    start=$(date +%s.%N)
    # Exit status is non-zero when a file fails (refused scalar lists included): read the report.
    nice -n 10 "$BIN" compress "$CLIPFORGE_DATA/$set" -o "$OUT/$set-$t" --error-threshold "$t" \
      --jobs "$JOBS" --json "$rep" >/dev/null 2>&1 || true
    end=$(date +%s.%N)
    python3 - "$rep" "$t" "$set" "$start" "$end" <<'PY'
import json, sys
rep, t, s, start, end = sys.argv[1], float(sys.argv[2]), sys.argv[3], float(sys.argv[4]), float(sys.argv[5])
r = json.load(open(rep))
ok = [c for c in r["clips"] if not c["error"]]
# Files the importers refuse (scalar track lists, the inf-error clip) are not codec failures.
failed = [c for c in r["clips"] if c["error"] and "(clip '" in c["error"]]
over = [c for c in ok if c["max_error_cm"] > t]
print(f'{t:<8} {s:<15} {len(ok):6} {len(failed)+len(over):6} {sum(c["compressed_bytes"] for c in ok):12} '
      f'{max(c["max_error_cm"] for c in ok):14.6f} {max(c["max_error_at_samples_cm"] for c in ok):14.6f} {end-start:8.1f}')
for c in failed + over:
    print("   FAIL", c["input"], c["clip"], c["error"] or c["max_error_cm"])
PY
  done
done
time nice -n 10 cargo test --release -p clipforge-anim --test it codec_sweep:: -- --nocapture
