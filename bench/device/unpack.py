#!/usr/bin/env python3
"""Unpacks carried binaries on the GPU machine with the standard library alone (no xz or zstd command
needed there): every SRC/<sub>/<name>.xz to DEST/<sub>/<name>, executable.
    python3 bench/device/unpack.py SRC DEST        (e.g. .carry/A /tmp: /tmp/old/braid-gemm, /tmp/new/...)
Here they were packed with `xz -9 -c bin > name.xz` (stripped builds; see bench/device/build.sh for why
binaries are packed at all)."""
import lzma
import os
import sys

src, dest = sys.argv[1], sys.argv[2]
for sub in sorted(os.listdir(src)):
    for f in sorted(os.listdir(os.path.join(src, sub))):
        if not f.endswith(".xz"):
            continue
        os.makedirs(os.path.join(dest, sub), exist_ok=True)
        out = os.path.join(dest, sub, f[:-3])
        with lzma.open(os.path.join(src, sub, f)) as i, open(out, "wb") as o:
            o.write(i.read())
        os.chmod(out, 0o755)
        print(out, os.path.getsize(out))
