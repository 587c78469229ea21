"""What every results plot script shares: its command line (CSV in, optional PNG out) and matplotlib
with the file-only Agg backend, or a clear exit when matplotlib is missing."""
import argparse
import sys


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
