#!/usr/bin/env bash
# Times ACL 2.1 (the reference anchor) on this machine: compression and decompression patterns
# that the ClipForge side reproduces (anchors/acl/README.md). Builds anchors/acl/acl_bench.cpp
# against ../shared/anchors-src (never copied into the repo) if the binary is missing or stale,
# converts the shared BVH clips to .acl.sjson in a cache dir, and writes one TSV row per clip.
#
# usage: scripts/bench_acl.sh [--rounds N] [--set regression|bvh|all] [--rebuild] [OUT.tsv]
#   --rounds N   compression rounds per clip (median reported; default 5)
#   --set S      regression: the ACL regression transform clips (the 26 transform_clip rows of
#                acl-baseline.tsv; 25 rows come out, 09_02_with_inf_error crashes ACL);
#                bvh: the 42 shared BVH clips (acl-bvh-baseline.tsv);
#                all: both, one table (default)
#   --rebuild    rebuild the harness even if it looks up to date
#   OUT.tsv      where the table goes (default: stdout); the harness's messages (skipped,
#                refused and crashed clips) go to stderr and, with OUT.tsv, to OUT.log too;
#                with OUT.tsv, OUT.cpu.tsv gets compression's thread CPU times (see README)
# environment:
#   CLIPFORGE_SHARED  shared folder (default: <repo>/../shared)
#   CARGO_TARGET_DIR  build outputs go to $CARGO_TARGET_DIR/anchors/acl
#                     (default: ~/.cache/clipforge-target/anchors/acl)
#   CXX               compiler (default g++)
#   ACL_BENCH_ARGS    extra harness options, e.g. "--passes 51 --blocks 51" (acl_bench --help)
# exit status: 0 when every clip was measured or skipped, or only refused/crashed in ACL (listed
# on stderr, e.g. 09_02_with_inf_error); non-zero on any set-up or build error.
set -euo pipefail

die() { echo "bench_acl.sh: error: $*" >&2; exit 1; }

rounds=5
set_name=all
rebuild=0
out=""
while [[ $# -gt 0 ]]; do
    case "$1" in
        --rounds) [[ $# -ge 2 ]] || die "--rounds needs a value"; rounds="$2"; shift 2 ;;
        --set) [[ $# -ge 2 ]] || die "--set needs a value"; set_name="$2"; shift 2 ;;
        --rebuild) rebuild=1; shift ;;
        -h|--help) sed -n '2,23p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) die "unknown option $1 (see --help)" ;;
        *) [[ -z "$out" ]] || die "only one OUT.tsv"; out="$1"; shift ;;
    esac
done
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || die "--rounds must be a positive integer, got '$rounds'"
case "$set_name" in regression|bvh|all) ;; *) die "--set must be regression, bvh or all, got '$set_name'" ;; esac

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
shared="${CLIPFORGE_SHARED:-$repo/../shared}"
[[ -d "$shared" ]] || die "shared folder not found: $shared (set CLIPFORGE_SHARED)"
shared="$(cd "$shared" && pwd)"
src="$shared/anchors-src"
for d in "$src/acl/includes/acl" "$src/rtm/includes/rtm" "$src/sjson-cpp/includes/sjson"; do
    [[ -d "$d" ]] || die "missing $d (ACL, RTM and sjson-cpp headers are expected in $src)"
done
cxx="${CXX:-g++}"
command -v "$cxx" >/dev/null 2>&1 || die "C++ compiler '$cxx' not found (apt-get install g++, or set CXX)"

build_dir="${CARGO_TARGET_DIR:-$HOME/.cache/clipforge-target}/anchors/acl"
mkdir -p "$build_dir"
bin="$build_dir/acl_bench"
harness_src="$repo/anchors/acl/acl_bench.cpp"
[[ -f "$harness_src" ]] || die "missing $harness_src"

# Same flags as ACL's default x64 release build (SSE4.1, -O3, C++11), asserts off.
cxxflags=(-std=c++11 -O3 -DNDEBUG -DACL_USE_SJSON -m64 -msse4.1 -Wall -Wextra
          -I "$src/acl/includes" -I "$src/rtm/includes" -I "$src/sjson-cpp/includes")
