#!/usr/bin/env bash
# A real project tree nobody here wrote: gRPC core 1.66.1 (the `grpcio` source distribution from
# PyPI: gRPC's src/core plus its vendored abseil, BoringSSL, re2, upb, c-ares, zlib headers).
# The TUs outside src/core are deleted (their headers stay), leaving 886 TUs (569 .cc, 317 .c)
# in a 3,496-file tree, with the include dirs and defines of grpcio's setup.py.
#
# Runs: g++ -M -MG ground truth (../shared/tools/headers/gt.py, 2 workers), Header Hero's
# algorithm (hh_emul.py), then `clipforge headers` cold / warm / touched-one-header, and compares
# Total Parsed and the per-TU closures (preprocessed vs g++), and the all-branches numbers vs
# hh_emul. CPU times (user+sys) are printed beside wall times: the machine is shared.
#
# usage: scripts/headers_grpc.sh [path/to/clipforge]
# env:   WORK=/tmp/cf-grpc  TOOLS=../shared/tools/headers  SKIP_GT=1 (reuse $WORK/gt)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-${CARGO_TARGET_DIR:-$here/target}/release/clipforge}
tools=${TOOLS:-$here/../shared/tools/headers}
work=${WORK:-/tmp/cf-grpc}
url=https://files.pythonhosted.org/packages/e7/42/94293200e40480d79fc876b2330e7dffb20f959b390afa77c0dbaa0c8372/grpcio-1.66.1.tar.gz
sha=35334f9c9745add3e357e3372756fd32d925bd52c41da97f4dfdafbde0bf0ee2
mkdir -p "$work"
tgz=$work/grpcio-1.66.1.tar.gz
if [[ ! -f $tgz ]]; then curl -sSfL -o "$tgz" "$url"; fi
echo "$sha  $tgz" | sha256sum -c --quiet
tree=$work/tree
rm -rf "$tree"
mkdir -p "$tree"
tar xzf "$tgz" -C "$tree" --strip-components=1
cd "$tree"
find . -type f \( -name '*.c' -o -name '*.cc' -o -name '*.cpp' -o -name '*.cxx' -o -name '*.m' -o -name '*.mm' \) \
  -not -path './src/core/*' -delete
incs="src/python/grpcio include . third_party/abseil-cpp third_party/address_sorting/include
  third_party/cares/cares/include third_party/cares third_party/cares/cares third_party/cares/config_linux
  third_party/re2 third_party/boringssl-with-bazel/src/include third_party/upb src/core/ext/upb-gen
  src/core/ext/upbdefs-gen third_party/utf8_range third_party/xxhash third_party/zlib"
defs="_WIN32_WINNT=0x600 OPENSSL_NO_ASM=1"
gt_inc=() ; hh_inc=() ; ours=()
for d in $incs; do gt_inc+=(--inc "$d"); hh_inc+=(--inc "$d"); ours+=(-I "$d"); done
for d in $defs; do gt_inc+=(--def "$d"); ours+=(-D "$d"); done
echo "tree: $(find . -type f | wc -l) files, $(find . -type f \( -name '*.c' -o -name '*.cc' \) | wc -l) TUs"

if [[ -z ${SKIP_GT:-} || ! -f $work/gt/ground_truth.json ]]; then
  /usr/bin/time -f "g++ -M -MG (gt.py, 2 workers): %e s wall, %U s user, %S s sys" \
    python3 "$tools/gt.py" . "$work/gt" "${gt_inc[@]}" --std c++17 --jobs 2 > "$work/gt.log"
  python3 "$tools/hh_emul.py" . "$work/gt" "${hh_inc[@]}" > "$work/hh.log"
fi

