// Never hang: a chain whose kernel is stuck in a wait that nothing will complete is reported by
// Chain::check (with where it stands), while the kernel still runs.
//  - a bounded mbarrier wait (barrier_wait.cuh, the Hopper kernels' pipeline and unit-ring waits)
//    records itself stuck after twice the semaphore bound, and check() says which barrier;
//  - a wait with no bound of its own (CUTLASS's mainloop waits) shows as a chain that stopped moving
//    part-way through a run, and check() says so after 3 x the bound;
//  - a stream busy with other work while the chain sits between runs is not a hang.
// Each stuck kernel spins on a flag in mapped host memory that the test sets afterwards, so that it
// ends and the GPU is free for the next test.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <initializer_list>
#include <string>

#include "braid/core/barrier_wait.cuh"
#include "braid/runtime/chain.cuh"
#include "gpu_test_util.cuh"

using namespace braid;

namespace {

__device__ __forceinline__ void mbarrier_init(uint64_t* bar, uint32_t count) {
  asm volatile("mbarrier.init.shared.b64 [%0], %1;" ::"r"(uint32_t(__cvta_generic_to_shared(bar))), "r"(count)
               : "memory");
}
__device__ __forceinline__ bool mbarrier_test_wait(uint64_t* bar, uint32_t parity) {
  uint32_t done;
  asm volatile(
      "{\n\t.reg .pred p;\n\t"
      "mbarrier.test_wait.parity.shared.b64 p, [%1], %2;\n\t"
      "selp.u32 %0, 1, 0, p;\n\t}"
      : "=r"(done)
      : "r"(uint32_t(__cvta_generic_to_shared(bar))), "r"(parity)
      : "memory");
  return done != 0;
}

// A stage whose CTA waits, bounded, on an mbarrier nothing arrives on (as a consumer waiting for a
// pipeline stage's loads that never come), until the host sets *release.
__global__ void stuck_on_barrier_kernel(StageParams sp, const volatile uint32_t* release) {
  __shared__ uint64_t bar;
  __shared__ BlockSync bs;
  if (threadIdx.x == 0) mbarrier_init(&bar, 1);
  begin_block(sp, bs);  // (its barrier publishes the initialization)
  if (threadIdx.x == 0)
    bounded_barrier_wait([&] { return mbarrier_test_wait(&bar, 0) || *release != 0; }, sp, kSitePipelineFull, 3, 0,
                         Tile{1, 2, 0});
  end_block(sp, bs);
}

// A stage that spins with no bound of its own until the host sets *release (nullptr: returns at once).
__global__ void spin_unbounded_kernel(StageParams sp, const volatile uint32_t* release) {
  __shared__ BlockSync bs;
  begin_block(sp, bs);
  if (threadIdx.x == 0 && release != nullptr)
    while (*release == 0) __nanosleep(1000);
  end_block(sp, bs);
}

// Not a stage: keeps the stream busy for `ns`.
__global__ void busy_kernel(uint64_t ns) {
  const uint64_t t0 = ptx::globaltimer_ns();
  while (ptx::globaltimer_ns() - t0 < ns) __nanosleep(1000);
}

Plan single_stages(int n) {
  Plan p;
  p.name = "bounded-waits";
  for (int i = 0; i < n; ++i) {
    StageSpec s;
    s.name = "stage" + std::to_string(i);
    s.grid = Grid{1, 1, 1};
    p.add_stage(s);
  }
  return p;
}

// A flag in mapped host memory: the host sets it while a kernel spins on it.
struct ReleaseFlag {
  uint32_t* host = nullptr;
  uint32_t* dev = nullptr;
  ReleaseFlag() {
    EXPECT_EQ(cudaHostAlloc(&host, sizeof(uint32_t), cudaHostAllocMapped), cudaSuccess);
    *host = 0;
    EXPECT_EQ(cudaHostGetDevicePointer(&dev, host, 0), cudaSuccess);
  }
  void set() { *reinterpret_cast<volatile uint32_t*>(host) = 1; }
  ~ReleaseFlag() { cudaFreeHost(host); }
};

// chain.check(s) must throw a SyncError whose message holds every one of `needles`.
void expect_stuck(Chain& chain, cudaStream_t s, const char* what, std::initializer_list<const char*> needles) {
  try {
    chain.check(s);
    ADD_FAILURE() << what << " was not reported";
  } catch (const SyncError& e) {
    const std::string m = e.what();
    for (const char* n : needles) EXPECT_NE(m.find(n), std::string::npos) << "'" << n << "' not in: " << m;
  }
}

class BoundedWaits : public GpuTest {};

TEST_F(BoundedWaits, StuckBarrierIsReportedWhileTheKernelRuns) {
  cudaStream_t s;
  ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  ReleaseFlag release;
  auto* chain = new Chain(single_stages(1), {TileShape{1, 1}});  // leaked once stuck (its memory stays)
  chain->set_timeout_ms(20);
  const uint32_t* flag = release.dev;
  chain->set_launcher(0, [flag](const LaunchCtx& c) { launch_kernel(c, stuck_on_barrier_kernel, dim3(1), dim3(32), 0, c.params, flag); });
  chain->run(s, Ordering::PDL);
  expect_stuck(*chain, s, "a kernel stuck on a barrier",
               {"is stuck", "a barrier wait reported itself stuck", "stage 'stage0' CTA 0", "pipeline full barrier",
                "slot 3, phase parity 0, unit tile (1,2,0)", "0 runs completed"});
  EXPECT_TRUE(chain->stuck());
  EXPECT_EQ(cudaStreamQuery(s), cudaErrorNotReady) << "the kernel should still be waiting";
  EXPECT_NE(chain->diagnose().find("pipeline full barrier"), std::string::npos);
  release.set();
  EXPECT_EQ(cudaStreamSynchronize(s), cudaSuccess);
  cudaStreamDestroy(s);
}

TEST_F(BoundedWaits, ChainThatStopsMovingMidRunIsReported) {
  cudaStream_t s;
  ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  ReleaseFlag release;
  auto* chain = new Chain(single_stages(2), {TileShape{1, 1}, TileShape{1, 1}});  // leaked once stuck
  chain->set_timeout_ms(20);
  const uint32_t* flag = release.dev;
  chain->set_launcher(0, [](const LaunchCtx& c) {
    launch_kernel(c, spin_unbounded_kernel, dim3(1), dim3(32), 0, c.params, static_cast<const uint32_t*>(nullptr));
  });
  chain->set_launcher(1, [flag](const LaunchCtx& c) { launch_kernel(c, spin_unbounded_kernel, dim3(1), dim3(32), 0, c.params, flag); });
  chain->run(s, Ordering::PDL);
  expect_stuck(*chain, s, "a chain that stopped moving part-way through a run",
               {"nothing in the chain moved for 60 ms", "stage 0 'stage0': 1 runs completed",
                "stage 1 'stage1': 0 runs completed", "no wait has reported a failure"});
  EXPECT_TRUE(chain->stuck());
  release.set();
  EXPECT_EQ(cudaStreamSynchronize(s), cudaSuccess);
  cudaStreamDestroy(s);
}

TEST_F(BoundedWaits, BusyStreamBetweenRunsIsNotAHang) {
  cudaStream_t s;
  ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  Chain chain(single_stages(2), {TileShape{1, 1}, TileShape{1, 1}});
  chain.set_timeout_ms(20);
  for (int i = 0; i < 2; ++i)
    chain.set_launcher(i, [](const LaunchCtx& c) {
      launch_kernel(c, spin_unbounded_kernel, dim3(1), dim3(32), 0, c.params, static_cast<const uint32_t*>(nullptr));
    });
  chain.run(s, Ordering::PDL);
  ASSERT_NO_THROW(chain.check(s));
  busy_kernel<<<1, 1, 0, s>>>(300'000'000ull);  // 300 ms: five times the 60 ms without movement
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  chain.run(s, Ordering::PDL);
  EXPECT_NO_THROW(chain.check(s));
  EXPECT_FALSE(chain.stuck());
  EXPECT_NE(chain.diagnose().find("stage 1 'stage1': 2 runs completed"), std::string::npos) << chain.diagnose();
  cudaStreamDestroy(s);
}

}  // namespace
