#!/usr/bin/env bash
# ncu of braid's GEMM in one configuration against cuBLASLt's kernels on the same shape (the nvjet launches of
# braid-gemm's cuBLASLt candidates, first NVJET launches): speed of light, warp states (stall reasons), compute
# pipes, memory workload, per launch; the details pages under $OUT.
#   BIN=/tmp/new M=768 N=6144 K=12288 ACT=gelu CONFIG=192x192 OUT=dir bash bench/device/gemm-vs-cublas-ncu.sh
set -uo pipefail
BIN=${BIN:-build/tools}
M=${M:-768}; N=${N:-6144}; K=${K:-12288}; CONFIG=${CONFIG:-192x192}; ACT=${ACT:-none}
mkdir -p "$OUT"
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
SECTIONS="--section SpeedOfLight --section WarpStateStats --section SchedulerStats --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section LaunchStats"
{ echo "# device: $(nvidia-smi --query-gpu=name --format=csv,noheader)  date: $(date -u +%FT%H:%MZ)  commit: ${BRAID_COMMIT:-unknown}"
  echo "# braid $CONFIG against cuBLASLt, M=$M N=$N K=$K act=$ACT"; } > "$OUT/header.txt"
timeout 150 "$NCU" --clock-control none $SECTIONS -f -o "$OUT/braid" --kernel-name regex:hopper_gemm \
  --launch-skip 3 --launch-count 1 "$BIN/braid-gemm" --m $M --n $N --k $K --act $ACT --configs $CONFIG --no-cublas --reps 3 > "$OUT/braid-run.log" 2>&1
"$NCU" --import "$OUT/braid.ncu-rep" --page details > "$OUT/braid-details.txt" 2>&1
timeout 200 "$NCU" --clock-control none $SECTIONS -f -o "$OUT/cublas" --kernel-name regex:nvjet \
  --launch-count ${NVJET:-6} "$BIN/braid-gemm" --m $M --n $N --k $K --act $ACT --configs none --reps 3 > "$OUT/cublas-run.log" 2>&1
"$NCU" --import "$OUT/cublas.ncu-rep" --page details > "$OUT/cublas-details.txt" 2>&1
rm -f "$OUT"/*.ncu-rep
for f in braid cublas; do
  echo "== $f"; grep -E "^  [a-z_]*nvjet|^  void|hopper_gemm|Duration|Compute \(SM\) Throughput|Memory Throughput|Issue Slots Busy|Warp Cycles Per Issued|No Eligible|Registers Per|Grid Size|Cluster Size|SM Frequency" "$OUT/$f-details.txt" | head -60
done