stamp="$build_dir/acl_bench.flags"
want_stamp="$("$cxx" --version | head -n 1) ${cxxflags[*]}"
if [[ $rebuild -eq 1 || ! -x "$bin" || "$harness_src" -nt "$bin" || ! -f "$stamp" || "$(cat "$stamp")" != "$want_stamp" ]]; then
    echo "bench_acl.sh: building $bin" >&2
    # One translation unit, one compiler process, niced: the machine is shared.
    nice -n 10 "$cxx" "${cxxflags[@]}" "$harness_src" -o "$bin.tmp" || die "build failed"
    mv "$bin.tmp" "$bin"
    printf '%s' "$want_stamp" > "$stamp"
fi

clips=()
if [[ "$set_name" == regression || "$set_name" == all ]]; then
    index="$shared/reference/acl-baseline.tsv"
    data="$shared/data/acl-regression"
    [[ -f "$index" ]] || die "missing $index (list of the regression clips)"
    [[ -d "$data" ]] || die "missing $data"
    n=0
    while IFS= read -r name; do
        f="$data/$name.acl.sjson"
        [[ -f "$f" ]] || die "missing regression clip $f"
        clips+=("$f"); n=$((n + 1))
    done < <(awk -F'\t' 'NR > 1 && $2 == "transform_clip" { print $1 }' "$index")
    [[ $n -gt 0 ]] || die "no transform clips listed in $index"
fi

if [[ "$set_name" == bvh || "$set_name" == all ]]; then
    index="$shared/reference/acl-bvh-baseline.tsv"
    conv="$shared/tools/bvh_to_acl.py"
    [[ -f "$index" ]] || die "missing $index (list of the shared BVH clips)"
    [[ -f "$conv" ]] || die "missing $conv"
    command -v python3 >/dev/null 2>&1 || die "python3 not found (needed by bvh_to_acl.py)"
    cache="$build_dir/bvh-acl-sjson"
    mkdir -p "$cache"
    n=0
    # Column 3 is "shared/data/bvh/..." (relative to the folder holding shared/).
    while IFS= read -r rel; do
        bvh="$shared/${rel#shared/}"
        [[ -f "$bvh" ]] || die "missing BVH clip $bvh"
        name="$(basename "$bvh" .bvh)"
        f="$cache/$name.acl.sjson"
        if [[ ! -s "$f" || "$bvh" -nt "$f" || "$conv" -nt "$f" ]]; then
            echo "bench_acl.sh: converting $rel" >&2
            nice -n 10 python3 "$conv" "$bvh" "$f.tmp" || die "bvh_to_acl.py failed on $bvh"
            mv "$f.tmp" "$f"
        fi
        clips+=("$f"); n=$((n + 1))
    done < <(awk -F'\t' 'NR > 1 { print $3 }' "$index")
    [[ $n -gt 0 ]] || die "no BVH clips listed in $index"
fi

read -r -a extra <<< "${ACL_BENCH_ARGS:-}"
echo "bench_acl.sh: ${#clips[@]} clips, set $set_name, $rounds compression rounds, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)" >&2

status=0
if [[ -n "$out" ]]; then
    mkdir -p "$(dirname "$out")"
    log="${out%.tsv}.log"
    # stdout (the table) to the file; stderr through tee, synchronously (pipefail keeps the status).
    cpu="${out%.tsv}.cpu.tsv"
    { "$bin" --rounds "$rounds" --cpu-tsv "$cpu" "${extra[@]}" "${clips[@]}" 2>&1 1>"$out.tmp" | tee "$log" >&2; } || status=$?
else
    "$bin" --rounds "$rounds" "${extra[@]}" "${clips[@]}" || status=$?
fi
case $status in
    0) ;;
    3) echo "bench_acl.sh: some clips were refused or crashed in ACL (see the messages above); their rows are absent" >&2 ;;
    *) [[ -n "$out" ]] && rm -f "$out.tmp"; die "acl_bench failed (exit status $status)" ;;
esac
if [[ -n "$out" ]]; then
    mv "$out.tmp" "$out"
    echo "bench_acl.sh: wrote $out ($(($(wc -l < "$out") - 1)) rows), $cpu and $log" >&2
fi
