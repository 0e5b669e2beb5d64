#!/usr/bin/env bash
# Does a full compile see the same per-header frontend costs as the `-fsyntax-only` run that
# `--measure` makes? Issue 28's "measuring takes no longer than compiling once" may compare
# against a full compile (`-c`), which adds code generation after the frontend; that is fair
# only if the headers' costs are the same in both. On N TUs of the gRPC tree of
# scripts/headers_predict_real.sh (WORK/tree), each clang mode below is run ROUNDS times with
# `-ftime-trace -ftime-trace-granularity=0` (modes and TUs alternating), each run's CPU time
# taken (/usr/bin/time) and its CPU / wall ratio put into its trace as `--keep-traces` does;
# then `clipforge headers --time-trace` reads each (mode, round) folder and the per-header
# costs (`cost_ms`) are compared: between two rounds of one mode (the noise) and between modes.
#
# usage: WORK=/tmp/pr28/full scripts/headers_trace_modes.sh BIN
# env:   N=6 ROUNDS=2 NICE=10 MODES="syntax c-O0 c-O2g" (names below)
set -euo pipefail
source "$(dirname "$0")/headers_grpc_flags.sh"
bin=$(realpath "${1:?path/to/clipforge}")
work=${WORK:?WORK: the folder of scripts/headers_predict_real.sh (with tree/)}
n=${N:-6}; rounds=${ROUNDS:-2}; nice=${NICE:-10}; modes=${MODES:-syntax c-O0 c-O2g}
here=$(cd "$(dirname "$0")/.." && pwd)
tree=$work/tree
out=${OUT:-$(mktemp -d /tmp/cf-modes.XXXXXX)}; mkdir -p "$out"
cd "$tree"
incs="$GRPC_INCS"
ours=(); cc=()
for d in $incs; do ours+=(-I "$d"); cc+=(-I "$tree/$d"); done
for d in $GRPC_DEFS; do ours+=(-D "$d"); cc+=("-D$d"); done
flags_of() {
  case $1 in
    syntax) echo "-fsyntax-only" ;;
    c-O0) echo "-c -O0 -g0 -o o.o" ;;
    c-O2g) echo "-c -O2 -g -o o.o" ;;
    *) echo "unknown mode $1" >&2; exit 2 ;;
  esac
}
# N TUs spread over the tree's sorted list (a .c among them when the tree has one).
find . -type f \( -name '*.c' -o -name '*.cc' \) | sed 's|^\./||' | sort > "$out/all.txt"
python3 - "$out/all.txt" "$n" > "$out/tus.txt" <<'PY'
import sys
tus = open(sys.argv[1]).read().split()
n = int(sys.argv[2])
print("\n".join(tus[(k * len(tus)) // n] for k in range(n)))
PY
echo "TUs: $(tr '\n' ' ' < "$out/tus.txt"); load: $(uptime | sed 's/.*load/load/')"
for r in $(seq "$rounds"); do
  for m in $modes; do
    mkdir -p "$out/$m-$r"
    k=0; cpu=0
    while read -r tu; do
      d=$(mktemp -d); extra=$(flags_of "$m")
      case $tu in *.c) drv=(clang) ;; *) drv=(clang++ -std=c++17) ;; esac
      # shellcheck disable=SC2086
      (cd "$d" && nice -n "$nice" /usr/bin/time -f "%e %U %S" -o "$d/t" \
        "${drv[@]}" "${cc[@]}" $extra -ftime-trace -ftime-trace-granularity=0 -w "$tree/$tu" \
        2>/dev/null) || true
      read -r wall user sys < "$d/t"
      trace=$(find "$d" -maxdepth 1 -name '*.json' | head -1)
      python3 - "$trace" "$out/$m-$r/$k-$(basename "$tu").json" "$wall" "$user" "$sys" <<'PY'
import sys
src, dst, wall, user, sys_ = sys.argv[1], sys.argv[2], *map(float, sys.argv[3:])
b = open(src, "rb").read()
ratio = min(1.0, max(0.05, (user + sys_) / wall)) if wall > 0 else 1.0
i = b.index(b"{")
open(dst, "wb").write(b[:i + 1] + b'"clipforge_cpu_ratio":%r,' % ratio + b[i + 1:])
PY
      cpu=$(python3 -c "print($cpu + $user + $sys)")
      rm -rf "$d"; k=$((k + 1))
    done < "$out/tus.txt"
    echo "round $r, $m ($(flags_of "$m")): $cpu s CPU"
  done
done
echo "load after: $(uptime | sed 's/.*load/load/')"
for dir in "$out"/*-*/; do
  name=$(basename "$dir")
  "$bin" headers . "${ours[@]}" --std c++17 --no-cache -q --time-trace "$dir" \
    --json "$out/$name.report.json" >/dev/null
done
python3 "$here/scripts/headers_trace_modes.py" "$out" $modes --rounds "$rounds"
echo "traces and reports kept in $out"
