#!/usr/bin/env bash
# Issue 28's "everything else adds <= 20 % to today's scan time": the timing work (reading a
# build's traces with --time-trace, the costs, the prediction, --pch auto) against the scan
# alone, on the gRPC core tree of scripts/headers_predict_real.sh (WORK/tree) and the traces of
# its 10 % sample (a copy: the first --time-trace writes each trace's summary beside it). Each
# round runs, in turn: the scan (BIN), the timing run of each binary given, the scan of the last
# binary; --no-cache everywhere; CPU = user + sys (/usr/bin/time). Medians over ROUNDS, and each
# timing run's median CPU over the median of all scans.
#
# usage: WORK=/tmp/pr28/full TRACES=/tmp/x/sample scripts/headers_timing_overhead.sh BIN [BIN2 ...]
# env:   ROUNDS=15
set -euo pipefail
source "$(dirname "$0")/headers_grpc_flags.sh"
work=${WORK:?WORK: the folder of scripts/headers_predict_real.sh (with tree/)}
traces=${TRACES:?TRACES: a folder of the traces of the sample (summaries are written there)}
rounds=${ROUNDS:-15}
bins=("$@"); [ ${#bins[@]} -gt 0 ] || { echo "usage: $0 BIN [BIN2 ...]" >&2; exit 2; }
out=$(mktemp -d /tmp/cf-timing.XXXXXX)
trap 'rm -rf "$out"' EXIT
cd "$work/tree"
incs="$GRPC_INCS"
ours=()
for d in $incs; do ours+=(-I "$d"); done
for d in $GRPC_DEFS; do ours+=(-D "$d"); done
scan() { /usr/bin/time -f "$1 %e %U %S" "$2" headers . "${ours[@]}" --std c++17 --no-cache -q \
  --json "$out/scan.json" >/dev/null 2>>"$out/times"; }
timing() { /usr/bin/time -f "$1 %e %U %S" "$2" headers . "${ours[@]}" --std c++17 --no-cache -q \
  --time-trace "$traces" --pch auto --json "$out/timing.json" >/dev/null 2>>"$out/times"; }
timing warmup "${bins[0]}"   # writes the summaries if they are not there yet
for r in $(seq "$rounds"); do
  scan scan "${bins[0]}"
  for i in "${!bins[@]}"; do timing "timing$i" "${bins[$i]}"; done
  scan scan "${bins[-1]}"
done
python3 - "$out/times" "${bins[@]}" <<'P'
import statistics as st, sys
rows = {}
for line in open(sys.argv[1]):
    p = line.split()
    if len(p) == 4 and p[0] != "warmup":
        rows.setdefault(p[0], []).append((float(p[1]), float(p[2]) + float(p[3])))
scan = st.median(c for _, c in rows["scan"])
print(f"scan: {len(rows['scan'])} runs, median CPU {scan:.3f} s, wall {st.median(w for w, _ in rows['scan']):.3f} s")
for i, b in enumerate(sys.argv[2:]):
    v = rows[f"timing{i}"]
    cpu = st.median(c for _, c in v)
    print(f"timing, {b}: {len(v)} runs, median CPU {cpu:.3f} s ({cpu / scan - 1:+.1%} over the scan), "
          f"wall {st.median(w for w, _ in v):.3f} s")
P
