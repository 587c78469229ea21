// How braid's persistent Hopper GEMM divides its work among the CTAs: plain index math, the same on
// the host (workspace sizing, CPU tests) and on the device (the kernel's producer and consumers).
//
// The work is tiles x k_tiles MMA iterations. A work unit is one tile's contiguous k-range
// (a "segment"); a tile done in one unit needs no workspace, a tile cut into n segments gets n
// workspace slots, and the last segment to arrive sums them in segment order (deterministic).
//
//   DataParallel  every tile is one unit; CTA b takes positions b, b + G, b + 2G, ... of the tile order
//   SplitK        every tile is `splits` equal segments; CTA b takes units b, b + G, ... (unit u: tile
//                 position u / splits, segment u % splits). With reduce_scatter every segment reduces
//                 and stores a share of the tile's columns (gemm_kernel.cuh, reduce_split_tile) and
//                 waits for the tile's other segments: G is then a multiple of splits (or every unit
//                 has a CTA), so that a tile's segments are always in one round of units.
//                 With cluster > 1 (GemmConfig::dsmem_reduce) the CTAs launch in clusters of
//                 `cluster` = splits and G is always a multiple of it: CTA b's units are then always
//                 segment b % splits, and a cluster's CTAs hold one tile's segments in every round,
//                 exchanging partials through distributed shared memory instead of the workspace.
//   StreamK       the whole waves of tiles are data-parallel (round-robin as above); the tiles of the
//                 last, partial wave share their iterations evenly among G' CTAs: CTA b takes the
//                 contiguous iterations [b*I/G', (b+1)*I/G') of the tail (I = tail tiles x k_tiles),
//                 cut where tiles end. G' trades the tail's balance against the number of segments a
//                 tail tile's reducer reads (make(): reduce_cost_iters); when there are fewer tiles than
//                 SMs (small token counts) it is usually every SM, all streaming the weights.
//
// Groups (`group` = m > 1): the schedule deals "tile groups" (m vertically adjacent tiles: the same
// column block of B; `tiles` counts groups) to groups of m consecutive CTAs (`ctas` counts CTA groups,
// launch_ctas() the CTAs): every CTA of group c walks group c's units -- the same k-steps of the same
// column block -- and member r of a tile group is its tile r (member_unit: its own position and
// workspace slots). Two uses:
//   GemmConfig::multicast  the CTA group is a thread-block cluster whose CTAs share B's tiles through
//                          TMA multicast (the kernel's cluster shape; m = 2);
//   GemmConfig::group      no cluster: the m CTAs merely walk in step, so that each k-step of B they
//                          read comes from DRAM once and from L2 for the others. What matters for
//                          stream-K on medium M: its CTAs otherwise sit at unrelated k-steps of the
//                          tiles that share a column block, and a B larger than L2 is read once per
//                          row block (GPT-3's QKV weights at M=512: 4 x 113 MB).
//
// Whatever the decomposition, the tiles still start in the stage's braid order: data-parallel tiles
// round-robin by position, the stream-K tail after them. The producer warp and the consumer
// warpgroups of a CTA walk the same unit sequence with their own cursors.
#pragma once
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "braid/core/fast_div.hpp"
#include "braid/core/types.hpp"

