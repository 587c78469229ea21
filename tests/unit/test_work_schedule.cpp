// The Hopper GEMM's work decomposition (data-parallel, split-K, stream-K): every (tile, k-tile)
// iteration is computed exactly once; a tile's segments are numbered 0..nseg-1 in k order and agree
// on nseg and on their workspace slots; slots of different tiles never overlap; stream-K balances
// the tail to within one iteration per CTA and never leaves a CTA of the tail wave idle.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "braid/kernels/hopper/work_schedule.hpp"

using namespace braid::hopper;

namespace {

struct Walk {
  std::vector<std::vector<WorkUnit>> per_cta;
};

Walk walk(const WorkSchedule& s) {
  Walk w;
  w.per_cta.resize(s.ctas);
  for (uint32_t b = 0; b < s.ctas; ++b) {
    WorkUnit u;
    for (auto c = s.begin(b); s.next(c, u);) w.per_cta[b].push_back(u);
  }
  return w;
}

std::string describe(const WorkSchedule& s) {
  return std::string(decomposition_name(s.kind)) + " tiles=" + std::to_string(s.tiles) +
         " k_tiles=" + std::to_string(s.k_tiles) + " ctas=" + std::to_string(s.ctas) +
         " splits=" + std::to_string(s.splits);
}

// The invariants every decomposition must keep; returns the iterations each CTA does.
std::vector<uint64_t> check_invariants(const WorkSchedule& s) {
  SCOPED_TRACE(describe(s));
  const Walk w = walk(s);
  std::vector<std::vector<int>> covered(s.tiles, std::vector<int>(s.k_tiles, 0));
  std::map<uint32_t, std::vector<WorkUnit>> by_tile;
  std::vector<uint64_t> iters(s.ctas, 0);
  for (uint32_t b = 0; b < s.ctas; ++b) {
    for (const WorkUnit& u : w.per_cta[b]) {
      EXPECT_LT(u.pos, s.tiles);
      EXPECT_LT(u.k_begin, u.k_end) << "empty unit";
      EXPECT_LE(u.k_end, s.k_tiles);
      EXPECT_LT(u.seg, u.nseg);
      for (uint32_t k = u.k_begin; k < u.k_end && u.pos < s.tiles; ++k) ++covered[u.pos][k];
      iters[b] += u.k_end - u.k_begin;
      by_tile[u.pos].push_back(u);
    }
  }
  for (uint32_t t = 0; t < s.tiles; ++t)
    for (uint32_t k = 0; k < s.k_tiles; ++k) EXPECT_EQ(covered[t][k], 1) << "tile " << t << " k " << k;
  // Segments: 0..n-1 once each, ascending k, one nseg, one slot base; slot ranges disjoint.
  std::vector<std::pair<uint64_t, uint64_t>> slot_ranges;
  for (auto& [pos, units] : by_tile) {
    std::sort(units.begin(), units.end(), [](const WorkUnit& a, const WorkUnit& b) { return a.seg < b.seg; });
    const uint32_t n = units.front().nseg;
    EXPECT_EQ(units.size(), n) << "tile " << pos;
    if (units.size() != n) continue;
    for (uint32_t i = 0; i < n; ++i) {
      EXPECT_EQ(units[i].seg, i);
      EXPECT_EQ(units[i].nseg, n);
      EXPECT_EQ(units[i].slot, units[0].slot);
      if (i > 0) EXPECT_EQ(units[i].k_begin, units[i - 1].k_end) << "segments in k order";
    }
    if (n > 1 && s.cluster == 1) {  // (clusters exchange partials without a workspace)
      EXPECT_LE(uint64_t(units[0].slot) + n, s.workspace_slots()) << "tile " << pos;
      slot_ranges.push_back({units[0].slot, uint64_t(units[0].slot) + n});
    }
  }
  std::sort(slot_ranges.begin(), slot_ranges.end());
  for (size_t i = 1; i < slot_ranges.size(); ++i) EXPECT_LE(slot_ranges[i - 1].second, slot_ranges[i].first);
  // Each CTA's units come in tile-order position order (the braid order is kept).
  for (uint32_t b = 0; b < s.ctas; ++b)
    for (size_t i = 1; i < w.per_cta[b].size(); ++i) EXPECT_LE(w.per_cta[b][i - 1].pos, w.per_cta[b][i].pos);
  return iters;
}

}  // namespace

