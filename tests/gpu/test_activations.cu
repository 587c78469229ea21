// The epilogue activations (kernels/common/activation.cuh) against double-precision references on
// the device, over the range an fp16/bf16 GEMM produces and beyond: GeLU (erf form) and SiLU to 2e-6
// relative for |x| <= 4 and 1e-4 beyond (__expf's argument rounding grows with x^2: 1.3e-6 at gelu(-6)
// = -6e-9, 1.7e-5 at gelu(-11.6) = -4e-30; fp16 resolves 5e-4, and gelu(x < -4) is below 1.3e-4),
// the negative tails included (where 1 + erf cancels), and NaN / infinity as the exact functions give
// them (a NaN -- a race reading poison -- must stay visible).
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "braid/runtime/chain.cuh"  // (BRAID_CUDA_CHECK)
#include "braid/kernels/common/activation.cuh"
#include "gpu_test_util.cuh"

namespace {

__global__ void eval_activations(const float* x, float* gelu, float* silu, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    gelu[i] = braid::act::gelu_erf(x[i]);
    silu[i] = braid::act::silu(x[i]);
  }
}

struct Values {
  std::vector<float> gelu, silu;
};

Values evaluate(const std::vector<float>& x) {
  const int n = int(x.size());
  float *dx, *dg, *ds;
  BRAID_CUDA_CHECK(cudaMalloc(&dx, n * sizeof(float)));
  BRAID_CUDA_CHECK(cudaMalloc(&dg, n * sizeof(float)));
  BRAID_CUDA_CHECK(cudaMalloc(&ds, n * sizeof(float)));
  BRAID_CUDA_CHECK(cudaMemcpy(dx, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  BRAID_CUDA_CHECK(cudaMemset(dg, 0xff, n * sizeof(float)));
  BRAID_CUDA_CHECK(cudaMemset(ds, 0xff, n * sizeof(float)));
  eval_activations<<<(n + 255) / 256, 256>>>(dx, dg, ds, n);
  BRAID_CUDA_CHECK(cudaGetLastError());
  Values v{std::vector<float>(n), std::vector<float>(n)};
  BRAID_CUDA_CHECK(cudaMemcpy(v.gelu.data(), dg, n * sizeof(float), cudaMemcpyDeviceToHost));
  BRAID_CUDA_CHECK(cudaMemcpy(v.silu.data(), ds, n * sizeof(float), cudaMemcpyDeviceToHost));
  cudaFree(dx);
  cudaFree(dg);
  cudaFree(ds);
  return v;
}

}  // namespace

class ActivationTest : public GpuTest {};

TEST_F(ActivationTest, GeluAndSiluMatchDoublePrecision) {
  std::vector<float> x;
  for (int i = -30000; i <= 30000; ++i) x.push_back(float(i) * 4e-4f);  // [-12, 12]
  for (float m : {1e-30f, 1e-12f, 1e-6f, 1e-3f, 20.f, 60.f, 80.f, 1e4f}) {
    x.push_back(m);
    x.push_back(-m);
  }
  const Values v = evaluate(x);
  double worst_gelu = 0, worst_silu = 0;
  int bad = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double xi = x[i];
    const double g = 0.5 * xi * std::erfc(-xi / std::sqrt(2.0));  // no cancellation in the tail
    const double s = xi / (1.0 + std::exp(-xi));
    // (relative where the reference is a normal float; below, the float result's own resolution)
    auto rel = [](double got, double want) {
      return std::abs(got - want) / std::max(std::abs(want), double(std::numeric_limits<float>::min()));
    };
    worst_gelu = std::max(worst_gelu, rel(v.gelu[i], g));
    worst_silu = std::max(worst_silu, rel(v.silu[i], s));
    const double tol = std::abs(xi) <= 4 ? 2e-6 : 1e-4;
    if (rel(v.gelu[i], g) >= tol && ++bad <= 5)
      ADD_FAILURE() << "gelu(" << x[i] << ") = " << v.gelu[i] << ", want " << g << " (relative error " << rel(v.gelu[i], g) << ")";
    if (rel(v.silu[i], s) >= tol && ++bad <= 5)
      ADD_FAILURE() << "silu(" << x[i] << ") = " << v.silu[i] << ", want " << s << " (relative error " << rel(v.silu[i], s) << ")";
  }
  EXPECT_EQ(bad, 0) << "points outside the tolerance";
  std::printf("  worst relative error: gelu %.2e, silu %.2e over %zu points\n", worst_gelu, worst_silu, x.size());
}

TEST_F(ActivationTest, NanAndInfinityBehaveAsTheExactFunctions) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const Values v = evaluate({nan, inf, -inf, 0.f, -0.f});
  EXPECT_TRUE(std::isnan(v.gelu[0]));
  EXPECT_TRUE(std::isnan(v.silu[0]));
  EXPECT_EQ(v.gelu[1], inf);
  EXPECT_EQ(v.silu[1], inf);
  // (gelu(-inf) and silu(-inf) are NaN, as with erff and an IEEE division: -inf * 0, -inf / inf)
  EXPECT_EQ(v.gelu[3], 0.f);
  EXPECT_EQ(v.silu[3], 0.f);
  EXPECT_EQ(v.gelu[4], 0.f);
}
