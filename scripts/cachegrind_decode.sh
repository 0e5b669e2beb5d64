#!/usr/bin/env bash
# Cache misses and instructions per full-pose call, ours against ACL 2.1, under valgrind's cache
# simulation (callgrind --cache-sim=yes): what the cold and warm patterns of
# scripts/bench_runtime_vs_acl.sh cost in lines fetched from memory and in instructions, counted
# rather than timed (issue 23). The two timed harnesses are not changed: each is copied into a
# temporary folder with its full-pose call (seek + decode) moved into a function that is never
# inlined, `probe_cold` in the cold loop and `probe_warm` in the warm patterns, and callgrind
# collects events inside that function only (--toggle-collect). The simulated caches are set
# explicitly (32 KiB 8-way L1, 32 MiB 16-way last level, 64-byte lines): valgrind would take this
# VM's reported L3 (320 MiB, direct mapped), which the cold pattern's 40 MiB flush never evicts.
#
# usage: scripts/cachegrind_decode.sh [--passes N] [--baseline] CLIP.acl.sjson...
#   --passes N   cold passes of 220 calls (default 3; pass 0 is run too); the warm patterns run
#                6 blocks each (5 warm-up + 1)
#   --baseline   ours: the full pose's build-target (SSE2) copy instead of the AVX2 one
# environment: CLIPFORGE_SHARED (default <repo>/../shared), CARGO_TARGET_DIR (our probe builds in
#   $CARGO_TARGET_DIR/cachegrind-probe), CXX (default g++)
# Prints one line per clip, side and pattern: calls, then instructions (Ir), L1 data read misses
# (D1mr) and last-level data read misses (DLmr) per call. Each .acl.sjson is compressed by
# `clipforge compress` (default settings) for our side and by ACL with its defaults for ACL's.
set -euo pipefail

die() { echo "cachegrind_decode.sh: error: $*" >&2; exit 1; }

passes=3
baseline=()
clips=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --passes) [[ $# -ge 2 ]] || die "--passes needs a value"; passes="$2"; shift 2 ;;
        --baseline) baseline=(--baseline); shift ;;
        -h|--help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) die "unknown option $1 (see --help)" ;;
        *) clips+=("$1"); shift ;;
    esac
