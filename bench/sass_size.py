#!/usr/bin/env python3
"""SASS size of braid's kernels: instructions and inlined 32-bit divisions (I2F.U32.RP, the start of the
compiler's reciprocal sequence) per kernel function, for one or two builds' object files side by side.

    python3 bench/sass_size.py OLD_BUILD [NEW_BUILD] [--glob 'instances/*.o']

Needs cuobjdump on PATH (CUDA toolkit; here the PyPI wheel nvidia-cuda-cuobjdump has it). The code a CTA
runs once is fetched cold after a switch from another kernel function, so the size is worth watching
(docs/hopper-gemm.md, "Index math without divisions")."""
import argparse
import glob
import os
import re
import subprocess
import sys


def functions(obj):
    out = subprocess.run(["cuobjdump", "-sass", obj], capture_output=True, text=True, check=True).stdout
    res = {}
    for part in re.split(r"\n\s*Function : ", out)[1:]:
        name = part.split("\n", 1)[0].strip()
        ins = re.findall(r"/\*[0-9a-f]{4,}\*/\s+([^;]*);", part)
        res[name] = (len(ins), sum("I2F.U32.RP" in i for i in ins))
    return res


def short(name):
    """'conv bf16 <128,64,0,0,1,1>': the traits' kind, element type and integer template arguments."""
    kind = "conv" if "ConvTraits" in name else "gemm" if "GemmTraits" in name else name[:40]
    dtype = "bf16" if "bfloat16" in name else "f16"
    vals = re.findall(r"L[ib](\d+)E", name)
    return f"{kind} {dtype} <{','.join(vals)}>"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("builds", nargs="+")
    ap.add_argument("--glob", default="CMakeFiles/braid_hopper.dir/src/hopper/instances/*.o")
    a = ap.parse_args()
    tables = []
    for b in a.builds:
        t = {}
        for obj in sorted(glob.glob(os.path.join(b, a.glob))):
            for name, v in functions(obj).items():
                t[(os.path.basename(obj), name)] = v
        tables.append(t)
    keys = sorted(tables[0])
    tot = [[0, 0] for _ in tables]
    print("object | kernel | " + " | ".join(f"instr / divisions ({os.path.basename(os.path.normpath(b))})" for b in a.builds))
    for k in keys:
        row = []
        for i, t in enumerate(tables):
            n, d = t.get(k, (0, 0))
            tot[i][0] += n
            tot[i][1] += d
            row.append(f"{n} / {d}")
        ratio = f" ({tables[-1].get(k, (0, 0))[0] / max(1, tables[0][k][0]):.2f}x)" if len(tables) > 1 else ""
        print(f"{k[0]} | {short(k[1])} | " + " | ".join(row) + ratio)
    print("total | | " + " | ".join(f"{n} / {d}" for n, d in tot) +
          (f" ({tot[-1][0] / max(1, tot[0][0]):.3f}x)" if len(tables) > 1 else ""))


if __name__ == "__main__":
    sys.exit(main())
