// braid's weight-streaming GEMM for a few rows (decode: M = batch <= 8 tokens): Y[M, N] = X[M, K] . W[K, N],
// fp16/bf16 in, fp32 accumulation, as a stage of a tile-synchronized chain.
//
// With M <= 8 a GEMM is a read of W at memory bandwidth; what matters is keeping enough bytes of W in
// flight and not wasting a tensor-core tile on 8 useful rows. So: CUDA cores, no shared-memory staging
// of W. A CTA owns 256 columns and a K range (split-K over CTAs for parallelism); each of its 8 warps
// streams every 8th row of W in its range, each lane 16 bytes (8 columns) per row, 4 rows in flight per
// lane (ld.global.nc, L1 no-allocate: W is never produced by the chain), multiplying by X held in
// shared memory as fp32. The warps' partial sums are added in warp order; K splits are added by the
// last CTA of a column tile to arrive, in split order: deterministic, so bit-identical in every order.
//
// braid's tile is (256 columns, all M rows): the CTA waits for the producer tiles of X's rows over its K
// range before reading X (skipped once the producer stage has completed), and the reducing CTA posts.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "braid/core/grid_stage.cuh"
#include "braid/core/stage.cuh"

namespace braid::skinny {

constexpr int kMaxRows = 8;
constexpr int kTileCols = 256;  // 32 lanes x 8 columns
constexpr int kWarps = 8;
constexpr int kThreads = kWarps * 32;
constexpr int kRowsInFlight = 8;  // W rows per lane per step (128 bytes in flight per lane)

struct SkinnyParams {
  const void* X = nullptr;  // [M, K]
  const void* W = nullptr;  // [K, N]
  void* Y = nullptr;        // [M, N]
  int M = 0, N = 0, K = 0;
  int splits = 1, k_per_split = 0;
  float* partials = nullptr;     // splits > 1: [col tiles][splits][M][256]
  uint32_t* arrivals = nullptr;  //             [col tiles], zero between launches
};

namespace detail {

__device__ __forceinline__ uint4 ld_stream(const void* p) {
  uint4 v;
  asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
}
__device__ __forceinline__ void unpack8(uint4 v, __half, float (&f)[8]) {
  const __half2* h = reinterpret_cast<const __half2*>(&v);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float2 t = __half22float2(h[i]);
    f[2 * i] = t.x;
    f[2 * i + 1] = t.y;
  }
}
__device__ __forceinline__ void unpack8(uint4 v, __nv_bfloat16, float (&f)[8]) {
  const __nv_bfloat162* h = reinterpret_cast<const __nv_bfloat162*>(&v);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float2 t = __bfloat1622float2(h[i]);
    f[2 * i] = t.x;
    f[2 * i + 1] = t.y;
  }
}
__device__ __forceinline__ float to_f(__half x) { return __half2float(x); }
__device__ __forceinline__ float to_f(__nv_bfloat16 x) { return __bfloat162float(x); }
__device__ __forceinline__ void store(__half* p, float v) { *p = __float2half_rn(v); }
__device__ __forceinline__ void store(__nv_bfloat16* p, float v) { *p = __float2bfloat16_rn(v); }

}  // namespace detail

