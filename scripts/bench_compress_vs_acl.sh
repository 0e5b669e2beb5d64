#!/usr/bin/env bash
# Compression time of ClipForge and ACL 2.1 side by side, in one run, on the same clips: the 25
# ACL regression transform clips and the 42 shared BVH clips converted to .acl.sjson (both read
# the same converted files), single thread, in alternating rounds (ACL, ClipForge, ACL, ...).
# Times are thread CPU time of the compression call alone (ACL: compress_track_list, without its
# error pass; ClipForge: compress(), with its float64 check at and between samples), because
# the machine is shared and wall time counts other jobs. Per clip the median over the rounds;
# per set the sum of the medians, ClipForge/ACL, and the clips where ClipForge takes more than
# 1.5x ACL's time.
# Small clips (ACL's recorded compression time in shared/reference under --small-ms, default 5 ms:
# 0.01-5 ms a call) are compressed --reps times in a row in each round by both tools (the same
# count, one process per tool and round), and a round's figure for such a clip is the median of
# its repetitions: one call of ~0.1-0.3 ms is timed at the resolution of the scheduler's noise and
# carries the process's first-call costs (page faults, allocator growth), which differ between
# the tools. The other clips are timed once per round, as before.
#
# usage: scripts/bench_compress_vs_acl.sh [--rounds N] [--reps N] [--small-ms MS] [--set regression|bvh|all] [OUT_DIR]
#   --rounds N    alternating rounds (default 5); each round runs every clip in each tool
#   --reps N      repetitions per round of a small clip, in both tools (default 21; 1 gives the
#                 method before 2026-11-28: one call per clip and round)
#   --small-ms MS what counts as small: ACL's recorded time below MS (default 5)
#   --set S       regression, bvh or all (default)
#   OUT_DIR       keeps the per-round tables (default: a temporary folder, removed)
# environment: as scripts/bench_acl.sh (CLIPFORGE_SHARED, CARGO_TARGET_DIR, CXX); ACL is built
# by it from ../shared/anchors-src; ClipForge's side is the example
# crates/anim/examples/compress_cpu.rs, built in release, or the binary CLIPFORGE_COMPRESS_CPU
# names (a copy taken out of the target dir, so that building during the run changes nothing).
set -euo pipefail

die() { echo "bench_compress_vs_acl.sh: error: $*" >&2; exit 1; }

