#!/usr/bin/env bash
# Decode speed of clipforge-runtime against ACL 2.1, side by side in one run: ACL's harness
# (scripts/bench_acl.sh, anchors/acl/) and ours (crates/runtime/benches/runtime_vs_acl.rs) on the
# same clips with the same patterns (anchors/acl/README.md), in alternating rounds (ACL, ours,
# ACL, ours, ...) so that both see the same load on a shared machine. Our .cfa files are written by
# `clipforge compress` (default settings) from the very .acl.sjson files ACL compresses.
#
# usage: scripts/bench_runtime_vs_acl.sh [--rounds N] [--set regression|bvh|all] [--quick]
#                                        [--before BENCH_BIN [--before-cli CLI]] [--baseline-too]
#                                        [--sampler-too]
#                                        [OUT_DIR]
#   --rounds N   alternating rounds (default 2); each clip's figure is its median over the rounds
#   --set S      regression (25 ACL regression clips), bvh (42 BVH clips) or all (default)
#   --quick      fewer timed blocks and passes (31 instead of 101): for iterating, not for figures
#   --before B   also run B, a runtime_vs_acl binary built from an older commit, in every round
#                (ACL, ours, B, ...): a before/after comparison in the same run, beside ACL
#   --before-cli C  with --before: B reads .cfa files that the CLI C (of B's commit) writes
#                (for a B that predates the current .cfa version); default: ours
#   --baseline-too  also run ours with --baseline in every round (the full pose's SSE2 copy,
#                what a CPU without AVX2 + BMI2 runs), printed as side "baseline"
#   --sampler-too   also run ours with --sampler in every round (the full-pose patterns through a
#                `Sampler`, its per-segment cache kept between calls), printed as side "sampler"
#   OUT_DIR      where the per-round TSVs and the summary go (default: a temporary folder)
# environment: CLIPFORGE_SHARED (default <repo>/../shared), CARGO_TARGET_DIR, CXX (as bench_acl.sh)
# Prints, per set and pattern: the median over clips of ACL's and our ns per call, and the median,
# min and max of the per-clip ratios ours/ACL. The single-sample clips (121_10, 90_10: duration 0)
# and the 0-bone clip are left out of the summary, as in anchors/acl/README.md ("22 clips").
set -euo pipefail

die() { echo "bench_runtime_vs_acl.sh: error: $*" >&2; exit 1; }

rounds=2
set_name=all
quick=0
before=""
before_cli=""
baseline_too=0
sampler_too=0
out=""
while [[ $# -gt 0 ]]; do
    case "$1" in
        --rounds) [[ $# -ge 2 ]] || die "--rounds needs a value"; rounds="$2"; shift 2 ;;
        --set) [[ $# -ge 2 ]] || die "--set needs a value"; set_name="$2"; shift 2 ;;
        --quick) quick=1; shift ;;
        --before) [[ $# -ge 2 ]] || die "--before needs a value"; before="$2"; shift 2 ;;
        --before-cli) [[ $# -ge 2 ]] || die "--before-cli needs a value"; before_cli="$2"; shift 2 ;;
        --baseline-too) baseline_too=1; shift ;;
        --sampler-too) sampler_too=1; shift ;;
        -h|--help) sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) die "unknown option $1 (see --help)" ;;
        *) [[ -z "$out" ]] || die "only one OUT_DIR"; out="$1"; shift ;;
    esac
done
[[ -z "$before" || -x "$before" ]] || die "--before: not an executable: $before"
[[ -z "$before_cli" || ( -n "$before" && -x "$before_cli" ) ]] || die "--before-cli: needs --before and an executable: $before_cli"
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || die "--rounds must be a positive integer, got '$rounds'"
case "$set_name" in regression) sets=(regression) ;; bvh) sets=(bvh) ;; all) sets=(regression bvh) ;;
    *) die "--set must be regression, bvh or all, got '$set_name'" ;; esac

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
shared="${CLIPFORGE_SHARED:-$repo/../shared}"
[[ -d "$shared" ]] || die "shared folder not found: $shared (set CLIPFORGE_SHARED)"
shared="$(cd "$shared" && pwd)"
export CLIPFORGE_SHARED="$shared"
target="${CARGO_TARGET_DIR:-$HOME/.cache/clipforge-target}"
export CARGO_TARGET_DIR="$target"
[[ -n "$out" ]] || out="$(mktemp -d)"
mkdir -p "$out"
blocks_args=()
[[ $quick -eq 1 ]] && blocks_args=(--passes 31 --blocks 31)

