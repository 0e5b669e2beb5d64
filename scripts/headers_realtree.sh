# Shared by scripts/headers_grpc.sh and scripts/headers_rocksdb.sh (sourced, not run): on a real
# tree extracted in the current directory, runs `g++ -M -MG` (../shared/tools/headers/gt.py, 2
# workers) and Header Hero's algorithm (hh_emul.py), times `clipforge headers` cold / warm / one
# header touched / one header's #includes changed (scripts/headers_time.py: median of $RUNS runs),
# and compares Total Parsed and per-TU closures with g++ and the all-branches numbers with hh_emul.

# fetch_tree URL SHA256: downloads the source tarball into $work once, checks it, extracts it
# afresh into $work/tree and enters it.
fetch_tree() {
  mkdir -p "$work"
  tgz=$work/$(basename "$1")
  if [[ ! -f $tgz ]]; then curl -sSfL -o "$tgz" "$1"; fi
  echo "$2  $tgz" | sha256sum -c --quiet
  tree=$work/tree
  rm -rf "$tree"
  mkdir -p "$tree"
  tar xzf "$tgz" -C "$tree" --strip-components=1
  cd "$tree"
}

# run_realtree: the measurements. Expects here bin tools work tree incs defs std touch_header.
run_realtree() {
  gt_inc=() ; hh_inc=() ; ours=()
  for d in $incs; do gt_inc+=(--inc "$d"); hh_inc+=(--inc "$d"); ours+=(-I "$d"); done
  for d in $defs; do gt_inc+=(--def "$d"); ours+=(-D "$d"); done
  echo "tree: $(find . -type f | wc -l) files, $(find . -type f \( -name '*.c' -o -name '*.cc' \) | wc -l) TUs"

  if [[ -z ${SKIP_GT:-} || ! -f $work/gt/ground_truth.json ]]; then
    /usr/bin/time -f "g++ -M -MG (gt.py, 2 workers): %e s wall, %U s user, %S s sys" \
      python3 "$tools/gt.py" . "$work/gt" "${gt_inc[@]}" --std "$std" --jobs 2 > "$work/gt.log"
    python3 "$tools/hh_emul.py" . "$work/gt" "${hh_inc[@]}" > "$work/hh.log"
  fi

  cache=$work/ours.cache
  runs=${RUNS:-7}
  timed() { python3 "$here/scripts/headers_time.py" "$@"; }
  ours_cmd=("$bin" headers . "${ours[@]}" --std "$std" --cache "$cache" -q)
  timed "$runs" "ours cold (--clean --json)" -- "${ours_cmd[@]}" --clean --json "$work/ours_pre.json"
  timed "$runs" "ours warm, nothing changed" -- "${ours_cmd[@]}"
  # The per-TU closures (~30 MB of JSON) for the comparison, written by an untimed run.
  "${ours_cmd[@]}" --closures "$work/ours_closures.json" > /dev/null
  "$bin" headers . "${ours[@]}" --std "$std" --mode all-branches --no-cache -q --json "$work/ours_all.json" > /dev/null
  # One header edited: a line appended (its directives unchanged: the file is re-read and counted
  # again, no TU re-evaluated); then its #includes changed (every TU reaching it is re-evaluated).
  # Each run starts from the unchanged tree, restored and rescanned after it.
  h=$touch_header
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
}
