// fp32 GPU references for the attention block (tests and braid-bench-attn): a plain tiled GEMM and a
// one-block-per-(query, head) attention with the same causal mask, cache layout and dropout bits as
// braid's kernel (dropout.hpp). Slow and simple on purpose: nothing shared with the kernels under test
// except the layout contract and the dropout counter.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstdint>

#include "braid/kernels/attention/dropout.hpp"
#include "braid/runtime/chain.cuh"

namespace braid::bench {

__device__ __forceinline__ float ref_to_float(float x) { return x; }
__device__ __forceinline__ float ref_to_float(__half x) { return __half2float(x); }
__device__ __forceinline__ float ref_to_float(__nv_bfloat16 x) { return __bfloat162float(x); }

// C[M, N] = A[M, K] . B[K, N], fp32 accumulation, all row-major.
template <class TA, class TB>
__global__ void ref_gemm_kernel(const TA* A, const TB* B, float* C, int M, int N, int K) {
  __shared__ float sa[16][17], sb[16][17];
  const int r = blockIdx.y * 16 + threadIdx.y, c = blockIdx.x * 16 + threadIdx.x;
  float acc = 0.f;
  for (int k0 = 0; k0 < K; k0 += 16) {
    const int ka = k0 + threadIdx.x, kb = k0 + threadIdx.y;
    sa[threadIdx.y][threadIdx.x] = r < M && ka < K ? ref_to_float(A[size_t(r) * K + ka]) : 0.f;
    sb[threadIdx.y][threadIdx.x] = kb < K && c < N ? ref_to_float(B[size_t(kb) * N + c]) : 0.f;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < 16; ++k) acc += sa[threadIdx.y][k] * sb[k][threadIdx.x];
    __syncthreads();
  }
  if (r < M && c < N) C[size_t(r) * N + c] = acc;
}

template <class TA, class TB>
void ref_gemm(const TA* A, const TB* B, float* C, int M, int N, int K, cudaStream_t s = nullptr) {
  ref_gemm_kernel<<<dim3((N + 15) / 16, (M + 15) / 16), dim3(16, 16), 0, s>>>(A, B, C, M, N, K);
  BRAID_CUDA_CHECK(cudaGetLastError());
}

struct RefAttentionArgs {
  int B = 1, S_new = 1, S_cached = 0, S_max = 0, NH = 1;
  bool causal = true;
  float scale = 0;  // 0: 1/sqrt(128)
  uint32_t drop_threshold = 0;
  float keep_scale = 1;
  uint64_t seed = 0;
};

// out[B*S_new, NH*128] (fp32) from qkv [B*S_new, 3*NH*128] and the cache [B, S_max, NH*128].
// One block of 128 threads per (query row, head); scores in dynamic shared memory.
template <class TQ, class TC>
__global__ void ref_attention_kernel(const TQ* qkv, const TC* kc, const TC* vc, float* out, RefAttentionArgs a) {
  extern __shared__ float scores[];
  __shared__ float q[128], red[128];
  const int row = blockIdx.x, h = blockIdx.y, t = threadIdx.x;
  const int b = row / a.S_new, i = row % a.S_new, HD = a.NH * 128;
  const int qpos = a.S_cached + i;
  const int n_keys = a.causal ? qpos + 1 : a.S_cached + a.S_new;
  const float scale = a.scale > 0 ? a.scale : rsqrtf(128.f);
  q[t] = ref_to_float(qkv[size_t(row) * 3 * HD + h * 128 + t]);
  __syncthreads();
  auto key = [&](int kp, int d, bool v) -> float {
    if (kp < a.S_cached) return ref_to_float((v ? vc : kc)[(size_t(b) * a.S_max + kp) * HD + h * 128 + d]);
    return ref_to_float(qkv[size_t(b * a.S_new + kp - a.S_cached) * 3 * HD + (v ? 2 : 1) * HD + h * 128 + d]);
  };
  float mx = -INFINITY;
  for (int kp = t; kp < n_keys; kp += 128) {
    float s = 0.f;
    for (int d = 0; d < 128; ++d) s += q[d] * key(kp, d, false);
    scores[kp] = s * scale;
    mx = fmaxf(mx, s * scale);
  }
  red[t] = mx;
  __syncthreads();
  for (int w = 64; w > 0; w /= 2) {
    if (t < w) red[t] = fmaxf(red[t], red[t + w]);
    __syncthreads();
  }
  mx = red[0];
  __syncthreads();
  float sum = 0.f;
  for (int kp = t; kp < n_keys; kp += 128) {
    const float e = expf(scores[kp] - mx);
    scores[kp] = e;
    sum += e;
  }
  red[t] = sum;
  __syncthreads();
  for (int w = 64; w > 0; w /= 2) {
    if (t < w) red[t] += red[t + w];
    __syncthreads();
  }
  sum = red[0];
  float acc = 0.f;
  for (int kp = 0; kp < n_keys; ++kp) {
    const bool keep = attention::dropout_keep(a.seed, a.drop_threshold, uint32_t(b * a.NH + h), uint32_t(qpos), uint32_t(kp));
    if (keep) acc += scores[kp] * a.keep_scale * key(kp, t, true);
  }
  out[size_t(row) * HD + h * 128 + t] = acc / sum;
}

template <class TQ, class TC>
void ref_attention(const TQ* qkv, const TC* kc, const TC* vc, float* out, const RefAttentionArgs& a, cudaStream_t s = nullptr) {
  const size_t smem = size_t(a.S_cached + a.S_new) * sizeof(float);
  auto k = ref_attention_kernel<TQ, TC>;
  BRAID_CUDA_CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  k<<<dim3(uint32_t(a.B * a.S_new), uint32_t(a.NH)), 128, smem, s>>>(qkv, kc, vc, out, a);
  BRAID_CUDA_CHECK(cudaGetLastError());
}

}  // namespace braid::bench
