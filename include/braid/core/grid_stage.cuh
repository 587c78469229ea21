// Block-level helpers for kernels whose CTAs own tiles given by their launch index (no next_tile():
// the attention kernels, the skinny GEMM).
//
// begin_grid_block: begin_block, then -- stream order, possibly PDL-launched -- wait for the primary
// grid (wait_primary_grid), and start the trace clock of the CTA's tile (the wait counted as waiting).
//
// producer_complete: the "has my producer already finished this run?" shortcut for kernels that
// wait with the block-level API. A producer stage's last block stores its run counter (release) after
// every block has finished, so run >= epoch means every tile of this run is complete and visible (the
// acquire load below): the consumer can skip all its waits on that input. Satisfied waits are not free
// (a gpu-scope acquire per semaphore, and barriers), and consumers that start after their producer --
// most of them -- pay one load instead.
#pragma once
#include "braid/core/stage.cuh"

namespace braid {

// Stream order (no semaphores): wait for the whole primary grid. The trace clock starts before the
// wait and counts it as waiting: a PDL-launched CTA is resident from here. (A kernel may load what the
// chain's earlier stages do not write between begin_block and this: optimization R under PDL.)
__device__ __forceinline__ void wait_primary_grid(const StageParams& sp, BlockSync& bs) {
  const bool traced = sp.trace != nullptr && threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0;
  const uint64_t t0 = traced ? ptx::globaltimer_ns() : 0;
  if (!sp.has(kSync)) ptx::pdl_wait_primary();
  if (traced) {
    bs.t_start = t0;
    bs.wait_ns = ptx::globaltimer_ns() - t0;
  }
}

__device__ __forceinline__ void begin_grid_block(const StageParams& sp, BlockSync& bs) {
  begin_block(sp, bs);
  wait_primary_grid(sp, bs);
}

// The stage parameters as a kernel form launched only unsynchronized sees them (the lean forms:
// gemm_config.hpp, "The forms of braid's GEMM kernels"): of the flags only the PDL trigger, no output
// semaphores, no traces. Constants, so that the inlined helpers (begin_block, producer_complete, the
// waits, post, end_block) fold to their unsynchronized paths and their other paths leave the kernel's code.
// (kLean false: the parameters as they are.)
template <bool kLean>
__device__ __forceinline__ StageParams stage_params_for_form(const StageParams& sp) {
  if constexpr (!kLean) {
    return sp;
  } else {
    StageParams v = sp;
    v.flags = sp.flags & kPdlTrigger;
    v.sems = nullptr;
    v.trace = nullptr;
    v.fault_poster_delay_ns = 0;
    return v;
  }
}

// Block-level (all threads, uniform control flow). True when synchronization is off, or when producer
// input `in` has completed the current run.
__device__ __forceinline__ bool producer_complete(const StageParams& sp, BlockSync& bs, uint32_t in) {
  if (!sp.has(kSync)) return true;
  __shared__ uint32_t s_done;
  if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0)
    s_done = in < sp.num_inputs && sp.inputs[in].state != nullptr && ptx::ld_acquire(&sp.inputs[in].state->run) >= bs.epoch;
  __syncthreads();
  const bool done = s_done != 0;
  __syncthreads();  // s_done may be rewritten by the next call
  return done;
}

}  // namespace braid
