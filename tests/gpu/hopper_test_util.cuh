// Shared by the GPU tests of braid's Hopper kernels (GEMM, convolution): the sm_90 fixture, 16-bit
// device buffers with host copies, and the relative error against an fp32 reference.
#pragma once
#include <cmath>
#include <random>
#include <vector>

#include "braid/bench/half_bits.hpp"
#include "braid/kernels/hopper/gemm_config.hpp"
#include "braid/kernels/hopper/gemm_op.hpp"
#include "braid/runtime/chain.cuh"
#include "gpu_test_util.cuh"

namespace braid::hopper::testing {

class HopperTest : public GpuTest {
 protected:
  void SetUp() override {
    GpuTest::SetUp();
    if (IsSkipped()) return;
    int dev = 0, major = 0;
    cudaGetDevice(&dev);
    cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
    if (major != 9) GTEST_SKIP() << "the Hopper kernels need an sm_90 GPU";
  }
};

inline float to_float(uint16_t bits, DType d) { return bench::half_bits_to_float(bits, d == DType::BF16); }
inline uint16_t from_float(float f, DType d) { return bench::float_to_half_bits(f, d == DType::BF16); }

// A device buffer of 16-bit elements with its host copy.
struct Buf {
  std::vector<uint16_t> h;
  uint16_t* d = nullptr;
  explicit Buf(size_t n) : h(n) { BRAID_CUDA_CHECK(cudaMalloc(&d, n * 2)); }
  ~Buf() { cudaFree(d); }
  void random(std::mt19937& rng, float scale, DType dt) {
    std::uniform_real_distribution<float> u(-scale, scale);
    for (auto& x : h) x = from_float(u(rng), dt);
    BRAID_CUDA_CHECK(cudaMemcpy(d, h.data(), h.size() * 2, cudaMemcpyHostToDevice));
  }
  void poison() { BRAID_CUDA_CHECK(cudaMemset(d, 0xff, h.size() * 2)); }  // NaN in fp16 and bf16
  void download() { BRAID_CUDA_CHECK(cudaMemcpy(h.data(), d, h.size() * 2, cudaMemcpyDeviceToHost)); }
};

inline double rel_error(const std::vector<float>& ref, const Buf& got, DType dt) {
  double num = 0, den = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    const double g = to_float(got.h[i], dt);
    if (!std::isfinite(g)) return 1e30;
    num += (g - ref[i]) * (g - ref[i]);
    den += double(ref[i]) * ref[i];
  }
  return std::sqrt(num / den);
}

// Sets the process-wide lean-form switch (set_lean_forms, gemm_op.hpp) within a scope, and back to what it was after.
struct LeanFormsScope {
  bool previous = lean_forms_enabled();
  ~LeanFormsScope() { set_lean_forms(previous); }
};

}  // namespace braid::hopper::testing
