#!/usr/bin/env python3
"""The producer warp's k-step in braid's kernels, read from their SASS: for each kernel function, the
instructions between two consecutive k-steps' A-operand TMA loads (convolutions: UTMALDG.4D.IM2COL;
GEMMs: every second UTMALDG), with the R2UR moves (TMA coordinates computed in vector registers, moved to
uniform ones) and IMAD.HI (the FastDiv divisions) among them. The producer runs this loop in one lane,
one dependent chain per k-step (docs/hopper-conv.md, "The k-loop in uniform registers").
A kernel holds several copies of the loop (the unrolled plain loop of produce<Traits, false>, the waiting
loop and the plain loop of produce<Traits, true>): the first line is the first k-step (as before), `loops:`
lists each copy's k-steps (A loads closer than 300 instructions), their median instruction counts.

    python3 bench/sass_producer_kstep.py OBJ.o [OBJ.o ...]      (needs cuobjdump on PATH)"""
import re
import statistics
import subprocess
import sys

for obj in sys.argv[1:]:
    sass = subprocess.run(["cuobjdump", "-sass", obj], capture_output=True, text=True).stdout
    fn = None
    F = {}
    for l in sass.split("\n"):
        m = re.search(r"Function : (\S+)", l)
        if m:
            fn = m.group(1)
            F[fn] = []
            continue
        m = re.search(r"/\*([0-9a-f]{4,})\*/\s+(.*?);", l)
        if m and fn:
            F[fn].append(re.sub(r"\s+", " ", m.group(2)).strip())
    for fn, ins in F.items():
        key = "UTMALDG.4D.IM2COL" if "Conv" in fn else "UTMALDG"
        idx = [i for i, t in enumerate(ins) if key in t]
        if "Conv" not in fn:
            idx = idx[1::2] if len(idx) > 2 else idx
        if len(idx) < 2:
            continue
        seg = ins[idx[0] + 1:idx[1] + 1]
        vals = re.findall(r"L[ib](\d+)E", fn)
        name = obj.split("/")[-1]
        print(name, ",".join(vals), "producer k-step:", len(seg), "instr,", sum("R2UR" in t for t in seg), "R2UR,",
              sum("IMAD.HI" in t for t in seg), "IMAD.HI")
        loops, cur = [], []
        for a, b in zip(idx, idx[1:]):
            if b - a < 300:
                cur.append(b - a)
            elif cur:
                loops.append(cur)
                cur = []
        if cur:
            loops.append(cur)
        print("   loops:", "; ".join(f"{len(l)} k-steps, median {statistics.median(l):g}" for l in loops))
