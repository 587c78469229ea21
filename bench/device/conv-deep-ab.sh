#!/usr/bin/env bash
# Session-12 check of the epilogue change on the deep conv layers, one device call: GPU tests, per-tile
# epilogue traces of the old (braid-bench-conv-old) and new binaries, the 256x14 / 512x7 pairs against cuDNN.
#   BRAID_COMMIT=<hash> bash bench/device/conv-deep-ab.sh   (binaries in .carry/bin)
set -uo pipefail
B=.carry/bin
R=$OUT/r; mkdir -p $R /tmp/cr
{ echo "# braid_gpu_tests on $(nvidia-smi --query-gpu=name --format=csv,noheader) (device tool), $(date +%F), commit $BRAID_COMMIT; command: braid_gpu_tests"; timeout 120 $B/braid_gpu_tests; } > $R/gpu-tests.log 2>&1
tail -3 $R/gpu-tests.log
{ echo "# bench/device/conv-epilogue.sh on $(nvidia-smi --query-gpu=name --format=csv,noheader) (device tool), $(date +%F), commit $BRAID_COMMIT (braid-bench-conv-old: 4fe8255 kernels)"; BINS="$B/braid-bench-conv-old $B/braid-bench-conv" CASES="512x7:24 256x14:24" CONFIGS="128x128-rowmajor 128x128-sk2-rowmajor 128x128-streamk-rowmajor 64x128-rowmajor 128x64-rowmajor" timeout 170 bash bench/device/conv-epilogue.sh; } > $R/epi.txt 2>&1
cat $R/epi.txt
BIN=$B OUT=/tmp/cr LAYERS=256x14,512x7 TORCH_LIMIT=110 LIMIT=210 bash bench/device/conv-run.sh > $R/conv-run.txt 2>&1
tail -24 $R/conv-run.txt
tar czf $OUT/conv-run.tgz -C /tmp/cr .
