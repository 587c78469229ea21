// The persistent tile scheduler of braid's Hopper GEMM: walks this CTA's work units (WorkSchedule:
// data-parallel, split-K or stream-K) and maps each unit's tile position through the stage's braid
// tile order (row-major, column-major or the generator's table). The producer warp and the consumer
// warpgroups of a CTA each walk the same sequence with their own cursor: no shared scheduler state,
// no barrier per tile.
#pragma once
#include <cstdint>

#include "braid/core/barrier_wait.cuh"
#include "braid/core/stage.cuh"
#include "braid/kernels/hopper/work_schedule.hpp"
#include "cutlass/arch/barrier.h"

namespace braid::hopper {

struct ScheduledUnit : WorkUnit {
  Tile tile;          // output tile (x: column block, y: row block)
  uint32_t tile_lin;  // row-major linear index of the tile (traces)
  // CTA groups: the last tile group of a row count that is not a multiple of the group size has
  // members below the grid. In a multicast cluster such a member loads (zeros for A, its share of B
  // for its peer) and runs the MMAs so that the cluster's pipelines stay in step; otherwise it skips
  // the unit. It stores, reduces and posts nothing.
  bool in_grid;
};

// Dynamic dispatch (the stage's kDynamicOrder): a CTA's producer warp takes the next unit index from
// the stage's ticket counter (StageState::tile_ticket, reset by the last CTA to finish) when it is
// ready to load it, and hands it to the CTA's consumers through this ring in shared memory. The CTAs
// that start first (a consumer stage's CTAs start as the producer stage's CTAs leave their SMs) then
// take more of the work, and units go out in the stage's order as fast as the SMs free up, which is
// what lets a consumer stage fill the producer's tail wave. Static dispatch hands CTA b the units b,
// b + G, ...: a CTA that starts late still does its full share after everyone else.
struct UnitRing {
  static constexpr uint32_t kSlots = 4;
  uint64_t full[kSlots];   // mbarriers: the producer warp published slot s (1 arrival)
  uint64_t empty[kSlots];  // mbarriers: every consumer thread read slot s (kConsumerThreads arrivals)
  uint32_t unit[kSlots];   // the unit index (>= indexed_units(): no more work)

  __device__ __forceinline__ void init(uint32_t consumer_threads) {
    for (uint32_t s = 0; s < kSlots; ++s) {
      cutlass::arch::ClusterBarrier::init(&full[s], 1);
      cutlass::arch::ClusterBarrier::init(&empty[s], consumer_threads);
    }
    cutlass::arch::fence_barrier_init();
  }
};

// The grid of tile groups of `group` vertically adjacent tiles (m rows of tiles per group row), with
// its divisors: computed on the host at launch (ParamsBase::groups).
inline IndexedGrid tile_groups(Grid grid, uint32_t group) {
  return IndexedGrid(Grid{grid.x, ceil_div(grid.y, group < 1 ? 1 : group), grid.z});
}

struct PersistentScheduler {
  WorkSchedule ws;
  IndexedGrid grid;
  IndexedGrid groups;  // tile_groups(grid, ws.group)
  uint32_t rank;  // this CTA's rank in its CTA group (= its cluster rank when multicasting; 0 without groups)
  TileOrder order;
  bool dynamic;
  uint32_t* ticket;

  // `may_be_dynamic` false: static dispatch whatever the stage's flags (a kernel form that has no dynamic
  // path; the host launches it only for stages without kDynamicOrder).
  __device__ __forceinline__ PersistentScheduler(const StageParams& sp, const WorkSchedule& w, const IndexedGrid& g,
                                                 bool may_be_dynamic = true)
      : ws(w),
        grid(sp.grid),
        groups(g),
        rank(w.group_div.mod(blockIdx.x)),
        order(sp.order),
        dynamic(may_be_dynamic && sp.has(kDynamicOrder)),
        ticket(&sp.state->tile_ticket) {}

  // A CTA group walks the group's units (blockIdx.x / m: groups, and the launch's clusters, are
  // consecutive blocks along x).
  __device__ __forceinline__ WorkSchedule::Cursor begin() const { return ws.begin(ws.group_div.div(blockIdx.x)); }

  // The producer warp's next unit (the whole warp calls; lane 0 takes the ticket and publishes it).
  // `sp`: for the bounded ring waits' report (barrier_wait.cuh).
  __device__ __forceinline__ bool next_produced(WorkSchedule::Cursor& c, ScheduledUnit& u, UnitRing& ring,
                                                const StageParams& sp) const {
    if (!dynamic) return next_static(c, u);
    const uint32_t slot = uint32_t(c.g % UnitRing::kSlots), parity = uint32_t(c.g / UnitRing::kSlots) & 1u;
    uint32_t idx = 0;
    if (threadIdx.x % 32 == 0) {
      bounded_barrier_wait([&] { return cutlass::arch::ClusterBarrier::try_wait(&ring.empty[slot], parity ^ 1u); },
                           sp, kSiteRingEmpty, slot, parity ^ 1u, Tile{});
      idx = atomicAdd(ticket, 1u);
      ring.unit[slot] = idx;
      cutlass::arch::ClusterBarrier::arrive(&ring.full[slot]);
    }
    idx = __shfl_sync(0xffffffffu, idx, 0);
    ++c.g;
    return indexed(idx, u);
  }
  // A consumer thread's next unit: the same sequence as the producer's.
  __device__ __forceinline__ bool next_consumed(WorkSchedule::Cursor& c, ScheduledUnit& u, UnitRing& ring,
                                                const StageParams& sp) const {
    if (!dynamic) return next_static(c, u);
    const uint32_t slot = uint32_t(c.g % UnitRing::kSlots), parity = uint32_t(c.g / UnitRing::kSlots) & 1u;
    bounded_barrier_wait([&] { return cutlass::arch::ClusterBarrier::try_wait(&ring.full[slot], parity); }, sp,
                         kSiteRingFull, slot, parity, Tile{});
    const uint32_t idx = ring.unit[slot];
    cutlass::arch::ClusterBarrier::arrive(&ring.empty[slot]);
    ++c.g;
    return indexed(idx, u);
  }

 private:
  __device__ __forceinline__ bool next_static(WorkSchedule::Cursor& c, ScheduledUnit& u) const {
    if (!ws.next(c, u)) return false;
    place(u);
    return true;
  }
  __device__ __forceinline__ bool indexed(uint32_t idx, ScheduledUnit& u) const {
    if (idx >= ws.indexed_units()) return false;
    ws.unit_at(idx, u);
    place(u);
    return true;
  }
  // The unit's tile: its position through the stage's order (over tile groups with CTA groups),
  // then this CTA's member of the group.
  __device__ __forceinline__ void place(ScheduledUnit& u) const {
    if (ws.group <= 1) {
      u.tile = order.at(u.pos, grid);
      u.in_grid = true;
    } else {
      u.tile = order.at(u.pos, groups);
      u.tile.y = u.tile.y * ws.group + rank;
      u.in_grid = u.tile.y < grid.y;
      ws.member_unit(u, rank);
    }
    u.tile_lin = u.in_grid ? linear(u.tile, grid) : 0u;
  }
};

}  // namespace braid::hopper