TEST(WorkSchedule, DataParallelIsRoundRobinOverTheOrder) {
  const WorkSchedule s = WorkSchedule::make(Decomposition::DataParallel, 300, 12, 132);
  check_invariants(s);
  const Walk w = walk(s);
  ASSERT_EQ(w.per_cta[5].size(), 3u);  // 300 tiles on 132 CTAs: CTA 5 takes 5, 137, 269
  EXPECT_EQ(w.per_cta[5][1].pos, 137u);
  EXPECT_EQ(w.per_cta[40].size(), 2u);
  EXPECT_EQ(s.workspace_slots(), 0u);
}

TEST(WorkSchedule, SplitKSegmentsAreBalanced) {
  const WorkSchedule s = WorkSchedule::make(Decomposition::SplitK, 48, 192, 132, 5);
  check_invariants(s);
  const Walk w = walk(s);
  EXPECT_EQ(w.per_cta[0][0].k_end - w.per_cta[0][0].k_begin, 38u);  // 192 / 5 = 38.4
  EXPECT_EQ(s.workspace_slots(), 48u * 5);
}

// Reduce-scatter split-K: a tile's segments wait for each other, so each must be in the same round
// of units (CTA b's r-th unit is unit b + r G): G is rounded down to a multiple of the splits when
// units outnumber CTAs; with fewer CTAs than splits no schedule holds a tile's segments at once.
TEST(WorkSchedule, ReduceScatterKeepsATilesSegmentsInOneRound) {
  for (uint32_t splits : {2u, 3u, 4u})
    for (uint32_t ctas : {4u, 7u, 132u, 1000u})
      for (uint32_t tiles : {1u, 10u, 40u, 77u}) {
        const WorkSchedule s = WorkSchedule::make(Decomposition::SplitK, tiles, 72, ctas, splits, 4, true);
        SCOPED_TRACE(describe(s));
        EXPECT_EQ(s.reduce_scatter, 1u);
        check_invariants(s);
        if (ctas < splits) continue;
        ASSERT_TRUE(s.segments_co_scheduled());
        const uint64_t units = uint64_t(tiles) * splits;
        if (units > ctas) EXPECT_EQ(s.ctas % splits, 0u);
        EXPECT_GE(s.ctas, ctas - splits + 1);  // no more than the remainder dropped
        // The round of every unit of a tile is the same.
        const Walk w = walk(s);
        std::map<uint32_t, std::vector<size_t>> rounds;
        for (uint32_t b = 0; b < s.ctas; ++b)
          for (size_t r = 0; r < w.per_cta[b].size(); ++r) rounds[w.per_cta[b][r].pos].push_back(r);
        for (auto& [pos, rs] : rounds)
          EXPECT_TRUE(std::all_of(rs.begin(), rs.end(), [&](size_t r) { return r == rs[0]; })) << "tile " << pos;
      }
  const WorkSchedule few = WorkSchedule::make(Decomposition::SplitK, 10, 72, 2, 3, 4, true);
  EXPECT_FALSE(few.segments_co_scheduled());
  const WorkSchedule plain = WorkSchedule::make(Decomposition::SplitK, 10, 72, 7, 3);
  EXPECT_EQ(plain.reduce_scatter, 0u);
  EXPECT_EQ(plain.ctas, 7u);  // the last-arrival reduction keeps every CTA
  EXPECT_EQ(WorkSchedule::make(Decomposition::StreamK, 10, 72, 7, 1, 4, true).reduce_scatter, 0u);
}

