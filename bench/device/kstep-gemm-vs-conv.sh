#!/usr/bin/env bash
# Is a convolution k-step slower than a GEMM k-step of the same tile, CTA count and bytes? The deep conv
# layers (512x7: M = 49 N pixels, 512 filters, K = 4608) as plain GEMMs (M x 512 x 4608) and as convs,
# each with per-unit traces (mainloop us per k-step). A conv k-step differs from a GEMM's in its A load
# (TMA im2col) and its producer loop (~77 SASS instructions against ~38, bench/sass_producer_kstep.py);
# if it is no slower, neither bounds the deep layers.
#   BIN=/tmp/cur OUT=$OUT BRAID_COMMIT=... [GEMM=0] bash bench/device/kstep-gemm-vs-conv.sh
# (GEMM=0: the convs only. The per-unit trace CSVs go into $OUT/traces.tgz.)
set -u
cd "$(dirname "$0")/../.."
source bench/device/common.sh
BIN=${BIN:-/tmp/cur}
OUT=${OUT:-/tmp/out}
BATCHES=${BATCHES:-"8 12"}
CONFIGS=${CONFIGS:-"128x64-rowmajor 128x64-sk2-rowmajor 128x64-sk3-rowmajor 64x128-rowmajor 64x128-sk2-rowmajor 128x128-sk2-rowmajor 128x128-sk4-rowmajor"}
LOG=$OUT/kstep-gemm-vs-conv.log
mkdir -p $OUT/traces
log_header $LOG "BATCHES='$BATCHES' CONFIGS='$CONFIGS' bash bench/device/kstep-gemm-vs-conv.sh"
for b in $BATCHES; do
  m=$((b * 49))
  if [ "${GEMM:-1}" = 1 ]; then
    echo "== gemm M=$m N=512 K=4608 (512x7 N=$b as a GEMM)" >> $LOG
    timeout 120 $BIN/braid-gemm --m $m --n 512 --k 4608 --configs "$(echo $CONFIGS | tr ' ' ,)" --reps 20 --no-cublas \
      --unit-trace $OUT/traces/gemm >> $LOG 2>&1
  fi
  echo "== conv 512x7 N=$b" >> $LOG
  timeout 200 $BIN/braid-bench-conv --layers 512x7 --batches $b --configs "$(echo $CONFIGS | tr ' ' ,)" --reps 20 \
    --unit-trace --out $OUT/conv-N$b.csv >> $LOG 2>&1
done
tar -czf $OUT/traces.tgz -C $OUT traces && rm -rf $OUT/traces
grep -E "^==|trace|^ *[0-9]+x[0-9]+.* us" $LOG | head -80
