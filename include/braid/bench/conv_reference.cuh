// Reference 3x3 (R x S) convolution on the GPU for benchmarks: Y = act(bias + conv(X, Wt)), same
// padding, stride 1, NHWC / KRSC fp16 inputs, fp32 accumulation and fp32 output. Direct loops, one
// thread per output value: slow and simple, so that it is obviously right (the GPU tests check braid's
// kernels against a host reference instead).
#pragma once
#include <cuda_fp16.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "braid/runtime/chain.cuh"

namespace braid::bench {

template <int = 0>
__global__ void conv_reference_kernel(const __half* x, const __half* w, const __half* bias, float* y, int N, int H,
                                      int W, int C, int K, int R, int pad, bool relu) {
  const size_t total = size_t(N) * H * W * K;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < total; i += size_t(gridDim.x) * blockDim.x) {
    const int k = int(i % K);
    const size_t p = i / K;
    const int xw = int(p % W), h = int(p / W % H), n = int(p / W / H);
    float s = __half2float(bias[k]);
    for (int r = 0; r < R; ++r)
      for (int q = 0; q < R; ++q) {
        const int ih = h + r - pad, iw = xw + q - pad;
        if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
        const __half* px = x + ((size_t(n) * H + ih) * W + iw) * C;
        const __half* pw = w + ((size_t(k) * R + r) * R + q) * C;
        for (int c = 0; c < C; ++c) s = fmaf(__half2float(px[c]), __half2float(pw[c]), s);
      }
    y[i] = relu && s < 0.f ? 0.f : s;
  }
}

template <int = 0>
__global__ void float_to_half_kernel(const float* a, __half* b, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    b[i] = __float2half(a[i]);
}

inline void conv_reference(const __half* x, const __half* w, const __half* bias, float* y, int N, int H, int W, int C,
                           int K, bool relu, cudaStream_t s) {
  conv_reference_kernel<<<1024, 256, 0, s>>>(x, w, bias, y, N, H, W, C, K, 3, 1, relu);
  BRAID_CUDA_CHECK(cudaGetLastError());
}

// max |got - ref| / max |ref| over the whole tensor (got: fp16 on the device, ref: fp32 on the device);
// infinite when got holds a NaN or an infinity.
inline double max_rel_error(const __half* got, const float* ref, size_t n) {
  std::vector<__half> g(n);
  std::vector<float> r(n);
  BRAID_CUDA_CHECK(cudaMemcpy(g.data(), got, n * sizeof(__half), cudaMemcpyDeviceToHost));
  BRAID_CUDA_CHECK(cudaMemcpy(r.data(), ref, n * sizeof(float), cudaMemcpyDeviceToHost));
  double num = 0, den = 0;
  for (size_t i = 0; i < n; ++i) {
    const double v = __half2float(g[i]);
    if (!std::isfinite(v)) return INFINITY;
    num = std::max(num, std::fabs(v - r[i]));
    den = std::max(den, double(std::fabs(r[i])));
  }
  return den > 0 ? num / den : num;
}

}  // namespace braid::bench