// Split-K in clusters (GemmConfig::dsmem_reduce): the launch is in clusters of `splits` CTAs, so G is
// always a multiple of the splits (at least one cluster), CTA b always holds segment b % splits (its
// rank in the cluster), and in every round a cluster's CTAs hold the segments of one tile. No
// workspace: the partials go from CTA to CTA.
TEST(WorkSchedule, ClusterExchangeKeepsATilesSegmentsInOneCluster) {
  for (uint32_t ctas : {1u, 2u, 7u, 131u, 132u, 1000u})
    for (uint32_t tiles : {1u, 10u, 52u, 77u}) {
      const WorkSchedule s0 = WorkSchedule::make(Decomposition::SplitK, tiles, 72, ctas, 2, 4, false, true);
      // what the host launches: the busy CTAs, rebuilt
      const WorkSchedule s = WorkSchedule::make(Decomposition::SplitK, tiles, 72, s0.busy_ctas(), 2, 4, false, true);
      SCOPED_TRACE(describe(s));
      EXPECT_EQ(s.cluster, 2u);
      EXPECT_EQ(s.reduce_scatter, 1u);
      EXPECT_EQ(s.workspace_slots(), 0u);
      EXPECT_EQ(s.ctas % 2, 0u);
      EXPECT_EQ(s.busy_ctas(), s.ctas);
      EXPECT_LE(s.ctas, std::max(ctas, 2u));
      EXPECT_TRUE(s.segments_co_scheduled());
      check_invariants(s);
      const Walk w = walk(s);
      for (uint32_t b = 0; b < s.ctas; ++b) {
        ASSERT_FALSE(w.per_cta[b].empty()) << "CTA " << b << " idles in a launched cluster";
        for (size_t r = 0; r < w.per_cta[b].size(); ++r) {
          EXPECT_EQ(w.per_cta[b][r].seg, b % 2) << "CTA " << b << " round " << r;
          if (b % 2 == 1) {
            ASSERT_EQ(w.per_cta[b - 1].size(), w.per_cta[b].size()) << "CTA " << b;
            EXPECT_EQ(w.per_cta[b - 1][r].pos, w.per_cta[b][r].pos) << "CTA " << b << " round " << r;
          }
        }
      }
    }
  // Without the flag nothing changes.
  EXPECT_EQ(WorkSchedule::make(Decomposition::SplitK, 10, 72, 7, 2, 4, true).cluster, 1u);
}

TEST(WorkSchedule, StreamKFillsEverySmWhenTilesAreFewerThanSms) {
  // GPT-3 GEMM 2 at T <= 128: 96 tiles of 128 x 128, K = 6144 (96 k-tiles), 132 SMs.
  // (Without the reduction cost model; with it, below.)
  const WorkSchedule s = WorkSchedule::make(Decomposition::StreamK, 96, 96, 132, 1, 4, false, false, 1, 0);
  EXPECT_EQ(s.dp_tiles, 0u);
  EXPECT_EQ(s.sk_ctas, 132u);
  EXPECT_EQ(s.busy_ctas(), 132u);
  const auto iters = check_invariants(s);
  const auto [lo, hi] = std::minmax_element(iters.begin(), iters.end());
  EXPECT_LE(*hi - *lo, 1u);  // 9216 iterations / 132 CTAs: 69 or 70 each
  EXPECT_EQ(*hi, 70u);
  EXPECT_GE(s.max_segs, 2u);
  EXPECT_LE(s.max_segs, 3u);
}

