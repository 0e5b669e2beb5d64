#!/usr/bin/env bash
# The Headers tab's clean rescan (HeadersState/HeadersJob, headless) against `clipforge headers
# --clean` on the same tree with the same flags, alternating (benches/headers_app.rs, a
# benchmark). Issue 12's target: app within 1.2x of the CLI.
#
# usage: scripts/headers_app_vs_cli.sh grpc|rocksdb [TEST_FILTER]   env: RUNS=5 (CARGO_TARGET_DIR as usual)
# Trees: scripts/headers_grpc.sh -> /tmp/cf-grpc/tree, scripts/headers_rocksdb.sh -> /tmp/cf-rocksdb/tree.
set -euo pipefail
cd "$(dirname "$0")/.."
case ${1:-grpc} in
grpc)
  tree=/tmp/cf-grpc/tree
  args=". -D _WIN32_WINNT=0x600 -D OPENSSL_NO_ASM=1 --std c++17"
  for d in src/python/grpcio include . third_party/abseil-cpp third_party/address_sorting/include \
    third_party/cares/cares/include third_party/cares third_party/cares/cares third_party/cares/config_linux \
    third_party/re2 third_party/boringssl-with-bazel/src/include third_party/upb src/core/ext/upb-gen \
    src/core/ext/upbdefs-gen third_party/utf8_range third_party/xxhash third_party/zlib; do
    args+=" -I $d"
  done ;;
rocksdb)
  tree=/tmp/cf-rocksdb/tree
  args=". -I . -I include -I java -I third-party/gtest-1.8.1/fused-src -D ROCKSDB_PLATFORM_POSIX
    -D ROCKSDB_LIB_IO_POSIX -D OS_LINUX --std c++20" ;;
*) echo "usage: $0 grpc|rocksdb" >&2; exit 2 ;;
esac
CF_BENCH_TREE=$tree CF_BENCH_ARGS=$args CF_BENCH_RUNS=${RUNS:-5} \
  cargo bench --bench headers_app -- "${@:2}"
