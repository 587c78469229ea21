// A Hopper GEMM from CUTLASS 4.2 (TMA loads, wgmma, warp-specialized persistent cooperative kernel),
// behind a plain interface so that its templates compile in one translation unit.
//   D[M,N] = act(A[M,K] . B[K,N])   fp16 row-major in and out, fp32 accumulate, act = none | GeLU
// Today it is a peer in the benchmarks and the base the braid-hooked Hopper kernel grows from.
#pragma once
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <memory>
#include <string>

namespace braid::cutlass_sm90 {

struct GemmProblem {
  const __half* A = nullptr;
  const __half* B = nullptr;
  __half* D = nullptr;
  int M = 0, N = 0, K = 0;
  bool gelu = false;
};

class Gemm {
 public:
  Gemm();
  ~Gemm();
  // Checks the problem (can_implement) and prepares it; returns an empty string or the reason.
  std::string prepare(const GemmProblem& p);
  // Enqueues the prepared problem; pdl: launch as a programmatic dependent of the previous kernel.
  void run(cudaStream_t s, bool pdl = false);
  static const char* name();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace braid::cutlass_sm90
