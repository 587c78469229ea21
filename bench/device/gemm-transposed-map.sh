#!/usr/bin/env bash
# Where the transposed formulation pays: CUTLASS's transposed two-warpgroup kernels (t-192x192, t-192x128,
# t-256x128, t-128x256) against braid's usual picks and cuBLASLt on every MLP / attention GEMM shape at
# 256-2048 tokens. Each checked against the reference; no activation.
#   BIN=/tmp/new OUT=dir BRAID_COMMIT=<hash> bash bench/device/gemm-transposed-map.sh
set -uo pipefail
source "$(dirname "$0")/common.sh"
BIN=${BIN:-build/tools}
mkdir -p "$OUT"
log="$OUT/gemm-transposed-map.log"
log_header "$log" "BIN=$BIN bash bench/device/gemm-transposed-map.sh"
T="t-192x192,t-192x128,t-256x128,t-128x256"
B="128x128,128x128-staged-pp,128x192,192x128-staged,192x192,128x256-staged"
run() { timeout 100 "$BIN/braid-gemm" --reps 15 --configs $B --cutlass-shapes $T "$@" >> "$log" 2>&1; }
run --m 256,512,1024,2048 --n 6144 --k 12288    # GPT-3 W1
run --m 256,512,1024,2048 --n 12288 --k 6144    # GPT-3 W2
run --m 512,1024,2048 --n 4608 --k 12288        # GPT-3 QKV
run --m 512,1024,2048 --n 12288 --k 1536        # GPT-3 out
run --m 256,512,1024,2048 --n 5504 --k 8192     # LLaMA W1 (gate|up)
run --m 256,512,1024,2048 --n 8192 --k 2752     # LLaMA W2
run --m 512,1024,2048 --n 3072 --k 8192         # LLaMA QKV
run --m 512,1024,2048 --n 8192 --k 1024         # LLaMA out
python3 - "$log" <<'PY'
import re, sys
rows = {}
nk = None
for l in open(sys.argv[1]):
    m = re.match(r'braid-gemm on .*N=(\d+) K=(\d+)', l)
    if m: nk = (int(m.group(1)), int(m.group(2))); continue
    m = re.match(r'\s+M=(\d+)\s+(\S+)\s+([\d.]+) us.*err ([\d.e+-]+)', l)
    if m and nk: rows.setdefault((nk, int(m.group(1))), {})[m.group(2)] = (float(m.group(3)), float(m.group(4)))
print("%-16s %5s %9s %22s %22s %7s" % ("N x K", "M", "cuBLASLt", "braid best", "transposed best", "t/braid"))
for (nk, M), v in sorted(rows.items()):
    cb = v.get("cublaslt-best", (0, 0))[0]
    br = min(((t, n) for n, (t, e) in v.items() if not n.startswith(("cublas", "cutlass"))), default=(0, "-"))
    tr = min(((t, n) for n, (t, e) in v.items() if n.startswith("cutlass-t-")), default=(0, "-"))
    bad = [n for n, (t, e) in v.items() if e > 1e-2]
    print("%-16s %5d %9.1f %14.1f %-8s %14.1f %-8s %6.3f %s" % ("%dx%d" % nk, M, cb, br[0], br[1][:8], tr[0], tr[1][8:], tr[0] / br[0] if br[0] else 0,
          ("CHECK FAILED " + ",".join(bad)) if bad else ""))
PY