TEST(WorkSchedule, StreamKKeepsWholeWavesDataParallel) {
  // GPT-3 GEMM 1 at T = 768 with 128 x 256 tiles: 6 x 24 = 144 tiles on 132 SMs -> 132 whole tiles,
  // 12 tiles' iterations over the 132 CTAs (instead of a second wave of 12 tiles on 12 SMs).
  const WorkSchedule s = WorkSchedule::make(Decomposition::StreamK, 144, 192, 132, 1, 4, false, false, 1, 0);
  EXPECT_EQ(s.dp_tiles, 132u);
  EXPECT_EQ(s.sk_ctas, 132u);
  const auto iters = check_invariants(s);
  const auto [lo, hi] = std::minmax_element(iters.begin(), iters.end());
  EXPECT_EQ(*lo, 192u + 17u);  // 12 * 192 / 132 = 17.45
  EXPECT_EQ(*hi, 192u + 18u);
  const Walk w = walk(s);
  EXPECT_EQ(w.per_cta[7][0].pos, 7u);  // the data-parallel wave first, in the braid order
  EXPECT_EQ(w.per_cta[7][0].nseg, 1u);
}

TEST(WorkSchedule, StreamKTailIsNotCutFinerThanTheMinimum) {
  // 3 tiles x 8 k-tiles on 132 CTAs with at least 4 iterations per CTA: 6 CTAs share the tail.
  const WorkSchedule s = WorkSchedule::make(Decomposition::StreamK, 3, 8, 132, 1, 4, false, false, 1, 0);
  EXPECT_EQ(s.sk_ctas, 6u);
  EXPECT_EQ(s.busy_ctas(), 6u);
  check_invariants(s);
}

// The reduction cost model (make's reduce_cost_iters): a tail tile's reducer reads the other segments'
// partials one after another, so G' is the number of tail CTAs that minimizes (iterations per CTA) +
// 10 x (segments of a tile - 1), the largest within 5% of the minimum.
TEST(WorkSchedule, StreamKTailWeighsBalanceAgainstSegments) {
  // 96 tiles x 96 k-tiles: 132 CTAs cost 70 + 2 x 10, 128 CTAs 72 + 1 x 10.
  const WorkSchedule few = WorkSchedule::make(Decomposition::StreamK, 96, 96, 132);
  EXPECT_EQ(few.sk_ctas, 128u);
  EXPECT_EQ(few.max_segs, 2u);
  check_invariants(few);
  // 12 tail tiles x 192 k-tiles after a whole wave: not 11 segments per tile over 132 CTAs.
  const WorkSchedule tail = WorkSchedule::make(Decomposition::StreamK, 144, 192, 132);
  EXPECT_EQ(tail.dp_tiles, 132u);
  EXPECT_LT(tail.sk_ctas, 132u);
  EXPECT_LE(tail.max_segs, 6u);
  const uint64_t per_cta = (12ull * 192 + tail.sk_ctas - 1) / tail.sk_ctas;
  const WorkSchedule spread = WorkSchedule::make(Decomposition::StreamK, 144, 192, 132, 1, 4, false, false, 1, 0);
  EXPECT_LT(per_cta + 10 * (tail.max_segs - 1), 18 + 10 * (spread.max_segs - 1));
  check_invariants(tail);
  // Tiles that divide evenly are not cut at all (3 tiles x 8 k-tiles: 3 CTAs of 8, not 6 of 4).
  const WorkSchedule small = WorkSchedule::make(Decomposition::StreamK, 3, 8, 132);
  EXPECT_EQ(small.sk_ctas, 3u);
  EXPECT_EQ(small.max_segs, 1u);
  check_invariants(small);
}

TEST(WorkSchedule, NoRemainderMeansPureDataParallel) {
  const WorkSchedule s = WorkSchedule::make(Decomposition::StreamK, 264, 50, 132);
  EXPECT_EQ(s.dp_tiles, 264u);
  EXPECT_EQ(s.sk_ctas, 0u);
  EXPECT_EQ(s.workspace_slots(), 0u);
  check_invariants(s);
}

