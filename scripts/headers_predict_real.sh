#!/usr/bin/env bash
# The prediction target of issue 28 on a real tree: gRPC core 1.66.1 (the tree of
# scripts/headers_grpc.sh: the grpcio sdist from PyPI, sha256-checked, the TUs outside src/core
# deleted: 886 TUs, grpcio's include dirs and defines, -std=c++17).
#
# 1. The sample: `--measure K --keep-traces` (K = $PCT % of the tree's TUs, rounded up: 89), the
#    K TUs the tool chooses, timed (wall and CPU, /usr/bin/time).
# 2. The same K TUs compiled once with plain `clang -fsyntax-only` (the scan's flags, $JOBS in
#    parallel), timed: the target "measuring 10 % takes no longer than compiling them once".
# 3. The truth: measuring all 886 TUs does not fit a session on this shared 2-core machine
#    (2.1 s wall per TU with 2 jobs: ~31 min for 886), so a fixed random subset does: $TRUTH TUs
#    drawn from the tree (random.Random(28)), those in the sample dropped, the rest measured by
#    the same tool
#    (`--measure M` on a hard-linked copy of the tree that keeps only those TUs: same flags, same
#    CPU / wall scaling of each run's trace).
# 4. `--time-trace SAMPLE` on the whole tree predicts every TU; compared with the truth subset's
#    measured times: total and median per-TU error.
# Every clang run is under `nice -n $NICE` (the machine is shared).
#
# Another tree: put it in $WORK/tree, give SKIP_FETCH=1 and its flags as INCS (include dirs,
# relative to the tree), DEFS (NAME=VALUE words; empty: none) and STD; TRUTH larger than the tree
# takes every TU outside the sample. The ozz-animation 0.16 runtime and offline libraries
# (/work/shared/anchors-src, without the FBX, glTF and tools sources, whose SDKs are not here):
#   mkdir -p /tmp/ozz && cp -a /work/shared/anchors-src/ozz-animation /tmp/ozz/tree &&
#   rm -rf /tmp/ozz/tree/src/animation/offline/{fbx,tools,gltf}
#   WORK=/tmp/ozz SKIP_FETCH=1 INCS="include src" DEFS= TRUTH=1000 scripts/headers_predict_real.sh
#
# usage: scripts/headers_predict_real.sh [path/to/clipforge]
# env:   WORK=/tmp/cf-predict-real PCT=10 TRUTH=300 JOBS=2 NICE=15 SKIP_FETCH=1 (reuse $WORK/tree)
#        STEPS="sample plain truth predict" (a subset reruns only those steps)
#        INCS DEFS STD (another tree's flags; gRPC's by default)
set -euo pipefail
source "$(dirname "$0")/headers_grpc_flags.sh"
here=$(cd "$(dirname "$0")/.." && pwd)
bin=$(realpath "${1:-${CARGO_TARGET_DIR:-$here/target}/release/clipforge}")
work=${WORK:-/tmp/cf-predict-real}
pct=${PCT:-10}
ntruth=${TRUTH:-300}
jobs=${JOBS:-2}
nice=${NICE:-15}
steps=${STEPS:-sample plain truth predict}
# shellcheck source=headers_realtree.sh
source "$here/scripts/headers_realtree.sh"
if [[ -n ${SKIP_FETCH:-} && -d $work/tree ]]; then
  tree=$work/tree; cd "$tree"
else
  fetch_tree https://files.pythonhosted.org/packages/e7/42/94293200e40480d79fc876b2330e7dffb20f959b390afa77c0dbaa0c8372/grpcio-1.66.1.tar.gz \
    35334f9c9745add3e357e3372756fd32d925bd52c41da97f4dfdafbde0bf0ee2
  find . -type f \( -name '*.c' -o -name '*.cc' -o -name '*.cpp' -o -name '*.cxx' -o -name '*.m' -o -name '*.mm' \) \
    -not -path './src/core/*' -delete
fi
incs=${INCS:-"$GRPC_INCS"}
defs=${DEFS-"$GRPC_DEFS"}
std=${STD:-c++17}
ours=() ; cc=()
for d in $incs; do ours+=(-I "$d"); cc+=(-I "$tree/$d"); done
for d in $defs; do ours+=(-D "$d"); cc+=("-D$d"); done
ntus=$(find . -type f \( -name '*.c' -o -name '*.cc' \) | wc -l)
k=$(( (ntus * pct + 99) / 100 ))
echo "tree: $ntus TUs; sample K = $k ($pct %); truth: $ntruth drawn"

if [[ $steps == *sample* ]]; then
  rm -rf "$work/sample" && mkdir -p "$work/sample"
  echo "load before --measure $k: $(uptime)"
  nice -n "$nice" /usr/bin/time -f "--measure $k: %e s wall, %U+%S s CPU" \
    "$bin" headers . "${ours[@]}" --std "$std" --no-cache -q --measure "$k" --jobs "$jobs" \
    --keep-traces "$work/sample" --json "$work/sample_measure.json" >/dev/null
  echo "load after: $(uptime)"
fi

