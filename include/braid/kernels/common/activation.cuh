// The epilogue activations shared by braid's GEMM kernels (the Hopper GEMM's epilogue and the skinny
// GEMM), in one place so every kernel computes them with the same instructions.
//
// Why short SFU-based forms: the epilogue is unrolled over a thread's whole accumulator fragment (64-96
// values), so each instruction of the activation is repeated that many times, and a kernel entered
// after another kernel function fetches that code cold: a 64x128 GEMM with GeLU ran 1.16-1.20x its own
// time when another braid kernel ran just before it, against 1.04-1.05x without the activation
// (bench/results/gemm-kernel-switch-h100-20261125-17258b2.log). erff's SASS carries a two-range
// polynomial with selects, and an IEEE division a slow-path branch; the forms below are straight-line
// code with one or two MUFU operations.
#pragma once
#include <cmath>

namespace braid::act {

// GeLU in its tanh form, 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))): the GeLU of GPT-2 / GPT-3
// and of cuBLASLt's GELU epilogue (the peer braid's GPT-3 MLP is measured against; GPU test
// CublasLtGeluIsTheTanhForm), with tanh from the SFU (MUFU.TANH) as cuBLASLt's epilogue evaluates it:
// 5 FP32 instructions and one MUFU per value, where the erf form braid used before took ~18 and two
// (bench/results/energy-ncu-h200-20261129-f27d150/: ~6 M more warp instructions at T = 2048, and the
// epilogue of a cooperative kernel is not hidden under MMAs). tanh.approx.f32's relative error is
// about 2^-11, so the result is within ~2.5e-4 |x| of the exact tanh form (half an fp16 ulp and less
// for x > 0; in the negative tail, where GeLU is tiny, absolute and not relative).
__device__ __forceinline__ float tanh_approx(float x) {
  float y;
  asm("tanh.approx.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
__device__ __forceinline__ float gelu(float x) {
  const float u = x * fmaf(0.0356774081f, x * x, 0.7978845608f);  // sqrt(2/pi) (x + 0.044715 x^3)
  const float hx = 0.5f * x;
  return fmaf(hx, tanh_approx(u), hx);  // (x = -inf: -inf + inf = NaN, as the exact form's -inf * 0)
}

// The same function in double precision: the references of braid's tests and benchmarks.
__host__ __device__ inline double gelu_reference(double x) {
  return 0.5 * x * (1.0 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
}

// SiLU (SwiGLU's gate): x / (1 + e^-x) with the approximate division (x -> -inf: e^-x = inf, x * 1/inf
// = -0, as the exact quotient).
__device__ __forceinline__ float silu(float x) { return __fdividef(x, 1.0f + __expf(-x)); }

}  // namespace braid::act
