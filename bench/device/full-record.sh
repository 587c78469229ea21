#!/usr/bin/env bash
# A whole-issue record of one tree from carried binaries, in parts small enough for one device call each:
#   launch        braid-micro-launch (what a launch costs in the benchmarks' timing, 1-2 kernels x grids x smem)
#   tests         every GPU test
#   mlp:<model>   the MLP at every T of issue 3 (mlp-run.sh), cuBLASLt and CUTLASS in the same process
#   attn:<cases>  the attention block (attn-run.sh, CASES=prompt or decode), PyTorch just before on the same GPU
# Each part's files are tarred as $OUT/<part>.tgz (the device tool returns few files).
#   SET=.carry/R OUT=$OUT COMMIT=<hash> PARTS="launch mlp:gpt3" bash bench/device/full-record.sh
# SET holds new/{braid-bench-mlp,braid-bench-attn,braid_gpu_tests,braid-micro-launch}.xz (those the parts need).
set -uo pipefail
SET=${SET:-.carry/R}
OUT=${OUT:-out}
source "$(dirname "$0")/common.sh"
unpack_carried "$SET" "$OUT"
export BRAID_COMMIT=${COMMIT:-unknown}
for part in ${PARTS:-launch}; do
  name=${part/:/-}
  dir="$OUT/$name"
  mkdir -p "$dir"
  t0=$(date +%s)
  case "$part" in
    launch)
      log_header "$dir/launch.txt" "braid-micro-launch 30"
      /tmp/new/braid-micro-launch 30 >> "$dir/launch.txt" 2>&1
      tail -4 "$dir/launch.txt" ;;
    tests)
      timeout ${TEST_LIMIT:-200} /tmp/new/braid_gpu_tests > "$dir/gpu-tests.log" 2>&1
      echo "exit $?" >> "$dir/gpu-tests.log"
      tail -3 "$dir/gpu-tests.log" ;;
    mlp:*)
      BIN=/tmp/new OUT="$dir" MODELS=${part#mlp:} LIMIT=${MLP_LIMIT:-420} bash bench/device/mlp-run.sh ;;
    attn:*)
      CASES=${part#attn:} BIN=/tmp/new OUT="$dir" LIMIT=${ATTN_LIMIT:-360} bash bench/device/attn-run.sh | tail -30 ;;
    *)
      echo "full-record.sh: unknown part '$part' (launch, tests, mlp:<model>, attn:<prompt|decode>)" >&2
      exit 2 ;;
  esac
  echo "part $part: $(( $(date +%s) - t0 )) s" | tee -a "$OUT/parts.txt"
  (cd "$OUT" && tar czf "$name.tgz" "$name" && rm -rf "$name")
done