namespace braid::hopper {

enum class Decomposition : uint8_t { DataParallel = 0, SplitK = 1, StreamK = 2 };

struct WorkUnit {
  uint32_t pos = 0;               // position of the tile in the stage's tile order
  uint32_t k_begin = 0, k_end = 0;  // k-tile range [k_begin, k_end)
  uint32_t seg = 0, nseg = 1;     // this unit's segment of the tile, and the tile's number of segments
  uint32_t slot = 0;              // the tile's first workspace slot (segment s uses slot + s); nseg > 1 only
};

struct WorkSchedule {
  Decomposition kind = Decomposition::DataParallel;
  uint32_t tiles = 0, k_tiles = 0;
  uint32_t ctas = 1;       // persistent CTAs (G)
  uint32_t splits = 1;     // SplitK: segments per tile
  uint32_t dp_tiles = 0;   // StreamK: tile positions [0, dp_tiles) are whole units, round-robin
  uint32_t sk_ctas = 0;    // StreamK: CTAs [0, sk_ctas) share the tail (G' <= G)
  uint32_t max_segs = 1;   // StreamK: the most segments any tail tile has (workspace stride)
  uint32_t reduce_scatter = 0;  // SplitK: segments reduce shares of their tile (co-scheduled segments)
  uint32_t cluster = 1;         // SplitK + reduce_scatter: CTAs per cluster (a tile's segments), or 1
  // StreamK: a tile's first segment reduces (set by the host when every CTA is resident at once). It is
  // always the last unit of its CTA -- the tile goes on in later CTAs' ranges -- so it usually finishes
  // last anyway: it waits for the other segments (first units of later CTAs, which wait for nothing),
  // never stores its own partials, and reads theirs. Otherwise the last segment to arrive reduces,
  // every segment having stored its partials first.
  uint32_t owner_reduces = 0;
  uint32_t inflight = 0;        // k-tiles of loads the producer keeps outstanding at most (GemmConfig::inflight; 0:
                                //   the ring's depth). Not part of the decomposition: set after make().
  uint32_t group = 1;           // CTAs per group walking one column block's k-steps (tiles: tile groups,
                                //   ctas: CTA groups), or 1; a multicast cluster when the kernel multicasts
  // The divisors of the per-unit index math (fast_div.hpp), set by make() with `splits` and `group`:
  // the consumers compute a unit between two tiles, every role of a CTA its group rank.
  FastDiv splits_div, group_div;

  struct Cursor {
    uint32_t u = 0;  // next data-parallel / split-K unit index
    uint64_t g = 0;  // next stream-K tail iteration
    uint64_t g_end = 0;
  };

  static constexpr uint32_t kReduceCostIters = 10;

  // --- construction (host) ---------------------------------------------------------------------
  // min_sk_iters: the stream-K tail is spread over at most (tail iterations / min_sk_iters) CTAs, so
  // that no segment is so short that its fixup costs more than it saves.
  // reduce_cost_iters: the stream-K tail's CTA count G' minimizes (tail iterations per CTA) +
  // reduce_cost_iters x (most segments of a tail tile - 1) -- the reducer of a tile reads the others'
  // partials one after another, ~8-11 k-steps' time each (per-unit traces, gemm-streamk-owner-ab
  // results) -- taking the largest G' within 5% of the minimum; 0 = spread over every CTA allowed.
  // reduce_scatter: only with SplitK (ignored otherwise); G is rounded down to a multiple of splits
  // when the units outnumber the CTAs. cluster_exchange: reduce-scatter among the CTAs of a cluster
  // of `splits` (implies reduce_scatter; G always a multiple of splits, at least one cluster).
  static WorkSchedule make(Decomposition kind, uint32_t tiles, uint32_t k_tiles, uint32_t ctas, uint32_t splits = 1,
                           uint32_t min_sk_iters = 4, bool reduce_scatter = false, bool cluster_exchange = false,
                           uint32_t group = 1, uint32_t reduce_cost_iters = kReduceCostIters) {
    WorkSchedule s;
    s.kind = kind;
    s.group = group < 1 ? 1 : group;
    s.group_div = FastDiv(s.group);
    s.tiles = tiles;
    s.k_tiles = k_tiles;
    s.ctas = ctas < 1 ? 1 : ctas;
    if (kind == Decomposition::SplitK) {
      s.splits = splits < 1 ? 1 : splits;
      s.splits_div = FastDiv(s.splits);
      if (uint64_t(s.splits) * k_tiles >= (uint64_t(1) << 32))
        throw std::invalid_argument("WorkSchedule: splits x k-tiles must stay below 2^32 (32-bit unit index math)");
      s.max_segs = s.splits;
      s.reduce_scatter = (reduce_scatter || cluster_exchange) && s.splits > 1 ? 1u : 0u;
      if (cluster_exchange && s.splits > 1) {
        s.cluster = s.splits;
        s.ctas = s.ctas < s.splits ? s.splits : s.ctas - s.ctas % s.splits;
      } else if (s.reduce_scatter && uint64_t(tiles) * s.splits > s.ctas && s.ctas >= s.splits) {
        s.ctas -= s.ctas % s.splits;
      }
    } else if (kind == Decomposition::StreamK) {
      const uint32_t rem = tiles % s.ctas;
      s.dp_tiles = tiles - rem;
      const uint64_t tail = uint64_t(rem) * k_tiles;
      uint64_t g = min_sk_iters < 1 ? tail : tail / min_sk_iters;
      if (g < 1) g = 1;
      const uint32_t g_max = rem == 0 ? 0 : uint32_t(g < s.ctas ? g : s.ctas);
      auto most_segments = [&s, rem]() {
        uint32_t most = 1;
        for (uint32_t t = 0; t < rem; ++t) {
          const uint32_t n = s.tail_segments(t);
          if (n > most) most = n;
        }
        return most;
      };
      s.sk_ctas = g_max;
      if (g_max > 1 && reduce_cost_iters > 0) {
        std::vector<uint64_t> cost(g_max + 1, 0);
        uint64_t best = UINT64_MAX;
        for (uint32_t c = 1; c <= g_max; ++c) {
          s.sk_ctas = c;
          cost[c] = (tail + c - 1) / c + uint64_t(reduce_cost_iters) * (most_segments() - 1);
          if (cost[c] < best) best = cost[c];
        }
        uint32_t pick = 1;
        for (uint32_t c = 1; c <= g_max; ++c)
          if (cost[c] * 100 <= best * 105) pick = c;
        s.sk_ctas = pick;
      }
      s.max_segs = rem == 0 ? 1 : most_segments();
    }
    return s;
  }

