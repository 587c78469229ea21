// Microbenchmark: what a kernel launch costs in the benchmarks' own timing (CUDA graph, L2 evicted
// before each repetition, CUDA events around the replay), apart from any kernel's work. The question
// behind it (docs/hopper-conv.md): a deep-layer convolution (512x7) is timed at 19-21 us while its
// tiles span 14-15 us from the first tile's start to the last tile's end -- is the rest the launch
// itself (the same for cuDNN's kernels), or braid's kernel prologue and tail?
//
// Kernels: `spin` holds every CTA for a fixed time on %globaltimer (so timed - spin = what lies
// outside the kernel's body), with the conv kernel's launch shape (384 threads, up to 227 KB of
// dynamic shared memory, which needs the SM's L1/shared split reconfigured after the L2-evicting
// kernel); pairs back to back in stream order, and the second launched as a programmatic dependent
// (PDL: the first triggers at its start, the second waits with griddepcontrol.wait).
//   build: cmake target braid-micro-launch;  run: braid-micro-launch [reps]
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "braid/bench/harness.cuh"

namespace {

__device__ __forceinline__ uint64_t now_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Every CTA spins for spin_ns from its own start (0: returns at once). trigger: PDL's launch_dependents
// at the start; wait: griddepcontrol.wait before the spin (a programmatic dependent).
__global__ void spin_kernel(uint64_t spin_ns, int trigger, int wait, int has_smem, uint32_t* sink) {
  extern __shared__ uint32_t smem[];
  if (trigger) asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  if (wait) asm volatile("griddepcontrol.wait;" ::: "memory");
  const uint64_t t0 = now_ns();
  if (spin_ns)
    while (now_ns() - t0 < spin_ns) {
    }
  if (has_smem && threadIdx.x == 0 && smem[0] == 0x9e3779b9u) *sink = 1;  // touches shared memory; never taken
}

}  // namespace

int main(int argc, char** argv) {
  using namespace braid;
  const int reps = argc > 1 ? std::atoi(argv[1]) : 50;
  cudaStream_t s;
  BRAID_CUDA_CHECK(cudaStreamCreate(&s));
  uint32_t* sink = nullptr;
  BRAID_CUDA_CHECK(cudaMalloc(&sink, 64));
  BRAID_CUDA_CHECK(cudaFuncSetAttribute(spin_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 227 * 1024));
  bench::Timer timer(s);
  std::printf("%s, %d reps, L2 evicted before each, CUDA graph replays\n", bench::gpu_name().c_str(), reps);
  std::printf("%-44s %10s %12s\n", "launch", "timed_us", "outside_us");

  auto launch = [&](cudaStream_t st, int grid, size_t smem, uint64_t spin_ns, int trigger, int wait, bool pdl) {
    launch_kernel(LaunchCtx{st, pdl, {}}, spin_kernel, dim3(unsigned(grid)), dim3(384), smem, spin_ns, trigger, wait,
                  smem > 0 ? 1 : 0, sink);
  };
  const uint64_t spin = 10000;  // 10 us
  for (int grid : {1, 56, 128, 132})
    for (size_t smem : {size_t(0), size_t(200) * 1024, size_t(227) * 1024})
      for (int kernels : {1, 2})
        for (bool pdl : {false, true}) {
          if (kernels == 1 && pdl) continue;
          for (uint64_t sp : {uint64_t(0), spin}) {
            bench::Graph g(s, [&](cudaStream_t st) {
              launch(st, grid, smem, sp, kernels == 2 && pdl ? 1 : 0, 0, false);
              if (kernels == 2) launch(st, grid, smem, sp, 0, pdl ? 1 : 0, pdl);
            });
            const double us = timer.median_us([&] { g.launch(); }, reps, 5);
            char name[128];
            std::snprintf(name, sizeof name, "%d x %s grid %d smem %zuK spin %s", kernels,
                          kernels == 1 ? "kernel" : pdl ? "PDL" : "stream", grid, smem / 1024, sp ? "10us" : "0");
            std::printf("%-44s %10.2f %12.2f\n", name, us, us - double(sp) * 1e-3 * kernels);
          }
        }
  BRAID_CUDA_CHECK(cudaFree(sink));
  return 0;
}
