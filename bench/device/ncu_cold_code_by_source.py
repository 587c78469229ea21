#!/usr/bin/env python3
"""Which source lines the code one launch walks only a few times per CTA comes from (the code fetched
cold after a kernel switch): ncu's per-instruction execution counts (SASS source page, CSV) joined by
offset with `nvdisasm -g` of the same kernel (each instruction's innermost source file and line).
   python3 ncu_cold_code_by_source.py SASS.csv[.gz] DISASM.txt CTAS [MAX_PER_CTA] [STALL_COLUMN]
DISASM.txt: `nvdisasm -g -c` of the cubin that holds the kernel (cuobjdump -xelf); the function is the
one whose instruction count and opcodes match the CSV. Prints instructions and bytes per source file
(and the top lines) for instructions executed 1..MAX_PER_CTA (default 8) times per CTA; with STALL_COLUMN (e.g.
stall_no_inst), also that column's warp-stall samples per source line."""
import collections
import csv
import gzip
import re
import sys

sass_path, dis_path, ctas = sys.argv[1], sys.argv[2], int(sys.argv[3])
max_per_cta = float(sys.argv[4]) if len(sys.argv) > 4 else 8.0
stall_col = sys.argv[5] if len(sys.argv) > 5 else None

opener = gzip.open if sass_path.endswith(".gz") else open
with opener(sass_path, "rt") as f:
    rows = list(csv.reader(f))
hdr = next(i for i, r in enumerate(rows) if "Source" in r)
h = rows[hdr]
body = [r for r in rows[hdr + 1:] if len(r) == len(h)]
ia, isrc = h.index("Address"), h.index("Source")
iex = h.index("Instructions Executed")
addrs = [int(r[ia], 16) for r in body]
base = min(addrs)
def opcode(text):
    t = text.strip().split()
    while t and (t[0].startswith("@") or t[0] == "{"):
        t = t[1:]
    return t[0].split(".")[0] if t else ""


ncu = {a - base: (float(r[iex] or 0), opcode(r[isrc])) for a, r in zip(addrs, body)}
ist = h.index(stall_col) if stall_col else None
stalls = {a - base: float(r[ist] or 0) for a, r in zip(addrs, body)} if ist is not None else {}


# nvdisasm -g: "//## File "path", line N" (possibly "inlined at ...") before the instructions it covers;
# functions start at ".text.<name>:".
funcs = collections.OrderedDict()
cur, loc = None, ("?", 0)
inst_re = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(.*?);")
file_re = re.compile(r'//## File "([^"]+)", line (\d+)')
with open(dis_path) as f:
    for line in f:
        if line.startswith(".text."):
            cur = line.strip()[6:].rstrip(":")
            funcs[cur] = {}
            loc = ("?", 0)
            continue
        if cur is None:
            continue
        m = file_re.search(line)
        if m:
            loc = (m.group(1), int(m.group(2)))  # the innermost location (the first one named)
            continue
        m = inst_re.search(line)
        if m:
            funcs[cur][int(m.group(1), 16)] = (loc, opcode(m.group(2)))

n = len(ncu)
best = None
for name, ins in funcs.items():
    if abs(len(ins) - n) > 2:
        continue
    agree = sum(1 for off, (e, op) in ncu.items() if off in ins and ins[off][1] and op == ins[off][1])
    if best is None or agree > best[0]:
        best = (agree, name)
if best is None:
    sys.exit(f"no function of {n} instructions in {dis_path}")
agree, name = best
ins = funcs[name]
print(f"function {name[:120]}... ({len(ins)} instructions; {agree} of {n} opcodes agree with ncu's)")
by_file = collections.Counter()
by_line = collections.Counter()
hot = cold = 0
for off, (e, _) in ncu.items():
    if e <= 0:
        continue
    per_cta = e / ctas
    (path, ln), _ = ins.get(off, (("?", 0), ""))
    short = "/".join(path.split("/")[-2:])
    if per_cta <= max_per_cta:
        cold += 1
        by_file[short] += 1
        by_line[f"{short}:{ln}"] += 1
    else:
        hot += 1
print(f"run by the launch: {hot + cold} instructions; executed <= {max_per_cta:g} times per CTA: {cold} "
      f"({cold * 16 / 1024:.0f} KB), more: {hot}")
for k, v in by_file.most_common(25):
    print(f"  {v:6d} ({v * 16 / 1024:5.1f} KB)  {k}")
print("top lines:")
for k, v in by_line.most_common(25):
    print(f"  {v:6d}  {k}")
if stalls:
    by_stall = collections.Counter()
    for off, v in stalls.items():
        (path, ln), _ = ins.get(off, (("?", 0), ""))
        by_stall["/".join(path.split("/")[-2:]) + f":{ln}"] += v
    print(f"{stall_col} samples: {sum(stalls.values()):.0f}; top lines:")
    for k, v in by_stall.most_common(15):
        print(f"  {v:6.0f}  {k}")
