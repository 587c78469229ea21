"""What the PyTorch-side benchmark scripts share (conv_torch.py, net_torch.py, attn_torch.py): logging,
list parsing, CUDA-graph capture, L2-evicted event timing, the max-norm relative error, and a watchdog."""
import faulthandler
import os
import statistics
import sys
import threading
import time

import torch

SCRATCH_BYTES = 256 << 20  # read before each timed repetition: evicts the 50 MB L2


def evict_l2(scratch):
    """Reads the scratch buffer, so the L2 holds clean lines of it and nothing of the timed work's data.
    (Writing it instead left dirty lines whose write-back landed inside the next timed region; braid's
    C++ harness does the same, include/braid/bench/harness.cuh.)"""
    scratch.view(torch.int32).sum(dtype=torch.int64)


def log(msg):
    print(msg, file=sys.stderr, flush=True)


class Watchdog:
    """Ends the process, saying where, when the caller has reported no progress (pet) for `seconds`: a
    stuck kernel becomes a message and exit code 3 instead of a run that sits until an outer time limit
    kills it with nothing said. Before exiting it prints the device state of the chains `chains()`
    returns (braid_torch.ConvChain.diagnose: readable while their kernels are stuck) and the Python
    stacks. seconds <= 0: off."""

    def __init__(self, seconds):
        self.seconds, self.label, self.t = seconds, "start", time.time()
        self.chains = lambda: []
        if seconds > 0:
            threading.Thread(target=self._watch, daemon=True).start()

    def pet(self, label, chains=None):
        self.label, self.t = label, time.time()
        if chains is not None:
            self.chains = chains

    def _watch(self):
        while True:
            time.sleep(min(5.0, self.seconds / 4))
            idle = time.time() - self.t
            if idle <= self.seconds:
                continue
            log(f"WATCHDOG: no progress for {idle:.0f} s in {self.label}: exiting")
            try:
                for ch in self.chains():
                    log(f"  chain {ch.name}:\n{ch.diagnose()}")
            except Exception as ex:  # the diagnosis is best effort; the exit is not
                log(f"  (no chain diagnosis: {ex})")
            faulthandler.dump_traceback(file=sys.stderr, all_threads=True)
            sys.stderr.flush()
            os._exit(3)


def parse_list(s, conv):
    return [conv(t) for t in s.split(",") if t.strip()]


def graphed(fn):
    """Warm up on a side stream, capture fn() once; returns (graph, static output)."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(2):
            fn()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out = fn()
    torch.cuda.synchronize()
    return g, out


def time_it(fn, scratch, reps, warmup):
    """Median microseconds over reps; each repetition evicts L2 first, then is timed by events."""
    for i in range(warmup):
        evict_l2(scratch)
        fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    ts = []
    for i in range(reps):
        evict_l2(scratch)  # not timed
        start.record()
        fn()
        end.record()
        end.synchronize()
        ts.append(start.elapsed_time(end) * 1000.0)  # ms -> us
    return statistics.median(ts)


def rel_err(y, ref):
    """max |y - ref| / max |ref|; NaN when y holds a NaN or an infinity."""
    yf = y.float()
    if not torch.isfinite(yf).all().item():
        return float("nan")
    d = ref.abs().max().item()
    return (yf - ref).abs().max().item() / d if d > 0 else float("inf")
