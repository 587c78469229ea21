"""What kernel does cuBLAS (through PyTorch) run for a weight-streaming GEMM, and how fast? For ncu:
   ncu --section SpeedOfLight --section LaunchStats -k regex:. --launch-skip 10 --launch-count 1 \
       python3 bench/micro/torch_skinny_gemm.py 1 12288 6144
Also prints the event-timed median (L2 evicted by a read before each run). Not part of the library."""
import sys

import torch

T, K, N = (int(a) for a in sys.argv[1:4])
x = torch.randn(T, K, device="cuda", dtype=torch.half)
w = torch.randn(K, N, device="cuda", dtype=torch.half) / K**0.5
scratch = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
for _ in range(12):
    y = x @ w
torch.cuda.synchronize()
ts = []
for _ in range(30):
    scratch.view(torch.int32).sum(dtype=torch.int64)
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record()
    y = x @ w
    b.record()
    b.synchronize()
    ts.append(a.elapsed_time(b) * 1000)
ts.sort()
us = ts[len(ts) // 2]
print(f"T={T} K={K} N={N}: {us:.1f} us, {2 * K * N / us / 1e6:.2f} TB/s of weights")
