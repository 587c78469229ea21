#!/usr/bin/env python3
"""PyTorch peer for braid's attention-block benchmark (workloads attention-prompt / attention-decode).

One tensor-parallel GPU of 8: GPT-3 (H=12288, 12 heads of 128) and LLaMA-65B (H=8192, 8 heads of 128).
The block: qkv = x @ Wqkv (cuBLAS) -> scaled_dot_product_attention (PyTorch's SDPA: FlashAttention or
cuDNN, whichever it picks) -> y = attn @ Wo (cuBLAS), fp16.
  prompt  B=1, S tokens, causal, no cache;
  decode  B sequences of one new token each; its K and V are written into a preallocated cache
          [B, S_max, NH, 128] at position S', then the token attends to the S'+1 keys.
Variants: peer:torch-sdpa-graph (the block captured in a CUDA graph, replayed) and
peer:torch-sdpa-eager. Each repetition evicts L2 (reads 256 MiB), then is timed between CUDA
events; the median of --reps after --warmup. Each variant's output is poisoned (NaN), computed once and
checked against an fp32 reference from the same rounded values (TF32 off): max|y-ref|/max|ref| < 1e-2.

Writes CSV columns shape,variant,time_us,check,rel_err,backend; shape as model=gpt3;B=1;S=512 or
model=gpt3;B=4;cache=2048 (braid-bench-attn's keys).
Usage: attn_torch.py --out attn-torch.csv [--models gpt3,llama] [--prompts 512,1024,2048]
                     [--caches 512,1024,2048] [--batches 1,2,4] [--cases prompt,decode]
"""
import argparse
import csv
import math
import statistics
import sys

import torch
import torch.nn.functional as F

from torch_common import SCRATCH_BYTES, evict_l2, graphed, log, parse_list, rel_err, time_it

TOL = 1e-2
MODELS = {"gpt3": (12288, 12), "llama": (8192, 8)}


def make_case(H, NH, B, S_new, S_cached, seed):
    g = torch.Generator(device="cuda")
    g.manual_seed(seed)

    def uni(shape, scale):
        return ((torch.rand(shape, generator=g, device="cuda") * 2 - 1) * scale).half()

    HD = NH * 128
    x = uni((B * S_new, H), 1.0)
    wqkv = uni((H, 3 * HD), 2.0 / math.sqrt(H))
    wo = uni((HD, H), 1.0 / math.sqrt(HD))
    S_max = S_cached + S_new
    kc = uni((B, S_max, NH, 128), 1.0)
    vc = uni((B, S_max, NH, 128), 1.0)
    return x, wqkv, wo, kc, vc


def block(x, wqkv, wo, kc, vc, B, S_new, S_cached, NH):
    """The attention block; decode appends the new K, V to the cache in place."""
    HD = NH * 128
    qkv = x @ wqkv
    q, k, v = qkv.view(B, S_new, 3, NH, 128).unbind(2)
    if S_cached == 0:
        o = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True)
    else:
        kc[:, S_cached:S_cached + S_new] = k
        vc[:, S_cached:S_cached + S_new] = v
        n = S_cached + S_new
        # one new token sees every cached key and itself: no mask (S_new == 1)
        o = F.scaled_dot_product_attention(q.transpose(1, 2), kc[:, :n].transpose(1, 2), vc[:, :n].transpose(1, 2),
                                           is_causal=False)
    return o.transpose(1, 2).reshape(B * S_new, HD) @ wo


def reference(x, wqkv, wo, kc, vc, B, S_new, S_cached, NH):
    """fp32, explicit softmax; the cache as it was before the block ran."""
    HD = NH * 128
    qkv = x.float() @ wqkv.float()
    q, k, v = qkv.view(B, S_new, 3, NH, 128).unbind(2)
    K = torch.cat([kc[:, :S_cached].float(), k], dim=1).transpose(1, 2)  # [B, NH, n, 128]
    V = torch.cat([vc[:, :S_cached].float(), v], dim=1).transpose(1, 2)
    s = (q.transpose(1, 2) @ K.transpose(2, 3)) / math.sqrt(128)
    n = S_cached + S_new
    qpos = torch.arange(S_cached, n, device="cuda").view(-1, 1)
    kpos = torch.arange(n, device="cuda").view(1, -1)
    s = s.masked_fill(kpos > qpos, float("-inf"))
    o = torch.softmax(s, dim=-1) @ V
    return o.transpose(1, 2).reshape(B * S_new, HD) @ wo.float()


def sdpa_backend(x, wqkv, wo, kc, vc, B, S_new, S_cached, NH):
    """Which SDPA kernel runs (the profiler's kernel names), for the record."""
    try:
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            block(x, wqkv, wo, kc, vc, B, S_new, S_cached, NH)
            torch.cuda.synchronize()
        names = [e.key for e in prof.key_averages()]
        for tag, label in (("flash", "flash"), ("cudnn", "cudnn"), ("fmha", "cudnn"), ("efficient", "mem-efficient"),
                           ("softmax", "math")):
            if any(tag in n.lower() for n in names):
                return label
        return "unknown"
    except Exception as e:  # profiling is informational only
        return f"unknown ({type(e).__name__})"


