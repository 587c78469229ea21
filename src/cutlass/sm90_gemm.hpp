// A Hopper GEMM from CUTLASS 4.2 (TMA loads, wgmma, warp-specialized persistent cooperative kernel),
// behind a plain interface so that its templates stay in src/cutlass/ (one translation unit per scheduler).
//   D[M,N] = act(A[M,K] . B[K,N])   fp16 row-major in and out, fp32 accumulate, act = none | GeLU
//   (GeLU: the tanh form, CUTLASS's GELU_taylor -- the GeLU of braid's kernels and cuBLASLt's epilogue)
// A peer in the benchmarks: CUTLASS's persistent data-parallel scheduler, or its Stream-K scheduler.
#pragma once
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <memory>
#include <string>

namespace braid::cutlass_sm90 {

// The kernel: CUTLASS's cooperative 128x128x64 (two consumer warpgroups share a tile; the MLP peer),
// or another tile/cluster/schedule, to see what CUTLASS's collectives reach on a shape (braid-gemm
// --cutlass-shapes; plain epilogue, data-parallel, no PDL).
enum class GemmKernelShape {
  Cooperative128x128,
  Pingpong128x128,          // two consumer warpgroups, a 128x128 tile each, mainloops and epilogues alternating
  Pingpong128x128Cluster2,  // the same in 2x1 clusters (B multicast)
  Pingpong64x256,
  Cooperative128x256,
  Cooperative128x256Cluster2,
  Cooperative256x128Cluster2,
  // The transposed formulation, D^T = B^T A^T (sm90_gemm_transposed.cu): the weights are the MMA's M
  // operand, the tokens its N operand, as cuBLASLt's nvjet kernels run these shapes
  // (bench/results/gemm-192x192-vs-cublas-ncu-h100-20261127/): two consumer warpgroups splitting the tokens.
  Transposed192x192,          // 192 weight columns x 192 tokens, warpgroups of 192 x 96
  Transposed192x192Cluster2,  // ... in clusters of two along the weights (the token tile multicast)
  Transposed320x64Cluster4,   // 320 weight columns x 64 tokens (warpgroups 320 x 32), clusters of four along the tokens
  Transposed192x128,          // 192 weight columns x 128 tokens (warpgroups 192 x 64)
  Transposed256x128,          // 256 x 128 (warpgroups 256 x 64)
  Transposed128x256,          // 128 x 256 (warpgroups 128 x 128)
};
constexpr int kKernelShapes = int(GemmKernelShape::Transposed128x256) + 1;
// "coop-128x128", "pp-128x128", "pp-128x128-c2", "pp-64x256", "coop-128x256", "coop-128x256-c2",
// "coop-256x128-c2", "t-192x192", "t-192x192-c2", "t-320x64-c4", "t-192x128", "t-256x128", "t-128x256"; parse returns false on an unknown name.
const char* kernel_shape_name(GemmKernelShape k);
bool parse_kernel_shape(const std::string& name, GemmKernelShape& k);

struct GemmProblem {
  const __half* A = nullptr;
  const __half* B = nullptr;
  __half* D = nullptr;
  int M = 0, N = 0, K = 0;
  bool gelu = false;
  bool stream_k = false;  // CUTLASS's Stream-K tile scheduler instead of its data-parallel one
  GemmKernelShape shape = GemmKernelShape::Cooperative128x128;  // other shapes: data-parallel only
};

class Gemm {
 public:
  Gemm();
  ~Gemm();
  // Checks the problem (can_implement) and prepares it; returns an empty string or the reason.
  std::string prepare(const GemmProblem& p);
  // Enqueues the prepared problem; pdl: launch as a programmatic dependent of the previous kernel.
  void run(cudaStream_t s, bool pdl = false);
  std::string name() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace braid::cutlass_sm90
