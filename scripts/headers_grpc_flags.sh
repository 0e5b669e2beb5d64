# gRPC core's include dirs and defines as grpcio's setup.py passes them on Linux (its C++
# standard: c++17), for the scripts that profile the gRPC tree (sourced, not run). Paths are
# relative to the tree's root; order is the search order.
GRPC_INCS="src/python/grpcio include . third_party/abseil-cpp third_party/address_sorting/include
  third_party/cares/cares/include third_party/cares third_party/cares/cares third_party/cares/config_linux
  third_party/re2 third_party/boringssl-with-bazel/src/include third_party/upb src/core/ext/upb-gen
  src/core/ext/upbdefs-gen third_party/utf8_range third_party/xxhash third_party/zlib"
GRPC_DEFS="_WIN32_WINNT=0x600 OPENSSL_NO_ASM=1"
