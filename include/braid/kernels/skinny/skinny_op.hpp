// braid::skinny::SkinnyGemmOp: the weight-streaming GEMM for M <= 64 rows (skinny_gemm.cuh) behind a
// plain host interface, the counterpart of hopper::GemmOp for decode-sized and small-batch problems.
//
//   skinny::SkinnyGemmOp g;
//   if (auto why = g.prepare({DType::F16, X, W, Y, M, N, K, Activation::GeLU}, SkinnyConfig{}); !why.empty()) ...
//   g.run(stream);
//
// braid's tiles: (all M rows, 128 output columns; 64 with SwiGLU), grid() = (ceil(N / 128), 1).
// The launch is persistent: ctas() CTAs share the tiles x K-chunks evenly (stream-K).
#pragma once
#include <cuda_runtime.h>

#include <memory>
#include <string>

#include "braid/core/stage.cuh"
#include "braid/kernels/hopper/gemm_op.hpp"
#include "braid/kernels/skinny/skinny_config.hpp"
#include "braid/kernels/skinny/skinny_pack.hpp"  // (packed_weight_bytes, for pack_weights callers)

namespace braid::skinny {

class SkinnyGemmOp {
 public:
  SkinnyGemmOp();
  ~SkinnyGemmOp();
  SkinnyGemmOp(SkinnyGemmOp&&) noexcept;
  SkinnyGemmOp& operator=(SkinnyGemmOp&&) noexcept;

  // M in 1..64; N and K multiples of 8 (16-byte rows); act None, GeLU or SwiGLU (N a multiple of
  // 128, W packed by hopper::pack_swiglu_columns with tile_n = 128, output N / 2 wide); X, W and Y
  // 16-byte aligned. With c.packed, prepare() copies W into the packed layout (skinny_pack.hpp; the op's own
  // copy, packed_weight_bytes(K, N) of device memory) after the device's work so far is done, and the launches
  // read that copy: weights changed later are not seen until the next prepare(). A caller who keeps its weights
  // packed (pack_weights) passes them as w_packed instead: no copy (a.B is then not read, and may be null).
  static std::string can_implement(const hopper::GemmArgs& a, const SkinnyConfig& c);
  std::string prepare(const hopper::GemmArgs& a, const SkinnyConfig& c = {}, const void* w_packed = nullptr);

  Grid grid() const;
  TileShape tile() const;
  int ctas() const;
  int ctas_per_sm() const;  // resident CTAs per SM of this launch (the plan's occupancy)
  std::string name() const;

  void launch(const LaunchCtx& ctx) const;
  void run(cudaStream_t s, bool pdl = false, bool trigger = false) const;
  // Diagnostic: later launches record kSkinnyPhases stamps and the SM per CTA to `stamps` (device memory, ctas() x
  // kSkinnyPhaseSlots values; SkinnyParams::phase_ns) and run the general form; nullptr turns it off.
  void set_phases(unsigned long long* stamps);

  struct Impl;
  const Impl& impl() const;  // (SkinnyChainOp reads the prepared parameters)

 private:
  std::unique_ptr<Impl> impl_;
};

// W [K, N] (2-byte elements, 16-byte aligned) -> out, packed_weight_bytes(K, N) bytes: the packed copy a "-pk"
// configuration reads (skinny_pack.hpp), written on stream s. prepare() makes its own; this is for callers who
// keep one copy of their weights in the packed layout. Returns "" or what is wrong.
std::string pack_weights(const void* W, int K, int N, void* out, cudaStream_t s);

// Two dependent skinny GEMMs as one persistent launch (skinny_chain.cuh): GEMM 1 writes H (its D),
// GEMM 2 reads it as X (its A), and GEMM 2's chunks wait for the H tiles they read through the chain's
// semaphores of stage 0 -- tile synchronization inside one kernel. Each GEMM's work split is exactly
// its SkinnyGemmOp's (so the output is bit-identical to the two run one after the other); both share
// one ring (c1.stages == c2.stages). The launch stands for two chain stages: launch() takes both
// stages' parameters, which must have synchronization on (kSync: the phases have no stream order).
class SkinnyChainOp {
 public:
  SkinnyChainOp();
  ~SkinnyChainOp();
  SkinnyChainOp(SkinnyChainOp&&) noexcept;
  SkinnyChainOp& operator=(SkinnyChainOp&&) noexcept;

  std::string prepare(const hopper::GemmArgs& a1, const SkinnyConfig& c1, const hopper::GemmArgs& a2,
                      const SkinnyConfig& c2);
  int ctas() const;         // the launch's CTAs (the larger phase's)
  int ctas_per_sm() const;  // resident CTAs per SM
  std::string name() const;
  void launch(const LaunchCtx& ctx0, const StageParams& sp1) const;  // ctx0: stage 0's launch, sp1: stage 1's
  // Diagnosis: every later launch writes per-CTA %globaltimer stamps (skinny_chain.cuh's ChainEvent,
  // kChainEvents per CTA) to `stamps` (device memory, ctas() x 6 values); nullptr turns it off.
  void set_timeline(unsigned long long* stamps);

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace braid::skinny
