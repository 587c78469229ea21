// The epilogue activations shared by braid's GEMM kernels (the Hopper GEMM's epilogue and the skinny
// GEMM), in one place so every kernel computes them with the same instructions.
#pragma once

namespace braid::act {

__device__ __forceinline__ float gelu_erf(float x) { return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f)); }
__device__ __forceinline__ float silu(float x) { return x / (1.0f + __expf(-x)); }

}  // namespace braid::act
