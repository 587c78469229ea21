// The epilogue activations shared by braid's GEMM kernels (the Hopper GEMM's epilogue and the skinny
// GEMM), in one place so every kernel computes them with the same instructions.
//
// Why not erff and an IEEE division: the epilogue is unrolled over a thread's whole accumulator
// fragment (64-96 values), so each instruction of the activation is repeated that many times, and a
// kernel entered after another kernel function fetches that code cold: a 64x128 GEMM with GeLU ran
// 1.16-1.20x its own time when another braid kernel ran just before it, against 1.04-1.05x without the
// activation (bench/results/gemm-kernel-switch-h100-20261125-17258b2.log). erff's SASS carries a
// two-range polynomial with selects, and the division a slow-path branch; the forms below are
// straight-line code with two MUFU operations each.
#pragma once

namespace braid::act {

// erfc(z) for z >= 0 with a relative error below ~3e-7 everywhere (the Chebyshev-fitted form of Press
// et al., Numerical Recipes 6.2, "erfcc": fractional error < 1.2e-7, plus the approximate reciprocal
// and exponential), so 1 + erf(x) = erfc(-x) stays accurate in the negative tail, where GeLU's output
// is tiny but an fp16 value still.
__device__ __forceinline__ float erfc_nonneg(float z) {
  const float t = __fdividef(1.0f, 1.0f + 0.5f * z);  // (MUFU.RCP; 0 beyond 2^126, where erfc is 0)
  float p = 0.17087277f;
  p = fmaf(p, t, -0.82215223f);
  p = fmaf(p, t, 1.48851587f);
  p = fmaf(p, t, -1.13520398f);
  p = fmaf(p, t, 0.27886807f);
  p = fmaf(p, t, -0.18628806f);
  p = fmaf(p, t, 0.09678418f);
  p = fmaf(p, t, 0.37409196f);
  p = fmaf(p, t, 1.00002368f);
  p = fmaf(p, t, -1.26551223f);
  return t * __expf(fmaf(-z, z, p));
}

// GeLU with the erf form (PyTorch's default nn.GELU): 0.5 x (1 + erf(x / sqrt 2)), to ~3e-7 relative.
__device__ __forceinline__ float gelu_erf(float x) {
  const float z = fabsf(x) * 0.70710678118654752f;
  const float c = erfc_nonneg(z);  // 1 + erf(-|x|/sqrt 2)
  return 0.5f * x * (x >= 0.0f ? 2.0f - c : c);
}

// SiLU (SwiGLU's gate): x / (1 + e^-x) with the approximate division (x -> -inf: e^-x = inf, x * 1/inf
// = -0, as the exact quotient).
__device__ __forceinline__ float silu(float x) { return __fdividef(x, 1.0f + __expf(-x)); }

}  // namespace braid::act
