#!/usr/bin/env python3
"""Plot an attention-block results CSV (workloads attention-prompt / attention-decode, from
braid-bench-attn with the bench/attn_torch.py peers): one subplot per model and case kind (prompt;
decode at each batch B), the speedup over PyTorch (peer:torch-sdpa-graph time / variant time) versus
the sequence length (prompt) or cache length (decode), for braid (autotuned, bold), braid's kernels in
stream order (dashed), the other braid variants, the other peers, and the floor as the best possible
speedup (dotted). Prints the table too.
Usage: plot_attn.py results.csv [-o|--out out.png] (default: <csv> with .png)."""
import plot_common


def group_of(r):
    kv = dict(p.split("=", 1) for p in r["shape"].split(";") if "=" in p)
    if "S" in kv:
        return (kv["model"], "prompt, B=1"), int(kv["S"])
    return (kv["model"], f"decode, B={kv['B']}"), int(kv["cache"])


def main():
    a, plt = plot_common.setup("plot_attn.py", __doc__)
    plot_common.speedup_grid(plt, a.csv, a.out, "plot_attn.py", "attention", group_of,
                             lambda g: f"{g[0]} {g[1]}", "peer:torch-sdpa-graph", "PyTorch SDPA (graph)",
                             xlabel="tokens (prompt: S; decode: cached S')")


if __name__ == "__main__":
    main()