cache=$work/ours.cache
runs=${RUNS:-7}
timed() { python3 "$here/scripts/headers_time.py" "$@"; }
ours_cmd=("$bin" headers . "${ours[@]}" --std c++17 --cache "$cache" -q)
timed "$runs" "ours cold (--clean --json)" -- "${ours_cmd[@]}" --clean --json "$work/ours_pre.json"
timed "$runs" "ours warm, nothing changed" -- "${ours_cmd[@]}"
# The per-TU closures (~30 MB of JSON) for the comparison, written by an untimed run.
"${ours_cmd[@]}" --closures "$work/ours_closures.json" > /dev/null
"$bin" headers . "${ours[@]}" --std c++17 --mode all-branches --no-cache -q --json "$work/ours_all.json" > /dev/null
# One header edited: a line appended (its directives unchanged: the file is re-read and counted
# again, no TU re-evaluated); then its #includes changed (every TU reaching it is re-evaluated).
# Each run starts from the unchanged tree, restored and rescanned after it.
h=src/core/lib/gprpp/ref_counted.h
cp "$h" "$work/header.bak"
restore="cp $work/header.bak $h && ${ours_cmd[*]} > /dev/null"
timed "$runs" "ours, one header touched ($h: a line appended)" \
  --pre "echo '// touched' >> $h" --post "$restore" -- "${ours_cmd[@]}"
timed 3 "ours, one header's #includes changed ($h: #include <deque> added)" \
  --pre "sed -i '0,/^#include/s//#include <deque>\n#include/' $h" --post "$restore" -- "${ours_cmd[@]}"
sed -i '0,/^#include/s//#include <deque>\n#include/' "$h"
"${ours_cmd[@]}" | grep '^scan' | sed 's/^/  after the #include change: /'
cp "$work/header.bak" "$h"

python3 - "$work" "$tree" <<'EOF'
import json, os, sys
w, tree = sys.argv[1], os.path.realpath(sys.argv[2])
gt = json.load(open(f"{w}/gt/ground_truth.json"))
full = json.load(open(f"{w}/gt/_closures_full.json"))
p = json.load(open(f"{w}/ours_pre.json"))
a = json.load(open(f"{w}/ours_all.json"))
hh = json.load(open(f"{w}/gt/regex_scan_emulation.json"))
ours = {os.path.relpath(k, tree): {os.path.relpath(f, tree) for f in v}
        for k, v in json.load(open(f"{w}/ours_closures.json")).items()}
files = full["files"]
truth = {tu: {files[i] for i in idx} for tu, idx in full["tu_closures"].items()}
same = sum(1 for tu, c in truth.items() if ours.get(tu) == c)
print(f"preprocessed vs g++ -M: TUs {p['translation_units']} vs {gt['tu_count']}; closures identical "
      f"{same}/{len(truth)} ({100.0 * same / max(1, len(truth)):.1f}%)")
for k in ["files", "total_lines", "total_parsed"]:
    d = 100.0 * (p[k] - gt[k]) / gt[k] if gt[k] else 0
    print(f"  {k:<14} g++ {gt[k]:>12}  ours {p[k]:>12}  {d:+.3f}%")
bad = [tu for tu, c in truth.items() if ours.get(tu) != c][:5]
for tu in bad:
    o = ours.get(tu, set())
    print(f"  differs: {tu}: only g++ {sorted(truth[tu] - o)[:4]}, only ours {sorted(o - truth[tu])[:4]}")
print("all branches vs hh_emul.py:")
for name, x, y in [("files", hh["files"], a["files"]), ("translation_units", hh["tu_count"], a["translation_units"]),
                   ("total_lines", hh["total_lines"], a["total_lines"]),
                   ("total_parsed", hh["total_parsed_true_reachability"], a["total_parsed"])]:
    print(f"  {name:<18} hh_emul {x:>12}  ours {y:>12}  {'OK' if x == y else 'DIFF'}")
print(f"g++ -M pass: {gt['gxx_pass']['wall_s']} s wall (2 workers); ours cold scan_seconds {p['scan_seconds']:.3f}")
EOF
