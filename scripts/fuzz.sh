#!/usr/bin/env bash
# Coverage-guided fuzzing of ClipForge's parsers and decoders: libFuzzer (linked by the
# libfuzzer-sys crate) on the stable toolchain, no sanitizer, no cargo-fuzz needed.
# See docs/RELIABILITY.md for the targets, the engine choice and recorded runs.
#
#   scripts/fuzz.sh build                     build every target (instrumented, release + debug assertions)
#   scripts/fuzz.sh corpus                    (re)build fuzz/corpus/<target>/ from seeds + ../shared/data
#   scripts/fuzz.sh run TARGET [ARGS...]      fuzz one target; ARGS go to libFuzzer (e.g. -runs=1000000,
#                                             -max_total_time=60); crashes land in fuzz/artifacts/TARGET/
#   scripts/fuzz.sh replay TARGET FILE...     run inputs once (a crash's message and stack trace)
#   scripts/fuzz.sh ci [SECONDS]              build, corpus, every target for SECONDS (default 20) each
#   scripts/fuzz.sh list                      the targets
#
# Environment: FUZZ_TARGET_DIR (default fuzz/target), CLIPFORGE_DATA (default ../shared/data),
# FUZZ_NICE (default 10), CLIPFORGE_FUZZ_MEM_MB (allocation limit, default 1024),
# CLIPFORGE_FUZZ_LAX=1 (panics/aborts/hangs/blow-ups only, no contract checks).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
FUZZ="$ROOT/fuzz"
export FUZZ_TARGET_DIR="${FUZZ_TARGET_DIR:-$FUZZ/target}"
DATA="${CLIPFORGE_DATA:-$(cd "$ROOT/.." && pwd)/shared/data}"
NICE="nice -n ${FUZZ_NICE:-10}"
TARGETS=(acl_sjson bvh gltf fbx cfa cfs headers_lex headers_if headers_pp headers_trace capi jobs)

# Per-target limits: a slow input (-timeout, seconds) or a big RSS is a failure; the allocator in
# fuzz/src/lib.rs refuses any allocation state above CLIPFORGE_FUZZ_MEM_MB (default 1 GiB).
# -max_len keeps inputs in the size class of the seeds (the 1 MB input target of issue 10 is
# covered by scripts/mutants.py on whole real files).
limits() {
  case "$1" in
    headers_pp) echo "-timeout=10 -rss_limit_mb=2048 -max_len=16384" ;;
    cfa)        echo "-timeout=10 -rss_limit_mb=2048 -max_len=65536" ;;
    *)          echo "-timeout=10 -rss_limit_mb=2048 -max_len=65536" ;;
  esac
}

# The instrumentation cargo-fuzz would add, as stable -C flags: SanitizerCoverage's module pass
# with inline 8-bit counters, the PC table and comparison tracing, which libFuzzer reads.
rustflags() {
  echo "-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing -Cdebug-assertions -Coverflow-checks \
-Cforce-frame-pointers=yes"
}

# An explicit --target keeps RUSTFLAGS off build scripts and proc macros (they must not be
# instrumented: nothing links libFuzzer into them).
HOST="$(rustc -vV | sed -n 's/^host: //p')"
bin() { echo "$FUZZ_TARGET_DIR/$HOST/release/$1"; }

# Not --locked: fuzz/Cargo.lock follows the main crate's dependencies, which other branches
# change (a new dependency must not break the fuzz build).
build() {
  (cd "$FUZZ" && RUSTFLAGS="$(rustflags)" CARGO_TARGET_DIR="$FUZZ_TARGET_DIR" \
    $NICE cargo build --release --bins --target "$HOST")
}

