// Simulator: hand-computed schedules of tiny plans.
#include <gtest/gtest.h>

#include "sim/simulator.hpp"
#include "sim_test_util.hpp"

using namespace braid;
using namespace braid::sim;
using namespace braid::sim::testing;

namespace {

// A: 3 tiles, B: 3 tiles, B tile i reads A tile i; 10 time units per tile.
Plan one_to_one(uint32_t n = 3) {
  Plan p;
  p.name = "one-to-one";
  p.add_stage(stage("A", {n, 1, 1}, 10));
  p.add_stage(stage("B", {n, 1, 1}, 10));
  p.add_dep(1, 0, [](Tile c, std::vector<Tile>& out) { out.push_back(c); });
  return p;
}

const TileRecord& rec(const SimResult& r, int stage, Tile t) {
  for (const auto& x : r.trace)
    if (x.stage == stage && x.tile == t) return x;
  throw std::runtime_error("tile not in trace");
}

}  // namespace

TEST(SimBasic, StreamOrderIsSumOfPerStageWaveTimes) {
  // 2 SMs: A takes 2 waves (20), then B takes 2 waves (20).
  SimResult r = simulate(one_to_one(), config(2, Ordering::StreamOrder));
  ASSERT_TRUE(r.ok()) << r.error_text();
  EXPECT_DOUBLE_EQ(r.makespan, 40);
  EXPECT_DOUBLE_EQ(r.stages[0].first_start, 0);
  EXPECT_DOUBLE_EQ(r.stages[0].last_end, 20);
  EXPECT_DOUBLE_EQ(r.stages[1].first_start, 20);
  EXPECT_DOUBLE_EQ(r.stages[1].last_end, 40);
  EXPECT_DOUBLE_EQ(r.stages[0].waves, 1.5);
  EXPECT_DOUBLE_EQ(r.utilization, 60.0 / 80.0);
  EXPECT_DOUBLE_EQ(r.spin_time, 0);
  EXPECT_EQ(r.trace.size(), 6u);
}

TEST(SimBasic, PdlOverlapFillsTheProducersTail) {
  // t=0: A0, A1. PDL releases B once A2 has started (t=10): A2 on SM0, B0 on SM1 (A0 posted).
  // t=20: B1, B2. Makespan 30, no spin, fully utilized.
  for (Ordering o : {Ordering::PDL, Ordering::WaitKernel, Ordering::None}) {
    SimResult r = simulate(one_to_one(), config(2, o));
    ASSERT_TRUE(r.ok()) << r.error_text();
    EXPECT_DOUBLE_EQ(r.makespan, 30) << ordering_name(o);
    EXPECT_DOUBLE_EQ(r.utilization, 1.0) << ordering_name(o);
    EXPECT_DOUBLE_EQ(r.spin_time, 0) << ordering_name(o);
    const auto& b0 = rec(r, 1, {0, 0, 0});
    EXPECT_DOUBLE_EQ(b0.start, 10);
    EXPECT_EQ(b0.sm, 1u);
    EXPECT_DOUBLE_EQ(rec(r, 0, {2, 0, 0}).start, 10);
    EXPECT_EQ(rec(r, 0, {2, 0, 0}).sm, 0u);
  }
  // PDL never lets B ahead of A's last block, even when the dispatcher prefers B.
  SimResult r = simulate(one_to_one(), config(2, Ordering::PDL, Dispatch::Adversarial));
  ASSERT_TRUE(r.ok()) << r.error_text();
  EXPECT_DOUBLE_EQ(r.makespan, 30);
}

// A: 4 tiles on 3 SMs (A3 runs 10..20); B: one tile reading A0 then A3, 10 units split in two steps.
Plan split_reads() {
  Plan p;
  p.name = "split";
  p.add_stage(stage("A", {4, 1, 1}, 10));
  p.add_stage(stage("B", {1, 1, 1}, 10));
  p.add_dep(1, 0, [](Tile, std::vector<Tile>& out) {
    out.push_back({0, 0, 0});
    out.push_back({3, 0, 0});
  });
  return p;
}

TEST(SimBasic, WorkIsSplitAcrossReadSteps) {
  // PDL: B placed at 10 (when A3 starts), step 1 (reads A0) 10..15, spins 15..20 for A3, step 2 20..25.
  SimResult r = simulate(split_reads(), config(3, Ordering::PDL));
  ASSERT_TRUE(r.ok()) << r.error_text();
  EXPECT_DOUBLE_EQ(r.makespan, 25);
  EXPECT_DOUBLE_EQ(r.spin_time, 5);
  const auto& b = rec(r, 1, {0, 0, 0});
  EXPECT_DOUBLE_EQ(b.dispatch, 10);
  EXPECT_DOUBLE_EQ(b.start, 10);
  EXPECT_DOUBLE_EQ(b.end, 25);
  ASSERT_EQ(b.spins.size(), 1u);
  EXPECT_DOUBLE_EQ(b.spins[0].first, 15);
  EXPECT_DOUBLE_EQ(b.spins[0].second, 20);
  // Stream order: A takes 2 waves (20), then B 10.
  EXPECT_DOUBLE_EQ(simulate(split_reads(), config(3, Ordering::StreamOrder)).makespan, 30);
}

