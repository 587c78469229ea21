#!/usr/bin/env bash
# braid's Hopper attention kernel against cuDNN's flash kernel (PyTorch's SDPA) on one prompt case, one launch
# each under ncu: launch shape, occupancy, warp states, scheduler and the SASS source counters.
#   BIN=/tmp/new MODEL=llama S=512 CONFIG=wg-r OUT=dir bash bench/device/attn-ncu.sh
set -uo pipefail
BIN=${BIN:-build/tools}; MODEL=${MODEL:-llama}; S=${S:-512}; CONFIG=${CONFIG:-wg-r}
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
SECTIONS="--section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats --section SchedulerStats --section SourceCounters"
mkdir -p "$OUT"
timeout 150 $NCU --clock-control none $SECTIONS -f -o $OUT/braid-attn --kernel-name regex:flash_attention_sm90 \
  --launch-skip 3 --launch-count 1 $BIN/braid-bench-attn --out /tmp/attn-ncu.csv --reps 3 --cases prompt \
  --prompts $S --models $MODEL --pick 64x192-staged,$CONFIG,128x128 > $OUT/braid-run.log 2>&1
echo "braid exit $?"
timeout 200 $NCU --clock-control none $SECTIONS -f -o $OUT/cudnn-attn --kernel-name regex:sdpa \
  --launch-skip 2 --launch-count 1 python3 bench/attn_torch.py --cases prompt --prompts $S --models $MODEL \
  --reps 3 --warmup 1 --out /tmp/attn-ncu-torch.csv > $OUT/cudnn-run.log 2>&1
echo "cudnn exit $?"
for r in braid-attn cudnn-attn; do
  [ -f $OUT/$r.ncu-rep ] || continue
  $NCU --import $OUT/$r.ncu-rep --page details > $OUT/$r-details.txt 2>&1
  $NCU --import $OUT/$r.ncu-rep --page source --csv --print-source sass 2>/dev/null | gzip > $OUT/$r-sass.csv.gz
  rm -f $OUT/$r.ncu-rep
done
grep -E "^  [a-z_].*\(|Duration|Grid Size|Block Size|Registers Per|Dynamic Shared Memory Per|Achieved Occupancy|Warp Cycles Per Issued|Issue Slots Busy|Compute \(SM\) Throughput|Memory Throughput" $OUT/*-details.txt | cut -c1-160