done
[[ ${#clips[@]} -gt 0 ]] || die "no clip given (see --help)"
[[ "$passes" =~ ^[1-9][0-9]*$ ]] || die "--passes must be a positive integer, got '$passes'"
command -v valgrind >/dev/null 2>&1 || die "valgrind not found (apt-get install valgrind)"

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
shared="${CLIPFORGE_SHARED:-$repo/../shared}"
[[ -d "$shared" ]] || die "shared folder not found: $shared (set CLIPFORGE_SHARED)"
src="$(cd "$shared" && pwd)/anchors-src"
target="${CARGO_TARGET_DIR:-$HOME/.cache/clipforge-target}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# Our probe: the bench's source with the two call sites moved into never-inlined functions,
# built as its own package against this checkout's runtime (the workspace's lock file pins the
# same dependency versions).
mkdir -p "$work/probe/src"
cat >"$work/probe/Cargo.toml" <<EOF
[package]
name = "probe"
version = "0.1.0"
edition = "2024"
[dependencies]
clipforge-runtime = { path = "$repo/crates/runtime" }
[profile.release]
debug = "line-tables-only"
[workspace]
EOF
cp "$repo/Cargo.lock" "$work/probe/"
python3 - "$repo/crates/runtime/benches/runtime_vs_acl.rs" "$work/probe/src/main.rs" <<'PY'
import sys
s = open(sys.argv[1]).read()
subs = [
    ("None => readers[call % COLD_COPIES].sample_pose(t, looping, &mut pose),",
     "None => probe_cold(&readers[call % COLD_COPIES], t, looping, &mut pose),"),
    ("None => reader.sample_pose(t, looping, p),",
     "None => probe_warm(reader, t, looping, p),"),
]
for a, b in subs:
    assert s.count(a) == 1, f"call site not found in the bench: {a}"
    s = s.replace(a, b)
s += """
#[inline(never)]
fn probe_cold(r: &ClipReader, t: f32, l: Looping, p: &mut Pose) {
    r.sample_pose(t, l, p)
}
#[inline(never)]
fn probe_warm(r: &ClipReader, t: f32, l: Looping, p: &mut Pose) {
    r.sample_pose(t, l, p)
}
"""
open(sys.argv[2], "w").write(s)
PY
echo "cachegrind_decode.sh: building our probe" >&2
(cd "$work/probe" && CARGO_TARGET_DIR="$target/cachegrind-probe" nice -n 10 cargo build --release --quiet) \
    || die "building our probe failed"
ours="$target/cachegrind-probe/release/probe"

# ACL's probe: its harness with the same two call sites moved into `noipa` functions (never
# inlined, never merged with each other), built with bench_acl.sh's flags.
python3 - "$repo/anchors/acl/acl_bench.cpp" "$work/acl_probe.cpp" <<'PY'
import sys
s = open(sys.argv[1]).read()
subs = [
    ("\t\t\t\t\tctx.seek(times.even[call_index % n], rounding);\n\t\t\t\t\tctx.decompress_tracks(writer);",
     "\t\t\t\t\tprobe_cold(ctx, times.even[call_index % n], writer);"),
    ("\t\tauto pose_call = [&](uint64_t, float t)\n\t\t{\n\t\t\tctx.seek(t, rounding);\n\t\t\tctx.decompress_tracks(writer);\n\t\t};",
     "\t\tauto pose_call = [&](uint64_t, float t)\n\t\t{\n\t\t\tprobe_warm(ctx, t, writer);\n\t\t};"),
    ("\ttemplate<bool write_defaults>\n\tvoid measure_decompression(",
     "\ttemplate<class C, class W> __attribute__((noipa)) void probe_cold(C& ctx, float t, W& w)\n"
     "\t{ ctx.seek(t, acl::sample_rounding_policy::none); ctx.decompress_tracks(w); }\n"
     "\ttemplate<class C, class W> __attribute__((noipa)) void probe_warm(C& ctx, float t, W& w)\n"
     "\t{ ctx.seek(t, acl::sample_rounding_policy::none); ctx.decompress_tracks(w); }\n"
     "\ttemplate<bool write_defaults>\n\tvoid measure_decompression("),
]
for a, b in subs:
    assert s.count(a) == 1, f"call site not found in the ACL harness: {a!r}"
    s = s.replace(a, b)
open(sys.argv[2], "w").write(s)
PY
echo "cachegrind_decode.sh: building ACL's probe" >&2
nice -n 10 "${CXX:-g++}" -std=c++11 -O3 -DNDEBUG -DACL_USE_SJSON -m64 -msse4.1 -g \
    -I "$src/acl/includes" -I "$src/rtm/includes" -I "$src/sjson-cpp/includes" \
    "$work/acl_probe.cpp" -o "$work/acl_probe" || die "building ACL's probe failed"

echo "cachegrind_decode.sh: building clipforge" >&2
(cd "$repo" && CARGO_TARGET_DIR="$target" nice -n 10 cargo build --release --quiet --no-default-features --bin clipforge) \
    || die "building clipforge failed"
nice -n 10 "$target/release/clipforge" compress --quiet --no-skip "${clips[@]}" -o "$work/cfa" >/dev/null 2>&1 || true

vg=(valgrind --tool=callgrind --cache-sim=yes --D1=32768,8,64 --I1=32768,8,64 --LL=33554432,16,64
    --collect-atstart=no)
per_call() { # callgrind output, pattern -> "calls Ir D1mr DLmr" per call
    python3 - "$1" "$2" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
ev = re.search(r"^events: (.*)$", text, re.M).group(1).split()
tot = dict(zip(ev, map(int, re.search(r"^totals: (.*)$", text, re.M).group(1).split())))
# Calls into the probe's callee (our sample_pose / ACL's decompress_tracks_v0), which is
# called once per probe call.
names, calls = {}, 0
lines = text.splitlines()
want = "decompress_tracks_v0" if "acl" in sys.argv[2] else "sample_pose"
for i, l in enumerate(lines):
    m = re.match(r"^c?fn=\((\d+)\)(?: (.*))?$", l)
    if m and m.group(2):
        names[m.group(1)] = m.group(2)
    if l.startswith("cfn="):
        n = names.get(re.match(r"^cfn=\((\d+)\)", l).group(1), "")
        if want in n and "probe" not in n and lines[i + 1].startswith("calls="):
            calls += int(lines[i + 1].split("=")[1].split()[0])
c = max(calls, 1)
print(f"{calls}\t{tot['Ir'] / c:.0f}\t{tot['D1mr'] / c:.1f}\t{tot['DLmr'] / c:.1f}")
PY
}
printf 'clip\tside\tpattern\tcalls\tIr_per_call\tD1mr_per_call\tDLmr_per_call\n'
for sj in "${clips[@]}"; do
    name="$(basename "$sj" .acl.sjson)"
    cfa="$work/cfa/$name.cfa"
    [[ -f "$cfa" ]] || { echo "cachegrind_decode.sh: $name: not compressed, skipped" >&2; continue; }
    for pat in cold warm; do
        nice -n 10 "${vg[@]}" "--toggle-collect=*probe_$pat*" --callgrind-out-file="$work/ours.out" \
            "$ours" "${baseline[@]}" --passes "$passes" --blocks 1 "$cfa" >/dev/null 2>"$work/vg.log" \
            || die "valgrind on our probe failed (see $work/vg.log)"
        printf '%s\tours\t%s\t%s\n' "$name" "$pat" "$(per_call "$work/ours.out" ours)"
        nice -n 10 "${vg[@]}" "--toggle-collect=*probe_$pat*" --callgrind-out-file="$work/acl.out" \
            "$work/acl_probe" --no-fork --rounds 1 --passes "$passes" --blocks 1 "$sj" >/dev/null 2>"$work/vg.log" \
            || die "valgrind on ACL's probe failed (see $work/vg.log)"
        printf '%s\tacl\t%s\t%s\n' "$name" "$pat" "$(per_call "$work/acl.out" acl)"
    done
done
