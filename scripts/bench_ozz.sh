#!/usr/bin/env bash
# ozz-animation 0.16 anchor benchmark (anchors/ozz/README.md says what is timed and how).
# Usage: scripts/bench_ozz.sh [--quick] [--set regression|bvh|all] [--prepare-only] [OUT.tsv]
#   --set: the 24 ACL regression clips, the 42 BVH clips, or both (default; ~40 min, most of it ozz's
#   cold and seek patterns on the long raw BVH clips; regression alone ~4 min).
#   1. builds anchors/ozz/ozz_bench if missing or stale (make, -j${JOBS:-2}; ozz compiled in place
#      from the shared snapshot; objects and binary under $CARGO_TARGET_DIR/anchors/ozz/);
#   2. converts the clips once into a cache outside the repo (ACL regression .acl.sjson -> .cfanim;
#      BVH -> .acl.sjson with shared/tools/bvh_to_acl.py -> .cfanim; Fox.glb -> .cfmesh);
#   3. checks that anchors/ozz/cfbin.py reproduces the generator hashes of ozz_bench;
#   4. runs ozz_bench and writes the TSV (default: $CARGO_TARGET_DIR/anchors/ozz/results/).
#   --prepare-only: steps 1-3 only (scripts/bench_jobs_vs_ozz.sh runs the binary itself).
# Environment: CLIPFORGE_SHARED (default <repo>/../shared), CARGO_TARGET_DIR
# (default ~/.cache/clipforge-target), JOBS (default 2), CXX, SIMD_FLAGS (default -msse4.1).
set -euo pipefail

die() { echo "bench_ozz: $*" >&2; exit 1; }

USAGE="usage: scripts/bench_ozz.sh [--quick] [--set regression|bvh|all] [--prepare-only] [OUT.tsv]"
PREPARE_ONLY=0
QUICK=()
OUT_TSV=""
SET=all
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) QUICK=(--quick) ;;
    --prepare-only) PREPARE_ONLY=1 ;;
    --set) [ $# -ge 2 ] || die "$USAGE"; SET="$2"; shift ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    -*) die "unknown option $1 ($USAGE)" ;;
    *) OUT_TSV="$1" ;;
  esac
  shift
done
case "$SET" in regression|bvh|all) ;; *) die "--set takes regression, bvh or all" ;; esac

REPO="$(cd "$(dirname "$0")/.." && pwd)"
SHARED="${CLIPFORGE_SHARED:-$REPO/../shared}"
[ -d "$SHARED" ] || die "shared folder not found at $SHARED (set CLIPFORGE_SHARED)"
SHARED="$(cd "$SHARED" && pwd)"
OZZ="$SHARED/anchors-src/ozz-animation"
ACL_DIR="$SHARED/data/acl-regression"
BVH_DIR="$SHARED/data/bvh"
FOX="$SHARED/data/gltf/fox-via-bevy/Fox.glb"
BVH_TOOL="$SHARED/tools/bvh_to_acl.py"
CFBIN="$REPO/anchors/ozz/cfbin.py"
[ -f "$OZZ/include/ozz/animation/runtime/sampling_job.h" ] || die "ozz-animation sources missing: $OZZ (see shared/anchors-src/README.md)"
[ -d "$ACL_DIR" ] || die "ACL regression clips missing: $ACL_DIR"
[ -d "$BVH_DIR" ] || die "BVH clips missing: $BVH_DIR"
[ -f "$BVH_TOOL" ] || die "BVH converter missing: $BVH_TOOL"
command -v python3 >/dev/null || die "python3 not found"
command -v make >/dev/null || die "make not found (apt-get install make)"
export CXX="${CXX:-g++}"
command -v "$CXX" >/dev/null || die "C++ compiler '$CXX' not found (apt-get install g++, or set CXX)"

TARGET="${CARGO_TARGET_DIR:-$HOME/.cache/clipforge-target}"
BUILD="$TARGET/anchors/ozz"
CACHE="$BUILD/cache"
mkdir -p "$BUILD" "$CACHE/acl" "$CACHE/bvh" "$BUILD/results"
JOBS="${JOBS:-2}"

# 1. build
echo "bench_ozz: building in $BUILD (make -j$JOBS)" >&2
MAKEVARS=(OZZ="$OZZ" OUT="$BUILD")
[ -n "${SIMD_FLAGS:-}" ] && MAKEVARS+=(SIMD_FLAGS="$SIMD_FLAGS")
nice make -s -f "$REPO/anchors/ozz/Makefile" "${MAKEVARS[@]}" -j"$JOBS" >&2 \
  2> >(grep -v -e 'pragma message' -e 'math implementation' -e '^ *[0-9]* |' -e '^ *|' >&2) \
  || die "build failed"
BIN="$BUILD/ozz_bench"
[ -x "$BIN" ] || die "build produced no $BIN"

