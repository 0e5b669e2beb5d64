#!/usr/bin/env bash
# Issue 28's "measuring 10 % takes no longer than compiling those TUs once", split into what each
# part costs, on the gRPC core tree of scripts/headers_predict_real.sh (WORK/tree, prepared by
# it): for each binary given, `--measure K --keep-traces` (the script's sample step), and plain
# `clang -fsyntax-only` on the same K TUs with the scan's flags, ROUNDS times, the sides
# alternating; CPU = user + sys of everything (/usr/bin/time), every run under nice -n $NICE.
# Then clang alone on the same TUs with -ftime-trace at granularity 0 (what --measure runs)
# and 500 µs (clang's default), to separate clang's tracing from the tool's own work; and two
# full compiles of the same TUs to an object (`-c -O0 -g0`: the cheapest compile there is;
# `-c -O2 -g`: a release build as grpcio's setup.py runs it on Linux, without its -D flags so
# that the preprocessed closures stay the same), since "compiling them once" in a build means
# producing objects, while --measure and the plain side stop after the frontend.
#
# usage: WORK=/tmp/pr28/full scripts/headers_measure_overhead.sh BIN [BIN2 ...]
# env:   PCT=10 JOBS=2 NICE=15 ROUNDS=2 FULL=1 (0: skip the two full-compile sides)
#        TRACE=1 (0: skip clang alone with -ftime-trace)
set -euo pipefail
source "$(dirname "$0")/headers_grpc_flags.sh"
work=${WORK:?WORK: the folder of scripts/headers_predict_real.sh (with tree/)}
pct=${PCT:-10}; jobs=${JOBS:-2}; nice=${NICE:-15}; rounds=${ROUNDS:-2}; full=${FULL:-1}; trace=${TRACE:-1}
tree=$work/tree
out=$(mktemp -d /tmp/cf-overhead.XXXXXX)
trap 'rm -rf "$out"' EXIT
cd "$tree"
incs="$GRPC_INCS"
ours=(); cc=()
for d in $incs; do ours+=(-I "$d"); cc+=(-I "$tree/$d"); done
for d in $GRPC_DEFS; do ours+=(-D "$d"); cc+=("-D$d"); done
ntus=$(find . -type f \( -name '*.c' -o -name '*.cc' \) | wc -l)
k=$(( (ntus * pct + 99) / 100 ))
printf '%s\n' "${cc[@]}" > "$out/cc_flags.txt"
cat > "$out/one.sh" <<'SH'
#!/usr/bin/env bash
# one.sh EXTRA-FLAGS FILE: clang on FILE in a folder of its own (clang 14 writes ./.json);
# EXTRA holds the mode (-fsyntax-only or -c) and its flags, split on spaces.
flags=(); while IFS= read -r l; do flags+=("$l"); done < "$CC_FLAGS"
extra=($1); d=$(mktemp -d); cd "$d"
case $2 in *.c) clang "${flags[@]}" "${extra[@]}" -w "$2" 2>/dev/null ;;
           *) clang++ -std=c++17 "${flags[@]}" "${extra[@]}" -w "$2" 2>/dev/null ;; esac
cd /; rm -rf "$d"
SH
chmod +x "$out/one.sh"
cpu() { awk '{split($0,a,"+"); s+=a[1]+a[2]} END {printf "%.2f", s}' "$1"; }
run_plain() { # $1 = clang's mode and extra flags (one word, split on spaces), $2 = label
  CC_FLAGS=$out/cc_flags.txt nice -n "$nice" /usr/bin/time -f "%U+%S" -o "$out/t" \
    xargs -P "$jobs" -I{} "$out/one.sh" "$1" {} < "$out/tus.txt" || true
  echo "$2: $(cpu "$out/t") s CPU"
}
echo "tree: $ntus TUs, K = $k; load: $(uptime | sed 's/.*load/load/')"
for r in $(seq "$rounds"); do
  for bin in "$@"; do
    rm -rf "$out/sample"
    nice -n "$nice" /usr/bin/time -f "%U+%S" -o "$out/t" "$bin" headers . "${ours[@]}" --std c++17 \
      --no-cache -q --measure "$k" --jobs "$jobs" --keep-traces "$out/sample" --json "$out/m.json" >/dev/null
    echo "round $r: $bin --measure $k --keep-traces: $(cpu "$out/t") s CPU"
    python3 - "$tree" "$out/m.json" > "$out/tus.txt" <<'PY'
import json, os, sys
for t in json.load(open(sys.argv[2]))["tus"]:
    if t["measured_ms"] is not None:
        print(t["path"] if os.path.isabs(t["path"]) else os.path.join(sys.argv[1], t["path"]))
PY
  done
  run_plain "-fsyntax-only" "round $r: plain clang -fsyntax-only, same $k TUs"
  if [ "$trace" = 1 ]; then
    run_plain "-fsyntax-only -ftime-trace -ftime-trace-granularity=0" "round $r: clang -ftime-trace, granularity 0"
    run_plain "-fsyntax-only -ftime-trace -ftime-trace-granularity=500" "round $r: clang -ftime-trace, granularity 500 µs"
  fi
  if [ "$full" = 1 ]; then
    run_plain "-c -O0 -g0 -o o.o" "round $r: clang -c -O0 -g0 (full compile, cheapest)"
    run_plain "-c -O2 -g -o o.o" "round $r: clang -c -O2 -g (full compile, release as setup.py)"
  fi
done
echo "load after: $(uptime | sed 's/.*load/load/')"
