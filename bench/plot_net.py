#!/usr/bin/env python3
"""Plot an end-to-end network results CSV (bench/net_torch.py; workloads net-resnet38, net-vgg19): one
subplot per network, the speedup over PyTorch's CUDA-graphed inference (peer:torch-graph time / variant
time) versus the batch N, for braid (autotuned), braid's kernels in stream order, every braid:* variant
and the other peers, with the floor as the best possible speedup. Failed checks are left out and
listed. Also prints a table per case. Usage: plot_net.py results.csv [-o|--out out.png]."""
import plot_common


def group_of(r):
    kv = dict(p.split("=", 1) for p in r["shape"].split(";") if "=" in p)
    return r["workload"], int(kv["N"])


def main():
    a, plt = plot_common.setup("plot_net.py", __doc__)
    plot_common.speedup_grid(plt, a.csv, a.out, "plot_net.py", "net-", group_of,
                             lambda g: g[len("net-"):], "peer:torch-graph", "PyTorch (graph)")


if __name__ == "__main__":
    main()