if [[ $steps == *plain* ]]; then
  # The K sampled TUs, compiled once each with the scan's flags (clang++ -std=c++17 for .cc,
  # clang for .c, as --measure runs them), no trace.
  python3 - "$tree" "$work/sample_measure.json" > "$work/sample_tus.txt" <<'PY'
import json, os, sys
tree = sys.argv[1]
for t in json.load(open(sys.argv[2]))["tus"]:
    if t["measured_ms"] is not None:
        print(t["path"] if os.path.isabs(t["path"]) else os.path.join(tree, t["path"]))
PY
  printf '%s\n' "${cc[@]}" > "$work/cc_flags.txt"
  cat > "$work/plain_one.sh" <<'SH'
#!/usr/bin/env bash
flags=(); while IFS= read -r l; do flags+=("$l"); done < "$CC_FLAGS"
case $1 in *.c) exec clang "${flags[@]}" -fsyntax-only -w "$1" 2>/dev/null ;;
           *) exec clang++ -std=c++17 "${flags[@]}" -fsyntax-only -w "$1" 2>/dev/null ;; esac
SH
  chmod +x "$work/plain_one.sh"
  echo "load before plain clang: $(uptime)"
  CC_FLAGS=$work/cc_flags.txt nice -n "$nice" /usr/bin/time -f "plain clang -fsyntax-only, same $k TUs, $jobs in parallel: %e s wall, %U+%S s CPU" \
    xargs -P "$jobs" -n 1 "$work/plain_one.sh" < "$work/sample_tus.txt" || echo "(some compiles reported errors)"
  echo "load after: $(uptime)"
fi

if [[ $steps == *truth* ]]; then
  python3 - "$tree" "$work/sample_measure.json" "$ntruth" > "$work/truth_tus.txt" <<'PY'
import json, os, random, sys
tree, n = sys.argv[1], int(sys.argv[3])
tus = sorted(os.path.relpath(os.path.join(d, f), tree) for d, _, fs in os.walk(tree) for f in fs
             if f.endswith((".c", ".cc")))
truth = random.Random(28).sample(tus, min(n, len(tus)))
rel = lambda p: os.path.relpath(p, tree) if os.path.isabs(p) else os.path.normpath(p)
sampled = {rel(t["path"]) for t in json.load(open(sys.argv[2]))["tus"] if t["measured_ms"] is not None}
print(f"truth: {min(n, len(tus))} of {len(tus)} TUs drawn, {len(set(truth) & sampled)} in the sample, "
      f"{len(set(truth) - sampled)} to measure", file=sys.stderr)
print("\n".join(sorted(set(truth) - sampled)))
PY
  # A hard-linked copy keeping only the truth TUs (headers all kept).
  rm -rf "$work/truth_tree" && cp -al "$tree" "$work/truth_tree"
  (cd "$work/truth_tree" && find . -type f \( -name '*.c' -o -name '*.cc' \) | sed 's|^\./||' | sort \
     | comm -23 - <(sort "$work/truth_tus.txt") | xargs -r rm -f)
  m=$(wc -l < "$work/truth_tus.txt")
  echo "load before truth --measure $m: $(uptime)"
  (cd "$work/truth_tree" && nice -n "$nice" /usr/bin/time -f "truth --measure $m: %e s wall, %U+%S s CPU" \
    "$bin" headers . "${ours[@]}" --std "$std" --no-cache -q --measure "$m" --jobs "$jobs" \
    --json "$work/truth.json" >/dev/null)
  echo "load after: $(uptime)"
fi

if [[ $steps == *predict* ]]; then
  "$bin" headers . "${ours[@]}" --std "$std" --no-cache -q --time-trace "$work/sample" \
    --json "$work/predict.json" >/dev/null
  python3 - "$work/truth.json" "$work/predict.json" "$work/truth_tree" "$tree" <<'PY'
import json, os, sys, statistics
def rel(p, root): return os.path.relpath(p, root) if os.path.isabs(p) else os.path.normpath(p)
truth = {rel(t["path"], sys.argv[3]): t["measured_ms"] for t in json.load(open(sys.argv[1]))["tus"]
         if t["measured_ms"] is not None}
s = json.load(open(sys.argv[2]))
pred = {rel(t["path"], sys.argv[4]): t for t in s["tus"]}
rows = [(pred[p]["predicted_ms"], m) for p, m in truth.items() if pred[p]["measured_ms"] is None]
P, M = sum(r[0] for r in rows), sum(r[1] for r in rows)
errs = [(p - m) / m for p, m in rows]
print(f"sample: {s['measured_tus']} of {len(s['tus'])} TUs measured; compared on {len(rows)} truth TUs outside it")
print(f"total: predicted {P/1000:.2f} s, measured {M/1000:.2f} s, error {100*(P-M)/M:+.1f} %")
print(f"per TU: median error {100*statistics.median(errs):+.1f} %, median |error| "
      f"{100*statistics.median(abs(e) for e in errs):.1f} %, within ±20 %: {sum(abs(e) <= 0.2 for e in errs)}/{len(errs)}")
PY
fi
