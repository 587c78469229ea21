// What the benchmarks' own timing charges a chain of n kernels that do nothing: a CUDA graph of n empty kernels
// (one CTA per SM), replayed between two CUDA events with the L2 evicted before each repetition -- exactly how every
// variant and every peer is timed. The physical floor max(FLOP/peak, bytes/bandwidth) leaves this out, so no
// implementation timed this way can reach the floor: a single launch already pays launch(1), and a chain of n
// kernels launch(n) (bench/micro/launch_overhead.cu measured 3.2-3.5 us for one kernel and 3.9-4.8 us for two on an
// H100, whatever the grid or shared memory). The benchmarks measure it in the same run as the floor and report
// floor / (floor + launch(1)): the most of the floor anything timed this way can reach.
#pragma once
#include <cuda_runtime.h>

#include <cstdio>
#include <string>

#include "braid/bench/harness.cuh"

namespace braid::bench {

template <int = 0>
__global__ void empty_chain_kernel(int trigger, int wait) {
  if (trigger) asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  if (wait) asm volatile("griddepcontrol.wait;" ::: "memory");
}

struct LaunchFloor {
  static constexpr int kMaxKernels = 3;
  double stream_us[kMaxKernels + 1] = {};  // [n]: n empty kernels in stream order
  double pdl_us[kMaxKernels + 1] = {};     // [n]: each kernel after the first a programmatic dependent (n >= 2)
  // The least a chain of n launches pays (stream order or PDL, whichever measured less).
  double best(int n) const {
    if (n <= 1) return stream_us[1];
    if (n > kMaxKernels) n = kMaxKernels;
    return pdl_us[n] > 0 && pdl_us[n] < stream_us[n] ? pdl_us[n] : stream_us[n];
  }
  std::string describe() const {
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "empty-kernel graphs (same timing): 1 kernel %.2f us, 2 %.2f (PDL %.2f), 3 %.2f (PDL %.2f)",
                  stream_us[1], stream_us[2], pdl_us[2], stream_us[3], pdl_us[3]);
    return buf;
  }
};

// Median over `reps` repetitions of each graph, timed by a Timer like the benchmarks' (L2 evicted before each).
inline LaunchFloor measure_launch_floor(cudaStream_t s, int reps = 30) {
  int dev = 0, sms = 0;
  BRAID_CUDA_CHECK(cudaGetDevice(&dev));
  BRAID_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  auto launch = [&](cudaStream_t st, int trigger, int wait, bool pdl) {
    launch_kernel(LaunchCtx{st, pdl, {}}, empty_chain_kernel<0>, dim3(unsigned(sms)), dim3(384), 0, trigger, wait);
  };
  LaunchFloor f;
  Timer timer(s);
  for (int n = 1; n <= LaunchFloor::kMaxKernels; ++n)
    for (bool pdl : {false, true}) {
      if (n == 1 && pdl) continue;
      Graph g(s, [&](cudaStream_t st) {
        for (int k = 0; k < n; ++k) launch(st, pdl && k + 1 < n ? 1 : 0, pdl && k > 0 ? 1 : 0, pdl && k > 0);
      });
      const double us = timer.median_us([&] { g.launch(); }, reps, 5);
      (pdl ? f.pdl_us : f.stream_us)[n] = us;
    }
  return f;
}

}  // namespace braid::bench
