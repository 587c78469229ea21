"""What every results plot script shares: its command line (CSV in, optional PNG out) and matplotlib
with the file-only Agg backend, or a clear exit when matplotlib is missing."""
import argparse
import csv
import math
import os
import sys

# The columns of every benchmark's results CSV, in order (../shared/results-format.md).
RESULT_FIELDS = ["gpu", "date", "commit", "workload", "shape", "dtype", "variant", "time_us", "floor_us", "check"]


def setup(script, doc):
    """Returns (args, pyplot): args.csv is the results CSV, args.out the PNG path or None."""
    ap = argparse.ArgumentParser(description=doc)
    ap.add_argument("csv")
    ap.add_argument("-o", "--out")
    args = ap.parse_args()
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.exit(f"{script}: matplotlib is not installed (scripts/setup.sh installs it)")
    return args, plt


# for the other braid:* variants: not red/orange (braid, braid:stream), grey (peers) or black (floor)
OTHER_COLORS = ["tab:green", "tab:blue", "tab:purple", "tab:brown", "tab:pink", "tab:olive", "tab:cyan"]


def num(s):
    try:
        v = float(s)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) and v > 0 else None


def speedup_grid(plt, csv_path, out, script, workload, group_of, title_of, BASE, base_label, xlabel="batch N"):
    """One subplot per group of a results CSV (../shared/results-format.md): the speedup over the peer
    BASE (its time / the variant's time) versus the batch N, for braid (autotuned, bold), braid's kernels
    in stream order (braid:stream, dashed), every other kind of braid:* variant (thin; the kind is the
    part before "/<configs>", best config each), the other peers (thin, grey), and the floor as the best
    possible speedup (dotted black). Rows of workloads starting with `workload`; group_of(row) ->
    (group, x); title_of(group) -> text; xlabel names x. Failed checks are left out and listed. Also prints a table."""
    with open(csv_path, newline="") as f:
        rows = [r for r in csv.DictReader(f) if r.get("workload", "").startswith(workload)]
    if not rows:
        sys.exit(f"{script}: no {workload}* rows in {csv_path}")

    # by[(C, HW)][N][variant] = row (passed checks only; failures reported)
    by, failed, floors = {}, [], {}
    for r in rows:
        try:
            g, n = group_of(r)
        except (KeyError, ValueError):
            print(f"{script}: warning: bad shape {r['shape']!r}, row skipped", file=sys.stderr)
            continue
        fl = num(r.get("floor_us"))
        if fl and (g, n) not in floors:
            floors[(g, n)] = fl
        if r["check"] != "pass":
            failed.append(f"{r['shape']} {r['variant']}")
            continue
        if num(r["time_us"]) is None:
            continue
        cell = by.setdefault(g, {}).setdefault(n, {})
        prev = cell.get(r["variant"])
        if prev is None or float(r["time_us"]) < float(prev["time_us"]):
            cell[r["variant"]] = r
    if failed:
        print(f"{script}: warning: {len(failed)} failed check(s), not plotted: " + ", ".join(failed),
              file=sys.stderr)
    if not by:
        sys.exit(f"{script}: no passing {workload}* rows to plot")

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
    for i, g in enumerate(layers):
        ax = axes[i // ncols][i % ncols]
        L = by[g]
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
            base, fl = t(L[n], BASE), floors.get((g, n))
            if base and fl:
                fx.append(n)
                fy.append(base / fl)
        ymax = 1.0
        for line in ax.get_lines():
            ymax = max([ymax] + [y for y in line.get_ydata()])
        if fx:
            ax.plot(fx, fy, "k:", lw=1.3, label=f"floor (clipped; {base_label} time / floor)")
        ax.set_ylim(0, ymax * 1.25)
        ax.axhline(1.0, color="gray", lw=0.8)
        ax.set_xticks(ns)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(f"speedup over {base_label}")
        ax.set_title(title_of(g))
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    for j in range(len(layers), nrows * ncols):
        axes[j // ncols][j % ncols].set_visible(False)

    def uniq(col):
        vals = sorted({r.get(col, "") for r in rows if r.get(col)})
        return ",".join(vals) if vals else "?"

    fig.suptitle(f"{workload.rstrip('-')} ({uniq('dtype')}): {uniq('gpu')}, {uniq('date')}, commit {uniq('commit')}")
    fig.tight_layout()
    out = out or os.path.splitext(csv_path)[0] + ".png"
    fig.savefig(out, dpi=120)

    # text table
    print(f"{'case':<26} {'peer_us':>10} {'braid_us':>10} {'speedup':>8} {'floor/braid':>12}   (peer: {BASE})")
    for g in layers:
        for n in sorted(by[g]):
            cell = by[g][n]
            base, br, fl = t(cell, BASE), t(cell, "braid"), floors.get((g, n))
            f = lambda x, fmt: format(x, fmt) if x is not None else "-"
            sp = base / br if base and br else None
            frac = fl / br if fl and br else None
            print(f"{title_of(g) + f' N={n}':<26} {f(base, '10.2f'):>10} {f(br, '10.2f'):>10} "
                  f"{f(sp, '8.3f'):>8} {f(frac, '12.3f'):>12}")
    print(f"wrote {out}")

