#!/usr/bin/env python3
"""Plot an MLP results CSV (from braid-bench-mlp --csv) like the cuSync paper's figure: per model, the
speedup over the cuBLASLt peer versus the token count T, for braid's autotuned chain, braid's kernels
in stream order, and the other peers, with the floor drawn as the best possible speedup
(cuBLASLt time / floor time). Usage: plot_mlp.py results.csv [-o out.png] (default: <csv>-speedup.png)."""
import csv
import os
import sys
import mlp_table
import plot_common


def main():
    a, plt = plot_common.setup("plot_mlp.py", __doc__)
    rows = list(csv.DictReader(open(a.csv)))
    if not rows:
        sys.exit(f"plot_mlp.py: {a.csv} has no rows")
    workloads = sorted({r["workload"] for r in rows if r["workload"].startswith("mlp-")})
    if not workloads:
        sys.exit(f"plot_mlp.py: no mlp-* workloads in {a.csv}")
    fig, axes = plt.subplots(1, len(workloads), figsize=(6.5 * len(workloads), 4.5), squeeze=False)
    for ax, wl in zip(axes[0], workloads):
        by_t = {}
        for r in rows:
            if r["workload"] != wl:
                continue
            t = int(r["shape"].split("=")[1])
            by_t.setdefault(t, {})[r["variant"]] = r
        ts = sorted(by_t)

        def cublas(t):
            for v, r in by_t[t].items():
                if mlp_table.is_peer(v):
                    return float(r["time_us"])
            return None

        def series(pred):
            xs, ys = [], []
            for t in ts:
                base = cublas(t)
                cand = [float(r["time_us"]) for v, r in by_t[t].items() if pred(v) and r["check"] == "pass"]
                if base and cand:
                    xs.append(t)
                    ys.append(base / min(cand))
            return xs, ys

        xs, ys = series(lambda v: v == "braid")
        ax.plot(xs, ys, "o-", color="tab:red", label="braid (autotuned)", lw=2)
        # braid-bench-mlp --interleave: the pick and cuBLASLt re-timed in alternating rounds (mlp_table.interleaved)
        ix, iy = [], []
        for t in ts:
            r = mlp_table.interleaved(by_t[t])
            if r is not None:
                ix.append(t)
                iy.append(r[0])
        if ix:
            ax.plot(ix, iy, "x", color="tab:red", ms=8, label="braid pick / cuBLASLt timed alternately")
        xs, ys = series(lambda v: v.startswith("braid:stream/"))
        ax.plot(xs, ys, "s--", color="tab:orange", label="braid kernels, stream order")
        xs, ys = series(lambda v: v.startswith("peer:cutlass") and "pdl" not in v)
        if xs:
            ax.plot(xs, ys, "^:", color="tab:blue", label="CUTLASS sm90 ws persistent")
        fx = [t for t in ts if cublas(t)]
        fy = [cublas(t) / float(next(iter(by_t[t].values()))["floor_us"]) for t in fx]
        ax.plot(fx, fy, "k-", lw=1, label="floor (best possible)")
        ax.axhline(1.0, color="gray", lw=0.8)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("tokens T")
        ax.set_ylabel("speedup over cuBLASLt (graph)")
        ax.set_title(f"{wl} ({rows[0]['dtype']}, {rows[0]['gpu']})")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    out = a.out or os.path.splitext(a.csv)[0] + "-speedup.png"
    fig.savefig(out, dpi=120)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
