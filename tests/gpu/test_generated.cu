// spec -> braid-gen header -> runtime: the chain runs on the grids, tile-order tables and candidate
// policies of a header generated at build time (bench/specs/gemm-chain.spec, M=300 K=96 N1=200
// N2=130), and its per-tile dependency function agrees with what the kernels wait on.
#include <gtest/gtest.h>

#include <vector>

#include "braid/workloads/gemm_chain.cuh"
#include "gemm_chain_gen.hpp"
#include "gpu_test_util.cuh"

using namespace braid;
using namespace braid::workloads;
namespace gen = braid::generated::gemm_chain;

class Generated : public GpuTest {};

TEST_F(Generated, ChainRunsOnGeneratedOrdersAndPoliciesBitIdentical) {
  const int M = int(gen::param::M), K = int(gen::param::K), N1 = int(gen::param::N1), N2 = int(gen::param::N2);
  ASSERT_EQ(gen::param::TM, 64);
  ASSERT_EQ(gen::param::TN, 64);
  cudaStream_t s;
  ASSERT_EQ(cudaStreamCreate(&s), cudaSuccess);
  ASSERT_GE(gen::g1_num_candidates, 2u);
  for (uint32_t k = 0; k < gen::g1_num_candidates; ++k) {
    GemmChainConfig c;
    std::vector<uint32_t> o1(gen::g1_order, gen::g1_order + gen::g1_tiles);
    std::vector<uint32_t> o2(gen::g2_order, gen::g2_order + gen::g2_tiles);
    c.stages = {GemmStageDesc{"g1", M, N1, K, -1, -1, gen::g1_candidates[k].policy, OrderKind::Table, true, o1},
                GemmStageDesc{"g2", M, N2, N1, 0, -1, TileSync(), OrderKind::Table, true, o2}};
    c.epilogues = {kernels::Epilogue::GeLU, kernels::Epilogue::None};
    c.seed = 900 + k;
    GemmChain g(c);
    // The runtime plan has the generated grids, and its dependency reads exactly the generated set.
    ASSERT_EQ(g.plan().stages[0].grid, gen::g1_grid);
    ASSERT_EQ(g.plan().stages[1].grid, gen::g2_grid);
    for (uint32_t t = 0; t < gen::g2_tiles; ++t) {
      const Tile ct = delinear(t, gen::g2_grid);
      std::vector<Tile> runtime_reads, generated_reads;
      g.plan().deps[0].reads(ct, runtime_reads);
      gen::dep0_reads(ct, [&](Tile p) { generated_reads.push_back(p); });
      ASSERT_EQ(runtime_reads.size(), generated_reads.size());
      for (size_t i = 0; i < runtime_reads.size(); ++i) ASSERT_EQ(runtime_reads[i], generated_reads[i]);
    }
    g.poison(s);
    g.run(s, Ordering::StreamOrder);
    g.chain().check(s);
    std::vector<std::vector<__half>> ref = {g.download(0), g.download(1)};
    for (Ordering o : {Ordering::PDL, Ordering::WaitKernel}) {
      g.poison(s);
      g.run(s, o);
      ASSERT_NO_THROW(g.chain().check(s));
      size_t bad = 0;
      for (int i = 0; i < 2; ++i) {
        auto out = g.download(i);
        for (size_t e = 0; e < out.size(); ++e) bad += __half_as_ushort(out[e]) != __half_as_ushort(ref[i][e]);
      }
      EXPECT_EQ(bad, 0u) << gen::g1_candidates[k].name << " " << ordering_name(o);
    }
  }
  cudaStreamDestroy(s);
}
