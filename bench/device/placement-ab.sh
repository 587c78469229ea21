#!/usr/bin/env bash
# Placement clusters, same binaries (session 39): plain launches (BRAID_PLACEMENT_CLUSTER unset) against
# the persistent kernels launched in clusters of $P that use no cluster feature (gemm_device.cuh,
# placement_cluster), in parts (PARTS, default "topo tests conv traces"):
#   topo    braid-micro-sm-topology: the GPCs of this GPU and each SM's L2 read rate, placed plainly,
#           as clusters, and by hand (sm-topology.log; the traces part reads its GPC map)
#   tests   all GPU tests (a gate; PlacementClustersAreBitIdenticalToPlainLaunches among them)
#   conv    the conv pairs (LAYERS x BATCHES, cuDNN in the same call), both settings alternating in
#           ROUNDS rounds (env-ab.sh), side-by-side tables
#   traces  512x7 N=12 (TRACE_LAYER / TRACE_BATCH), per-unit traces of TRACE_CONFIGS under both settings,
#           grouped by GPC (bench/unit_trace_sm.py)
#   mlp     braid-bench-mlp (MLP_TOKENS) under both settings
#   BIN=/tmp/new OUT=$OUT BRAID_COMMIT=<hash> [P=4] [PARTS=..] bash bench/device/placement-ab.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
source bench/device/common.sh
BIN=${BIN:-build/tools}
OUT=${OUT:-/tmp/out}
P=${P:-4}
PARTS=${PARTS:-topo tests conv traces}
mkdir -p "$OUT"
has() { [[ " $PARTS " == *" $1 "* ]]; }
if has topo; then
  { log_header /dev/stdout "$BIN/braid-micro-sm-topology 8"; timeout 60 "$BIN/braid-micro-sm-topology" 8; } \
    > "$OUT/sm-topology.log" 2>&1
  grep -E "^GPCs|as launched, (40|80|120)|clusters of $P, |GPC-balanced, 80" "$OUT/sm-topology.log"
fi
if has tests; then
  NEW_COMMIT=${BRAID_COMMIT:-?} gpu_tests_gate "$BIN" "$OUT" || exit 1
fi
if has conv; then
  OUT=$OUT/conv WHAT=conv AB_ENV=BRAID_PLACEMENT_CLUSTER AB_VALUE=$P ROUNDS=${ROUNDS:-2} BIN=$BIN \
    LAYERS=${LAYERS:-512x7,256x14,64x56} BATCHES=${BATCHES:-8,12,20} LIMIT=${CONV_LIMIT:-120} \
    bash bench/device/env-ab.sh > "$OUT/conv-ab.txt" 2>&1
  grep -A30 "^case\|braid pick" "$OUT"/conv/env-ab-conv-r*-table.txt 2>/dev/null | head -60
fi
if has traces; then
  peers=$(ls "$OUT"/conv/*-r1-default-torch.csv 2>/dev/null | head -1)
  for p in 1 "$P"; do
    mkdir -p "$OUT/traces/p$p"
    BRAID_PLACEMENT_CLUSTER=$p timeout 150 "$BIN/braid-bench-conv" --layers "${TRACE_LAYER:-512x7}" \
      --batches "${TRACE_BATCH:-12}" --configs "${TRACE_CONFIGS:-64x64-rowmajor,128x64-sk2-rowmajor,128x64-sk3-rowmajor}" \
      --reps 20 --unit-trace-dir "$OUT/traces/p$p" ${peers:+--peers $peers} > "$OUT/traces/p$p.log" 2>&1
    echo "== placement $p: $(grep -c '' "$OUT/traces/p$p.log") log lines"
    grep -E "unit trace|pdl-only|stream/" "$OUT/traces/p$p.log" | head -12
    python3 bench/unit_trace_sm.py --topology "$OUT/sm-topology.log" "$OUT"/traces/p$p/*again*.csv \
      > "$OUT/traces/by-gpc-p$p.txt" 2>&1
    cat "$OUT/traces/by-gpc-p$p.txt"
  done
  tar -czf "$OUT/traces.tgz" -C "$OUT" traces && rm -rf "$OUT/traces"
fi
if has mlp; then
  for p in 1 "$P"; do
    for model in ${MODELS:-gpt3 llama}; do
      BRAID_PLACEMENT_CLUSTER=$p timeout ${MLP_LIMIT:-150} "$BIN/braid-bench-mlp" --models $model --tokens "${MLP_TOKENS:-64,128,256,384,512}" \
        --reps 20 --csv "$OUT/mlp-$model-p$p.csv" > "$OUT/mlp-$model-p$p.log" 2>&1
      echo "mlp $model placement $p: exit $?"
      grep -E "braid  " "$OUT/mlp-$model-p$p.log" | head -8
    done
  done
fi