# Seeds: the committed generated ones (fuzz/seeds/TARGET/), real files of CLIPFORGE_DATA up to
# 64 KB (not committed: see docs/RELIABILITY.md on licences), the sample header tree, and .cfa
# files made by compressing small real clips with the release CLI (CLIPFORGE_BIN, or built).
corpus() {
  local t c
  for t in "${TARGETS[@]}"; do
    c="$FUZZ/corpus/$t"; mkdir -p "$c"
    if [ -d "$FUZZ/seeds/$t" ]; then cp -n "$FUZZ/seeds/$t"/* "$c"/ 2>/dev/null || true; fi
  done
  if [ -d "$DATA" ]; then
    find "$DATA/acl-regression" -name '*.sjson' -size -64k -exec cp -n {} "$FUZZ/corpus/acl_sjson/" \;
    find "$DATA/bvh" -name '*.bvh' -size -64k -exec cp -n {} "$FUZZ/corpus/bvh/" \;
    find "$DATA/gltf" \( -name '*.gltf' -o -name '*.glb' \) -size -64k -exec cp -n {} "$FUZZ/corpus/gltf/" \;
    find "$DATA/fbx" -name '*.fbx' -size -64k -exec cp -n {} "$FUZZ/corpus/fbx/" \;
  else
    echo "fuzz.sh: no real data at $DATA; the corpus is the committed seeds only" >&2
  fi
  # Header seeds: each sample file as a TU on its own (lexer, #if), and TU + headers joined by
  # NUL bytes (the headers_pp target's input format, see fuzz/src/entries.rs).
  local f i=0
  while IFS= read -r f; do
    i=$((i + 1))
    cp "$f" "$FUZZ/corpus/headers_lex/sample-$i"
    cp "$f" "$FUZZ/corpus/headers_if/sample-$i"
  done < <(find "$ROOT/assets/headers-sample" -type f | sort)
  local tu
  for tu in $(find "$ROOT/assets/headers-sample" -name '*.c' -o -name '*.cpp' | sort); do
    { cat "$tu"; for f in $(find "$ROOT/assets/headers-sample" -name '*.h' | sort | head -4); do
        printf '\0'; cat "$f"; done; } > "$FUZZ/corpus/headers_pp/sample-$(basename "$tu")"
  done
  cfa_seeds
}

cfa_seeds() {
  local out="$FUZZ/corpus/cfa" cli="${CLIPFORGE_BIN:-}"
  if [ -z "$cli" ]; then
    cli="${CARGO_TARGET_DIR:-$ROOT/target}/release/clipforge"
    if [ ! -x "$cli" ]; then
      (cd "$ROOT" && $NICE cargo build --release --no-default-features --bin clipforge)
    fi
  fi
  local tmp; tmp="$(mktemp -d)"
  find "$FUZZ/corpus/acl_sjson" "$FUZZ/corpus/bvh" "$FUZZ/corpus/gltf" -type f \
    \( -name '*.acl.sjson' -o -name '*.bvh' -o -name '*.gltf' -o -name '*.glb' \) -size -40k \
    -exec cp {} "$tmp/" \;
  "$cli" compress "$tmp" -o "$tmp/out" >/dev/null 2>&1 || true
  find "$tmp/out" -name '*.cfa' -size -64k -exec cp {} "$out/" \; 2>/dev/null || true
  # Additive clips (flags bits 2-3, and bit 4 when some rotation is stored relative to a
  # reference): a few of the same clips relative to their first frame.
  mkdir -p "$tmp/add"
  local f n=0
  for f in $(find "$tmp" -maxdepth 1 -type f \( -name '*.bvh' -o -name '*.acl.sjson' \) | sort); do
    "$cli" convert --additive-base first-frame "$f" -o "$tmp/add/add-$n.acl.sjson" >/dev/null 2>&1 || continue
    n=$((n + 1))
    [ "$n" -ge 4 ] && break
  done
  "$cli" compress "$tmp/add" -o "$tmp/add-out" >/dev/null 2>&1 || true
  find "$tmp/add-out" -name '*.cfa' -size -64k -exec cp {} "$out/" \; 2>/dev/null || true
  # ACL scalar track lists compress to .cfs: the seeds of the cfs target.
  mkdir -p "$FUZZ/corpus/cfs"
  find "$tmp/out" -name '*.cfs' -size -64k -exec cp {} "$FUZZ/corpus/cfs/" \; 2>/dev/null || true
  rm -rf "$tmp"
  echo "fuzz.sh: $(ls "$out" | wc -l) .cfa seeds, $(ls "$FUZZ/corpus/cfs" | wc -l) .cfs seeds"
}

run() {
  local t="$1"; shift
  mkdir -p "$FUZZ/artifacts/$t" "$FUZZ/corpus/$t"
  # New inputs go to the first folder (corpus); the committed seeds are only read.
  local dirs=("$FUZZ/corpus/$t")
  if [ -d "$FUZZ/seeds/$t" ]; then dirs+=("$FUZZ/seeds/$t"); fi
  # shellcheck disable=SC2046
  $NICE "$(bin "$t")" $(limits "$t") -artifact_prefix="$FUZZ/artifacts/$t/" -print_final_stats=1 \
    "$@" "${dirs[@]}"
}

replay() {
  local t="$1"; shift
  CLIPFORGE_FUZZ_PANIC_TRACE=1 RUST_BACKTRACE=1 $NICE "$(bin "$t")" $(limits "$t") "$@"
}

ci() {
  local secs="${1:-20}" t log
  build
  corpus
  log="$(mktemp)"
  for t in "${TARGETS[@]}"; do
    echo "== fuzz $t for ${secs}s"
    if ! run "$t" -max_total_time="$secs" >"$log" 2>&1; then
      tail -n 60 "$log"
      echo "fuzz.sh: target $t FAILED (input saved in fuzz/artifacts/$t/)" >&2
      rm -f "$log"
      return 1
    fi
    grep -E '^#[0-9]+ +(INITED|DONE)|^stat::number_of_executed_units|^Done' "$log" || tail -n 5 "$log"
  done
  rm -f "$log"
}

case "${1:-}" in
  build) build ;;
  corpus) corpus ;;
  run) shift; run "$@" ;;
  replay) shift; replay "$@" ;;
  ci) shift; ci "$@" ;;
  list) printf '%s\n' "${TARGETS[@]}" ;;
  *) sed -n '2,19p' "$0"; exit 2 ;;
esac