  // --- queries (host and device) -----------------------------------------------------------------
  // Persistent CTAs that get any work (a launch needs no more).
  BRAID_HD uint32_t busy_ctas() const {
    const uint64_t units = kind == Decomposition::SplitK ? uint64_t(tiles) * splits : tiles;
    if (kind == Decomposition::StreamK && dp_tiles == 0) return sk_ctas;
    return uint32_t(units < ctas ? units : ctas);
  }
  // CTAs to launch: busy_ctas() groups of `group` CTAs.
  BRAID_HD uint32_t launch_ctas() const { return busy_ctas() * group; }
  // Member `rank` of a CTA group: its own tile's position (of tiles x group) and workspace
  // slots (slot, slot + 1, ...: a group's members use consecutive runs of the group's stride).
  BRAID_HD void member_unit(WorkUnit& w, uint32_t rank) const {
    if (group <= 1) return;
    const uint32_t stride = kind == Decomposition::SplitK ? splits : max_segs;
    w.slot = w.slot * group + rank * stride;
    w.pos = w.pos * group + rank;
  }
  // Reduce-scatter's waits are safe: every tile's segments are in one round of units (each CTA's
  // round-r unit waits only for other CTAs' round-r units).
  BRAID_HD bool segments_co_scheduled() const {
    if (!reduce_scatter) return true;
    return uint64_t(tiles) * splits <= ctas || ctas % splits == 0;
  }
  BRAID_HD uint64_t tail_iters() const { return uint64_t(tiles - dp_tiles) * k_tiles; }
  // First tail iteration of CTA b (b <= sk_ctas).
  BRAID_HD uint64_t tail_start(uint32_t b) const { return uint64_t(b) * tail_iters() / sk_ctas; }
  // The CTA whose tail range holds iteration g.
  BRAID_HD uint32_t tail_owner(uint64_t g) const { return uint32_t(((g + 1) * sk_ctas - 1) / tail_iters()); }
  // Segments of tail tile t (0-based within the tail).
  BRAID_HD uint32_t tail_segments(uint32_t t) const {
    const uint64_t first = uint64_t(t) * k_tiles;
    return tail_owner(first + k_tiles - 1) - tail_owner(first) + 1;
  }
  // Workspace slots (each holds one tile's fp32 partial sums); none when the partials go through
  // distributed shared memory.
  BRAID_HD uint64_t workspace_slots() const {
    if (kind == Decomposition::SplitK) return splits > 1 && cluster == 1 ? uint64_t(tiles) * splits * group : 0;
    if (kind == Decomposition::StreamK) return max_segs > 1 ? uint64_t(tiles - dp_tiles) * max_segs * group : 0;
    return 0;
  }