# Our side: the CLI (to compress) and the bench binary, built once.
echo "bench_runtime_vs_acl.sh: building clipforge and the runtime bench" >&2
(cd "$repo" && nice -n 10 cargo build --release --no-default-features --bin clipforge >&2) || die "building clipforge failed"
bench_bin="$(cd "$repo" && nice -n 10 cargo bench --no-run -p clipforge-runtime --bench runtime_vs_acl --message-format=json 2>/dev/null \
    | python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "runtime_vs_acl" and m.get("executable"):
        print(m["executable"])')" || die "building the runtime bench failed"
[[ -x "$bench_bin" ]] || die "no runtime bench binary"
cli="$target/release/clipforge"

# The ACL harness and the BVH conversion: one quick bench_acl.sh run on a tiny clip builds both
# when stale (it converts the whole BVH list); its own table is not used.
for s in "${sets[@]}"; do
    ACL_BENCH_ARGS="--passes 1 --blocks 1" "$repo/scripts/bench_acl.sh" --rounds 1 --set "$s" "$out/prepare_$s.tsv" \
        >/dev/null 2>"$out/prepare_$s.err" || die "bench_acl.sh failed (see $out/prepare_$s.err)"
done
acl_bin="$target/anchors/acl/acl_bench"

clip_list() { # set -> .acl.sjson paths, one a line, in the order bench_acl.sh uses
    if [[ "$1" == regression ]]; then
        awk -F'\t' -v d="$shared/data/acl-regression" 'NR > 1 && $2 == "transform_clip" { print d "/" $1 ".acl.sjson" }' \
            "$shared/reference/acl-baseline.tsv"
    else
        awk -F'\t' 'NR > 1 { print $3 }' "$shared/reference/acl-bvh-baseline.tsv" | while IFS= read -r rel; do
            echo "$target/anchors/acl/bvh-acl-sjson/$(basename "$rel" .bvh).acl.sjson"
        done
    fi
}

for s in "${sets[@]}"; do
    mapfile -t sjson < <(clip_list "$s")
    # Compress with the default settings; a clip the compressor refuses (09_02_with_inf_error)
    # has no .cfa and no row, like ACL's crash on it.
    rm -rf "$out/cfa_$s"
    nice -n 10 "$cli" compress --quiet --no-skip "${sjson[@]}" -o "$out/cfa_$s" >"$out/compress_$s.log" 2>&1 || true
    cfa=()
    for f in "${sjson[@]}"; do
        c="$out/cfa_$s/$(basename "$f" .acl.sjson).cfa"
        [[ -f "$c" ]] && cfa+=("$c")
    done
    before_cfa=("${cfa[@]}")
    if [[ -n "$before_cli" ]]; then
        rm -rf "$out/cfa_${s}_before"
        nice -n 10 "$before_cli" compress --quiet --no-skip "${sjson[@]}" -o "$out/cfa_${s}_before" >"$out/compress_${s}_before.log" 2>&1 || true
        before_cfa=()
        for c in "${cfa[@]}"; do
            before_cfa+=("$out/cfa_${s}_before/$(basename "$c")")
        done
    fi
    echo "bench_runtime_vs_acl.sh: set $s: ${#sjson[@]} clips, ${#cfa[@]} compressed; $rounds rounds, load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
    for ((r = 1; r <= rounds; r++)); do
        "$acl_bin" --rounds 1 "${blocks_args[@]}" "${sjson[@]}" >"$out/acl_${s}_$r.tsv" 2>>"$out/acl_${s}.log" || true
        "$bench_bin" "${blocks_args[@]}" "${cfa[@]}" >"$out/ours_${s}_$r.tsv" 2>>"$out/ours_${s}.log" || die "runtime bench failed (see $out/ours_${s}.log)"
        if [[ -n "$before" ]]; then
            "$before" "${blocks_args[@]}" "${before_cfa[@]}" >"$out/before_${s}_$r.tsv" 2>>"$out/before_${s}.log" || die "--before bench failed (see $out/before_${s}.log)"
        fi
        if [[ $baseline_too -eq 1 ]]; then
            "$bench_bin" --baseline "${blocks_args[@]}" "${cfa[@]}" >"$out/baseline_${s}_$r.tsv" 2>>"$out/baseline_${s}.log" || die "--baseline bench failed (see $out/baseline_${s}.log)"
        fi
        if [[ $sampler_too -eq 1 ]]; then
            "$bench_bin" --sampler "${blocks_args[@]}" "${cfa[@]}" >"$out/sampler_${s}_$r.tsv" 2>>"$out/sampler_${s}.log" || die "--sampler bench failed (see $out/sampler_${s}.log)"
        fi
        echo "bench_runtime_vs_acl.sh: set $s: round $r done, load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
    done
