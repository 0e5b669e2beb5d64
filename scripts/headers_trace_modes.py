#!/usr/bin/env python3
"""Compares the per-header costs of scripts/headers_trace_modes.sh's reports: for each pair of
(mode, round) reports, over the headers both measured (cost_ms > 0 in both), the median and
the 90th percentile of |a - b| / mean(a, b) and the sum of their cost_ms, again over the headers
of at least 1 ms in one of the two; then each run's total measured TU frontend time. Pairs of rounds of one mode are the noise to compare the modes with.

usage: headers_trace_modes.py OUT MODE... --rounds R
"""
import itertools
import json
import statistics
import sys


def load(path):
    r = json.load(open(path))
    costs = {h["path"]: h.get("cost_ms") or 0.0 for h in r["headers"] if h.get("cost_measured")}
    tus = {t["path"]: t.get("measured_ms") for t in r.get("tus", []) if t.get("measured_ms")}
    return costs, tus


def compare(a, b, floor=0.0):
    common = [p for p in a if a[p] > 0 and b.get(p, 0) > 0 and max(a[p], b[p]) >= floor]
    rel = sorted(abs(a[p] - b[p]) / ((a[p] + b[p]) / 2) for p in common)
    if not rel:
        return "no header measured in both"
    p90 = rel[min(len(rel) - 1, int(0.9 * len(rel)))]
    sa, sb = sum(a[p] for p in common), sum(b[p] for p in common)
    return (f"{len(common)} headers: median |diff| {100 * statistics.median(rel):.1f} %, "
            f"p90 {100 * p90:.1f} %, sum of costs {sa:.0f} vs {sb:.0f} ms ({100 * (sb - sa) / sa:+.1f} %)")


def main():
    args = sys.argv[1:]
    rounds = int(args[args.index("--rounds") + 1])
    out = args[0]
    modes = [m for m in args[1:args.index("--rounds")]]
    reps = {(m, r): load(f"{out}/{m}-{r}.report.json") for m in modes for r in range(1, rounds + 1)}
    print("per-header costs (cost_ms), pairs of runs:")
    for (ka, (ca, ta)), (kb, (cb, tb)) in itertools.combinations(reps.items(), 2):
        same = "noise " if ka[0] == kb[0] else "modes "
        print(f"  {same}{ka[0]}#{ka[1]} vs {kb[0]}#{kb[1]}: {compare(ca, cb)}")
        print(f"        headers of >= 1 ms: {compare(ca, cb, 1.0)}")
    print("TU frontend time (measured_ms, sum over the TUs):")
    for k, (_, t) in reps.items():
        print(f"  {k[0]}#{k[1]}: {sum(t.values()):.0f} ms over {len(t)} TUs")


if __name__ == "__main__":
    main()
