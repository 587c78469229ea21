// GemmChain: a chain of simple_gemm stages on the GPU (buffers, random data, the braid::Chain, the
// launchers). Used by the GPU proof tests and the demo. Produced buffers are poisoned (NaN) before
// every run so that an unwritten or early-read element cannot pass a comparison.
#pragma once
#include <cuda_fp16.h>

#include <memory>
#include <vector>

#include "braid/bench/device_data.cuh"
#include "braid/kernels/simple_gemm.cuh"
#include "braid/runtime/chain.cuh"
#include "braid/workloads/gemm_chain_plan.hpp"

namespace braid::workloads {

struct GemmChainConfig {
  std::vector<GemmStageDesc> stages;
  std::vector<kernels::Epilogue> epilogues;  // per stage (default None)
  GemmTile tile{64, 64, 32};
  ChainOptions options;
  uint64_t seed = 1;
};

class GemmChain {
 public:
  explicit GemmChain(GemmChainConfig cfg) : cfg_(std::move(cfg)) {
    BRAID_REQUIRE(cfg_.tile.m == 64 && cfg_.tile.n == 64 && cfg_.tile.k == 32,
                  "simple_gemm supports 64x64x32 tiles only");
    plan_ = make_gemm_chain_plan("gemm-chain", cfg_.stages, cfg_.tile);
    const int n = int(cfg_.stages.size());
    std::vector<TileShape> shapes(n, TileShape{uint32_t(cfg_.tile.m), uint32_t(cfg_.tile.n)});
    chain_ = std::make_unique<Chain>(plan_, shapes, cfg_.options);
    cfg_.epilogues.resize(n, kernels::Epilogue::None);
    bufs_.resize(n);
    for (int i = 0; i < n; ++i) {
      const auto& d = cfg_.stages[i];
      Buffers& b = bufs_[i];
      if (d.a_from < 0) b.A = alloc(size_t(d.M) * d.K);
      b.B = alloc(size_t(d.K) * d.N);
      b.C = alloc(size_t(d.M) * d.N);
    }
    randomize(cfg_.seed);
    for (int i = 0; i < n; ++i) {
      chain_->set_launcher(i, [this, i](const LaunchCtx& ctx) {
        const GemmStageDesc& d = cfg_.stages[i];
        kernels::GemmOperands op;
        op.A = d.a_from >= 0 ? bufs_[d.a_from].C : bufs_[i].A;
        op.B = bufs_[i].B;
        op.C = bufs_[i].C;
        op.R = d.r_from >= 0 ? bufs_[d.r_from].C : nullptr;
        op.M = d.M;
        op.N = d.N;
        op.K = d.K;
        op.a_input = input_index(i, d.a_from);
        op.r_input = input_index(i, d.r_from);
        op.epi = cfg_.epilogues[i];
        const StageSpec& s = plan_.stages[i];
        // Non-persistent: one block per tile.
        launch_kernel(ctx, kernels::simple_gemm_kernel<64, 64, 32>, dim3(s.tiles()), dim3(kernels::kSimpleGemmThreads),
                      0, op, ctx.params);
      });
    }
  }
  ~GemmChain() {
    for (void* p : owned_) cudaFree(p);
  }

  // Fresh random inputs (A of external operands, all weights), scaled so outputs stay O(1).
  void randomize(uint64_t seed) {
    for (size_t i = 0; i < bufs_.size(); ++i) {
      const auto& d = cfg_.stages[i];
      const float sk = 1.0f / sqrtf(float(d.K));
      if (bufs_[i].A) fill_random(bufs_[i].A, size_t(d.M) * d.K, seed * 131 + 2 * i, 1.0f);
      fill_random(bufs_[i].B, size_t(d.K) * d.N, seed * 131 + 2 * i + 1, 2.0f * sk);
    }
    BRAID_CUDA_CHECK(cudaDeviceSynchronize());
  }
  void poison(cudaStream_t s) {
    for (size_t i = 0; i < bufs_.size(); ++i)
      BRAID_CUDA_CHECK(cudaMemsetAsync(bufs_[i].C, 0xff, bytes_of_output(int(i)), s));
  }
  void run(cudaStream_t s, Ordering o) { chain_->run(s, o); }

  Chain& chain() { return *chain_; }
  const Plan& plan() const { return plan_; }
  int num_stages() const { return int(bufs_.size()); }
  __half* output(int i) const { return bufs_[i].C; }
  size_t output_elems(int i) const { return size_t(cfg_.stages[i].M) * cfg_.stages[i].N; }
  size_t bytes_of_output(int i) const { return output_elems(i) * sizeof(__half); }
  const GemmChainConfig& config() const { return cfg_; }
  const __half* input_A(int i) const { return bufs_[i].A; }
  const __half* weights(int i) const { return bufs_[i].B; }

  std::vector<__half> download(int i) const {
    std::vector<__half> h(output_elems(i));
    BRAID_CUDA_CHECK(cudaMemcpy(h.data(), bufs_[i].C, bytes_of_output(i), cudaMemcpyDeviceToHost));
    return h;
  }

 private:
  struct Buffers {
    __half *A = nullptr, *B = nullptr, *C = nullptr;
  };
  __half* alloc(size_t n) {
    void* p = nullptr;
    BRAID_CUDA_CHECK(cudaMalloc(&p, n * sizeof(__half)));
    owned_.push_back(p);
    return static_cast<__half*>(p);
  }
  int input_index(int stage, int producer) const {
    if (producer < 0) return -1;
    const auto& in = chain_->inputs(stage);
    for (size_t k = 0; k < in.size(); ++k)
      if (in[k] == producer) return int(k);
    throw PlanError("internal: producer not among the stage's inputs");
  }

  GemmChainConfig cfg_;
  Plan plan_;
  std::unique_ptr<Chain> chain_;
  std::vector<Buffers> bufs_;
  std::vector<void*> owned_;
};

}  // namespace braid::workloads