// MR: rows computed (>= M, a power of two <= 8). Grid: (column tiles, splits). Dynamic shared memory:
// max(MR * k_per_split, kWarps * MR * 256) floats.
template <class T, int MR>
__global__ void __launch_bounds__(kThreads) skinny_gemm_kernel(const SkinnyParams p, const StageParams sp) {
  extern __shared__ __align__(16) float sm[];
  __shared__ BlockSync bs;
  __shared__ uint32_t s_last;
  begin_grid_block(sp, bs);
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int ct = blockIdx.x, split = blockIdx.y;
  const Tile tile{uint32_t(ct), 0, 0};
  const int n0 = ct * kTileCols, n = n0 + lane * 8;
  const int k_begin = split * p.k_per_split, k_end = min(p.K, k_begin + p.k_per_split);
  const int kn = max(0, k_end - k_begin);

  // X's rows over [k_begin, k_end), as fp32 in shared memory (produced: wait first, read through L2).
  if (kn > 0 && !producer_complete(sp, bs, 0) &&
      !wait_rect(sp, bs, 0, 0, uint32_t(p.M - 1), uint32_t(k_begin), uint32_t(k_end - 1), tile))
    return;
  const T* X = static_cast<const T*>(p.X);
  for (int i = tid; i < MR * kn; i += kThreads) {
    const int m = i / kn, k = i % kn;
    sm[m * kn + k] = m < p.M ? detail::to_f(__ldcg(X + size_t(m) * p.K + k_begin + k)) : 0.f;
  }
  __syncthreads();

  float acc[MR][8];
#pragma unroll
  for (int m = 0; m < MR; ++m)
#pragma unroll
    for (int j = 0; j < 8; ++j) acc[m][j] = 0.f;
  if (n < p.N) {
    const char* W = static_cast<const char*>(p.W) + (size_t(k_begin) * p.N + n) * sizeof(T);
    const size_t row_bytes = size_t(p.N) * sizeof(T);
    for (int k = warp; k < kn; k += kWarps * kRowsInFlight) {
      uint4 v[kRowsInFlight];
#pragma unroll
      for (int u = 0; u < kRowsInFlight; ++u) {
        const int kk = k + u * kWarps;
        v[u] = kk < kn ? detail::ld_stream(W + size_t(kk) * row_bytes) : make_uint4(0, 0, 0, 0);
      }
#pragma unroll
      for (int u = 0; u < kRowsInFlight; ++u) {
        const int kk = k + u * kWarps;
        if (kk >= kn) break;
        float w[8];
        detail::unpack8(v[u], T{}, w);
#pragma unroll
        for (int m = 0; m < MR; ++m) {
          const float x = sm[m * kn + kk];
#pragma unroll
          for (int j = 0; j < 8; ++j) acc[m][j] = fmaf(x, w[j], acc[m][j]);
        }
      }
    }
  }
  __syncthreads();  // X's slice is dead: the buffer now holds the warps' partial sums
#pragma unroll
  for (int m = 0; m < MR; ++m)
#pragma unroll
    for (int j = 0; j < 8; j += 4)
      *reinterpret_cast<float4*>(sm + (warp * MR + m) * kTileCols + lane * 8 + j) =
          make_float4(acc[m][j], acc[m][j + 1], acc[m][j + 2], acc[m][j + 3]);
  __syncthreads();
  // Thread tid sums column tid over the warps in warp order.
  const int c = tid, col = n0 + c;
  float sum[MR];
#pragma unroll
  for (int m = 0; m < MR; ++m) {
    float s = 0.f;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) s += sm[(w * MR + m) * kTileCols + c];
    sum[m] = s;
  }
  T* Y = static_cast<T*>(p.Y);
  bool post_tile = true;
  if (p.splits == 1) {
    if (col < p.N)
#pragma unroll
      for (int m = 0; m < MR; ++m)
        if (m < p.M) detail::store(Y + size_t(m) * p.N + col, sum[m]);
  } else {
    float* part = p.partials + (size_t(ct) * p.splits + split) * MR * kTileCols;
#pragma unroll
    for (int m = 0; m < MR; ++m) part[m * kTileCols + c] = sum[m];
    __threadfence();
    __syncthreads();
    if (tid == 0) s_last = atomicAdd(p.arrivals + ct, 1u) == uint32_t(p.splits - 1) ? 1u : 0u;
    __syncthreads();
    post_tile = s_last != 0;
    if (post_tile) {
      __threadfence();
      if (tid == 0) p.arrivals[ct] = 0;
      const float* base = p.partials + size_t(ct) * p.splits * MR * kTileCols;
      for (int m = 0; m < p.M; ++m) {
        float s = 0.f;
        int sidx = 0;
        for (; sidx + 4 <= p.splits; sidx += 4) {  // 4 loads in flight, added in split order
          float v[4];
#pragma unroll
          for (int u = 0; u < 4; ++u) v[u] = __ldcg(base + (size_t(sidx + u) * MR + m) * kTileCols + c);
#pragma unroll
          for (int u = 0; u < 4; ++u) s += v[u];
        }
        for (; sidx < p.splits; ++sidx) s += __ldcg(base + (size_t(sidx) * MR + m) * kTileCols + c);
        if (col < p.N) detail::store(Y + size_t(m) * p.N + col, s);
      }
    }
  }
  if (post_tile) post(sp, bs, tile);
  end_block(sp, bs);
}

}  // namespace braid::skinny