PROFILED_REPS = 15


def kernel_times(fn, scratch, reps=PROFILED_REPS):
    """Each kernel of the block as it runs in the block (after the L2 eviction, behind the block's other
    kernels: cold code and all), median over `reps` profiled repetitions of the graph replay: where
    PyTorch's time goes, against braid's per-stage times. Returns [(kernel name, us)] in launch order."""
    try:
        from torch.profiler import ProfilerActivity, profile
        runs = []
        for _ in range(reps):
            evict_l2(scratch)
            torch.cuda.synchronize()
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                fn()
                torch.cuda.synchronize()
            ks = sorted((e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA),
                        key=lambda e: e.time_range.start)
            runs.append([(e.name, e.time_range.end - e.time_range.start) for e in ks])
        n = min(len(r) for r in runs)
        if n == 0:
            return []
        return [(runs[0][i][0], statistics.median(r[i][1] for r in runs)) for i in range(n)]
    except Exception as e:  # informational only
        return [(f"(no breakdown: {type(e).__name__}: {e})", 0.0)]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--models", default="gpt3,llama")
    ap.add_argument("--cases", default="prompt,decode")
    ap.add_argument("--prompts", default="512,1024,2048")
    ap.add_argument("--caches", default="512,1024,2048")
    ap.add_argument("--batches", default="1,2,4")
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--seed", type=int, default=20261123)
    a = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("attn_torch.py: no CUDA device visible to PyTorch")
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    log(f"torch {torch.__version__}, CUDA {torch.version.cuda}, cuDNN {torch.backends.cudnn.version()}, "
        f"GPU {torch.cuda.get_device_name()}")
    cases = []
    for m in parse_list(a.models, str):
        if m not in MODELS:
            sys.exit(f"attn_torch.py: unknown model {m} (known: {', '.join(MODELS)})")
        if "prompt" in a.cases:
            cases += [(m, 1, S, 0) for S in parse_list(a.prompts, int)]
        if "decode" in a.cases:
            cases += [(m, B, 1, S) for B in parse_list(a.batches, int) for S in parse_list(a.caches, int)]
    scratch = torch.empty(SCRATCH_BYTES, dtype=torch.uint8, device="cuda")
    nfail = 0
    with open(a.out, "w", newline="") as f, torch.no_grad():
        w = csv.writer(f)
        w.writerow(["shape", "variant", "time_us", "check", "rel_err", "backend"])
        for i, (m, B, S_new, S_cached) in enumerate(cases, 1):
            H, NH = MODELS[m]
            shape = f"model={m};B={B};" + (f"cache={S_cached}" if S_cached else f"S={S_new}")
            x, wqkv, wo, kc, vc = make_case(H, NH, B, S_new, S_cached, a.seed + i)
            ref = reference(x, wqkv, wo, kc, vc, B, S_new, S_cached, NH)
            args = (x, wqkv, wo, kc, vc, B, S_new, S_cached, NH)
            backend = sdpa_backend(*args)
            g, y_static = graphed(lambda: block(*args))
            y_static.fill_(float("nan"))
            g.replay()
            torch.cuda.synchronize()
            e_g = rel_err(y_static, ref)
            t_g = time_it(g.replay, scratch, a.reps, a.warmup)
            y = block(*args)
            torch.cuda.synchronize()
            e_e = rel_err(y, ref)
            t_e = time_it(lambda: block(*args), scratch, a.reps, a.warmup)
            ks = kernel_times(g.replay, scratch)
            if not ks:  # (the profiler saw no kernels of the graph: the eager block's, then)
                ks = kernel_times(lambda: block(*args), scratch)
            log(f"[{i}/{len(cases)}] {shape} kernels in the graph (median of {PROFILED_REPS} profiled replays): " +
                ", ".join(f"{n[:60]} {t:.1f} us" for n, t in ks) + f" (sum {sum(t for _, t in ks):.1f})")
            for name, t, e in (("peer:torch-sdpa-graph", t_g, e_g), ("peer:torch-sdpa-eager", t_e, e_e)):
                ok = e == e and e < TOL
                nfail += not ok
                w.writerow([shape, name, f"{t:.2f}", "pass" if ok else "fail", f"{e:.3e}", backend])
                log(f"[{i}/{len(cases)}] {shape} {name}: {t:.1f} us, rel err {e:.1e} ({backend})")
            f.flush()
            del g, y_static, y
    log(f"wrote {a.out}; {nfail} failed checks")
    sys.exit(1 if nfail else 0)


if __name__ == "__main__":
    main()
