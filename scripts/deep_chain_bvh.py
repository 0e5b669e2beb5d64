#!/usr/bin/env python3
# A fully animated BVH chain for the hostile-input measurements (docs/BENCHMARKS.md, "Deep
# hierarchies"): JOINTS joints in one chain, FRAMES frames, every joint rotating by a random
# +-9 degrees at every frame (seeded, so the file is the same every time).
# usage: python3 scripts/deep_chain_bvh.py JOINTS FRAMES OUT.bvh
import sys, random
n=int(sys.argv[1]); frames=int(sys.argv[2]); out=sys.argv[3]
random.seed(1)
L=["HIERARCHY","ROOT j0","{","OFFSET 0 0 0","CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation"]
for i in range(1,n):
    L+=[f"JOINT j{i}","{","OFFSET 0 1 0","CHANNELS 3 Zrotation Xrotation Yrotation"]
L+=["End Site","{","OFFSET 0 1 0","}"]
L+=["}"]*n
L+=["MOTION",f"Frames: {frames}","Frame Time: 0.033333"]
for f in range(frames):
    v=[f"{f*0.1:.1f}","0","0"]+[str(random.randint(-9,9)) for _ in range(3*n)]
    L.append(" ".join(v))
open(out,"w").write("\n".join(L)+"\n")
