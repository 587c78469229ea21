// Simulator: the GPT-3 MLP example (H = 12288, F = 6144), numbers derived by hand.
//
// Time unit: a 128x256 tile with K = 1, so a 128x256 GEMM1 tile (K = H) takes 12288 and a GEMM2 tile
// (K = F) takes 6144.
#include <gtest/gtest.h>

#include "sim/examples.hpp"
#include "sim/simulator.hpp"

using namespace braid;
using namespace braid::sim;

namespace {
SimConfig cfg(Ordering o, Dispatch d = Dispatch::InOrder) {
  SimConfig c;
  c.sms = 132;
  c.ordering = o;
  c.dispatch = d;
  return c;
}
}  // namespace

TEST(SimMlp, PlanShape) {
  Plan p = make_gpt3_mlp_plan(512, 128, 256, TileSync());
  ASSERT_EQ(p.stages.size(), 2u);
  EXPECT_EQ(p.stages[0].grid, (Grid{24, 4, 1}));  // F/256 x T/128
  EXPECT_EQ(p.stages[1].grid, (Grid{48, 4, 1}));  // H/256 x T/128
  EXPECT_DOUBLE_EQ(p.stages[0].tile_time, 12288);
  EXPECT_DOUBLE_EQ(p.stages[1].tile_time, 6144);
  std::vector<Tile> r;
  p.deps[0].reads(Tile{5, 3, 0}, r);
  ASSERT_EQ(r.size(), 24u);
  for (uint32_t k = 0; k < 24; ++k) EXPECT_EQ(r[k], (Tile{k, 3, 0}));
  EXPECT_THROW(make_mlp_plan(0, 12288, 6144, 128, 256, TileSync()), PlanError);
  // tile time scales with the tile's FLOPs
  EXPECT_DOUBLE_EQ(make_gpt3_mlp_plan(512, 128, 128, TileSync()).stages[0].tile_time, 6144);
}

// 512 tokens, 128x256: GEMM1 96 tiles (0.73 wave), GEMM2 192 tiles (1.45 waves).
// Stream order: 1 wave of GEMM1 (12288) + 2 waves of GEMM2 (2 x 6144) = 24576.
// Tile sync: 36 GEMM2 blocks take the idle SMs at t=0 but every GEMM2 tile needs a full row of GEMM1,
// and all 96 GEMM1 tiles end together at 12288, so they only spin: GEMM2 still needs 2 waves
// (12288..18432..24576). Makespan 24576 as well: the model predicts no gain at this size (the gain
// on the GPU would come from what the model leaves out: prologue / weight loads overlapping the wait).
TEST(SimMlp, Gpt3At512TokensTileSyncCannotBeatStreamOrder) {
  const Plan ts = make_gpt3_mlp_plan(512, 128, 256, TileSync());
  const Plan rs = make_gpt3_mlp_plan(512, 128, 256, RowSync());
  SimResult s = simulate(ts, cfg(Ordering::StreamOrder));
  ASSERT_TRUE(s.ok()) << s.error_text();
  EXPECT_DOUBLE_EQ(s.makespan, 24576);
  EXPECT_NEAR(s.stages[0].waves, 96.0 / 132, 1e-12);
  EXPECT_NEAR(s.stages[1].waves, 192.0 / 132, 1e-12);
  EXPECT_DOUBLE_EQ(s.stages[1].first_start, 12288);
  EXPECT_NEAR(s.utilization, (96.0 * 12288 + 192.0 * 6144) / (132.0 * 24576), 1e-12);  // 72.7%
  for (const Plan* p : {&ts, &rs})
    for (Ordering o : {Ordering::PDL, Ordering::WaitKernel, Ordering::None}) {
      SimResult r = simulate(*p, cfg(o));
      ASSERT_TRUE(r.ok()) << r.error_text();
      EXPECT_DOUBLE_EQ(r.makespan, 24576) << ordering_name(o);
      EXPECT_DOUBLE_EQ(r.stages[1].first_start, 0);            // consumers take the 36 idle SMs at once
      EXPECT_DOUBLE_EQ(r.spin_time, 36.0 * 12288);              // ... and spin until GEMM1 ends
      EXPECT_NEAR(r.spin_fraction, 36.0 * 12288 / (132.0 * 24576), 1e-12);
    }
}

