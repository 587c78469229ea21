#!/usr/bin/env python3
"""One line per profiled launch from `ncu --csv --metrics A,B,...` on stdin: the launch id, the kernel
name (cut to WIDTH characters, without its argument list) and `label=value` for each metric.
  ncu --csv --metrics gpu__time_duration.sum,launch__grid_size ... | ncu_launches.py ns=gpu__time_duration.sum grid=launch__grid_size
Labels are optional (a bare metric name is its own label). Exits non-zero when ncu printed no rows."""
import csv
import sys

WIDTH = 60


def main(args):
    pairs = [a.split("=", 1) if "=" in a else [a, a] for a in args]
    rows = [r for r in csv.reader(line for line in sys.stdin if line.startswith('"'))]
    if not rows:
        sys.exit("no ncu rows")
    head = rows[0]
    ki, mi, vi, ii = (head.index(c) for c in ("Kernel Name", "Metric Name", "Metric Value", "ID"))
    launches = {}
    for r in rows[1:]:
        launches.setdefault((int(r[ii]), r[ki]), {})[r[mi]] = r[vi].replace(",", "")
    for (i, kernel), m in sorted(launches.items()):
        name = kernel.split("(")[0][:WIDTH]
        print("  %3d %-*s " % (i, WIDTH, name) + " ".join("%s=%s" % (label, m.get(metric, "?")) for label, metric in pairs))


if __name__ == "__main__":
    main(sys.argv[1:])
