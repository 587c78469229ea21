// braid::skinny::SkinnyGemmOp: the weight-streaming GEMM for M <= 8 rows (skinny_gemm.cuh) behind a
// plain host interface, the counterpart of hopper::GemmOp for decode-sized problems.
//
//   skinny::SkinnyGemmOp g;
//   if (auto why = g.prepare({DType::F16, X, W, Y, M, N, K}, /*splits=*/8); !why.empty()) ...
//   g.run(stream);
//
// braid's tiles: (256 columns, all M rows), grid() = (ceil(N / 256), 1).
#pragma once
#include <cuda_runtime.h>

#include <memory>
#include <string>

#include "braid/core/stage.cuh"
#include "braid/kernels/hopper/gemm_op.hpp"

namespace braid::skinny {

class SkinnyGemmOp {
 public:
  SkinnyGemmOp();
  ~SkinnyGemmOp();
  SkinnyGemmOp(SkinnyGemmOp&&) noexcept;
  SkinnyGemmOp& operator=(SkinnyGemmOp&&) noexcept;

  // act must be None; M in 1..8; N a multiple of 8; splits >= 1 (K split over CTAs).
  static std::string can_implement(const hopper::GemmArgs& a, int splits);
  std::string prepare(const hopper::GemmArgs& a, int splits);

  Grid grid() const;
  TileShape tile() const;
  int ctas() const;
  std::string name() const;  // "skinny-s<splits>"

  void launch(const LaunchCtx& ctx) const;
  void run(cudaStream_t s, bool pdl = false, bool trigger = false) const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace braid::skinny
