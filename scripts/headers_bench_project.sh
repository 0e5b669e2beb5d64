#!/usr/bin/env bash
# A project-shaped benchmark: N translation units that, like real code, include a mix of project
# headers, standard headers and common Boost headers (deterministic pseudo-random choice). Here
# TUs share most of their closure, which is what the cross-TU inclusion memo is for.
# Compares cold / warm / touched-one-header scans with g++ -M -MG (2 workers) on the same TUs.
#
# usage: scripts/headers_bench_project.sh [path/to/clipforge] [N=400]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-${CARGO_TARGET_DIR:-$here/target}/release/clipforge}
n=${2:-400}
tree=${TREE:-/tmp/cf-bench-project}
rm -rf "$tree"
mkdir -p "$tree/src" "$tree/include/proj"
python3 - "$tree" "$n" <<'EOF'
import random, sys, os
root, n = sys.argv[1], int(sys.argv[2])
rnd = random.Random(4)
std = ["vector", "string", "map", "unordered_map", "memory", "algorithm", "functional", "mutex", "thread",
       "atomic", "chrono", "sstream", "iostream", "optional", "variant", "set", "deque", "array", "tuple", "cstring"]
boost = ["boost/optional.hpp", "boost/variant.hpp", "boost/shared_ptr.hpp", "boost/lexical_cast.hpp",
         "boost/algorithm/string.hpp", "boost/any.hpp", "boost/function.hpp", "boost/noncopyable.hpp"]
nh = 60
for i in range(nh):
    inc = rnd.sample(std, 3) + ([rnd.choice(boost)] if i % 3 == 0 else [])
    deps = [f"proj/h{j}.h" for j in rnd.sample(range(i), min(i, 2))]
    with open(f"{root}/include/proj/h{i}.h", "w") as f:
        f.write(f"#pragma once\n" + "".join(f"#include <{h}>\n" for h in inc) + "".join(f'#include "{d}"\n' for d in deps)
                + "#ifdef _WIN32\n#include <windows.h>\n#endif\n" + f"namespace proj {{ struct S{i} {{ int v; }}; }}\n" * 20)
for t in range(n):
    hs = [f"proj/h{j}.h" for j in rnd.sample(range(nh), 6)]
    with open(f"{root}/src/tu{t}.cpp", "w") as f:
        f.write("".join(f'#include "{h}"\n' for h in hs) + "".join(f"#include <{h}>\n" for h in rnd.sample(std, 4))
                + f"int f{t}() {{ return {t}; }}\n" * 30)
EOF
cd "$tree"
cache=$tree/../cf-bench-project.cache
run() { /usr/bin/time -f "$1: %e s wall, %U s user, %S s sys" "$bin" headers . -I include --std c++20 --cache "$cache" -q "${@:2}" | grep -E "^(Files|Total Parsed|Blowup|scan)"; }
run "cold scan (--clean)" --clean
run "warm rescan, no change"
echo "// touched" >> include/proj/h5.h
run "rescan, one header touched"
echo "#include <list>" >> include/proj/h5.h
run "rescan, #include added to it"
ls src/*.cpp > /tmp/cf-bench-project-tus.txt
/usr/bin/time -f "g++ -M -MG, $n TUs, 2 workers: %e s wall, %U s user, %S s sys" \
  xargs -P 2 -n 1 sh -c 'g++ -std=c++20 -M -MG -Iinclude "$0" > /dev/null 2>&1' < /tmp/cf-bench-project-tus.txt
uptime