// 1024 tokens, 128x256: GEMM1 192 tiles (1.45 waves), GEMM2 384 tiles (2.91 waves).
// Stream order: 2 x 12288 + 3 x 6144 = 43008.
// Tile sync (PDL, in-order dispatch): t=0 GEMM1 tiles 0..131 (rows 0-4 and 12 tiles of row 5).
// t=12288: the 60 remaining GEMM1 tiles take 60 SMs, GEMM2 tiles 0..71 (rows 0-1, ready) the other 72;
// t=18432: GEMM2 tiles 72..143 (rows 1-2); t=24576: GEMM1 done, 132 SMs free: tiles 144..275 until
// 30720, the last 108 until 36864. Speedup 43008 / 36864 = 1.1667.
TEST(SimMlp, Gpt3At1024TokensTileSyncFillsGemm1Tail) {
  for (GroupPolicy pol : {TileSync(), RowSync()}) {
    const Plan p = make_gpt3_mlp_plan(1024, 128, 256, pol);
    SimResult s = simulate(p, cfg(Ordering::StreamOrder));
    ASSERT_TRUE(s.ok()) << s.error_text();
    EXPECT_DOUBLE_EQ(s.makespan, 43008);
    for (Ordering o : {Ordering::PDL, Ordering::WaitKernel, Ordering::None}) {
      SimResult r = simulate(p, cfg(o));
      ASSERT_TRUE(r.ok()) << r.error_text();
      EXPECT_DOUBLE_EQ(r.makespan, 36864) << describe(pol) << " " << ordering_name(o);
      EXPECT_DOUBLE_EQ(r.stages[1].first_start, 12288);
      EXPECT_DOUBLE_EQ(r.stages[0].last_end, 24576);
      EXPECT_DOUBLE_EQ(r.spin_time, 0);
    }
  }
  // PDL keeps this schedule whatever the dispatcher prefers.
  SimResult r = simulate(make_gpt3_mlp_plan(1024, 128, 256, TileSync()), cfg(Ordering::PDL, Dispatch::Adversarial));
  ASSERT_TRUE(r.ok()) << r.error_text();
  EXPECT_DOUBLE_EQ(r.makespan, 36864);
}

// 512 tokens with 128x128 tiles has the same wave structure at half the tile time:
// stream 2 x 6144 + 3 x 3072 = 21504, tile sync 18432.
TEST(SimMlp, Gpt3At512TokensSmallTiles) {
  const Plan p = make_gpt3_mlp_plan(512, 128, 128, TileSync());
  EXPECT_DOUBLE_EQ(simulate(p, cfg(Ordering::StreamOrder)).makespan, 21504);
  EXPECT_DOUBLE_EQ(simulate(p, cfg(Ordering::PDL)).makespan, 18432);
}

TEST(SimMlp, CompareTable) {
  const Plan base = make_gpt3_mlp_plan(1024, 128, 256, TileSync());
  std::vector<Variant> v{{"TileSync+pdl", base, Ordering::PDL},
                         {"RowSync+wk", make_gpt3_mlp_plan(1024, 128, 256, RowSync()), Ordering::WaitKernel}};
  std::vector<SimResult> res;
  auto rows = compare(base, v, cfg(Ordering::PDL), &res);
  ASSERT_EQ(rows.size(), 3u);
  ASSERT_EQ(res.size(), 3u);
  EXPECT_EQ(rows[0].ordering, Ordering::StreamOrder);
  EXPECT_DOUBLE_EQ(rows[0].makespan, 43008);
  EXPECT_DOUBLE_EQ(rows[0].speedup, 1.0);
  EXPECT_DOUBLE_EQ(rows[1].makespan, 36864);
  EXPECT_NEAR(rows[1].speedup, 43008.0 / 36864, 1e-12);
  EXPECT_NEAR(rows[2].speedup, 43008.0 / 36864, 1e-12);
  ASSERT_EQ(rows[1].waves.size(), 2u);
  const std::string t = format_table(rows);
  EXPECT_NE(t.find("TileSync+pdl"), std::string::npos);
  EXPECT_NE(t.find("1.167x"), std::string::npos);
  EXPECT_NE(t.find("1.45+2.91"), std::string::npos);
  // a deadlocking variant shows up as such, with speedup 0
  auto bad = compare(base, {{"none-adv", base, Ordering::None}}, cfg(Ordering::PDL, Dispatch::Adversarial));
  EXPECT_FALSE(bad[1].ok);
  EXPECT_TRUE(bad[1].deadlock);
  EXPECT_EQ(bad[1].speedup, 0);
  EXPECT_NE(format_table(bad).find("DEADLOCK"), std::string::npos);
}