  // --- iteration (host and device): for (c = begin(b); next(b, c, w);) ... ----------------------
  // CTA (group) b's first unit. CTAs past busy_ctas() -- a launch padded to whole placement clusters
  // (gemm_device.cuh) -- walk nothing.
  BRAID_HD Cursor begin(uint32_t b) const {
    Cursor c;
    if (b >= busy_ctas()) {
      c.u = 0xffffffffu;  // past every indexed unit; no stream-K range
      return c;
    }
    c.u = b;
    if (kind == Decomposition::StreamK && b < sk_ctas) {
      c.g = tail_start(b);
      c.g_end = tail_start(b + 1);
    }
    return c;
  }

  // Units handed out by index (data-parallel and split-K units; stream-K's whole-wave tiles).
  BRAID_HD uint64_t indexed_units() const {
    return kind == Decomposition::StreamK ? uint64_t(dp_tiles) : uint64_t(tiles) * (kind == Decomposition::SplitK ? splits : 1);
  }
  // Indexed unit u (< indexed_units()): tile position u / splits, segment u % splits.
  BRAID_HD void unit_at(uint32_t u, WorkUnit& w) const {
    const uint32_t seg_count = kind == Decomposition::SplitK ? splits : 1;
    if (seg_count == 1) {  // a whole tile: no divisions (the consumers compute this between two tiles)
      w.pos = u;
      w.seg = 0;
      w.nseg = 1;
      w.k_begin = 0;
      w.k_end = k_tiles;
      w.slot = u;
      return;
    }
    splits_div.divmod(u, w.pos, w.seg);  // seg_count == splits (SplitK)
    w.nseg = seg_count;
    // (seg + 1) * k_tiles < 2^32: make() refuses larger products.
    w.k_begin = splits_div.div(w.seg * k_tiles);
    w.k_end = splits_div.div((w.seg + 1) * k_tiles);
    w.slot = w.pos * seg_count;
  }

  BRAID_HD bool next(Cursor& c, WorkUnit& w) const {
    if (c.u < indexed_units()) {
      unit_at(c.u, w);
      c.u += ctas;
      return true;
    }
    if (c.g >= c.g_end) return false;
    const uint32_t t = uint32_t(c.g / k_tiles);
    const uint64_t first = uint64_t(t) * k_tiles;
    w.pos = dp_tiles + t;
    w.k_begin = uint32_t(c.g - first);
    const uint64_t end = c.g_end < first + k_tiles ? c.g_end : first + k_tiles;
    w.k_end = uint32_t(end - first);
    const uint32_t owner0 = tail_owner(first);
    w.seg = tail_owner(c.g) - owner0;
    w.nseg = tail_owner(first + k_tiles - 1) - owner0 + 1;
    w.slot = t * max_segs;
    c.g = end;
    return true;
  }
};

// A diagnostic: one record per work unit a CTA ran (PersistentOp::run_unit_trace), written by the
// unit's consumer thread 0 at its end: when the unit started, its last MMA, the end of its split-K /
// stream-K fixup (partial stored and arrival counted; for the reducer, the other partials summed), and
// the end of its epilogue (= fixup_end_ns for a segment that did not reduce). Indexed by
// block * stride + the block's unit number; unused records stay zero.
struct UnitTrace {
  uint64_t start_ns, mainloop_end_ns, fixup_end_ns, end_ns;
  uint32_t tile_lin, smid;
  uint16_t k_begin, k_end, seg, nseg;
  uint32_t block, reduced;  // reduced: this unit ran the tile's epilogue (whole tile or reducer / own share)
};

inline const char* decomposition_name(Decomposition d) {
  return d == Decomposition::DataParallel ? "data-parallel" : d == Decomposition::SplitK ? "split-k" : "stream-k";
}

}  // namespace braid::hopper