TEST(SimBasic, AdversarialDispatchPlacesConsumersFirst) {
  // No ordering, consumers first: B on SM0 spins 0..10 for A0, computes 10..15, spins 15..20 for A3
  // (A2, A3 start at 10), computes 20..25. Spin 15 of 3 SMs x 25.
  SimResult r = simulate(split_reads(), config(3, Ordering::None, Dispatch::Adversarial));
  ASSERT_TRUE(r.ok()) << r.error_text();
  EXPECT_DOUBLE_EQ(r.makespan, 25);
  EXPECT_DOUBLE_EQ(r.spin_time, 15);
  EXPECT_DOUBLE_EQ(r.spin_fraction, 15.0 / 75.0);
  EXPECT_DOUBLE_EQ(r.utilization, 50.0 / 75.0);
  const auto& b = rec(r, 1, {0, 0, 0});
  EXPECT_EQ(b.sm, 0u);
  EXPECT_DOUBLE_EQ(b.dispatch, 0);
  EXPECT_DOUBLE_EQ(b.start, 10);
  EXPECT_EQ(b.spins.size(), 2u);
  EXPECT_EQ(r.stages[1].first_start, 0);
}

TEST(SimBasic, PersistentAndDynamicBlocksLoopOverTiles) {
  // A: 4 tiles on 2 persistent blocks (two tiles each: 0..20); B: 2 tiles reading A2, A3 (done at 20).
  for (bool dyn : {false, true}) {
    Plan p;
    StageSpec a = stage("A", {4, 1, 1}, 10);
    a.block_count = 2;
    a.dynamic_order = dyn;
    p.add_stage(a);
    p.add_stage(stage("B", {2, 1, 1}, 10));
    p.add_dep(1, 0, [](Tile c, std::vector<Tile>& out) { out.push_back({c.x + 2, 0, 0}); });
    SimResult r = simulate(p, config(4, Ordering::PDL));
    ASSERT_TRUE(r.ok()) << r.error_text();
    EXPECT_DOUBLE_EQ(r.makespan, 30);
    EXPECT_DOUBLE_EQ(r.spin_time, 40);  // B0, B1 spin 0..20 on SM2, SM3
    EXPECT_EQ(r.stages[0].blocks, 2u);
    EXPECT_EQ(rec(r, 0, {2, 0, 0}).block, 0u);
    EXPECT_EQ(rec(r, 0, {3, 0, 0}).block, 1u);
    EXPECT_DOUBLE_EQ(rec(r, 0, {3, 0, 0}).dispatch, 10);
  }
}

TEST(SimBasic, OccupancyMixesOnSMs) {
  // A: 4 tiles at 2 blocks/SM on 2 SMs = 1 wave (10); B: 2 tiles at 1 block/SM, after A (stream): 20.
  Plan p;
  p.add_stage(stage("A", {4, 1, 1}, 10, TileSync(), 2));
  p.add_stage(stage("B", {2, 1, 1}, 10));
  p.add_dep(1, 0, [](Tile c, std::vector<Tile>& out) { out.push_back({c.x * 2, 0, 0}); });
  SimResult r = simulate(p, config(2, Ordering::StreamOrder));
  ASSERT_TRUE(r.ok()) << r.error_text();
  EXPECT_EQ(r.lanes_per_sm, 2u);
  EXPECT_DOUBLE_EQ(r.makespan, 20);
  EXPECT_DOUBLE_EQ(r.utilization, 1.0);  // 4 half-SM tiles x 10 + 2 full-SM tiles x 10 = 40 SM-units of 40
  // breadth-first placement: A0 SM0 slot0, A1 SM1 slot0, A2 SM0 slot1, A3 SM1 slot1
  EXPECT_EQ(rec(r, 0, {2, 0, 0}).sm, 0u);
  EXPECT_EQ(rec(r, 0, {2, 0, 0}).slot, 1u);
  EXPECT_EQ(rec(r, 1, {0, 0, 0}).lanes, 2u);
  // B (full SM) cannot start beside an A block: PDL gives B a slot only once an SM empties.
  SimResult q = simulate(p, config(2, Ordering::PDL));
  ASSERT_TRUE(q.ok()) << q.error_text();
  EXPECT_DOUBLE_EQ(q.makespan, 20);
  // Lowest-index placement packs SM0 first.
  SimConfig c = config(2, Ordering::StreamOrder);
  c.placement = Placement::LowestIndex;
  SimResult l = simulate(p, c);
  EXPECT_EQ(rec(l, 0, {1, 0, 0}).sm, 0u);
  EXPECT_EQ(rec(l, 0, {1, 0, 0}).slot, 1u);
}

TEST(SimBasic, JitterIsSeededPerTile) {
  SimConfig c = config(2, Ordering::PDL);
  c.jitter = 0.2;
  c.seed = 7;
  SimResult a = simulate(one_to_one(8), c), b = simulate(one_to_one(8), c);
  EXPECT_EQ(a.makespan, b.makespan);
  for (const auto& t : a.trace) {
    const double d = t.end - t.dispatch - t.spin;  // compute time of the tile
    EXPECT_GE(d, 8.0 - 1e-9);
    EXPECT_LE(d, 12.0 + 1e-9);
  }
  c.seed = 8;
  EXPECT_NE(simulate(one_to_one(8), c).makespan, a.makespan);
}

TEST(SimBasic, BadConfigIsAnError) {
  SimConfig c;
  c.sms = 0;
  EXPECT_THROW(simulate(one_to_one(), c), PlanError);
  EXPECT_EQ(parse_dispatch("adversarial"), Dispatch::Adversarial);
  EXPECT_THROW(parse_dispatch("fifo"), PlanError);
}
