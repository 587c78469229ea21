// Synchronization policies: pure index math mapping a producer tile to the semaphore it posts to
// (sem) and to the count that semaphore reaches once every tile mapped to it has posted (value).
//
// One general mechanism covers TileSync, RowSync, StridedSync and the generator's candidates:
// per dimension, `count` tiles at distance `stride` share one semaphore,
//     tiles x, x+stride, ..., x+(count-1)*stride        (groups are consecutive runs of stride*count)
//   - TileSync:          stride 1, count 1 in every dimension (one semaphore per tile)
//   - RowSync:           count = whole x extent (one semaphore per row of tiles)
//   - group of N:        stride 1, count N
//   - StridedSync(s, n): stride s, count n (attention: Q, K, V column tiles s = H/TileN apart)
// count 0 means "the whole dimension". The same object runs on the device (kernels), in the
// simulator and in the generator, so what is simulated is what runs.
#pragma once
#include <cstdint>
#include <string>

#include "braid/core/fast_div.hpp"
#include "braid/core/types.hpp"

namespace braid {

enum class PolicyKind : uint8_t { NoSync = 0, TileSync, RowSync, StridedSync, Conv2DTileSync, Generic };

inline const char* policy_kind_name(PolicyKind k) {
  switch (k) {
    case PolicyKind::NoSync: return "NoSync";
    case PolicyKind::TileSync: return "TileSync";
    case PolicyKind::RowSync: return "RowSync";
    case PolicyKind::StridedSync: return "StridedSync";
    case PolicyKind::Conv2DTileSync: return "Conv2DTileSync";
    case PolicyKind::Generic: return "Generic";
  }
  return "?";
}

struct DimGroup {
  uint32_t stride = 1;  // distance between tiles of one group
  uint32_t count = 1;   // tiles per group; 0 = the whole dimension
};

struct GroupPolicy {
  PolicyKind kind = PolicyKind::TileSync;
  DimGroup dim[3];

  BRAID_HD constexpr bool enabled() const { return kind != PolicyKind::NoSync; }

  // Effective group size along d for a grid extent G.
  BRAID_HD constexpr uint32_t count_of(int d, uint32_t G) const {
    return dim[d].count ? dim[d].count : ceil_div(G, dim[d].stride);
  }
  // Semaphore coordinate of tile coordinate x along dimension d.
  BRAID_HD constexpr uint32_t coord(int d, uint32_t x, uint32_t G) const {
    const uint32_t s = dim[d].stride, span = s * count_of(d, G);
    return (x / span) * s + x % s;
  }
  // Number of semaphore coordinates along d.
  BRAID_HD constexpr uint32_t extent(int d, uint32_t G) const {
    const uint32_t s = dim[d].stride, span = s * count_of(d, G);
    const uint32_t full = G / span, rem = G % span;
    return full * s + (rem < s ? rem : s);
  }
  // Number of tiles in x's group along d (groups at the grid edge may be short).
  BRAID_HD constexpr uint32_t members(int d, uint32_t x, uint32_t G) const {
    const uint32_t s = dim[d].stride, n = count_of(d, G), span = s * n;
    const uint32_t x0 = (x / span) * span + x % s;  // first member
    const uint32_t m = (G - x0 + s - 1) / s;
    return m < n ? m : n;
  }

  BRAID_HD constexpr uint32_t num_sems(Grid g) const {
    return extent(0, g.x) * extent(1, g.y) * extent(2, g.z);
  }
  BRAID_HD constexpr uint32_t sem(Tile t, Grid g) const {
    return coord(0, t.x, g.x) + extent(0, g.x) * (coord(1, t.y, g.y) + extent(1, g.y) * coord(2, t.z, g.z));
  }
  // Posts the semaphore of tile t receives per run (= tiles sharing it).
  BRAID_HD constexpr uint32_t value(Tile t, Grid g) const {
    return members(0, t.x, g.x) * members(1, t.y, g.y) * members(2, t.z, g.z);
  }
  // True when every semaphore has exactly one tile: a post may be a plain release store of the
  // epoch instead of an atomic add (the paper's NoAtomicAdd).
  BRAID_HD constexpr bool one_tile_per_sem(Grid g) const {
    return count_of(0, g.x) == 1 && count_of(1, g.y) == 1 && count_of(2, g.z) == 1;
  }
};

// A policy with the divisors of its index math precomputed (fast_div.hpp), for kernels
// (StageParams::policy, InputRef::policy): built from a GroupPolicy on the host -- assigning one keeps
// them in step -- and read like one. Its sem / value / count_of give the GroupPolicy's results for every
// tile inside the grid (tests/unit/test_policy.cpp), dividing only by a dimension's stride and its
// group span (stride x count), which depend on the policy alone: with count 0 (the whole dimension) a
// tile x < G is always in the first span, so x / span = 0 and no grid-dependent divisor is needed.
struct IndexedPolicy : GroupPolicy {
  FastDiv stride_div[3], span_div[3];  // span_div: stride x count, where count > 0