TEST(WorkSchedule, RandomShapesKeepEveryInvariant) {
  std::mt19937 rng(20261122);
  for (int i = 0; i < 400; ++i) {
    const uint32_t tiles = 1 + rng() % 400, k_tiles = 1 + rng() % 200, ctas = 1 + rng() % 140;
    const Decomposition kind = Decomposition(rng() % 3);
    const uint32_t splits = kind == Decomposition::SplitK ? 1 + rng() % std::min<uint32_t>(k_tiles, 12) : 1;
    const WorkSchedule s = WorkSchedule::make(kind, tiles, k_tiles, ctas, splits, 1 + rng() % 8);
    const auto iters = check_invariants(s);
    if (kind == Decomposition::StreamK && s.sk_ctas > 0) {
      // The tail CTAs differ by at most one iteration beyond their data-parallel tiles.
      std::vector<uint64_t> tail;
      const uint32_t waves = s.dp_tiles / s.ctas;
      for (uint32_t b = 0; b < s.sk_ctas; ++b) tail.push_back(iters[b] - uint64_t(waves) * k_tiles);
      const auto [lo, hi] = std::minmax_element(tail.begin(), tail.end());
      EXPECT_LE(*hi - *lo, 1u) << describe(s);
    }
    if (HasFailure()) break;
  }
}

// A launch padded to whole placement clusters (gemm_device.cuh) has CTAs past busy_ctas(): they walk
// nothing, and every CTA below it walks at least one unit (so padding never takes work from anyone).
TEST(WorkSchedule, CtasPastTheBusyOnesWalkNothing) {
  std::mt19937 rng(20261127);
  for (int i = 0; i < 400; ++i) {
    const uint32_t tiles = 1 + rng() % 300, k_tiles = 1 + rng() % 100, ctas = 1 + rng() % 140;
    const Decomposition kind = Decomposition(rng() % 3);
    const uint32_t splits = kind == Decomposition::SplitK ? 1 + rng() % std::min<uint32_t>(k_tiles, 8) : 1;
    const WorkSchedule s = WorkSchedule::make(kind, tiles, k_tiles, ctas, splits, 1 + rng() % 8, rng() % 2 == 0);
    const uint32_t busy = s.busy_ctas();
    WorkUnit u;
    for (uint32_t b = 0; b < busy; ++b) {
      auto c = s.begin(b);
      EXPECT_TRUE(s.next(c, u)) << describe(s) << " CTA " << b;
    }
    for (uint32_t b = busy; b < busy + 8; ++b) {
      auto c = s.begin(b);
      EXPECT_FALSE(s.next(c, u)) << describe(s) << " padded CTA " << b;
    }
    if (HasFailure()) break;
  }
}

