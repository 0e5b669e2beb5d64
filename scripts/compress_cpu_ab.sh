#!/usr/bin/env bash
# Two builds of crates/anim/examples/compress_cpu.rs compared on the same clips: their outputs
# byte for byte (--hash: every .cfa's FNV-1a at 0.01, 0.1 and 1 cm) and their compression time
# in thread CPU time, in alternating rounds (A, B, A, B, ...; per clip the median over the
# rounds, per build the sum). Used for a change that must leave every output identical.
#
# usage: scripts/compress_cpu_ab.sh [--set regression|bvh|all] [--rounds N] BIN_A BIN_B
#   --set S      the 25 ACL regression transform clips, the 42 shared BVH clips (as .bvh), or both
#                (default: all for the hashes, bvh for the time)
#   --rounds N   alternating timing rounds (default 3; 0: hashes only)
# environment: CLIPFORGE_SHARED (default ../shared)
set -euo pipefail

die() { echo "compress_cpu_ab.sh: error: $*" >&2; exit 1; }
set_name=""
rounds=3
args=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --set) [[ $# -ge 2 ]] || die "--set needs a value"; set_name="$2"; shift 2 ;;
        --rounds) [[ $# -ge 2 ]] || die "--rounds needs a value"; rounds="$2"; shift 2 ;;
        -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) die "unknown option $1 (see --help)" ;;
        *) args+=("$1"); shift ;;
    esac
done
[[ ${#args[@]} -eq 2 ]] || die "two binaries needed (see --help)"
[[ "$rounds" =~ ^[0-9]+$ ]] || die "--rounds must be a number, got '$rounds'"
a="${args[0]}"; b="${args[1]}"
[[ -x "$a" && -x "$b" ]] || die "both binaries must be executable"
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
shared="$(cd "${CLIPFORGE_SHARED:-$repo/../shared}" 2>/dev/null && pwd)" || die "shared folder not found (set CLIPFORGE_SHARED)"

reg="$(awk -F'\t' 'NR > 1 && $2 == "transform_clip" { print $1 }' "$shared/reference/acl-baseline.tsv" \
    | grep -vx '09_02_with_inf_error' | sed "s|^|$shared/data/acl-regression/|; s|\$|.acl.sjson|")"
bvh="$(awk -F'\t' 'NR > 1 { print $3 }' "$shared/reference/acl-bvh-baseline.tsv" | sed "s|^shared/|$shared/|")"
pick() {
    case "$1" in
        regression) echo "$reg" ;;
        bvh) echo "$bvh" ;;
        all) printf '%s\n%s\n' "$reg" "$bvh" ;;
        *) die "--set must be regression, bvh or all, got '$1'" ;;
    esac
}
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

mapfile -t clips < <(pick "${set_name:-all}")
status=0
for t in 0.01 0.1 1; do
    "$a" --hash --threshold-cm "$t" "${clips[@]}" | cut -f1,2,4 > "$tmp/a.tsv"
    "$b" --hash --threshold-cm "$t" "${clips[@]}" | cut -f1,2,4 > "$tmp/b.tsv"
    if cmp -s "$tmp/a.tsv" "$tmp/b.tsv"; then
        echo "$t cm: $(($(wc -l < "$tmp/a.tsv") - 1)) clips, every .cfa identical"
    else
        echo "$t cm: outputs differ:"; diff "$tmp/a.tsv" "$tmp/b.tsv" | grep '^[<>]' || true
        status=1
    fi
done

if [[ "$rounds" -gt 0 ]]; then
    mapfile -t clips < <(pick "${set_name:-bvh}")
    for r in $(seq 1 "$rounds"); do
        "$a" --rounds 1 "${clips[@]}" > "$tmp/ta.$r.tsv"
        "$b" --rounds 1 "${clips[@]}" > "$tmp/tb.$r.tsv"
    done
    python3 - "$tmp" "$rounds" <<'PY'
import statistics, sys
d, rounds = sys.argv[1], int(sys.argv[2])
def medians(x):
    per = {}
    for r in range(1, rounds + 1):
        for line in open(f"{d}/t{x}.{r}.tsv").read().split("\n")[1:]:
            if line:
                f = line.split("\t")
                per.setdefault(f[0], []).append(float(f[2]))
    return {k: statistics.median(v) for k, v in per.items()}
a, b = medians("a"), medians("b")
sa, sb = sum(a.values()), sum(b.values())
print(f"time, {len(a)} clips, {rounds} alternating rounds: A {sa:.1f} ms, B {sb:.1f} ms, B/A {sb / sa:.3f}")
PY
fi
exit $status
