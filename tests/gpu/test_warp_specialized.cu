// A heterogeneous three-stage chain whose middle stage is warp-specialized (elected-lane waits and
// posts, named barriers): GEMM -> act (warp-specialized) -> GEMM. Bit-identical to stream order
// under every policy and ordering, repeated through epochs.
#include <gtest/gtest.h>

#include "braid/bench/device_data.cuh"
#include "braid/kernels/simple_gemm.cuh"
#include "braid/kernels/ws_elementwise.cuh"
#include "braid/runtime/chain.cuh"
#include "gpu_test_util.cuh"

using namespace braid;
using namespace braid::kernels;

namespace {

Plan make_plan(int M, int N1, int N2, GroupPolicy pol) {
  Plan p;
  p.name = "gemm-act-gemm";
  auto stage = [&](const char* n, int N) {
    StageSpec s;
    s.name = n;
    s.grid = Grid{ceil_div(uint32_t(N), 64u), ceil_div(uint32_t(M), 64u), 1};
    s.policy = pol;
    return s;
  };
  p.add_stage(stage("gemm1", N1));
  p.add_stage(stage("act", N1));
  p.add_stage(stage("gemm2", N2));
  p.add_dep(1, 0, [](Tile c, std::vector<Tile>& out) { out.push_back(c); });
  const uint32_t gx = ceil_div(uint32_t(N1), 64u);
  p.add_dep(2, 1, [gx](Tile c, std::vector<Tile>& out) {
    for (uint32_t x = 0; x < gx; ++x) out.push_back(Tile{x, c.y, 0});
  });
  return p;
}

}  // namespace

class WarpSpecialized : public GpuTest {};

TEST_F(WarpSpecialized, GemmActGemmBitIdentical) {
  cudaStream_t s;
  ASSERT_EQ(cudaStreamCreate(&s), cudaSuccess);
  for (auto shape : std::vector<std::array<int, 4>>{{64, 64, 64, 64}, {300, 96, 200, 130}, {1024, 256, 1024, 512}}) {
    const int M = shape[0], K = shape[1], N1 = shape[2], N2 = shape[3];
    for (GroupPolicy pol : {TileSync(), RowSync()}) {
      __half *A, *B1, *C1, *Y, *B2, *E;
      cudaMalloc(&A, size_t(M) * K * 2);
      cudaMalloc(&B1, size_t(K) * N1 * 2);
      cudaMalloc(&C1, size_t(M) * N1 * 2);
      cudaMalloc(&Y, size_t(M) * N1 * 2);
      cudaMalloc(&B2, size_t(N1) * N2 * 2);
      cudaMalloc(&E, size_t(M) * N2 * 2);
      fill_random(A, size_t(M) * K, 11, 1.0f);
      fill_random(B1, size_t(K) * N1, 12, 1.0f / sqrtf(float(K)));
      fill_random(B2, size_t(N1) * N2, 13, 1.0f / sqrtf(float(N1)));
      Plan plan = make_plan(M, N1, N2, pol);
      Chain chain(plan, std::vector<TileShape>(3, TileShape{64, 64}));
      chain.set_launcher(0, [&](const LaunchCtx& c) {
        GemmOperands op;
        op.A = A; op.B = B1; op.C = C1; op.M = M; op.N = N1; op.K = K;
        launch_kernel(c, simple_gemm_kernel<64, 64, 32>, dim3(plan.stages[0].tiles()), dim3(kSimpleGemmThreads), 0, op, c.params);
      });
      chain.set_launcher(1, [&](const LaunchCtx& c) {
        ElementwiseOperands op;
        op.X = C1; op.Y = Y; op.M = M; op.N = N1; op.x_input = 0; op.act = Epilogue::GeLU; op.scale = 0.5f;
        launch_kernel(c, ws_elementwise_kernel<64, 64>, dim3(plan.stages[1].tiles()), dim3(kWsThreads), 0, op, c.params);
      });
      chain.set_launcher(2, [&](const LaunchCtx& c) {
        GemmOperands op;
        op.A = Y; op.B = B2; op.C = E; op.M = M; op.N = N2; op.K = N1; op.a_input = 0;
        launch_kernel(c, simple_gemm_kernel<64, 64, 32>, dim3(plan.stages[2].tiles()), dim3(kSimpleGemmThreads), 0, op, c.params);
      });
      auto poison = [&] {
        cudaMemsetAsync(C1, 0xff, size_t(M) * N1 * 2, s);
        cudaMemsetAsync(Y, 0xff, size_t(M) * N1 * 2, s);
        cudaMemsetAsync(E, 0xff, size_t(M) * N2 * 2, s);
      };
      auto download = [&](const __half* p, size_t n) {
        std::vector<__half> h(n);
        cudaMemcpy(h.data(), p, n * 2, cudaMemcpyDeviceToHost);
        return h;
      };
      poison();
      chain.run(s, Ordering::StreamOrder);
      chain.check(s);
      const auto refY = download(Y, size_t(M) * N1), refE = download(E, size_t(M) * N2);
      size_t nan = 0;
      for (auto h : refE) nan += __hisnan(h);
      ASSERT_EQ(nan, 0u);
      for (Ordering o : {Ordering::PDL, Ordering::WaitKernel, Ordering::PDL})
        for (int rep = 0; rep < 3; ++rep) {
          poison();
          chain.run(s, o);
          ASSERT_NO_THROW(chain.check(s));
          const auto y = download(Y, size_t(M) * N1), e = download(E, size_t(M) * N2);
          size_t bad = 0;
          for (size_t i = 0; i < y.size(); ++i) bad += __half_as_ushort(y[i]) != __half_as_ushort(refY[i]);
          for (size_t i = 0; i < e.size(); ++i) bad += __half_as_ushort(e[i]) != __half_as_ushort(refE[i]);
          ASSERT_EQ(bad, 0u) << M << "x" << K << "x" << N1 << "x" << N2 << " " << describe(pol) << " "
                             << ordering_name(o);
        }
      for (void* p : {(void*)A, (void*)B1, (void*)C1, (void*)Y, (void*)B2, (void*)E}) cudaFree(p);
    }
  }
  cudaStreamDestroy(s);
}

// run_pdl_only's launches: stream order (no kSync, no waits), every stage but the last triggering its
// dependents at block start; plain stream order triggers nothing, the PDL ordering every stage.
TEST_F(WarpSpecialized, PdlOnlyTriggersAllButTheLastStage) {
  Plan plan = make_plan(128, 64, 64, TileSync());
  Chain chain(plan, std::vector<TileShape>(3, TileShape{64, 64}));
  for (int i = 0; i < 3; ++i) {
    SCOPED_TRACE("stage " + std::to_string(i));
    const StageParams pdl_stream = chain.params(i, Ordering::StreamOrder, /*pdl_stream=*/true);
    EXPECT_EQ(pdl_stream.has(kPdlTrigger), i < 2);
    EXPECT_FALSE(pdl_stream.has(kSync));
    EXPECT_FALSE(chain.params(i, Ordering::StreamOrder).has(kPdlTrigger));
    EXPECT_TRUE(chain.params(i, Ordering::PDL).has(kPdlTrigger));
    EXPECT_TRUE(chain.params(i, Ordering::PDL).has(kSync));
  }
}