// CTA groups (multicast clusters of 2, GemmConfig::group of 2-8): the schedule deals tile groups to CTA
// groups; every member of a group gets its own position and workspace slots, none shared with any
// other tile's, every (member tile, k-tile) iteration is still computed once, and a group's members
// walk the same k-ranges (what keeps them in step on one column block of B).
TEST(WorkSchedule, GroupMembersOwnTheirPositionsAndSlots) {
  std::mt19937 rng(20261124);
  for (int i = 0; i < 300; ++i) {
    const uint32_t groups = 1 + rng() % 200, k_tiles = 1 + rng() % 120, clusters = 1 + rng() % 66;
    const Decomposition kind = Decomposition(rng() % 3);
    const uint32_t splits = kind == Decomposition::SplitK ? 1 + rng() % std::min<uint32_t>(k_tiles, 6) : 1;
    const uint32_t m = i % 2 == 0 ? 2 : 2 + rng() % 7;
    const WorkSchedule s = WorkSchedule::make(kind, groups, k_tiles, clusters, splits, 4, false, false, m);
    SCOPED_TRACE(describe(s) + " group " + std::to_string(m));
    ASSERT_EQ(s.group, m);
    EXPECT_EQ(s.launch_ctas(), m * s.busy_ctas());
    const auto iters = check_invariants(s);  // the groups' decomposition, as without multicast
    (void)iters;
    const WorkSchedule plain = WorkSchedule::make(kind, groups, k_tiles, clusters, splits, 4);
    EXPECT_EQ(s.workspace_slots(), m * plain.workspace_slots());
    std::map<uint32_t, uint32_t> slot_owner;  // workspace slot -> member position
    std::map<uint32_t, uint64_t> member_iters;
    for (uint32_t c = 0; c < s.ctas; ++c)
      for (uint32_t rank = 0; rank < m; ++rank) {
        WorkUnit u;
        for (auto cur = s.begin(c); s.next(cur, u);) {
          const WorkUnit group = u;
          s.member_unit(u, rank);
          EXPECT_EQ(u.pos, group.pos * m + rank);
          EXPECT_EQ(u.k_begin, group.k_begin);  // in step: the group's k-range
          EXPECT_EQ(u.k_end, group.k_end);
          EXPECT_LT(u.pos, m * s.tiles);
          member_iters[u.pos] += u.k_end - u.k_begin;
          if (u.nseg > 1) {
            const uint32_t slot = u.slot + u.seg;
            ASSERT_LT(slot, s.workspace_slots());
            auto [it, fresh] = slot_owner.emplace(slot, u.pos);
            EXPECT_TRUE(fresh || it->second == u.pos) << "slot " << slot << " shared by positions " << it->second
                                                      << " and " << u.pos;
          }
        }
      }
    EXPECT_EQ(member_iters.size(), size_t(m) * s.tiles);
    for (const auto& [pos, n] : member_iters) EXPECT_EQ(n, k_tiles) << "position " << pos;
    if (HasFailure()) break;
  }
}

// Stream-K with owners (WorkSchedule::owner_reduces): a split tile's segment 0 waits for its other
// segments. That cannot deadlock: segment 0 is always the last unit of its CTA, and every other
// segment is the first tail unit of its CTA (preceded only by whole tiles, which wait for nothing)
// and lies in a later CTA -- so the waits point forward in CTA order and no waiting unit is waited on.
TEST(WorkSchedule, StreamKOwnersWaitOnlyForUnitsThatWaitForNothing) {
  std::mt19937 rng(20261125);
  int split_tiles = 0;
  for (int i = 0; i < 400; ++i) {
    const uint32_t tiles = 1 + rng() % 300, k_tiles = 1 + rng() % 200, ctas = 1 + rng() % 132;
    const WorkSchedule s = WorkSchedule::make(Decomposition::StreamK, tiles, k_tiles, ctas);
    SCOPED_TRACE(describe(s));
    const Walk w = walk(s);
    std::map<uint32_t, uint32_t> owner_cta;                 // tile position -> CTA of its segment 0
    std::map<uint32_t, std::vector<uint32_t>> others_cta;  // tile position -> CTAs of its other segments
    for (uint32_t b = 0; b < s.ctas; ++b) {
      const auto& units = w.per_cta[b];
      for (size_t j = 0; j < units.size(); ++j) {
        const WorkUnit& u = units[j];
        if (u.nseg <= 1) continue;
        if (u.seg == 0) {
          EXPECT_EQ(j + 1, units.size()) << "segment 0 of position " << u.pos << " is not CTA " << b << "'s last unit";
          owner_cta[u.pos] = b;
        } else {
          for (size_t i2 = 0; i2 < j; ++i2)
            EXPECT_EQ(units[i2].nseg, 1u) << "segment " << u.seg << " of position " << u.pos << " follows a split unit in CTA " << b;
          others_cta[u.pos].push_back(b);
        }
      }
    }
    for (const auto& [pos, owner] : owner_cta) {
      ++split_tiles;
      ASSERT_TRUE(others_cta.count(pos));
      for (uint32_t b : others_cta[pos]) EXPECT_GT(b, owner) << "position " << pos;
    }
    if (HasFailure()) break;
  }
  EXPECT_GT(split_tiles, 100);
}
