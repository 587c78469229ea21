#!/usr/bin/env python3
"""Plot a conv-pair results CSV (../shared/results-format.md): one subplot per layer (C, HW), the speedup
over the cuDNN peer (peer:cudnn-graph time / variant time) versus the batch N, for braid (autotuned,
bold), braid's kernels in stream order (braid:stream, dashed), the other braid:* variants (thin) and
the other peers (thin, grey), with the floor drawn as the best possible speedup (cuDNN time / floor_us,
dotted black). Variants whose check failed are left out and listed in a warning. Also prints a text
table per case: cuDNN time, braid time, speedup, floor_us / braid time.
Usage: plot_conv.py results.csv [-o|--out out.png] (default: <csv> with .png)."""
import csv
import math
import os
import sys
import plot_common

BASE = "peer:cudnn-graph"
# for the other braid:* variants: not red/orange (braid, braid:stream), grey (peers) or black (floor)
OTHER_COLORS = ["tab:green", "tab:blue", "tab:purple", "tab:brown", "tab:pink", "tab:olive", "tab:cyan"]


def parse_shape(s):
    kv = dict(p.split("=", 1) for p in s.split(";") if "=" in p)
    return int(kv["C"]), int(kv["HW"]), int(kv["N"])


def num(s):
    try:
        v = float(s)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) and v > 0 else None


def main():
    a, plt = plot_common.setup("plot_conv.py", __doc__)
    with open(a.csv, newline="") as f:
        rows = [r for r in csv.DictReader(f) if r.get("workload") == "conv-pair"]
    if not rows:
        sys.exit(f"plot_conv.py: no conv-pair rows in {a.csv}")

    # by[(C, HW)][N][variant] = row (passed checks only; failures reported)
    by, failed, floors = {}, [], {}
    for r in rows:
        try:
            c, hw, n = parse_shape(r["shape"])
        except (KeyError, ValueError):
            print(f"plot_conv.py: warning: bad shape {r['shape']!r}, row skipped", file=sys.stderr)
            continue
        fl = num(r.get("floor_us"))
        if fl and (c, hw, n) not in floors:
            floors[(c, hw, n)] = fl
        if r["check"] != "pass":
            failed.append(f"{r['shape']} {r['variant']}")
            continue
        if num(r["time_us"]) is None:
            continue
        cell = by.setdefault((c, hw), {}).setdefault(n, {})
        prev = cell.get(r["variant"])
        if prev is None or float(r["time_us"]) < float(prev["time_us"]):
            cell[r["variant"]] = r
    if failed:
        print(f"plot_conv.py: warning: {len(failed)} failed check(s), not plotted: " + ", ".join(failed),
              file=sys.stderr)
    if not by:
        sys.exit("plot_conv.py: no passing conv-pair rows to plot")

    def t(cell, v):
        return float(cell[v]["time_us"]) if v in cell else None

    def best(cell, pred):
        ts = [float(r["time_us"]) for v, r in cell.items() if pred(v)]
        return min(ts) if ts else None

    is_stream = lambda v: v == "braid:stream" or v.startswith("braid:stream/")
    layers = sorted(by)
    all_variants = sorted({v for L in by.values() for cell in L.values() for v in cell})
    # one line per kind of variant (the part before "/<conv1 config>+<conv2 config>"), best config each
    kind = lambda v: v.split("/")[0]
    others = sorted({kind(v) for v in all_variants if v.startswith("braid:") and not is_stream(v)})
    peers = [v for v in all_variants if v.startswith("peer:") and v != BASE]

    ncols = 2 if len(layers) > 1 else 1
    nrows = (len(layers) + ncols - 1) // ncols
    fig, axes = plt.subplots(nrows, ncols, figsize=(6.2 * ncols, 4.3 * nrows), squeeze=False)
    for i, (c, hw) in enumerate(layers):
        ax = axes[i // ncols][i % ncols]
        L = by[(c, hw)]
        ns = sorted(L)

        def series(pred):
            xs, ys = [], []
            for n in ns:
                base, v = t(L[n], BASE), best(L[n], pred)
                if base and v:
                    xs.append(n)
                    ys.append(base / v)
            return xs, ys

        xs, ys = series(lambda v: v == "braid")
        if xs:
            ax.plot(xs, ys, "o-", color="tab:red", lw=2.2, label="braid (autotuned)")
        xs, ys = series(is_stream)
        if xs:
            ax.plot(xs, ys, "s--", color="tab:orange", lw=1.4, label="braid kernels, stream order")
        for j, v in enumerate(others):
            xs, ys = series(lambda u, v=v: kind(u) == v)
            if xs:
                ax.plot(xs, ys, ".-", color=OTHER_COLORS[j % len(OTHER_COLORS)], lw=0.8, label=v)
        for v in peers:
            xs, ys = series(lambda u, v=v: u == v)
            if xs:
                ax.plot(xs, ys, "x-.", color="gray", lw=0.8, label=v)
        fx, fy = [], []
        for n in ns:
            base, fl = t(L[n], BASE), floors.get((c, hw, n))
            if base and fl:
                fx.append(n)
                fy.append(base / fl)
        ymax = 1.0
        for line in ax.get_lines():
            ymax = max([ymax] + [y for y in line.get_ydata()])
        if fx:
            ax.plot(fx, fy, "k:", lw=1.3, label="floor (clipped: cuDNN time / floor)")
        ax.set_ylim(0, ymax * 1.25)
        ax.axhline(1.0, color="gray", lw=0.8)
        ax.set_xticks(ns)
        ax.set_xlabel("batch N")
        ax.set_ylabel("speedup over cuDNN (graph)")
        ax.set_title(f"C={c}, {hw}x{hw}")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    for j in range(len(layers), nrows * ncols):
        axes[j // ncols][j % ncols].set_visible(False)

    def uniq(col):
        vals = sorted({r.get(col, "") for r in rows if r.get(col)})
        return ",".join(vals) if vals else "?"

    fig.suptitle(f"conv-pair ({uniq('dtype')}): {uniq('gpu')}, {uniq('date')}, commit {uniq('commit')}")
    fig.tight_layout()
    out = a.out or os.path.splitext(a.csv)[0] + ".png"
    fig.savefig(out, dpi=120)

    # text table
    print(f"{'case':<22} {'cudnn_us':>10} {'braid_us':>10} {'speedup':>8} {'floor/braid':>12}")
    for (c, hw) in layers:
        for n in sorted(by[(c, hw)]):
            cell = by[(c, hw)][n]
            base, br, fl = t(cell, BASE), t(cell, "braid"), floors.get((c, hw, n))
            f = lambda x, fmt: format(x, fmt) if x is not None else "-"
            sp = base / br if base and br else None
            frac = fl / br if fl and br else None
            print(f"{f'C={c};HW={hw};N={n}':<22} {f(base, '10.2f'):>10} {f(br, '10.2f'):>10} "
                  f"{f(sp, '8.3f'):>8} {f(frac, '12.3f'):>12}")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
