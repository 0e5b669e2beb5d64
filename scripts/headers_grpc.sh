#!/usr/bin/env bash
# A real project tree nobody here wrote: gRPC core 1.66.1 (the `grpcio` source distribution from
# PyPI: gRPC's src/core plus its vendored abseil, BoringSSL, re2, upb, c-ares, zlib headers).
# The TUs outside src/core are deleted (their headers stay), leaving 886 TUs (569 .cc, 317 .c)
# in a 3,496-file tree, with the include dirs and defines of grpcio's setup.py.
#
# Runs: g++ -M -MG ground truth (../shared/tools/headers/gt.py, 2 workers), Header Hero's
# algorithm (hh_emul.py), then `clipforge headers` cold / warm / touched-one-header, and compares
# Total Parsed and the per-TU closures (preprocessed vs g++), and the all-branches numbers vs
# hh_emul. CPU times (user+sys) are printed beside wall times: the machine is shared.
#
# usage: scripts/headers_grpc.sh [path/to/clipforge]
# env:   WORK=/tmp/cf-grpc  TOOLS=../shared/tools/headers  SKIP_GT=1 (reuse $WORK/gt)
set -euo pipefail
source "$(dirname "$0")/headers_grpc_flags.sh"
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-${CARGO_TARGET_DIR:-$here/target}/release/clipforge}
tools=${TOOLS:-$here/../shared/tools/headers}
work=${WORK:-/tmp/cf-grpc}
# shellcheck source=headers_realtree.sh
source "$here/scripts/headers_realtree.sh"
fetch_tree https://files.pythonhosted.org/packages/e7/42/94293200e40480d79fc876b2330e7dffb20f959b390afa77c0dbaa0c8372/grpcio-1.66.1.tar.gz \
  35334f9c9745add3e357e3372756fd32d925bd52c41da97f4dfdafbde0bf0ee2
find . -type f \( -name '*.c' -o -name '*.cc' -o -name '*.cpp' -o -name '*.cxx' -o -name '*.m' -o -name '*.mm' \) \
  -not -path './src/core/*' -delete
incs="$GRPC_INCS"
defs="$GRPC_DEFS"
std=c++17
touch_header=src/core/lib/gprpp/ref_counted.h
run_realtree
