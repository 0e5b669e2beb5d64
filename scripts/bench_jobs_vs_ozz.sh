#!/usr/bin/env bash
# ClipForge's runtime jobs side by side with ozz-animation 0.16's (anchors/ozz/README.md says what
# is timed and how; crates/runtime/benches/jobs_vs_ozz.rs follows it for our side).
# Usage: scripts/bench_jobs_vs_ozz.sh [--quick] [--set regression|bvh|all|none] [--rounds N] [OUTDIR]
#   1. scripts/bench_ozz.sh --prepare-only: builds ozz_bench, converts the clips and the Fox mesh;
#   2. compresses the same .acl.sjson files with `clipforge compress` (default settings) into
#      OUTDIR/cfa/ (cached: redone when the source is newer);
#   3. builds crates/runtime/benches/jobs_vs_ozz.rs (cargo bench --no-run, release);
#   4. runs ozz_bench and jobs_vs_ozz in alternation, N rounds (default 2), each process on the
#      same rows (--only clips,l2m,skin,xform), and writes ozz_R.tsv / ours_R.tsv;
#   5. prints, per row, the best-of-rounds median of each side and ours/ozz (ratios.tsv), and per
#      pattern the median ratio over clips.
#   --set none: only the generated rows (crowd, skinning, seed 002): ~1 minute.
# Environment: as scripts/bench_ozz.sh (CLIPFORGE_SHARED, CARGO_TARGET_DIR, JOBS, CXX, SIMD_FLAGS);
# CLIPFORGE_BIN: a clipforge binary to compress with instead of building one.
set -euo pipefail

die() { echo "bench_jobs_vs_ozz: $*" >&2; exit 1; }
USAGE="usage: scripts/bench_jobs_vs_ozz.sh [--quick] [--set regression|bvh|all|none] [--rounds N] [OUTDIR]"
QUICK=()
SET=regression
ROUNDS=2
OUT=""
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) QUICK=(--quick) ;;
    --set) [ $# -ge 2 ] || die "$USAGE"; SET="$2"; shift ;;
    --rounds) [ $# -ge 2 ] || die "$USAGE"; ROUNDS="$2"; shift ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    -*) die "unknown option $1 ($USAGE)" ;;
    *) OUT="$1" ;;
  esac
  shift
done
case "$SET" in regression|bvh|all|none) ;; *) die "--set takes regression, bvh, all or none" ;; esac
case "$ROUNDS" in ''|*[!0-9]*|0) die "--rounds takes a positive number" ;; esac

REPO="$(cd "$(dirname "$0")/.." && pwd)"
SHARED="${CLIPFORGE_SHARED:-$REPO/../shared}"
[ -d "$SHARED/data/acl-regression" ] || die "shared data not found under $SHARED (set CLIPFORGE_SHARED)"
TARGET="${CARGO_TARGET_DIR:-$HOME/.cache/clipforge-target}"
export CARGO_TARGET_DIR="$TARGET"
BUILD="$TARGET/anchors/ozz"
CACHE="$BUILD/cache"
[ -n "$OUT" ] || OUT="$TARGET/anchors/jobs_vs_ozz/$(date +%Y%m%d_%H%M%S)"
mkdir -p "$OUT/cfa"

# 1. ozz side: build + convert (its own script, so the conversion is written once)
OZZ_SET="$SET"; [ "$SET" = none ] && OZZ_SET=regression
"$REPO/scripts/bench_ozz.sh" --prepare-only --set "$OZZ_SET" >&2
BIN_OZZ="$BUILD/ozz_bench"
[ -x "$BIN_OZZ" ] || die "no $BIN_OZZ"

# 2. our side: build the CLI and the bench, compress the clips
if [ -n "${CLIPFORGE_BIN:-}" ]; then
  CF="$CLIPFORGE_BIN"
else
  echo "bench_jobs_vs_ozz: building clipforge (release)" >&2
  (cd "$REPO" && nice cargo build --release --no-default-features --bin clipforge -q) || die "cargo build failed"
  CF="$TARGET/release/clipforge"
fi
[ -x "$CF" ] || die "no clipforge binary at $CF"
echo "bench_jobs_vs_ozz: building the bench (release)" >&2
BIN_OURS="$(cd "$REPO" && nice cargo bench -p clipforge-runtime --bench jobs_vs_ozz --no-run --message-format=json -q 2>/dev/null \
  | python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "jobs_vs_ozz" and m.get("executable"):
        print(m["executable"])')"
[ -x "$BIN_OURS" ] || die "bench build failed (cargo bench -p clipforge-runtime --bench jobs_vs_ozz --no-run)"

