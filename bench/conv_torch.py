#!/usr/bin/env python3
"""cuDNN peer for braid's Conv2D pair benchmark (workload conv-pair), through PyTorch.

For every layer CxHW and batch N it times y = relu(conv2(relu(conv1(x)))): two dependent 3x3
convolutions, stride 1, padding 1, C->C->C channels, each with bias and ReLU, in channels_last memory
format with cudnn.benchmark on and TF32 off. Variants:
  peer:cudnn-graph  the pair captured once in a CUDA graph, replayed;
  peer:cudnn-eager  the same pair called eagerly from Python.
Each repetition evicts L2 (reads a 256 MiB scratch buffer), then times the run between two CUDA
events; the reported time is the median over --reps repetitions after --warmup untimed ones. Before it
is timed, each variant's output is poisoned with NaN, computed once and checked against an fp32
reference (F.conv2d in float32, TF32 off) from the same rounded inputs and weights:
rel = max|y - ref| / max|ref| < 1e-2 and no NaN.

Writes CSV columns shape,variant,time_us,check,rel_err with shape as C=64;HW=56;N=8.
Usage: conv_torch.py --out conv-cudnn.csv [--dtype fp16|bf16] [--batches 1,4,...] [--layers 64x56,...]
"""
import argparse
import csv
import math
import sys

import torch
import torch.nn.functional as F

from torch_common import SCRATCH_BYTES, log, parse_list, time_it

TOL = 1e-2


def parse_layer(t):
    c, hw = t.lower().split("x")
    return int(c), int(hw)


def make_case(c, hw, n, dtype, seed):
    """Random input, weights and biases (never zeros), rounded to dtype, channels_last on cuda."""
    g = torch.Generator(device="cuda")
    g.manual_seed(seed)

    def uni(shape, lo, hi):
        t = torch.rand(shape, generator=g, device="cuda", dtype=torch.float32)
        return t * (hi - lo) + lo

    wscale = 1.0 / math.sqrt(9 * c)
    x = uni((n, c, hw, hw), -1.0, 1.0)
    w1 = uni((c, c, 3, 3), -1.0, 1.0) * wscale
    b1 = uni((c,), -0.1, 0.1)
    w2 = uni((c, c, 3, 3), -1.0, 1.0) * wscale
    b2 = uni((c,), -0.1, 0.1)
    cl = torch.channels_last
    x = x.to(dtype=dtype).contiguous(memory_format=cl)
    w1 = w1.to(dtype=dtype).contiguous(memory_format=cl)
    w2 = w2.to(dtype=dtype).contiguous(memory_format=cl)
    b1 = b1.to(dtype=dtype)
    b2 = b2.to(dtype=dtype)
    return x, w1, b1, w2, b2


def conv_pair(x, w1, b1, w2, b2):
    h = F.relu(F.conv2d(x, w1, b1, stride=1, padding=1), inplace=True)
    return F.relu(F.conv2d(h, w2, b2, stride=1, padding=1), inplace=True)


def reference(x, w1, b1, w2, b2):
    """fp32 reference on the GPU from the same (rounded) values; TF32 is off globally."""
    with torch.no_grad():
        return conv_pair(x.float(), w1.float(), b1.float(), w2.float(), b2.float())


def check(y, ref):
    """Returns (passed, rel_err)."""
    yf = y.float()
    if torch.isnan(yf).any().item() or torch.isinf(yf).any().item():
        return False, float("nan")
    denom = ref.abs().max().item()
    diff = (yf - ref).abs().max().item()
    rel = diff / denom if denom > 0 else float("inf")
    return rel < TOL, rel


def run_graph(args_t, ref, scratch, reps, warmup):
    """peer:cudnn-graph: warm up on a side stream (cudnn.benchmark picks its algorithms there), capture
    the pair into a CUDA graph with static input/output, replay."""
    x = args_t[0]
    with torch.no_grad():
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                conv_pair(*args_t)
        torch.cuda.current_stream().wait_stream(side)
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            y_static = conv_pair(*args_t)
        torch.cuda.synchronize()
        layout_ok = y_static.is_contiguous(memory_format=torch.channels_last)
        # check: poison the static output, replay once, compare
        y_static.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        ok, rel = check(y_static, ref)
        t = time_it(graph.replay, scratch, reps, warmup)
    del graph, y_static, x
    return t, ok, rel, layout_ok