# 2. clips -> cache (a converted file is redone when its source or a converter is newer)
stale() { [ ! -s "$1" ] || [ "$2" -nt "$1" ] || [ "$CFBIN" -nt "$1" ]; }
LIST="$CACHE/clips.tsv"
: > "$LIST.tmp"
n_acl=0
for f in "$ACL_DIR"/*.acl.sjson; do
  [ "$SET" = bvh ] && break
  name="$(basename "$f" .acl.sjson)"
  case "$name" in
    format_reference) continue ;;        # the format's commented documentation, not a clip
    09_02_with_inf_error) continue ;;    # a 1e25 translation; excluded as in the ACL anchor
  esac
  out="$CACHE/acl/$name.cfanim"
  skip="$CACHE/acl/$name.skip"           # cfbin.py said "not a transform clip" (exit 3)
  if [ -f "$skip" ] && [ "$skip" -nt "$f" ] && [ "$skip" -nt "$CFBIN" ]; then continue; fi
  if stale "$out" "$f"; then
    rc=0; python3 "$CFBIN" acl "$f" "$out" 2>"$CACHE/acl/$name.log" || rc=$?
    if [ $rc -eq 3 ]; then rm -f "$out"; touch "$skip"; continue; fi
    [ $rc -eq 0 ] || die "converting $f failed: $(cat "$CACHE/acl/$name.log")"
  fi
  rm -f "$skip"
  printf 'acl/%s\t%s\n' "$name" "$out" >> "$LIST.tmp"
  n_acl=$((n_acl + 1))
done
[ "$SET" = bvh ] || [ "$n_acl" -gt 0 ] || die "no transform clip found in $ACL_DIR"

convert_bvh() {  # $1 = path relative to BVH_DIR, without .bvh
  local rel="$1" src="$BVH_DIR/$1.bvh" sj="$CACHE/bvh/$1.acl.sjson" out="$CACHE/bvh/$1.cfanim"
  mkdir -p "$(dirname "$sj")"
  if [ ! -s "$sj" ] || [ "$src" -nt "$sj" ] || [ "$BVH_TOOL" -nt "$sj" ]; then
    python3 "$BVH_TOOL" "$src" "$sj.tmp" 2>"$sj.log" || { echo "bvh_to_acl failed on $src: $(cat "$sj.log")" >&2; return 1; }
    mv "$sj.tmp" "$sj"
  fi
  if [ ! -s "$out" ] || [ "$sj" -nt "$out" ] || [ "$CFBIN" -nt "$out" ]; then
    python3 "$CFBIN" acl "$sj" "$out" 2>"$out.log" || { echo "cfbin failed on $sj: $(cat "$out.log")" >&2; return 1; }
  fi
  echo "  bvh/$rel" >&2
}
export -f convert_bvh
export BVH_DIR CACHE BVH_TOOL CFBIN
BVHS=()
if [ "$SET" != regression ]; then
  mapfile -t BVHS < <(cd "$BVH_DIR" && find . -name '*.bvh' | sed -e 's|^\./||' -e 's|\.bvh$||' | LC_ALL=C sort)
  [ ${#BVHS[@]} -gt 0 ] || die "no .bvh file under $BVH_DIR"
  echo "bench_ozz: preparing ${#BVHS[@]} BVH clips in $CACHE/bvh (cached)" >&2
  printf '%s\0' "${BVHS[@]}" | nice xargs -0 -P "$JOBS" -I{} bash -c 'convert_bvh "$1"' _ {} \
    || die "BVH conversion failed"
  for rel in "${BVHS[@]}"; do printf 'bvh/%s\t%s\n' "$rel" "$CACHE/bvh/$rel.cfanim" >> "$LIST.tmp"; done
fi
mv "$LIST.tmp" "$LIST"

FOX_ARGS=()
if [ -f "$FOX" ]; then
  if [ ! -s "$CACHE/fox.cfmesh" ] || [ "$FOX" -nt "$CACHE/fox.cfmesh" ] || [ "$CFBIN" -nt "$CACHE/fox.cfmesh" ]; then
    python3 "$CFBIN" gltf-mesh "$FOX" "$CACHE/fox.cfmesh" 2>"$CACHE/fox.log" || die "Fox conversion failed: $(cat "$CACHE/fox.log")"
  fi
  FOX_ARGS=(--fox "$CACHE/fox.cfmesh")
else
  echo "bench_ozz: $FOX not found: skinning of the Fox mesh skipped" >&2
fi

# 3. reference hashes of the generators (Python implementation of README's description)
HASHES="$CACHE/gen_hashes.tsv"
if [ ! -s "$HASHES" ] || [ "$CFBIN" -nt "$HASHES" ]; then
  python3 "$CFBIN" hashes > "$HASHES.tmp" && mv "$HASHES.tmp" "$HASHES"
fi

[ "$PREPARE_ONLY" = 1 ] && { echo "bench_ozz: prepared $BIN and $LIST" >&2; exit 0; }

# 4. run
[ -n "$OUT_TSV" ] || OUT_TSV="$BUILD/results/ozz_bench_$(date +%Y%m%d_%H%M%S).tsv"
echo "bench_ozz: running $n_acl ACL + ${#BVHS[@]} BVH clips${QUICK:+ (quick)} -> $OUT_TSV" >&2
"$BIN" --clips "$LIST" "${FOX_ARGS[@]}" "${QUICK[@]}" > "$OUT_TSV.tmp" || die "ozz_bench failed"
while IFS=$'\t' read -r name hash; do
  grep -q "$name=$hash" "$OUT_TSV.tmp" || die "generator '$name': ozz_bench's hash differs from cfbin.py's ($hash); see $OUT_TSV.tmp"
done < "$HASHES"
mv "$OUT_TSV.tmp" "$OUT_TSV"
ln -sf "$OUT_TSV" "$BUILD/results/latest.tsv"
echo "bench_ozz: wrote $OUT_TSV ($(($(wc -l < "$OUT_TSV") - 2)) result rows); generator hashes agree with cfbin.py" >&2