done

extra_sides="${before:+before}"
[[ $baseline_too -eq 1 ]] && extra_sides="${extra_sides:+$extra_sides,}baseline"
[[ $sampler_too -eq 1 ]] && extra_sides="${extra_sides:+$extra_sides,}sampler"
python3 - "$out" "$rounds" "$extra_sides" "${sets[@]}" <<'PY' | tee "$out/summary.txt"
import csv, statistics, sys
out, rounds, extra, sets = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:]
extra = [x for x in extra.split(",") if x]
cols = ["pose_cold_ns", "pose_warm_ns", "playback_ns", "seek_ns", "bone_ns", "bones8_ns"]
def load(side, s):
    per = {}
    for r in range(1, rounds + 1):
        with open(f"{out}/{side}_{s}_{r}.tsv") as f:
            for row in csv.DictReader(f, delimiter="\t"):
                per.setdefault(row["clip"], []).append(row)
    return per
# With --before (--baseline-too, --sampler-too), each pattern gets another line for the older
# binary ("before"; our SSE2 copy, "baseline"; our Sampler, "sampler"), against the same ACL
# figures.
sides = ["ours"] + extra
print("set\tpattern\tclips\tacl_ns\tours_ns\tratio_median\tratio_min\tratio_max" + ("\tside" if extra else ""))
for s in sets:
    acl = load("acl", s)
    runs = {side: load(side, s) for side in sides}
    clips = [c for c in acl if all(c in r for r in runs.values()) and int(acl[c][0]["bones"]) > 0 and int(acl[c][0]["samples"]) > 1]
    for col in cols:
        a = {c: statistics.median(float(x[col]) for x in acl[c]) for c in clips}
        for side in sides:
            o = {c: statistics.median(float(x[col]) for x in runs[side][c]) for c in clips}
            ratios = [o[c] / a[c] for c in clips]
            print(f"{s}\t{col}\t{len(clips)}\t{statistics.median(a.values()):.1f}\t{statistics.median(o.values()):.1f}\t"
                  f"{statistics.median(ratios):.3f}\t{min(ratios):.3f}\t{max(ratios):.3f}" + (f"\t{side}" if extra else ""))
    ours = runs["ours"]
    sa = sum(int(acl[c][0]["acl_bytes"]) for c in clips)
    so = sum(int(ours[c][0]["acl_bytes"]) for c in clips)
    print(f"{s}\tbytes\t{len(clips)}\t{sa}\t{so}\t{so / sa:.3f}\t\t")
    if "before" in extra:
        sb = sum(int(runs["before"][c][0]["acl_bytes"]) for c in clips)
        print(f"{s}\tbytes\t{len(clips)}\t{sa}\t{sb}\t{sb / sa:.3f}\t\t\tbefore")
PY
echo "bench_runtime_vs_acl.sh: tables in $out" >&2
