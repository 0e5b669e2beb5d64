#!/usr/bin/env bash
# "all branches" mode vs Header Hero 2011 (../shared/tools/headers/hh_emul.py, checked against the
# original) on a real tree: a copy of Boost or libstdc++ used as a project (-I inc), one TU per
# public header. Also runs gt.py (g++ -M ground truth, which hh_emul.py needs) and prints our
# "preprocessed" numbers next to it.
#
# usage: scripts/headers_hh_compare.sh boost|cxx [path/to/clipforge]
# env:   TOOLS=../shared/tools/headers  WORK=/tmp/cf-hh-<kind>
set -euo pipefail
kind=${1:-cxx}
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${2:-${CARGO_TARGET_DIR:-$here/target}/release/clipforge}
tools=${TOOLS:-$here/../shared/tools/headers}
work=${WORK:-/tmp/cf-hh-$kind}
rm -rf "$work"
mkdir -p "$work/tree/inc" "$work/tree/src" "$work/out"
case $kind in
  boost)
    cp -r /usr/include/boost "$work/tree/inc/boost"
    for h in /usr/include/boost/*.hpp; do n=$(basename "$h"); echo "#include <boost/$n>" > "$work/tree/src/tu_${n//./_}.cpp"; done ;;
  cxx)
    cp -r /usr/include/c++/12/. "$work/tree/inc/"
    for h in /usr/include/c++/12/*; do n=$(basename "$h"); [[ -f $h && $n != *.* ]] || continue; echo "#include <$n>" > "$work/tree/src/tu_$n.cpp"; done ;;
  *) echo "unknown kind $kind" >&2; exit 2 ;;
esac
cd "$work/tree"
python3 "$tools/gt.py" . "$work/out" --inc inc --std c++20 --jobs 2 > "$work/gt.log"
python3 "$tools/hh_emul.py" . "$work/out" --inc inc > "$work/hh.log"
"$bin" headers . -I inc --std c++20 --mode all-branches --no-cache -q --json "$work/ours_all.json" > /dev/null
"$bin" headers . -I inc --std c++20 --mode preprocessed --no-cache -q --json "$work/ours_pre.json" > /dev/null
python3 - "$work" <<'EOF'
import json, sys
w = sys.argv[1]
hh = json.load(open(f"{w}/out/regex_scan_emulation.json"))
gt = json.load(open(f"{w}/out/ground_truth.json"))
a = json.load(open(f"{w}/ours_all.json"))
p = json.load(open(f"{w}/ours_pre.json"))
rows = [("files", hh["files"], a["files"]), ("translation_units", hh["tu_count"], a["translation_units"]),
        ("total_lines", hh["total_lines"], a["total_lines"]),
        ("total_parsed (true reachability)", hh["total_parsed_true_reachability"], a["total_parsed"])]
ok = True
print("all-branches vs hh_emul.py:")
for name, x, y in rows:
    print(f"  {name:<34} hh_emul {x:>12}  ours {y:>12}  {'OK' if x == y else 'DIFF'}")
    ok &= x == y
print(f"  (hh_emul's own cycle-artefact total: {hh['total_parsed_hh_algorithm']})")
print("preprocessed vs gt.py (g++ -M, files under the tree):")
for k in ["files", "total_lines", "total_parsed"]:
    d = 100.0 * (p[k] - gt[k]) / gt[k] if gt[k] else 0
    print(f"  {k:<34} g++ {gt[k]:>12}  ours {p[k]:>12}  {d:+.3f}%")
print(f"  g++ -M wall {gt['gxx_pass']['wall_s']} s; ours (preprocessed, cold) {p['scan_seconds']:.3f} s")
sys.exit(0 if ok else 1)
EOF
