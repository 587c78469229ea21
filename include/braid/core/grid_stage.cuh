// Block-level helpers for kernels whose CTAs own tiles given by their launch index (no next_tile():
// the attention kernels, the skinny GEMM).
//
// begin_grid_block: begin_block, then -- stream order, possibly PDL-launched -- wait for the primary
// grid, and start the trace clock of the CTA's tile.
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

__device__ __forceinline__ void begin_grid_block(const StageParams& sp, BlockSync& bs) {
  begin_block(sp, bs);
  if (!sp.has(kSync)) ptx::pdl_wait_primary();  // no semaphores: the whole primary grid first
  if (sp.trace != nullptr && threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
    bs.t_start = ptx::globaltimer_ns();
    bs.wait_ns = 0;
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