OZZ_LIST="$OUT/ozz_clips.tsv"
OURS_LIST="$OUT/ours_clips.tsv"
: > "$OZZ_LIST"; : > "$OURS_LIST"
if [ "$SET" != none ]; then
  while IFS=$'\t' read -r name cfanim; do
    case "$name" in
      acl/*) [ "$SET" = bvh ] && continue
             src="$SHARED/data/acl-regression/${name#acl/}.acl.sjson" ;;
      bvh/*) [ "$SET" = regression ] && continue
             src="$CACHE/${name}.acl.sjson" ;;
    esac
    cfa="$OUT/cfa/$name.cfa"
    mkdir -p "$(dirname "$cfa")"
    if [ ! -s "$cfa" ] || [ "$src" -nt "$cfa" ]; then
      tmp="$(mktemp -d "$OUT/cfa/tmp.XXXXXX")"
      nice "$CF" compress -q -o "$tmp" "$src" >&2 || die "clipforge compress failed on $src"
      found="$(find "$tmp" -name '*.cfa' | head -1)"
      [ -n "$found" ] || die "clipforge compress wrote no .cfa for $src"
      mv "$found" "$cfa"; rm -rf "$tmp"
    fi
    printf '%s\t%s\n' "$name" "$cfanim" >> "$OZZ_LIST"
    printf '%s\t%s\n' "$name" "$cfa" >> "$OURS_LIST"
  done < "$CACHE/clips.tsv"
fi

FOX=()
[ -s "$CACHE/fox.cfmesh" ] && FOX=(--fox "$CACHE/fox.cfmesh")
ONLY="l2m,skin,xform"; [ "$SET" != none ] && ONLY="clips,$ONLY"

# 3. alternate
for r in $(seq 1 "$ROUNDS"); do
  echo "bench_jobs_vs_ozz: round $r/$ROUNDS: ozz" >&2
  "$BIN_OZZ" --clips "$OZZ_LIST" "${FOX[@]}" --only "$ONLY" "${QUICK[@]}" > "$OUT/ozz_$r.tsv" || die "ozz_bench failed"
  echo "bench_jobs_vs_ozz: round $r/$ROUNDS: ours" >&2
  "$BIN_OURS" --clips "$OURS_LIST" "${FOX[@]}" --only "$ONLY" "${QUICK[@]}" > "$OUT/ours_$r.tsv" 2>/dev/null || die "jobs_vs_ozz failed"
done

# Our generators against cfbin.py's hashes (the ones ozz_bench is checked against).
while IFS=$'\t' read -r name hash; do
  grep -q "$name=$hash" "$OUT/ours_1.tsv" || die "generator '$name': jobs_vs_ozz's hash differs from cfbin.py's ($hash); see $OUT/ours_1.tsv"
done < "$CACHE/gen_hashes.tsv"

# 4. ratios
python3 - "$OUT" "$ROUNDS" <<'EOF'
import sys, statistics
out, rounds = sys.argv[1], int(sys.argv[2])
def load(prefix):
    best = {}
    for r in range(1, rounds + 1):
        for line in open(f"{out}/{prefix}_{r}.tsv"):
            f = line.rstrip("\n").split("\t")
            if len(f) < 13 or f[0] in ("case", "meta"):
                continue
            key = (f[0], f[1])
            ns, tsc = float(f[2]), float(f[6])
            if key not in best or ns < best[key][0]:
                best[key] = (ns, tsc)
    return best
ozz, ours = load("ozz"), load("ours")
# Our rows that stand for ozz's: per clip the same case names (ozz's raw animation: one key per
# sample, as exact as ours; ozz's optimized one is listed too); skinning: our best SIMD path.
pairs = []
for (case, what), (ons, otsc) in sorted(ours.items()):
    if case.startswith("clip_"):
        for variant in ("raw", "opt"):
            k = (f"{case}_{variant}", what)
            if k in ozz:
                pairs.append((f"{case}_{variant}", what, ons, ozz[k][0], otsc, ozz[k][1]))
    elif case in ("l2m_crowd", "l2m_palette_crowd"):
        k = ("l2m_crowd", what)
        if k in ozz:
            pairs.append((case, what, ons, ozz[k][0], otsc, ozz[k][1]))
    elif case in ("skin_generated", "skin_fox"):
        if (case, what) in ozz:
            pairs.append((case, what, ons, ozz[(case, what)][0], otsc, ozz[(case, what)][1]))
    elif case.startswith("xform_"):
        ref = {"xform_scalar": "xform_scalar", "xform_sse": "xform_sse", "xform_avx2fma": "xform_sse"}[case]
        k = (ref, what)
        if k in ozz:
            pairs.append((f"{case}_vs_{ref}", what, ons, ozz[k][0], otsc, ozz[k][1]))
with open(f"{out}/ratios.tsv", "w") as f:
    f.write("case\tclip_or_size\tours_ns\tozz_ns\tratio\tours_tsc\tozz_tsc\n")
    for p in pairs:
        f.write(f"{p[0]}\t{p[1]}\t{p[2]:.2f}\t{p[3]:.2f}\t{p[2]/p[3]:.3f}\t{p[4]:.2f}\t{p[5]:.2f}\n")
print("case\tclips\tmedian ours/ozz\tmin\tmax")
groups = {}
for p in pairs:
    fam = p[1].split("/")[0] if "/" in p[1] else p[1]
    groups.setdefault((p[0], fam), []).append(p[2] / p[3])
for (case, fam), rs in sorted(groups.items()):
    print(f"{case}\t{fam} ({len(rs)})\t{statistics.median(rs):.3f}\t{min(rs):.3f}\t{max(rs):.3f}")
print()
for p in pairs:
    if not p[0].startswith("clip_"):
        print(f"{p[0]}\t{p[1]}\tours {p[2]:.2f} ns ({p[4]:.2f} TSC)\tozz {p[3]:.2f} ns ({p[5]:.2f} TSC)\tratio {p[2]/p[3]:.3f}")
EOF
echo "bench_jobs_vs_ozz: results in $OUT (ozz_R.tsv, ours_R.tsv, ratios.tsv)" >&2
