#!/usr/bin/env bash
# Compression time of ClipForge and ACL 2.1 side by side, in one run, on the same clips: the 25
# ACL regression transform clips and the 42 shared BVH clips converted to .acl.sjson (both read
# the same converted files), single thread, in alternating rounds (ACL, ClipForge, ACL, ...).
# Times are thread CPU time of the compression call alone (ACL: compress_track_list, without its
# error pass; ClipForge: compress(), with its float64 check at and between samples), because
# the machine is shared and wall time counts other jobs. Per clip the median over the rounds;
# per set the sum of the medians, ClipForge/ACL, and the clips where ClipForge takes more than
# 1.5x ACL's time.
#
# usage: scripts/bench_compress_vs_acl.sh [--rounds N] [--set regression|bvh|all] [OUT_DIR]
#   --rounds N   alternating rounds (default 5); each round runs every clip once in each tool
#   --set S      regression, bvh or all (default)
#   OUT_DIR      keeps the per-round tables (default: a temporary folder, removed)
# environment: as scripts/bench_acl.sh (CLIPFORGE_SHARED, CARGO_TARGET_DIR, CXX); ACL is built
# by it from ../shared/anchors-src; ClipForge's side is the example
# crates/anim/examples/compress_cpu.rs, built in release.
set -euo pipefail

die() { echo "bench_compress_vs_acl.sh: error: $*" >&2; exit 1; }

rounds=5
set_name=all
out=""
while [[ $# -gt 0 ]]; do
    case "$1" in
        --rounds) [[ $# -ge 2 ]] || die "--rounds needs a value"; rounds="$2"; shift 2 ;;
        --set) [[ $# -ge 2 ]] || die "--set needs a value"; set_name="$2"; shift 2 ;;
        -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) die "unknown option $1 (see --help)" ;;
        *) [[ -z "$out" ]] || die "only one OUT_DIR"; out="$1"; shift ;;
    esac
done
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || die "--rounds must be a positive integer, got '$rounds'"
case "$set_name" in regression|bvh|all) ;; *) die "--set must be regression, bvh or all, got '$set_name'" ;; esac

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
shared="$(cd "${CLIPFORGE_SHARED:-$repo/../shared}" 2>/dev/null && pwd)" || die "shared folder not found (set CLIPFORGE_SHARED)"
target="${CARGO_TARGET_DIR:-$HOME/.cache/clipforge-target}"
if [[ -z "$out" ]]; then
    out="$(mktemp -d)"
    trap 'rm -rf "$out"' EXIT
fi
mkdir -p "$out"

# ACL: bench_acl.sh builds the harness and converts the BVH clips (one round, to get both).
sets=()
[[ "$set_name" == regression || "$set_name" == all ]] && sets+=(regression)
[[ "$set_name" == bvh || "$set_name" == all ]] && sets+=(bvh)
for s in "${sets[@]}"; do
    "$repo/scripts/bench_acl.sh" --rounds 1 --set "$s" "$out/warm-acl-$s.tsv" 2>"$out/warm-acl-$s.err" \
        || { cat "$out/warm-acl-$s.err" >&2; die "bench_acl.sh failed"; }
done
acl_bin="$target/anchors/acl/acl_bench"
[[ -x "$acl_bin" ]] || die "missing $acl_bin"

echo "bench_compress_vs_acl.sh: building the ClipForge side (cargo build --release --example compress_cpu)" >&2
(cd "$repo" && nice -n 10 cargo build --quiet --release -p clipforge-anim --example compress_cpu) \
    || die "cargo build failed"
cf_bin="$target/release/examples/compress_cpu"

# The clip lists, the same files for both tools.
declare -A files
files[regression]="$(awk -F'\t' 'NR > 1 && $2 == "transform_clip" { print $1 }' "$shared/reference/acl-baseline.tsv" \
    | grep -vx '09_02_with_inf_error' | sed "s|^|$shared/data/acl-regression/|; s|\$|.acl.sjson|")"
files[bvh]="$(awk -F'\t' 'NR > 1 { print $3 }' "$shared/reference/acl-bvh-baseline.tsv" \
    | sed 's|.*/||; s|\.bvh$||' | sed "s|^|$target/anchors/acl/bvh-acl-sjson/|; s|\$|.acl.sjson|")"

echo "bench_compress_vs_acl.sh: $rounds alternating rounds, sets: ${sets[*]}, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for r in $(seq 1 "$rounds"); do
    for s in "${sets[@]}"; do
        mapfile -t list <<< "${files[$s]}"
        rm -f "$out/acl-$s-$r.cpu.tsv"
        nice -n 0 "$acl_bin" --rounds 1 --cpu-tsv "$out/acl-$s-$r.cpu.tsv" "${list[@]}" >/dev/null 2>>"$out/acl.err" || true
        "$cf_bin" --rounds 1 "${list[@]}" > "$out/cf-$s-$r.tsv" 2>>"$out/cf.err" || true
    done
    echo "bench_compress_vs_acl.sh: round $r done" >&2
done

python3 - "$out" "$rounds" "${sets[@]}" <<'PY'
import csv, statistics, sys
out, rounds, sets = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
def med(paths, col):
    v = {}
    for p in paths:
        for row in csv.DictReader(open(p), delimiter="\t"):
            v.setdefault(row["clip"], []).append(float(row[col]))
    return {k: statistics.median(x) for k, x in v.items()}
for s in sets:
    acl = med([f"{out}/acl-{s}-{r}.cpu.tsv" for r in range(1, rounds + 1)], "compress_cpu_ms")
    cf = med([f"{out}/cf-{s}-{r}.tsv" for r in range(1, rounds + 1)], "cpu_ms")
    both = sorted(set(acl) & set(cf))
    ta, tc = sum(acl[c] for c in both), sum(cf[c] for c in both)
    faster = sum(cf[c] < acl[c] for c in both)
    print(f"{s}: {len(both)} clips, ACL {ta:.1f} ms, ClipForge {tc:.1f} ms, ratio {tc / ta:.2f}; "
          f"ClipForge faster on {faster}")
    slow = [(cf[c] / acl[c], c) for c in both if cf[c] > 1.5 * acl[c]]
    for ratio, c in sorted(slow, reverse=True):
        print(f"  slower than 1.5x ACL: {c}: ClipForge {cf[c]:.3f} ms, ACL {acl[c]:.3f} ms ({ratio:.2f}x)")
    for c in sorted(set(acl) ^ set(cf)):
        print(f"  measured by one tool only: {c}")
PY
