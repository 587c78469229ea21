#!/usr/bin/env bash
# braid's main job.
#  - On a machine with a GPU: the GEMM-chain demo (stream order vs tile-synchronized chains, every
#    variant checked bit-for-bit), its results CSV under bench/results/, and timelines of one run.
#  - Without a GPU: says so, then plans and simulates the GPT-3 MLP spec on 132 SMs (what braid
#    would do), writing the predicted timelines as SVG under build/main/.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BRAID_BUILD_DIR:-build}
[ -x "$BUILD/tools/braid-gen" ] || bash scripts/setup.sh
OUTDIR=${BRAID_OUT:-$BUILD/main}
mkdir -p "$OUTDIR"

if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1 && [ -x "$BUILD/tools/braid-demo" ]; then
  gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | grep -oiE 'h100|h200|a100|b200' | tr 'A-Z' 'a-z' || echo gpu)
  csv=bench/results/gemm-chain-${gpu:-gpu}-$(date +%Y%m%d).csv
  echo "GPU found: $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
  "$BUILD/tools/braid-demo" --csv "$csv" --trace "$OUTDIR" "$@"
  if python3 -c "import matplotlib" 2>/dev/null; then
    shape=512x12288x6144x12288
    python3 bench/plot_timeline.py "$OUTDIR/trace-$shape-stream.csv" "$OUTDIR/trace-$shape-rowsync-pdl.csv" \
      -o "${csv%.csv}-timeline.png" || true
  fi
  exit 0
fi

echo "No GPU found on this machine: showing braid's plan and simulated schedule instead (no kernel runs)."
echo
spec=examples/specs/gpt3-mlp.spec
echo "== braid-gen $spec -D T=512 --sms 132 --summary"
"$BUILD/tools/braid-gen" "$spec" -D T=512 --sms 132 --summary --emit "$OUTDIR/gpt3_mlp.hpp"
echo
for T in 512 1024; do
  echo "== braid-sim: GPT-3 MLP, $T tokens, 128x256 tiles, 132 SMs"
  "$BUILD/tools/braid-sim" --spec "$spec" -D T=$T --sms 132 --svg "$OUTDIR/gpt3-mlp-T$T.svg"
  echo
done
echo "(512 tokens: GEMM1's 96 tiles all finish together and every GEMM2 tile needs a whole row, so"
echo " there is no tail to fill; 1024 tokens: GEMM1's half-empty second wave is filled by GEMM2.)"
echo "Predicted timelines: $OUTDIR/gpt3-mlp-T512*.svg ; generated header: $OUTDIR/gpt3_mlp.hpp"
