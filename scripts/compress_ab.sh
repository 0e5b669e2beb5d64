#!/usr/bin/env bash
# usage: DATA=DIR scripts/compress_ab.sh BASE_BIN NEW_BIN [RUNS]
# Alternating runs of two binaries compressing the 25 ACL regression clips single-threaded;
# prints the summed compress_ms (compression alone) and the wall time per run.
set -euo pipefail
base=$1; new=$2; runs=${3:-5}
data=${DATA:-/work/shared/data/acl-regression}
for i in $(seq "$runs"); do
  for which in base new; do
    bin=$base; [ $which = new ] && bin=$new
    out=$(mktemp -d)
    s=$(date +%s.%N)
    "$bin" compress "$data" -o "$out" --jobs 1 --no-skip --json "$out/r.json" >/dev/null 2>&1 || true
    e=$(date +%s.%N)
    ms=$(python3 -c "import json,sys;r=json.load(open('$out/r.json'));print(round(sum(c.get('compress_ms') or 0 for c in r['clips']),1), sum(c.get('compressed_bytes') or 0 for c in r['clips']))")
    echo "$which run$i wall=$(python3 -c "print(round($e-$s,2))") compress_ms,bytes=$ms"
    rm -rf "$out"
  done
done
