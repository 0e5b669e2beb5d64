#!/usr/bin/env bash
# The tree the issue names: RocksDB (7.8.3, the upstream source as Debian ships it:
# rocksdb_7.8.3.orig.tar.gz from deb.debian.org, pinned by sha256). 674 TUs in a 1,924-file tree,
# with the include dirs and defines of ../shared/reference/header-hero-notes.md section 4
# (`. include java third-party/gtest-1.8.1/fused-src`, ROCKSDB_PLATFORM_POSIX ROCKSDB_LIB_IO_POSIX
# OS_LINUX, -std=c++20).
#
# Runs: g++ -M -MG ground truth (../shared/tools/headers/gt.py, 2 workers), Header Hero's
# algorithm (hh_emul.py), then `clipforge headers` cold / warm / touched-one-header, and compares
# Total Parsed and the per-TU closures (preprocessed vs g++), and the all-branches numbers vs
# hh_emul. CPU times (user+sys) are printed beside wall times: the machine is shared.
#
# usage: scripts/headers_rocksdb.sh [path/to/clipforge]
# env:   WORK=/tmp/cf-rocksdb  TOOLS=../shared/tools/headers  SKIP_GT=1 (reuse $WORK/gt)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-${CARGO_TARGET_DIR:-$here/target}/release/clipforge}
tools=${TOOLS:-$here/../shared/tools/headers}
work=${WORK:-/tmp/cf-rocksdb}
# shellcheck source=headers_realtree.sh
source "$here/scripts/headers_realtree.sh"
fetch_tree http://deb.debian.org/debian/pool/main/r/rocksdb/rocksdb_7.8.3.orig.tar.gz \
  b85408a374770897332bf15e51620a5f35720dd416a4749e3899057f9cfaf84d
incs=". include java third-party/gtest-1.8.1/fused-src"
defs="ROCKSDB_PLATFORM_POSIX ROCKSDB_LIB_IO_POSIX OS_LINUX"
std=c++20
touch_header=include/rocksdb/status.h
run_realtree
