#!/usr/bin/env python3
"""Quick A/B of two runtime_vs_acl bench binaries (crates/runtime/benches/runtime_vs_acl.rs) on
the same .cfa files, for iterating on the decoder: alternating runs (A, B, B, A, ...) with
--passes 31 --blocks 11, each clip's median per binary over the rounds, and per pattern the
median (min-max) over the clips of the per-clip ratios B/A. No ACL beside it: for figures, use
scripts/bench_runtime_vs_acl.sh --before A. The cold pattern's per-process spread is large on a
shared machine (an A/A run of 8 rounds read 0.98-1.02 per clip, two runs of one A/B 8 rounds
apart read 0.93 and 1.04): use 20 rounds or more for a few per cent.

    scripts/bench_runtime_ab.py [--rounds N] [-v] A_BIN B_BIN CLIP.cfa...
      -v   also print each clip's ratio
"""
import statistics
import subprocess
import sys

COLUMNS = ["pose_cold_ns", "pose_warm_ns", "playback_ns", "seek_ns"]


def main(argv):
    rounds, verbose = 20, False
    while argv and argv[0].startswith("-"):
        if argv[0] == "--rounds" and len(argv) > 1:
            rounds, argv = int(argv[1]), argv[2:]
        elif argv[0] == "-v":
            verbose, argv = True, argv[1:]
        else:
            sys.exit(__doc__)
    if len(argv) < 3 or rounds < 1:
        sys.exit(__doc__)
    bins, clips = argv[:2], argv[2:]
    times = {b: {} for b in bins}
    for r in range(rounds):
        for b in bins if r % 2 == 0 else bins[::-1]:
            out = subprocess.run(
                ["nice", "-n", "10", b, "--passes", "31", "--blocks", "11", *clips],
                capture_output=True, text=True, check=True,
            ).stdout.splitlines()
            header = out[0].split("\t")
            for line in out[1:]:
                row = dict(zip(header, line.split("\t")))
                for c in COLUMNS:
                    if row[c] != "NA":
                        times[b].setdefault((row["clip"], c), []).append(float(row[c]))
    a, b = bins
    for c in COLUMNS:
        ratios = sorted(
            (statistics.median(times[b][k]) / statistics.median(v), k[0])
            for k, v in times[a].items()
            if k[1] == c and k in times[b]
        )
        if not ratios:
            continue
        r = [x for x, _ in ratios]
        print(f"{c}: B/A median {statistics.median(r):.3f} (min {r[0]:.3f}, max {r[-1]:.3f}) over {len(r)} clips")
        if verbose:
            print("   ", ", ".join(f"{clip} {x:.3f}" for x, clip in ratios))


if __name__ == "__main__":
    main(sys.argv[1:])