  constexpr IndexedPolicy() : IndexedPolicy(GroupPolicy{}) {}
  constexpr IndexedPolicy(const GroupPolicy& p)  // NOLINT: implicit by design
      : GroupPolicy(p),
        stride_div{FastDiv(p.dim[0].stride), FastDiv(p.dim[1].stride), FastDiv(p.dim[2].stride)},
        span_div{FastDiv(p.dim[0].stride * p.dim[0].count), FastDiv(p.dim[1].stride * p.dim[1].count),
                 FastDiv(p.dim[2].stride * p.dim[2].count)} {}

  BRAID_HD uint32_t count_of(int d, uint32_t G) const {
    return dim[d].count ? dim[d].count : stride_div[d].div(G + dim[d].stride - 1);
  }
  // (x < G) x's group: q = x / span (0 for the whole dimension), x = q * span + r.
  BRAID_HD uint32_t coord(int d, uint32_t x) const {
    const uint32_t q = dim[d].count ? span_div[d].div(x) : 0u;
    return q * dim[d].stride + stride_div[d].mod(x);
  }
  BRAID_HD uint32_t extent(int d, uint32_t G) const {
    const uint32_t s = dim[d].stride;
    if (!dim[d].count) return G < s ? G : s;  // one span covers the dimension
    uint32_t full, rem;
    span_div[d].divmod(G, full, rem);
    return full * s + (rem < s ? rem : s);
  }
  BRAID_HD uint32_t members(int d, uint32_t x, uint32_t G) const {
    const uint32_t s = dim[d].stride, n = count_of(d, G);
    const uint32_t x0 = (dim[d].count ? span_div[d].div(x) * s * n : 0u) + stride_div[d].mod(x);  // first member
    const uint32_t m = stride_div[d].div(G - x0 + s - 1);
    return m < n ? m : n;
  }
  BRAID_HD uint32_t sem(Tile t, Grid g) const {
    return coord(0, t.x) + extent(0, g.x) * (coord(1, t.y) + extent(1, g.y) * coord(2, t.z));
  }
  BRAID_HD uint32_t value(Tile t, Grid g) const {
    return members(0, t.x, g.x) * members(1, t.y, g.y) * members(2, t.z, g.z);
  }
  // Stride-1 groups along x: the tile after the end of x's group (x / n * n + n, n = count_of(0, Gx)),
  // i.e. once x's semaphore is complete the column-tiles [.., group_end_x) are (ColumnWaiter).
  BRAID_HD uint32_t group_end_x(uint32_t x, uint32_t Gx) const {
    const uint32_t n = count_of(0, Gx);
    return (dim[0].count ? span_div[0].div(x) * n : 0u) + n;  // (x < Gx: a whole-row group's first span)
  }
};

// ---- the named policies -------------------------------------------------------------------------
inline constexpr GroupPolicy NoSync() { return GroupPolicy{PolicyKind::NoSync, {}}; }
inline constexpr GroupPolicy TileSync() { return GroupPolicy{PolicyKind::TileSync, {}}; }
// One semaphore per row of tiles (all x of a given y, z).
inline constexpr GroupPolicy RowSync() {
  return GroupPolicy{PolicyKind::RowSync, {DimGroup{1, 0}, DimGroup{}, DimGroup{}}};
}
// `count` tiles `stride` apart along x share one semaphore (count 0: all of them).
inline constexpr GroupPolicy StridedSync(uint32_t stride, uint32_t count) {
  return GroupPolicy{PolicyKind::StridedSync, {DimGroup{stride, count}, DimGroup{}, DimGroup{}}};
}
// Any grouping (the generator's candidates).
inline constexpr GroupPolicy GenericPolicy(DimGroup x, DimGroup y, DimGroup z = {}) {
  return GroupPolicy{PolicyKind::Generic, {x, y, z}};
}


inline std::string describe(const GroupPolicy& p) {
  std::string s = policy_kind_name(p.kind);
  if (p.kind == PolicyKind::NoSync || p.kind == PolicyKind::TileSync || p.kind == PolicyKind::RowSync) return s;
  s += "(";
  for (int d = 0; d < 3; ++d) {
    if (d) s += ",";
    s += "s" + std::to_string(p.dim[d].stride) + "n" + (p.dim[d].count ? std::to_string(p.dim[d].count) : "*");
  }
  return s + ")";
}

}  // namespace braid
