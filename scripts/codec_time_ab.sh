#!/usr/bin/env bash
# Compression time of two builds on the ACL regression clips, one run, alternating A and B
# ROUNDS times (single thread, --no-skip); prints per build the sum over the clips of the
# median and of the minimum per-clip compress_ms from the JSON reports (the minimum is the
# figure least disturbed by other jobs on a shared machine), B/A, and both against ACL's
# figures (reference/acl-baseline.tsv, comp_time_ms_median over the same clips).
#
#   scripts/codec_time_ab.sh BIN_A BIN_B [ROUNDS]      (CLIPFORGE_DATA defaults to ../shared/data)
set -euo pipefail
A="$1"; B="$2"; ROUNDS="${3:-3}"
cd "$(dirname "$0")/.."
DATA="${CLIPFORGE_DATA:-$(cd .. && pwd)/shared/data}"
OUT="$(mktemp -d)"
for r in $(seq 1 "$ROUNDS"); do
  for tag in A B; do
    bin=$A; [ "$tag" = B ] && bin=$B
    "$bin" compress "$DATA/acl-regression" -o "$OUT/$tag-$r" --json "$OUT/$tag-$r.json" \
      --jobs 1 -q --no-skip >/dev/null 2>&1 || true
  done
done
python3 - "$OUT" "$ROUNDS" "$DATA/../reference/acl-baseline.tsv" <<'PY'
import csv, json, statistics, sys
out, rounds, tsv = sys.argv[1], int(sys.argv[2]), sys.argv[3]
acl = {r["clip"]: float(r["comp_time_ms_median"]) for r in csv.DictReader(open(tsv), delimiter="\t")
       if r["kind"] == "transform_clip" and r["status"] == "ok"}
runs = {}
for tag in "AB":
    t = {}
    for r in range(1, rounds + 1):
        for c in json.load(open(f"{out}/{tag}-{r}.json"))["clips"]:
            if not c["error"] and c["samples"] > 0 and c["bones"] > 0:
                name = c["input"].rsplit("/", 1)[-1].replace(".acl.sjson", "")
                t.setdefault(name, []).append(c["compress_ms"])
    runs[tag] = t
clips = sorted(set(runs["A"]) & set(runs["B"]) & set(acl))
sacl = sum(acl[c] for c in clips)
for stat in (statistics.median, min):
    per = {tag: {c: stat(runs[tag][c]) for c in clips} for tag in "AB"}
    sa, sb = sum(per["A"].values()), sum(per["B"].values())
    if stat is min:
        for c in clips:
            print(f"{c:28} min A {per['A'][c]:8.2f} ms  B {per['B'][c]:8.2f} ms  "
                  f"B/A {per['B'][c] / per['A'][c]:5.2f}  ACL {acl[c]:7.2f} ms")
    print(f"{stat.__name__:6} over {len(clips)} clips: A {sa:.1f} ms, B {sb:.1f} ms, B/A {sb / sa:.3f}; "
          f"ACL {sacl:.1f} ms, A/ACL {sa / sacl:.3f}, B/ACL {sb / sacl:.3f}")
PY
