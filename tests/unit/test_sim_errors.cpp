// Simulator: races (a policy/value that misses a dependency) and deadlocks (spinning consumers hold
// the slots their producers need) are found and explained.
#include <gtest/gtest.h>

#include "sim/examples.hpp"
#include "sim/simulator.hpp"
#include "sim_test_util.hpp"

using namespace braid;
using namespace braid::sim;
using namespace braid::sim::testing;

namespace {

bool has(const std::string& s, const std::string& sub) { return s.find(sub) != std::string::npos; }

// prod: one row of n tiles (RowSync: one semaphore, value n); cons: one tile reading the whole row.
Plan row_plan(uint32_t n) {
  Plan p;
  p.name = "row";
  p.add_stage(stage("prod", {n, 1, 1}, 10, RowSync()));
  p.add_stage(stage("cons", {1, 1, 1}, 9));
  p.add_dep(1, 0, [n](Tile, std::vector<Tile>& out) {
    for (uint32_t x = 0; x < n; ++x) out.push_back({x, 0, 0});
  });
  return p;
}

}  // namespace

TEST(SimErrors, BrokenValueIsARace) {
  // 3 producer tiles on 2 SMs (prod2 runs 10..20). Waiting for value 2 instead of 3 lets cons (placed
  // at 10 under PDL) read prod0, prod1, then prod2 at t=16 before it posts.
  SimConfig c = config(2, Ordering::PDL);
  c.value_override = [](int, Tile) { return 2u; };
  SimResult r = simulate(row_plan(3), c);
  EXPECT_FALSE(r.ok());
  EXPECT_FALSE(r.deadlock);
  ASSERT_EQ(r.race_count, 1u);
  const RaceReport& x = r.races[0];
  EXPECT_EQ(x.consumer_stage, 1);
  EXPECT_EQ(x.producer_stage, 0);
  EXPECT_EQ(x.consumer_tile, (Tile{0, 0, 0}));
  EXPECT_EQ(x.producer_tile, (Tile{2, 0, 0}));
  EXPECT_EQ(x.sem, 0u);
  EXPECT_EQ(x.seen, 2u);
  EXPECT_EQ(x.value, 2u);
  EXPECT_EQ(x.needed, 3u);
  EXPECT_DOUBLE_EQ(x.time, 16);
  EXPECT_TRUE(has(x.message, "'cons' tile (0,0,0)")) << x.message;
  EXPECT_TRUE(has(x.message, "'prod' tile (2,0,0)")) << x.message;
  EXPECT_TRUE(has(x.message, "semaphore 0")) << x.message;
  EXPECT_TRUE(has(r.error_text(), "race")) << r.error_text();
  // The correct value: no race.
  EXPECT_TRUE(simulate(row_plan(3), config(2, Ordering::PDL)).ok());
  // check_reads = false silences it.
  c.check_reads = false;
  EXPECT_EQ(simulate(row_plan(3), c).race_count, 0u);
}

TEST(SimErrors, BrokenValueRaceUnderAdversarialDispatch) {
  // No ordering, consumer first: cons spins on SM0; prod0 on SM1 posts at 10, reaching the broken
  // value 1; cons reads prod0 then prod1, which has not even started.
  SimConfig c = config(2, Ordering::None, Dispatch::Adversarial);
  c.value_override = [](int, Tile) { return 1u; };
  SimResult r = simulate(row_plan(2), c);
  ASSERT_GE(r.race_count, 1u);
  EXPECT_EQ(r.races[0].producer_tile, (Tile{1, 0, 0}));
  EXPECT_EQ(r.races[0].seen, 1u);
}

TEST(SimErrors, WaitsThatMissAReadAreARace) {
  // TileSync producer, the consumer waits only on the first tile it reads (validation is off: it
  // would reject this plan).
  Plan p = row_plan(3);
  p.stages[0].policy = TileSync();
  p.deps[0].waits = [](Tile, std::vector<Tile>& out) { out.push_back({0, 0, 0}); };
  EXPECT_THROW(p.validate(), PlanError);
  SimConfig c = config(2, Ordering::PDL);
  c.validate_plan = false;
  SimResult r = simulate(p, c);
  ASSERT_EQ(r.race_count, 1u);
  EXPECT_EQ(r.races[0].value, 0u);
  EXPECT_TRUE(has(r.races[0].message, "never waited")) << r.races[0].message;
}

TEST(SimErrors, UnreachableValueIsADeadlock) {
  SimConfig c = config(4, Ordering::PDL);
  c.value_override = [](int, Tile) { return 4u; };  // only 3 tiles post
  SimResult r = simulate(row_plan(3), c);
  ASSERT_TRUE(r.deadlock);
  EXPECT_TRUE(has(r.deadlock_info.message, "can never be reached")) << r.deadlock_info.message;
}

