// The persistent tile scheduler of braid's Hopper GEMM: walks this CTA's work units (WorkSchedule:
// data-parallel, split-K or stream-K) and maps each unit's tile position through the stage's braid
// tile order (row-major, column-major or the generator's table). The producer warp and the consumer
// warpgroups of a CTA each walk the same sequence with their own cursor: no shared scheduler state,
// no barrier per tile.
#pragma once
#include <cstdint>

#include "braid/core/stage.cuh"
#include "braid/kernels/hopper/work_schedule.hpp"

namespace braid::hopper {

struct ScheduledUnit : WorkUnit {
  Tile tile;          // output tile (x: column block, y: row block)
  uint32_t tile_lin;  // row-major linear index of the tile (traces)
};

struct PersistentScheduler {
  WorkSchedule ws;
  Grid grid;
  TileOrder order;

  __device__ __forceinline__ PersistentScheduler(const StageParams& sp, const WorkSchedule& w)
      : ws(w), grid(sp.grid), order(sp.order) {}

  __device__ __forceinline__ WorkSchedule::Cursor begin() const { return ws.begin(blockIdx.x); }
  __device__ __forceinline__ bool next(WorkSchedule::Cursor& c, ScheduledUnit& u) const {
    if (!ws.next(c, u)) return false;
    u.tile = order.at(u.pos, grid);
    u.tile_lin = linear(u.tile, grid);
    return true;
  }
};

}  // namespace braid::hopper
