#!/usr/bin/env bash
# `clipforge headers --cuts` on a real tree (gRPC core or RocksDB, as scripts/headers_grpc.sh and
# scripts/headers_rocksdb.sh fetch them): times the cold scan without --cuts, with every
# directive's estimated saving (--cuts 0) and with the top N confirmed (--cuts N); then, for every
# cut marked exact, edits a copy of the tree (the directive's line blanked, or the header emptied),
# rescans it from scratch (--clean --no-cache) and checks that Total Parsed dropped by exactly
# `lines_saved`. Also compares the one-analysis estimates with the exact figures.
#
# usage: scripts/headers_cuts.sh grpc|rocksdb [path/to/clipforge]
# env:   WORK=/tmp/cf-grpc (or /tmp/cf-rocksdb)  N=20  RUNS=5
set -euo pipefail
source "$(dirname "$0")/headers_grpc_flags.sh"
here=$(cd "$(dirname "$0")/.." && pwd)
which=${1:?grpc or rocksdb}
bin=${2:-${CARGO_TARGET_DIR:-$here/target}/release/clipforge}
n=${N:-20}
runs=${RUNS:-5}
case $which in
  grpc)
    work=${WORK:-/tmp/cf-grpc}
    incs="$GRPC_INCS"
    defs="$GRPC_DEFS"
    std=c++17 ;;
  rocksdb)
    work=${WORK:-/tmp/cf-rocksdb}
    incs=". include java third-party/gtest-1.8.1/fused-src"
    defs="ROCKSDB_PLATFORM_POSIX ROCKSDB_LIB_IO_POSIX OS_LINUX"
    std=c++20 ;;
  *) echo "usage: $0 grpc|rocksdb [clipforge]" >&2; exit 2 ;;
esac
if [[ ! -d $work/tree ]]; then
  echo "$work/tree missing: run scripts/headers_$which.sh first (it fetches the tree)" >&2
  exit 2
fi
flags=()
for d in $incs; do flags+=(-I "$d"); done
for d in $defs; do flags+=(-D "$d"); done
flags+=(--std "$std" --no-cache -q)

cd "$work/tree"
timed() { python3 "$here/scripts/headers_time.py" "$@"; }
timed "$runs" "cold scan (--clean --no-cache)" -- "$bin" headers . "${flags[@]}" --clean
timed "$runs" "cold scan + every directive's estimated saving (--cuts 0)" -- "$bin" headers . "${flags[@]}" --clean --cuts 0
timed "$runs" "cold scan + estimates + top $n confirmed exactly (--cuts $n)" -- "$bin" headers . "${flags[@]}" --clean --cuts "$n"
"$bin" headers . "${flags[@]}" --clean --cuts 0 --json "$work/cuts_est.json" > /dev/null
"$bin" headers . "${flags[@]}" --clean --cuts "$n" --json "$work/cuts.json" | sed -n '/^Top cuts/,$p'

# The edited copies: one directive (or header) at a time, restored after each rescan.
copy=$work/cuts_edit
rm -rf "$copy"
cp -a "$work/tree" "$copy"
cd "$copy"
python3 - "$work" "$copy" "$bin" "${flags[@]}" <<'EOF'
import json, subprocess, sys
work, copy, binary, flags = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
rep = json.load(open(f"{work}/cuts.json"))
est = {(c["kind"], c["includer"], c["line"], c["included"]): c
       for c in json.load(open(f"{work}/cuts_est.json"))["cuts"]}
exact = [c for c in rep["cuts"] if c["exact"]]
ok = same_est = flagged = 0
for c in exact:
    path = c["included"] if c["kind"] == "empty_header" else c["includer"]
    before = open(path, "rb").read()
    if c["kind"] == "empty_header":
        edited = b""
    else:
        lines = before.splitlines(keepends=True)
        body = lines[c["line"] - 1]
        lines[c["line"] - 1] = body[len(body.rstrip(b"\r\n")):]
        edited = b"".join(lines)
    open(path, "wb").write(edited)
    try:
        subprocess.run([binary, "headers", ".", *flags, "--clean", "--json", f"{work}/cuts_rescan.json"],
                       stdout=subprocess.DEVNULL, check=True)
    finally:
        open(path, "wb").write(before)
    diff = rep["total_parsed"] - json.load(open(f"{work}/cuts_rescan.json"))["total_parsed"]
    e = est[(c["kind"], c["includer"], c["line"], c["included"])]
    flagged += e["macros_tested_later"] or e["other_directives"]
    same_est += e["lines_saved"] == c["lines_saved"]
    status = "ok" if diff == c["lines_saved"] else "MISMATCH"
    ok += diff == c["lines_saved"]
    what = (f"{c['included']} (empty)" if c["kind"] == "empty_header"
            else f"{c['includer']}:{c['line']} -> {c['included']}")
    print(f"  {status}: {what}: lines_saved {c['lines_saved']:,}, rescan difference {diff:,}")
print(f"exact cuts equal to a --clean rescan of the edited tree: {ok}/{len(exact)}; "
      f"estimate already equal: {same_est}/{len(exact)} ({flagged} of them flagged)")
sys.exit(0 if ok == len(exact) else 1)
EOF
