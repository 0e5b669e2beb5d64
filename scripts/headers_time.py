#!/usr/bin/env python3
"""Times a command N times; prints the median and minimum wall time and the median CPU time
(user + sys of the command and its children). The machines are shared and noisy: one run says
little, the median of several says more, and CPU time is less disturbed by other load than wall.

usage: headers_time.py N LABEL [--pre CMD] [--post CMD] -- COMMAND...
  --pre / --post: shell commands run before / after each timed run (not timed).
"""
import os, resource, statistics, subprocess, sys, time

args = sys.argv[1:]
n, label = int(args[0]), args[1]
split = args.index("--")
opts, cmd = args[2:split], args[split + 1:]
pre = opts[opts.index("--pre") + 1] if "--pre" in opts else None
post = opts[opts.index("--post") + 1] if "--post" in opts else None
walls, cpus = [], []
for _ in range(n):
    if pre:
        subprocess.run(pre, shell=True, check=True)
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True)
    walls.append(time.perf_counter() - t0)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpus.append(r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime)
    if post:
        subprocess.run(post, shell=True, check=True)
print(f"{label}: median {statistics.median(walls):.3f} s wall (min {min(walls):.3f}), "
      f"median {statistics.median(cpus):.3f} s CPU, {n} runs")
