#!/usr/bin/env bash
# additive_vs_plain.sh - sizes of every shared BVH clip as an additive clip relative to its first
# frame (`convert --additive-base first-frame`) against the same clip plain, at the default
# threshold, single-threaded (docs/BENCHMARKS.md, "Additive clips"). Prints the totals and the
# clips whose additive is larger.
#
# Usage: scripts/additive_vs_plain.sh CLIPFORGE_BINARY DATA_DIR WORK_DIR
# e.g.   scripts/additive_vs_plain.sh target/release/clipforge ../shared/data /tmp/add
set -eu
bin=$(realpath "$1") data=$(realpath "$2") work=$3
rm -rf "$work"; mkdir -p "$work/addsrc"
find "$data/bvh" -name '*.bvh' | sort | while read -r f; do
  "$bin" convert "$f" --additive-base first-frame -o "$work/addsrc/$(basename "$f" .bvh).acl.sjson" >/dev/null
done
"$bin" compress "$data/bvh" -o "$work/plain" --no-skip --jobs 1 -q --json "$work/plain.json" 2>/dev/null
"$bin" compress "$work/addsrc" -o "$work/add" --no-skip --jobs 1 -q --json "$work/add.json" 2>/dev/null
python3 - "$work" <<'PY'
import json, os, sys
w = sys.argv[1]
def rows(name, ext):
    return {os.path.basename(c["input"])[: -len(ext)]: c for c in json.load(open(f"{w}/{name}.json"))["clips"]}
p, a = rows("plain", ".bvh"), rows("add", ".acl.sjson")
both = [k for k in sorted(p) if k in a and not p[k]["error"] and not a[k]["error"]]
sp = sum(p[k]["compressed_bytes"] for k in both)
sa = sum(a[k]["compressed_bytes"] for k in both)
print(f"{len(both)} clips: plain {sp} B, additive {sa} B ({sa / sp:.3f}); "
      f"additive smaller on {sum(a[k]['compressed_bytes'] < p[k]['compressed_bytes'] for k in both)}")
print(f"compress time: plain {sum(p[k]['compress_ms'] for k in both) / 1e3:.1f} s, "
      f"additive {sum(a[k]['compress_ms'] for k in both) / 1e3:.1f} s")
for k in both:
    pb, ab = p[k]["compressed_bytes"], a[k]["compressed_bytes"]
    if ab > pb:
        print(f"  larger: {k}: {pb} -> {ab} B ({(ab - pb) / pb * 100:+.2f} %)")
PY