// with_measured_stage_times: a stage's tile time is its measured time over its waves of blocks, so that the stage
// alone simulates to its measured time whatever its tile shape.
TEST(SimMlp, MeasuredStageTimesSetTileTimesPerWave) {
  Plan p = make_gpt3_mlp_plan(512, 128, 256, RowSync());
  p.stages[1].block_count = 132;  // persistent: 192 tiles in two rounds
  const Plan m = with_measured_stage_times(p, {100.0, 80.0});
  EXPECT_DOUBLE_EQ(m.stages[0].tile_time, 100.0);  // 96 tiles, one per block: one wave
  EXPECT_DOUBLE_EQ(m.stages[1].tile_time, 40.0);   // 192 tiles on 132 blocks: two
  const SimResult s = simulate(m, cfg(Ordering::StreamOrder));
  ASSERT_TRUE(s.ok()) << s.error_text();
  EXPECT_DOUBLE_EQ(s.makespan, 180.0);
  const Plan partial = with_measured_stage_times(p, {100.0, 0.0});  // unmeasured: the plan's own time
  EXPECT_DOUBLE_EQ(partial.stages[1].tile_time, 6144);
  EXPECT_THROW(with_measured_stage_times(p, {100.0}), PlanError);
}

// GEMM 2 by ticket (MlpVariant::dynamic): where GEMM 1 runs several waves in row-major order, its last wave leaves SMs
// idle while its first rows are done; GEMM 2's persistent CTAs resident there take ready tiles. Times as measured for
// LLaMA's T = 1024 pair (bench/results/mlp-hopper-h200-20261129-745336f/: ~134 and ~66 us alone), tiles 128 x 96 in
// both stages (this builder's one tile shape), 132 persistent blocks each.
//   GEMM 1: 29 x 8 = 232 tiles, two rounds, tile time 67. Blocks 100-131 own one tile and end at 67; rows 0-3 (tiles
//     0-115) are done at 67, rows 4-7 at 134.
//   GEMM 2: 86 x 8 = 688 tiles, six rounds, tile time 11. Stream order: 134 + 66 = 200.
//   Static, PDL: blocks 0-31 take the 32 SMs freed at 67 and own tiles j, j + 132, j + 264 (rows 0, 1, 3: ready),
//     then j + 396 (row 4): 67 + 33, then wait for 134; after it, three more (blocks < 28) or two: done by 167. Blocks
//     32-131 start at 134 with five tiles each: 134 + 55 = 189.
//   By ticket: the 32 early blocks take ready tiles from 67 to 134, six each (192 tiles); the other 496 take four
//     rounds of 132 blocks from 134: 134 + 44 = 178.
TEST(SimMlp, GemmTwoByTicketTakesTheReadyRowsOfGemmOnesLastWave) {
  Plan p = make_mlp_plan(1024, 8192, 2752, 128, 96, RowSync());
  p.stages[0].block_count = 132;
  p.stages[1].block_count = 132;
  const Plan stat = with_measured_stage_times(p, {134.0, 66.0});
  Plan dyn = stat;
  dyn.stages[1].dynamic_order = true;
  const SimResult stream = simulate(stat, cfg(Ordering::StreamOrder));
  const SimResult s = simulate(stat, cfg(Ordering::PDL));
  const SimResult d = simulate(dyn, cfg(Ordering::PDL));
  ASSERT_TRUE(stream.ok()) << stream.error_text();
  ASSERT_TRUE(s.ok()) << s.error_text();
  ASSERT_TRUE(d.ok()) << d.error_text();
  EXPECT_DOUBLE_EQ(stream.makespan, 200.0);
  EXPECT_DOUBLE_EQ(s.makespan, 189.0);
  EXPECT_DOUBLE_EQ(d.makespan, 178.0);
}
