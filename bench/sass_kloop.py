#!/usr/bin/env python3
"""The wgmma k-loops of braid's kernels, read from their SASS: for each kernel function in the object
files, each loop body from the pipeline's full-barrier wait (SYNCS.PHASECHK...TRYWAIT) to the wgmma wait
(WARPGROUP.DEPBAR.LE gsb0, 0x1) -- instructions, HGMMAs and R2UR moves (descriptors computed in vector
registers and moved to uniform ones: the sign that the compiler could not prove the pipeline state
warp-uniform; docs/hopper-gemm.md, "the mainloop's state in uniform registers").

    python3 bench/sass_kloop.py OBJ.o [OBJ.o ...]      (needs cuobjdump on PATH)"""
import re
import subprocess
import sys


def loops(obj):
    sass = subprocess.run(["cuobjdump", "-sass", obj], capture_output=True, text=True, check=True).stdout
    fn, ins = None, []
    for line in sass.split("\n"):
        m = re.search(r"Function : (\S+)", line)
        if m:
            fn = m.group(1)
            continue
        if re.search(r"/\*[0-9a-f]{4}\*/", line):
            ins.append((fn, re.sub(r"\s+", " ", line.split("*/", 1)[1]).strip()))
    for j, (f, text) in enumerate(ins):
        if "DEPBAR.LE gsb0, 0x1" not in text:
            continue
        k = j
        while k > 0 and "TRYWAIT" not in ins[k][1] and ins[k][0] == f:
            k -= 1
        body = [t for _, t in ins[k:j + 1]]
        yield f, len(body), sum("HGMMA" in t for t in body), sum("R2UR" in t for t in body)


def short(name):
    vals = re.findall(r"L[ib](\d+)E", name)
    kind = "conv" if "ConvTraits" in name else "gemm" if "GemmTraits" in name else name[:30]
    return f"{kind} <{','.join(vals)}>"


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for obj in sys.argv[1:]:
        for f, n, hg, r2ur in loops(obj):
            print(f"{obj.split('/')[-1]:34s} {short(f):28s} k-loop {n:3d} instr, {hg} HGMMA, {r2ur:2d} R2UR")
