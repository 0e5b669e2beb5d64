#!/usr/bin/env bash
# Two configurations of one real tree in one run (`--config`), against one: gRPC core (the tree
# scripts/headers_grpc.sh extracts to /tmp/cf-grpc/tree; run that first) with two compilation
# databases that differ by one define (release: -DNDEBUG; trace: -DNDEBUG
# -DGRPC_ENABLE_LATENT_SEE, which flips the #if around latent_see.h's includes and code), each
# with the include dirs and defines of headers_grpc.sh.
#
# Checks that each configuration's figures in the two-configuration run equal a run of that
# configuration alone (and the combined Total Parsed their sum), then times cold scans
# (--clean --no-cache), alternating one configuration / two configurations in the same loop so
# that both see the same machine load; prints the medians and their ratio (CPU and wall).
#
# usage: scripts/headers_configs.sh [path/to/clipforge]
# env:   TREE=/tmp/cf-grpc/tree  RUNS=5
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-${CARGO_TARGET_DIR:-$here/target}/release/clipforge}
tree=${TREE:-/tmp/cf-grpc/tree}
work=$(dirname "$tree")/configs
mkdir -p "$work"
incs="src/python/grpcio include . third_party/abseil-cpp third_party/address_sorting/include
  third_party/cares/cares/include third_party/cares third_party/cares/cares third_party/cares/config_linux
  third_party/re2 third_party/boringssl-with-bazel/src/include third_party/upb src/core/ext/upbdefs-gen
  src/core/ext/upb-gen third_party/utf8_range third_party/xxhash third_party/zlib"
defs="_WIN32_WINNT=0x600 OPENSSL_NO_ASM=1"
python3 - "$tree" "$work" "$incs" "$defs" <<'EOF'
import json, os, sys
tree, work, incs, defs = sys.argv[1], sys.argv[2], sys.argv[3].split(), sys.argv[4].split()
tree = os.path.realpath(tree)
tus = sorted(os.path.relpath(os.path.join(d, f), tree)
             for d, _, fs in os.walk(os.path.join(tree, "src/core")) for f in fs
             if f.endswith((".c", ".cc")))
for name, extra in (("release", ["-DNDEBUG"]), ("trace", ["-DNDEBUG", "-DGRPC_ENABLE_LATENT_SEE"])):
    out = []
    for t in tus:
        std = ["-std=c++17"] if t.endswith(".cc") else []
        args = ["g++"] + std + ["-I" + i for i in incs] + ["-D" + d for d in defs] + extra + ["-c", t]
        out.append({"directory": tree, "file": t, "arguments": args})
    json.dump(out, open(f"{work}/{name}.json", "w"))
print(f"{len(tus)} TUs per configuration")
EOF
one=(--config "release=$work/release.json")
two=(--config "release=$work/release.json" --config "trace=$work/trace.json")
common=(--clean --no-cache -q)
# Figures: each configuration alone, then both.
"$bin" headers --config "release=$work/release.json" "${common[@]}" --json "$work/release_only.json" > /dev/null
"$bin" headers --config "trace=$work/trace.json" "${common[@]}" --json "$work/trace_only.json" > /dev/null
"$bin" headers "${two[@]}" "${common[@]}" --json "$work/both.json" > "$work/both.txt"
grep -E "^config|^combined" "$work/both.txt"
python3 - "$work" <<'EOF'
import json, sys
w = sys.argv[1]
both = json.load(open(f"{w}/both.json"))
keys = ("translation_units", "files", "total_lines", "total_parsed")
for c in both["configs"]:
    alone = json.load(open(f"{w}/{c['name']}_only.json"))
    for k in keys:
        assert c[k] == alone[k], (c["name"], k, c[k], alone[k])
    per = {h["path"]: h["tu_count"] for h in alone["headers"]}
    i = [x["name"] for x in both["configs"]].index(c["name"])
    for h in both["headers"]:
        assert h["tu_count_by_config"][i] == per.get(h["path"], 0), (c["name"], h["path"])
assert both["total_parsed"] == sum(c["total_parsed"] for c in both["configs"])
print("each configuration equals its own run; combined Total Parsed = the sum: OK")
EOF
# Timing, alternating.
python3 - "${RUNS:-5}" "$bin" "${common[*]}" "${one[*]}" "${two[*]}" <<'EOF'
import resource, statistics, subprocess, sys, time
n, b, common, one, two = int(sys.argv[1]), sys.argv[2], sys.argv[3].split(), sys.argv[4].split(), sys.argv[5].split()
res = {"one": ([], []), "two": ([], [])}
for _ in range(n):
    for k, cfg in (("one", one), ("two", two)):
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        subprocess.run([b, "headers"] + cfg + common, stdout=subprocess.DEVNULL, check=True)
        res[k][0].append(time.perf_counter() - t0)
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        res[k][1].append(r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime)
m = {k: (statistics.median(v[0]), statistics.median(v[1])) for k, v in res.items()}
for k in ("one", "two"):
    print(f"{k} configuration(s), cold: median {m[k][0]:.3f} s wall, {m[k][1]:.3f} s CPU ({n} runs)")
print(f"two / one: {m['two'][0] / m['one'][0]:.2f} x wall, {m['two'][1] / m['one'][1]:.2f} x CPU")
EOF
uptime
