#!/usr/bin/env python3
"""Plot a conv-pair results CSV (../shared/results-format.md): one subplot per layer (C, HW), the speedup
over the cuDNN peer (peer:cudnn-graph time / variant time) versus the batch N, for braid (autotuned,
bold), braid's kernels in stream order (braid:stream, dashed), the other braid:* variants (thin) and
the other peers (thin, grey), with the floor drawn as the best possible speedup (cuDNN time / floor_us,
dotted black). Variants whose check failed are left out and listed in a warning. Also prints a text
table per case: cuDNN time, braid time, speedup, floor_us / braid time.
Usage: plot_conv.py results.csv [-o|--out out.png] (default: <csv> with .png)."""
import plot_common


def group_of(r):
    kv = dict(p.split("=", 1) for p in r["shape"].split(";") if "=" in p)
    return (int(kv["C"]), int(kv["HW"])), int(kv["N"])


def main():
    a, plt = plot_common.setup("plot_conv.py", __doc__)
    plot_common.speedup_grid(plt, a.csv, a.out, "plot_conv.py", "conv-pair", group_of,
                             lambda g: f"C={g[0]}, {g[1]}x{g[1]}", "peer:cudnn-graph", "cuDNN (graph)")


if __name__ == "__main__":
    main()