rounds=5
reps=21
small_ms=5
set_name=all
out=""
while [[ $# -gt 0 ]]; do
    case "$1" in
        --rounds) [[ $# -ge 2 ]] || die "--rounds needs a value"; rounds="$2"; shift 2 ;;
        --reps) [[ $# -ge 2 ]] || die "--reps needs a value"; reps="$2"; shift 2 ;;
        --small-ms) [[ $# -ge 2 ]] || die "--small-ms needs a value"; small_ms="$2"; shift 2 ;;
        --set) [[ $# -ge 2 ]] || die "--set needs a value"; set_name="$2"; shift 2 ;;
        -h|--help) sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) die "unknown option $1 (see --help)" ;;
        *) [[ -z "$out" ]] || die "only one OUT_DIR"; out="$1"; shift ;;
    esac
done
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || die "--rounds must be a positive integer, got '$rounds'"
[[ "$reps" =~ ^[1-9][0-9]*$ ]] || die "--reps must be a positive integer, got '$reps'"
[[ "$small_ms" =~ ^[0-9]+([.][0-9]+)?$ ]] || die "--small-ms must be a number of ms, got '$small_ms'"
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

if [[ -n "${CLIPFORGE_COMPRESS_CPU:-}" ]]; then
    cf_bin="$CLIPFORGE_COMPRESS_CPU"
    [[ -x "$cf_bin" ]] || die "CLIPFORGE_COMPRESS_CPU=$cf_bin is not an executable"
else
    echo "bench_compress_vs_acl.sh: building the ClipForge side (cargo build --release --example compress_cpu)" >&2
    (cd "$repo" && nice -n 10 cargo build --quiet --release -p clipforge-anim --example compress_cpu) \
        || die "cargo build failed"
    cf_bin="$target/release/examples/compress_cpu"
fi

# The clip lists, the same files for both tools: files[S] the clips timed once per round,
# small[S] the ones timed --reps times (ACL's recorded time in the reference table below
# --small-ms: a fixed property of the clip, the same for both tools and every run).
declare -A files small
split_small() { # $1: "name<TAB>ms" lines; prints names whose ms is below small_ms (1) or not (0)
    awk -F'\t' -v lim="$small_ms" -v want="$2" '{ s = ($2 != "" && $2 + 0 < lim + 0); if (s == want) print $1 }' <<< "$1"
}
reg_rows="$(awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "comp_time_ms_median_noassert") c = i }
    NR > 1 && $2 == "transform_clip" && $1 != "09_02_with_inf_error" { print $1 "\t" $c }' "$shared/reference/acl-baseline.tsv")"
bvh_rows="$(awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "comp_ms_median") c = i }
    NR > 1 { n = $3; sub(".*/", "", n); sub("[.]bvh$", "", n); print n "\t" $c }' "$shared/reference/acl-bvh-baseline.tsv")"
reg_path() { sed "s|^|$shared/data/acl-regression/|; s|\$|.acl.sjson|"; }
bvh_path() { sed "s|^|$target/anchors/acl/bvh-acl-sjson/|; s|\$|.acl.sjson|"; }
files[regression]="$(split_small "$reg_rows" 0 | reg_path)"
small[regression]="$(split_small "$reg_rows" 1 | reg_path)"
files[bvh]="$(split_small "$bvh_rows" 0 | bvh_path)"
small[bvh]="$(split_small "$bvh_rows" 1 | bvh_path)"
[[ "$reps" -gt 1 ]] || { files[regression]+=$'\n'"${small[regression]}"; files[bvh]+=$'\n'"${small[bvh]}"; small[regression]=""; small[bvh]=""; }

echo "bench_compress_vs_acl.sh: $rounds alternating rounds, sets: ${sets[*]}, clips under $small_ms ms (ACL's recorded time): $reps repetitions a round, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for r in $(seq 1 "$rounds"); do
    for s in "${sets[@]}"; do
        # Each tool's tables per round: R.cpu.tsv / R.tsv for the clips timed once, R-small.* for
        # the repeated ones (acl_bench and compress_cpu take the median of their --rounds calls).
        for part in "" small; do
            if [[ -z "$part" ]]; then n=1; l="${files[$s]}"; sfx=""; else n="$reps"; l="${small[$s]}"; sfx="-small"; fi
            [[ -n "$l" ]] || continue
            mapfile -t list <<< "$l"
            rm -f "$out/acl-$s-$r$sfx.cpu.tsv"
            nice -n 0 "$acl_bin" --rounds "$n" --cpu-tsv "$out/acl-$s-$r$sfx.cpu.tsv" "${list[@]}" >/dev/null 2>>"$out/acl.err" || true
            "$cf_bin" --rounds "$n" "${list[@]}" > "$out/cf-$s-$r$sfx.tsv" 2>>"$out/cf.err" || true
        done
    done
    echo "bench_compress_vs_acl.sh: round $r done" >&2
done

python3 - "$out" "$rounds" "$reps" "${sets[@]}" <<'PY'
import csv, os, statistics, sys
out, rounds, reps, sets = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
def med(paths, col):
    v = {}
    for p in paths:
        if not os.path.exists(p):
            continue
        for row in csv.DictReader(open(p), delimiter="\t"):
            v.setdefault(row["clip"], []).append(float(row[col]))
    return {k: statistics.median(x) for k, x in v.items()}
def tables(tool, s, ext):
    return [f"{out}/{tool}-{s}-{r}{sfx}{ext}" for r in range(1, rounds + 1) for sfx in ("", "-small")]
for s in sets:
    acl = med(tables("acl", s, ".cpu.tsv"), "compress_cpu_ms")
    cf = med(tables("cf", s, ".tsv"), "cpu_ms")
    small = set(med([f"{out}/acl-{s}-{r}-small.cpu.tsv" for r in range(1, rounds + 1)], "compress_cpu_ms"))
    both = sorted(set(acl) & set(cf))
    ta, tc = sum(acl[c] for c in both), sum(cf[c] for c in both)
    faster = sum(cf[c] < acl[c] for c in both)
    print(f"{s}: {len(both)} clips, ACL {ta:.1f} ms, ClipForge {tc:.1f} ms, ratio {tc / ta:.2f}; "
          f"ClipForge faster on {faster}")
    if small:
        worst = sorted(((cf[c] / acl[c], c) for c in both if c in small), reverse=True)[:3]
        print(f"  {len(small & set(both))} small clips, median of {reps} repetitions a round: "
              + ", ".join(f"{c} {cf[c]:.3f} vs {acl[c]:.3f} ms ({x:.2f}x)" for x, c in worst))
    slow = [(cf[c] / acl[c], c) for c in both if cf[c] > 1.5 * acl[c]]
    for ratio, c in sorted(slow, reverse=True):
        print(f"  slower than 1.5x ACL: {c}: ClipForge {cf[c]:.3f} ms, ACL {acl[c]:.3f} ms ({ratio:.2f}x)")
    for c in sorted(set(acl) ^ set(cf)):
        print(f"  measured by one tool only: {c}")
PY
