#!/usr/bin/env bash
# Sizes and the independent error check of the codec on the two reference sets (issue 11):
# the 25 ACL regression transform clips and the 42 shared BVH clips, default settings
# (0.01 cm). Compresses both sets with the release CLI, decompresses every .cfa to .acl.sjson
# and runs ../shared/tools/clip_eval.py --between N on it against the input (ACL clips) or
# against the reference converter's output (BVH: bvh_to_acl.py). Prints per set: clips, bytes,
# ACL's bytes, the ratio, clips above ACL's size, and the evaluator's worst error (at and
# between samples). Run niced.
#
#   scripts/codec_eval_sets.sh [OUT_DIR] [BETWEEN]     (BIN=path/to/clipforge to pick a build)
set -euo pipefail
cd "$(dirname "$0")/.."
DATA="${CLIPFORGE_DATA:-$(cd .. && pwd)/shared/data}"
TOOLS="$(cd "$DATA/../tools" && pwd)"
REF="$(cd "$DATA/../reference" && pwd)"
OUT="${1:-$(mktemp -d)}"
BETWEEN="${2:-1}"
BIN="${BIN:-${CARGO_TARGET_DIR:-target}/release/clipforge}"
mkdir -p "$OUT"
for set in acl-regression bvh; do
  nice -n 10 "$BIN" compress "$DATA/$set" -o "$OUT/$set" --json "$OUT/$set.json" --jobs 1 -q --no-skip \
    >/dev/null 2>&1 || true
done
python3 - "$OUT" "$DATA" "$TOOLS" "$REF" "$BIN" "$BETWEEN" <<'PY'
import csv, json, os, subprocess, sys
out, data, tools, ref, binary, between = sys.argv[1:]
acl = {}
for f, key, col in [("acl-baseline.tsv", "clip", "compressed_size"),
                    ("acl-bvh-baseline.tsv", "clip", "acl_compressed_bytes")]:
    for row in csv.DictReader(open(os.path.join(ref, f)), delimiter="\t"):
        name = os.path.basename(row[key]).replace(".bvh", "")
        if row.get(col, "").isdigit():
            acl[name] = int(row[col])
for s in ["acl-regression", "bvh"]:
    rep = json.load(open(os.path.join(out, s + ".json")))
    ok = [c for c in rep["clips"] if not c["error"]]
    ours = sum(c["compressed_bytes"] for c in ok)
    theirs = 0
    above, worst, worst_at = [], (0.0, ""), (0.0, "")
    for c in ok:
        name = os.path.basename(c["input"]).replace(".acl.sjson", "").replace(".bvh", "")
        a = acl.get(name)
        theirs += a or 0
        if a and c["compressed_bytes"] > a:
            above.append(f'{name} {c["compressed_bytes"]} > {a}')
        lossy = c["output"][:-4] + ".acl.sjson"
        subprocess.run(["nice", "-n", "10", binary, "decompress", c["output"], "-o", lossy],
                       check=True, capture_output=True)
        raw = c["input"]
        if raw.endswith(".bvh"):
            raw = c["output"][:-4] + ".raw.acl.sjson"
            subprocess.run(["python3", os.path.join(tools, "bvh_to_acl.py"), c["input"], raw],
                           check=True, capture_output=True)
        r = subprocess.run(["nice", "-n", "10", "python3", os.path.join(tools, "clip_eval.py"),
                            raw, lossy, "--json", "--between", between],
                           check=True, capture_output=True, text=True)
        e = json.loads(r.stdout)
        # With --between, max_error covers the samples and the points between them.
        m, at = e["max_error"], e.get("max_error_at_samples", e["max_error"])
        if m > worst[0]:
            worst = (m, name)
        if at > worst_at[0]:
            worst_at = (at, name)
    print(f"{s}: {len(ok)} clips, {ours} B vs ACL {theirs} B = {ours / theirs:.4f}; above ACL: {above or 'none'}; "
          f"clip_eval worst {worst[0]:.6f} cm ({worst[1]}) with --between {between}, at samples {worst_at[0]:.6f} cm ({worst_at[1]})")
PY