TEST(SimErrors, ConsumersFirstDeadlockUnderNoOrderingAndWaitKernel) {
  // GPT-3 MLP at 512 tokens: GEMM2 has 192 blocks >= 132 slots. Consumers first fill every SM.
  const Plan p = make_gpt3_mlp_plan(512, 128, 256, TileSync());
  EXPECT_FALSE(advise(p, 132).W);
  for (Ordering o : {Ordering::None, Ordering::WaitKernel}) {
    SimResult r = simulate(p, config(132, o, Dispatch::Adversarial));
    ASSERT_TRUE(r.deadlock) << ordering_name(o);
    const DeadlockReport& d = r.deadlock_info;
    ASSERT_EQ(d.spinning.size(), 132u);
    for (const auto& s : d.spinning) {
      EXPECT_EQ(s.stage, 1);
      EXPECT_EQ(s.producer_stage, 0);
      EXPECT_FALSE(s.missing.empty());
      EXPECT_LT(s.count, s.value);
    }
    const std::string& m = d.message;
    EXPECT_TRUE(has(m, "deadlock")) << m;
    EXPECT_TRUE(has(m, "132 of stage 'gemm2'")) << m;
    EXPECT_TRUE(has(m, "132 of 132 SMs full")) << m;
    EXPECT_TRUE(has(m, "stage 'gemm1' tile")) << m;
    EXPECT_TRUE(has(m, "no SM has room")) << m;
    EXPECT_TRUE(has(m, "semaphore")) << m;
    EXPECT_FALSE(r.ok());
  }
  // The wait kernel lets exactly one producer block in first: gemm1 tile (0,0,0) runs to 12288 while
  // 131 consumers spin, then a consumer takes its slot.
  SimResult wk = simulate(p, config(132, Ordering::WaitKernel, Dispatch::Adversarial));
  EXPECT_EQ(wk.stages[0].tiles_done, 1u);
  EXPECT_DOUBLE_EQ(wk.stages[0].last_end, 12288);
  // PDL never deadlocks, whatever the dispatcher does.
  for (Dispatch d : {Dispatch::InOrder, Dispatch::Random, Dispatch::Adversarial}) {
    SimResult r = simulate(p, config(132, Ordering::PDL, d));
    EXPECT_TRUE(r.ok()) << r.error_text();
    EXPECT_DOUBLE_EQ(r.makespan, 24576);
  }
}

TEST(SimErrors, SmallDeadlockNamesTheCycle) {
  // prod (2 tiles) -> cons (2 tiles) on 2 SMs, consumers first under no ordering: both consumers
  // spin at t=0 and prod never gets a slot.
  Plan p;
  p.add_stage(stage("prod", {2, 1, 1}, 10));
  p.add_stage(stage("cons", {2, 1, 1}, 10));
  p.add_dep(1, 0, [](Tile c, std::vector<Tile>& out) { out.push_back(c); });
  SimResult r = simulate(p, config(2, Ordering::None, Dispatch::Adversarial));
  ASSERT_TRUE(r.deadlock);
  EXPECT_DOUBLE_EQ(r.deadlock_info.time, 0);
  EXPECT_EQ(r.deadlock_info.pending_blocks, 2u);
  EXPECT_TRUE(has(r.deadlock_info.message, "'cons' tile (0,0,0)")) << r.deadlock_info.message;
  EXPECT_TRUE(has(r.deadlock_info.message, "'prod' tile (0,0,0)")) << r.deadlock_info.message;
}

TEST(SimErrors, NoDeadlockWhenConsumersFitInUnderAWave) {
  // 1 consumer wave fraction < 1 (advise W): even consumers-first with no ordering completes.
  Plan p;
  p.add_stage(stage("prod", {6, 1, 1}, 10));
  p.add_stage(stage("cons", {3, 1, 1}, 10));
  p.add_dep(1, 0, [](Tile c, std::vector<Tile>& out) {
    out.push_back({2 * c.x, 0, 0});
    out.push_back({2 * c.x + 1, 0, 0});
  });
  ASSERT_TRUE(advise(p, 4).W);
  for (Ordering o : {Ordering::None, Ordering::WaitKernel}) {
    SimResult r = simulate(p, config(4, o, Dispatch::Adversarial));
    ASSERT_TRUE(r.ok()) << r.error_text();
    // cons0-2 take 3 SMs and spin; prod0..5 run one after another on the free SM (and on the SMs the
    // consumers release): prod 0..10, 10..20, 20..30, 25..35, 30..40, 35..45; cons2 reads prod4 at
    // 40..45 and prod5 at 45..50.
    EXPECT_DOUBLE_EQ(r.makespan, 50) << ordering_name(o);
  }
}

TEST(SimErrors, MixedOccupancyDeadlockIsPredictedByAdvise) {
  // With a 1-block/SM producer and a 2-blocks/SM consumer, 6 consumer blocks are only 0.75 wave on
  // 4 SMs, but spread breadth-first they leave half of every SM busy, so no producer block ever fits.
  // advise() works in whole-SM terms and refuses W here (it once summed wave fractions and allowed it).
  Plan p;
  StageSpec a = stage("prod", {8, 1, 1}, 10), b = stage("cons", {6, 1, 1}, 10);
  b.occupancy = 2;
  p.add_stage(a);
  p.add_stage(b);
  p.add_dep(1, 0, [](Tile c, std::vector<Tile>& out) { out.push_back(c); });
  ASSERT_FALSE(advise(p, 4).W) << advise(p, 4).why;
  SimResult r = simulate(p, config(4, Ordering::None, Dispatch::Adversarial));
  ASSERT_TRUE(r.deadlock);
  EXPECT_TRUE(has(r.deadlock_info.message, "needs 1/1 of an SM")) << r.deadlock_info.message;
  // Packed placement leaves a whole SM free, and the chain completes.
  SimConfig c = config(4, Ordering::None, Dispatch::Adversarial);
  c.placement = Placement::LowestIndex;
  EXPECT_TRUE(simulate(p, c).ok());
  // With 3 consumer blocks, at most 3 of the 4 SMs can be blocked: advise allows W, and the worst
  // dispatch completes.
  p.stages[1].grid = Grid{3, 1, 1};
  ASSERT_TRUE(advise(p, 4).W) << advise(p, 4).why;
  EXPECT_TRUE(simulate(p, config(4, Ordering::None, Dispatch::Adversarial)).ok());
}
