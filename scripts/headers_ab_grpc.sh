#!/usr/bin/env bash
# Before/after of `clipforge headers` on the gRPC core tree (scripts/headers_grpc.sh extracts it
# to /tmp/cf-grpc/tree): the same scan by two binaries, cold (--clean) and warm rescan, in one
# alternating loop (both see the same machine load); checks that the JSON reports are identical
# apart from the timings, then prints the medians (wall and CPU) and the new/base ratios.
#
# usage: scripts/headers_ab_grpc.sh BASE_BIN NEW_BIN   env: TREE=/tmp/cf-grpc/tree RUNS=5
set -euo pipefail
source "$(dirname "$0")/headers_grpc_flags.sh"
base=$1; new=$2
tree=${TREE:-/tmp/cf-grpc/tree}
work=$(dirname "$tree")/ab
mkdir -p "$work"
incs="$GRPC_INCS"
args=(headers .)
for d in $incs; do args+=(-I "$d"); done
args+=(-D _WIN32_WINNT=0x600 -D OPENSSL_NO_ASM=1 --std c++17 -q)
cd "$tree"
python3 - "${RUNS:-5}" "$base" "$new" "$work" "${args[@]}" <<'EOF'
import json, resource, statistics, subprocess, sys, time
n, bins, work, args = int(sys.argv[1]), {"base": sys.argv[2], "new": sys.argv[3]}, sys.argv[4], sys.argv[5:]
def run(w, kind):
    extra = ["--clean"] if kind == "cold" else []
    cmd = [bins[w]] + args + ["--cache", f"{work}/{w}.cache", "--json", f"{work}/{w}_{kind}.json"] + extra
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime
res = {}
for _ in range(n):
    for w in ("base", "new"):
        for kind in ("cold", "warm"):
            res.setdefault((w, kind), []).append(run(w, kind))
def strip(p):
    j = json.load(open(p))
    for k in ("scan_seconds", "stats", "notes"):
        j.pop(k, None)
    if j.get("other_mode"):
        j["other_mode"].pop("scan_seconds", None)
    return j
for kind in ("cold", "warm"):
    assert strip(f"{work}/base_{kind}.json") == strip(f"{work}/new_{kind}.json"), kind
print("JSON reports identical (timings aside): OK")
for kind in ("cold", "warm"):
    m = {w: (statistics.median(x[0] for x in res[(w, kind)]), statistics.median(x[1] for x in res[(w, kind)])) for w in bins}
    print(f"{kind}: base {m['base'][0]:.3f} s wall / {m['base'][1]:.3f} s CPU, "
          f"new {m['new'][0]:.3f} s wall / {m['new'][1]:.3f} s CPU; "
          f"new/base {m['new'][0] / m['base'][0]:.2f} x wall, {m['new'][1] / m['base'][1]:.2f} x CPU ({n} runs)")
EOF
uptime
