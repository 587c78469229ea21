// Plan validation: bad input is a clear PlanError at plan time, naming what is wrong.
#include <gtest/gtest.h>

#include <string>

#include "braid/plan/plan.hpp"
#include "braid/workloads/gemm_chain_plan.hpp"

using namespace braid;
using namespace braid::workloads;

namespace {

Plan two_stage(GroupPolicy p1, Grid g1 = {4, 3, 1}, Grid g2 = {5, 3, 1}) {
  Plan plan;
  plan.name = "t";
  StageSpec a, b;
  a.name = "prod";
  a.grid = g1;
  a.policy = p1;
  b.name = "cons";
  b.grid = g2;
  plan.add_stage(a);
  plan.add_stage(b);
  // each consumer tile reads a full row of producer tiles
  plan.add_dep(1, 0, [g1](Tile c, std::vector<Tile>& out) {
    for (uint32_t x = 0; x < g1.x; ++x) out.push_back(Tile{x, c.y, 0});
  });
  return plan;
}

std::string error_of(const Plan& p) {
  try {
    p.validate();
  } catch (const PlanError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(Plan, ValidPlansPass) {
  EXPECT_EQ(error_of(two_stage(TileSync())), "");
  EXPECT_EQ(error_of(two_stage(RowSync())), "");
}

TEST(Plan, ProducerTileOutsideGridIsNamed) {
  Plan p = two_stage(TileSync(), Grid{4, 3, 1}, Grid{5, 4, 1});  // consumer row 3 reads producer row 3
  const std::string e = error_of(p);
  EXPECT_NE(e.find("cons <- prod"), std::string::npos) << e;
  EXPECT_NE(e.find("outside the producer grid"), std::string::npos) << e;
  EXPECT_NE(e.find("(0,3,0)"), std::string::npos) << e;
}

TEST(Plan, WaitsThatDoNotCoverReadsAreRejected) {
  // The consumer waits only on the first tile of its row, which covers the row under RowSync but
  // not under TileSync.
  auto waits_first = [](Tile c, std::vector<Tile>& out) { out.push_back(Tile{0, c.y, 0}); };
  Plan ok = two_stage(RowSync());
  ok.deps[0].waits = waits_first;
  EXPECT_EQ(error_of(ok), "");
  Plan bad = two_stage(TileSync());
  bad.deps[0].waits = waits_first;
  const std::string e = error_of(bad);
  EXPECT_NE(e.find("does not cover"), std::string::npos) << e;
  EXPECT_NE(e.find("reads producer tile (1,0,0)"), std::string::npos) << e;
}

TEST(Plan, ZeroGridNonBijectiveOrderAndBadReferencesAreRejected) {
  Plan z = two_stage(TileSync(), Grid{0, 3, 1});
  EXPECT_NE(error_of(z).find("empty grid"), std::string::npos);

  Plan t = two_stage(TileSync());
  t.stages[0].order.kind = OrderKind::Table;
  t.stages[0].order_table = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10};
  EXPECT_NE(error_of(t).find("not a bijection"), std::string::npos) << error_of(t);
  t.stages[0].order_table = {0, 1, 2};
  EXPECT_NE(error_of(t).find("3 entries for 12 tiles"), std::string::npos) << error_of(t);

  Plan cyc = two_stage(TileSync());
  cyc.deps[0].consumer = 0;
  cyc.deps[0].producer = 1;
  EXPECT_NE(error_of(cyc).find("launched before"), std::string::npos);

  Plan nosync = two_stage(NoSync());
  EXPECT_NE(error_of(nosync).find("NoSync"), std::string::npos);

  Plan dup = two_stage(TileSync());
  dup.stages[1].name = "prod";
  EXPECT_NE(error_of(dup).find("duplicate"), std::string::npos);

  Plan unknown = two_stage(TileSync());
  unknown.deps[0].producer = 7;
  EXPECT_NE(error_of(unknown).find("does not exist"), std::string::npos);
}

TEST(Plan, PolicyStrideZeroIsRejected) {
  Plan p = two_stage(GenericPolicy(DimGroup{0, 1}, DimGroup{}));
  EXPECT_NE(error_of(p).find("stride 0"), std::string::npos);
}

TEST(GemmChainPlan, ShapesMustChain) {
  std::vector<GemmStageDesc> g = {{"g1", 64, 128, 32}, {"g2", 64, 64, 96, 0}};
  try {
    make_gemm_chain_plan("c", g, GemmTile{});
    FAIL();
  } catch (const PlanError& e) {
    EXPECT_NE(std::string(e.what()).find("A is [64,96] but stage 'g1' produces [64,128]"), std::string::npos)
        << e.what();
  }
  g[1].K = 128;
  Plan p = make_gemm_chain_plan("c", g, GemmTile{});
  EXPECT_EQ(p.stages[0].grid, (Grid{2, 1, 1}));
  EXPECT_EQ(p.stages[1].grid, (Grid{1, 1, 1}));
  g[0].M = 0;
  EXPECT_THROW(make_gemm_chain_plan("c", g, GemmTile{}), PlanError);
}

TEST(GemmChainPlan, ConsumerReadsWholeProducerRowInKOrder) {
  std::vector<GemmStageDesc> g = {{"g1", 130, 200, 32}, {"g2", 130, 70, 200, 0}};
  Plan p = make_gemm_chain_plan("c", g, GemmTile{});
  std::vector<Tile> r;
  p.deps[0].reads(Tile{1, 2, 0}, r);
  ASSERT_EQ(r.size(), 4u);  // 200 columns / 64 = 4 producer column tiles, row tile 2
  for (uint32_t i = 0; i < 4; ++i) EXPECT_EQ(r[i], (Tile{i, 2, 0}));
}

TEST(Advise, WAndTFollowWaveCounts) {
  Plan small = two_stage(TileSync(), Grid{4, 3, 1}, Grid{5, 3, 1});  // 12 + 15 tiles
  auto a = advise(small, 132);
  EXPECT_TRUE(a.W);
  EXPECT_TRUE(a.T);
  Plan big = two_stage(TileSync(), Grid{20, 10, 1}, Grid{20, 10, 1});  // 200 + 200 tiles
  auto b = advise(big, 132);
  EXPECT_FALSE(b.W);  // 200 consumer blocks could hold all 132 slots
  EXPECT_FALSE(b.T);  // 400 tiles > 2 waves
  big.stages[1].occupancy = 2;  // 200 blocks over 264 slots, but the producer needs a whole SM:
  EXPECT_FALSE(advise(big, 132).W);  // spread one per SM, 132 consumer blocks block every SM
  big.stages[0].occupancy = 2;  // producer blocks fit in half an SM: 2 consumers block one SM
  EXPECT_TRUE(advise(big, 132).W) << advise(big, 132).why;  // at most 100 of 132 SMs blocked
}

// Per-stage tiles (the Hopper MLP: GEMM 1 writes 128x64 SwiGLU tiles, GEMM 2 uses 128x256): a consumer
// tile's reads are counted in the producer's tile shape, its rows in its own.
TEST(GemmChainPlan, PerStageTileShapes) {
  using namespace braid::workloads;
  GemmStageDesc g1{"gemm1", 300, 640, 512, -1, -1, braid::TileSync()};
  g1.tile_m = 128;
  g1.tile_n = 64;
  GemmStageDesc g2{"gemm2", 300, 1024, 640, 0, -1, braid::TileSync()};
  g2.tile_m = 128;
  g2.tile_n = 256;
  const braid::Plan plan = make_gemm_chain_plan("mlp", {g1, g2}, GemmTile{128, 128, 64});
  EXPECT_EQ(plan.stages[0].grid, (braid::Grid{10, 3, 1}));
  EXPECT_EQ(plan.stages[1].grid, (braid::Grid{4, 3, 1}));
  std::vector<braid::Tile> reads;
  plan.deps[0].reads(braid::Tile{3, 2, 0}, reads);  // rows 256..299: producer row block 2, all 10 columns
  ASSERT_EQ(reads.size(), 10u);
  for (uint32_t i = 0; i < reads.size(); ++i) EXPECT_EQ(reads[i], (braid::Tile{i, 2, 0}));
}

// W (no stage ordering) with the Hopper GEMM's persistent grids: GEMM 2 launches one CTA per SM
// (block_count = 132, one per SM for its shared memory), so spinning consumer CTAs could hold every SM
// before GEMM 1's CTAs are resident -- advise() must refuse W; with fewer persistent consumer CTAs
// than SMs it may allow it.
TEST(Advise, PersistentConsumerFillingEverySmGetsNoW) {
  using namespace braid::workloads;
  GemmStageDesc g1{"gemm1", 1024, 6144, 12288, -1, -1, braid::TileSync()};
  GemmStageDesc g2{"gemm2", 1024, 12288, 6144, 0, -1, braid::TileSync()};
  braid::Plan plan = make_gemm_chain_plan("mlp", {g1, g2}, GemmTile{128, 128, 64});
  plan.stages[0].block_count = 132;
  plan.stages[1].block_count = 132;
  const auto a = advise(plan, 132);
  EXPECT_FALSE(a.W) << a.why;
  plan.stages[1].block_count = 96;  // e.g. 96 data-parallel tiles at small T
  EXPECT_TRUE(advise(plan, 132).W) << advise(plan, 132).why;
}
