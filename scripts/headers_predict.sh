#!/usr/bin/env bash
# The prediction target of issue 28 on a tree this machine has: the frontend time of the TUs that
# were not measured, predicted from a sample, against clang's measured time for each of them.
#
# Tree: $TUS translation units (default 40), each including 4 of 16 libstdc++ headers (a fixed
# pseudo-random choice) and a project header. Every TU is measured once (`--measure ALL
# --keep-traces`); the sample is the first K of those traces (K = $PCT % of the TUs), which are
# the K TUs `--measure K` chooses (the greedy choice is a prefix of the longer one), so sample and
# truth come from the same clang runs. `--time-trace SAMPLE` then predicts every TU; compared
# over the TUs outside the sample: total and median per-TU error.
#
# Times are each clang run's trace scaled by its CPU / wall ratio (the default of --measure); WALL=1
# keeps clang's wall-clock times (--wall-time), as before 2026-11-27.
#
# usage: scripts/headers_predict.sh [path/to/clipforge]     env: WORK=/tmp/cf-predict TUS=40 PCT=10 JOBS=2 WALL=
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-${CARGO_TARGET_DIR:-$here/target}/release/clipforge}
work=${WORK:-/tmp/cf-predict}
tus=${TUS:-40}
pct=${PCT:-10}
jobs=${JOBS:-2}
wall=()
if [ -n "${WALL:-}" ]; then wall=(--wall-time); fi
rm -rf "$work" && mkdir -p "$work/tree/inc" "$work/all" "$work/sample"
python3 - "$work/tree" "$tus" <<'PY'
import random, sys, os
root, n = sys.argv[1], int(sys.argv[2])
hs = ["vector", "string", "map", "unordered_map", "algorithm", "memory", "functional", "sstream",
      "iostream", "regex", "chrono", "thread", "set", "deque", "tuple", "optional"]
rnd = random.Random(28)
open(os.path.join(root, "inc/project.h"), "w").write("#pragma once\nstruct Project { int x; };\n")
for i in range(n):
    pick = rnd.sample(hs, 4)
    body = "".join(f"#include <{h}>\n" for h in pick) + '#include "project.h"\n'
    body += f"int tu{i}() {{ return {i}; }}\n"
    open(os.path.join(root, f"tu{i:03}.cpp"), "w").write(body)
PY
cd "$work/tree"
/usr/bin/time -f "measure all: %e s wall, %U+%S s CPU" \
  "$bin" headers . -I inc --std c++17 --no-cache -q --measure "$tus" --jobs "$jobs" "${wall[@]}" \
  --keep-traces "$work/all" --json "$work/all.json" >/dev/null
k=$(( (tus * pct + 99) / 100 ))
for f in "$work"/all/*.json; do
  n=$(basename "$f"); idx=${n%%-*}
  if [ "$idx" -lt "$k" ]; then cp "$f" "$work/sample/"; fi
done
"$bin" headers . -I inc --std c++17 --no-cache -q --time-trace "$work/sample" --json "$work/sample.json" >/dev/null
python3 - "$work/all.json" "$work/sample.json" <<'PY'
import json, sys, statistics
full = {t["path"]: t["measured_ms"] for t in json.load(open(sys.argv[1]))["tus"]}
s = json.load(open(sys.argv[2]))
rows = [(t["predicted_ms"], full[t["path"]]) for t in s["tus"] if t["measured_ms"] is None]
pred, meas = sum(r[0] for r in rows), sum(r[1] for r in rows)
errs = [(p - m) / m for p, m in rows]
print(f"sample: {s['measured_tus']} of {len(s['tus'])} TUs measured; predicted {len(rows)} others")
print(f"total: predicted {pred/1000:.2f} s, measured {meas/1000:.2f} s, error {100*(pred-meas)/meas:+.1f} %")
print(f"per TU: median error {100*statistics.median(errs):+.1f} %, median |error| {100*statistics.median(abs(e) for e in errs):.1f} %")
PY