def run_eager(args_t, ref, scratch, reps, warmup):
    """peer:cudnn-eager: the same pair, launched from Python each time."""
    with torch.no_grad():
        # warm-up (cudnn.benchmark has already chosen algorithms for these shapes in run_graph,
        # but run_eager must also stand alone)
        conv_pair(*args_t)
        torch.cuda.synchronize()
        # poison: eager outputs are fresh allocations, so fill blocks of the intermediate's and the
        # output's size with NaN and free them; the caching allocator hands those blocks out again
        x = args_t[0]
        p1 = torch.full_like(x, float("nan"))
        p2 = torch.full_like(x, float("nan"))
        torch.cuda.synchronize()
        del p1, p2
        y = conv_pair(*args_t)
        torch.cuda.synchronize()
        layout_ok = y.is_contiguous(memory_format=torch.channels_last)
        ok, rel = check(y, ref)
        del y
        t = time_it(lambda: conv_pair(*args_t), scratch, reps, warmup)
    return t, ok, rel, layout_ok


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="CSV to write")
    ap.add_argument("--dtype", choices=["fp16", "bf16"], default="fp16")
    ap.add_argument("--batches", default="1,4,8,12,16,20,24,28,32")
    ap.add_argument("--layers", default="64x56,128x28,256x14,512x7", help="CxHW list")
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--seed", type=int, default=20261201)
    a = ap.parse_args()

    if not torch.cuda.is_available():
        sys.exit("conv_torch.py: no CUDA device visible to PyTorch")
    dtype = {"fp16": torch.float16, "bf16": torch.bfloat16}[a.dtype]
    batches = parse_list(a.batches, int)
    layers = parse_list(a.layers, parse_layer)
    if a.reps < 1:
        sys.exit("conv_torch.py: --reps must be >= 1")

    torch.backends.cudnn.benchmark = True
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False

    log(f"torch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}, CUDA {torch.version.cuda}, "
        f"GPU {torch.cuda.get_device_name()}")
    log(f"dtype {a.dtype}, layers {a.layers}, batches {a.batches}, reps {a.reps}, warmup {a.warmup}")

    scratch = torch.empty(SCRATCH_BYTES, dtype=torch.uint8, device="cuda")
    cases = [(c, hw, n) for (c, hw) in layers for n in batches]
    nfail = 0
    with open(a.out, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["shape", "variant", "time_us", "check", "rel_err"])
        f.flush()
        for k, (c, hw, n) in enumerate(cases, 1):
            shape = f"C={c};HW={hw};N={n}"
            seed = a.seed + 1000003 * c + 1009 * hw + n
            args_t = make_case(c, hw, n, dtype, seed)
            ref = reference(*args_t)
            results = []
            for name, fn in (("peer:cudnn-graph", run_graph), ("peer:cudnn-eager", run_eager)):
                t, ok, rel, layout_ok = fn(args_t, ref, scratch, a.reps, a.warmup)
                if not layout_ok:
                    log(f"  warning: {shape} {name}: output is not channels_last")
                nfail += 0 if ok else 1
                results.append((name, t, ok, rel))
                w.writerow([shape, name, f"{t:.2f}", "pass" if ok else "fail", f"{rel:.3e}"])
                f.flush()
            log(f"[{k}/{len(cases)}] {shape}: " + "  ".join(
                f"{name.split(':')[1]} {t:9.2f} us ({'pass' if ok else 'FAIL'}, rel {rel:.2e})"
                for name, t, ok, rel in results))
            del args_t, ref, results
            torch.cuda.synchronize()
            torch.cuda.empty_cache()
    log(f"wrote {a.out}" + (f" ({nfail} check failures)" if nfail else ""))
    return 1 if nfail else 0


if __name__ == "__main__":
    sys.exit(main())
