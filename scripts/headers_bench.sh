#!/usr/bin/env bash
# Header profiler benchmark through the CLI (same steps as benches/headers.rs): cold scan, warm
# rescan with nothing changed, rescan after touching one header (content only), rescan after
# adding an #include to it, and g++ -M -MG over the same TUs with 2 workers. Wall and CPU times.
#
# usage: scripts/headers_bench.sh [path/to/clipforge]
# Tree: a copy of /usr/include/boost used as a project (-I inc), one TU per boost/*.hpp
# (reuses /tmp/cf-hh-boost/tree from headers_hh_compare.sh when present).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-${CARGO_TARGET_DIR:-$here/target}/release/clipforge}
tree=${TREE:-/tmp/cf-bench-boost}
if [ ! -d "$tree/inc/boost" ]; then
  mkdir -p "$tree/inc" "$tree/src"
  cp -r /usr/include/boost "$tree/inc/boost"
  for h in /usr/include/boost/*.hpp; do n=$(basename "$h"); echo "#include <boost/$n>" > "$tree/src/tu_${n//./_}.cpp"; done
fi
cd "$tree"
cache=$tree/../cf-bench.cache
touchf=inc/boost/config.hpp
cp -n "$touchf" "$touchf.orig" 2>/dev/null || true
cp "$touchf.orig" "$touchf"
run() { /usr/bin/time -f "$1: %e s wall, %U s user, %S s sys" "$bin" headers . -I inc --std c++20 --cache "$cache" -q "${@:2}" | grep -E "^(Total Parsed|scan)"; }
run "cold scan (--clean)" --clean
run "warm rescan, no change"
echo "// touched" >> "$touchf"
run "rescan, one header touched"
echo "#include <boost/config/detail/select_compiler_config.hpp>" >> "$touchf"
run "rescan, #include added to it"
cp "$touchf.orig" "$touchf"
ls src/*.cpp > /tmp/cf-bench-tus.txt
/usr/bin/time -f "g++ -M -MG, $(wc -l < /tmp/cf-bench-tus.txt) TUs, 2 workers: %e s wall, %U s user, %S s sys" \
  xargs -P 2 -n 1 sh -c 'g++ -std=c++20 -M -MG -Iinc "$0" > /dev/null 2>&1' < /tmp/cf-bench-tus.txt
uptime
