// The persistent tile scheduler of braid's Hopper GEMM.
//
// Work units are (tile, split) pairs: unit u covers tile order.at(u / splits) and split u % splits.
// CTA b takes units b, b + G, b + 2G, ... (G persistent CTAs), so the tiles start in the stage's braid
// order (row-major, column-major or the generator's table) and the splits of one tile run on
// neighbouring CTAs at the same time. The producer warp and the consumer warpgroups of a CTA walk the
// same sequence independently: no shared scheduler state, no barrier per tile.
#pragma once
#include <cstdint>

#include "braid/core/stage.cuh"

namespace braid::hopper {

struct WorkUnit {
  Tile tile;          // output tile (x: column block, y: row block)
  uint32_t tile_lin;  // row-major linear index of the tile (trace, split-K bookkeeping)
  uint32_t split;     // which K split
  int k_begin, k_end; // k-tile range [k_begin, k_end)
};

struct PersistentScheduler {
  Grid grid;
  TileOrder order;
  uint32_t splits;
  int k_tiles;
  uint32_t units;

  __device__ __forceinline__ PersistentScheduler(const StageParams& sp, uint32_t splits_, int k_tiles_)
      : grid(sp.grid), order(sp.order), splits(splits_), k_tiles(k_tiles_),
        units(uint32_t(num_tiles(sp.grid)) * splits_) {}

  __device__ __forceinline__ uint32_t first() const { return blockIdx.x; }
  __device__ __forceinline__ uint32_t next(uint32_t u) const { return u + gridDim.x; }
  __device__ __forceinline__ bool valid(uint32_t u) const { return u < units; }

  __device__ __forceinline__ WorkUnit unit(uint32_t u) const {
    WorkUnit w;
    w.tile = order.at(u / splits, grid);
    w.tile_lin = linear(w.tile, grid);
    w.split = u % splits;
    // Balanced split of the k-tiles: sizes differ by at most one.
    w.k_begin = int(uint64_t(w.split) * uint32_t(k_tiles) / splits);
    w.k_end = int(uint64_t(w.split + 1) * uint32_t(k_tiles) / splits);
    return w;
  }
};

}  // namespace braid::hopper
