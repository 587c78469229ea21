// braid core types: tile coordinates and grids, shared by host code (generator, simulator, planner)
// and device code (kernels). Everything here is plain index math, callable on both sides.
#pragma once
#include <cstdint>

#if defined(__CUDACC__)
#define BRAID_HD __host__ __device__ __forceinline__
#else
#define BRAID_HD inline
#endif

namespace braid {

// A 3-D index. For a GEMM-like stage: x = column-tile index (N direction), y = row-tile index
// (M direction), z = batch / head / split index. This matches the paper's Grid(x, y) convention.
struct Coord3 {
  uint32_t x = 0, y = 0, z = 0;
  BRAID_HD constexpr bool operator==(const Coord3& o) const { return x == o.x && y == o.y && z == o.z; }
  BRAID_HD constexpr bool operator!=(const Coord3& o) const { return !(*this == o); }
};
using Tile = Coord3;  // one tile of a stage
using Grid = Coord3;  // number of tiles of a stage in each dimension

BRAID_HD constexpr uint64_t num_tiles(Grid g) { return uint64_t(g.x) * g.y * g.z; }
BRAID_HD constexpr bool contains(Grid g, Tile t) { return t.x < g.x && t.y < g.y && t.z < g.z; }
// Row-major linear index: x fastest, then y, then z.
BRAID_HD constexpr uint32_t linear(Tile t, Grid g) { return t.x + g.x * (t.y + g.y * t.z); }
BRAID_HD constexpr Tile delinear(uint32_t i, Grid g) {
  return Tile{i % g.x, (i / g.x) % g.y, i / (g.x * g.y)};
}
BRAID_HD constexpr uint32_t component(Coord3 c, int d) { return d == 0 ? c.x : (d == 1 ? c.y : c.z); }
BRAID_HD constexpr uint32_t ceil_div(uint32_t a, uint32_t b) { return (a + b - 1) / b; }

}  // namespace braid
