// A simple tiled fp16 GEMM (wmma tensor cores, fp32 accumulate) with braid hooks. Its purpose is to
// prove the synchronization mechanism, not speed (the Hopper TMA/wgmma kernels live elsewhere).
//
//   C[M,N] = act(A[M,K] . B[K,N] + R[M,N])      row-major, R optional
//
// A and R may be produced by other stages of the chain (inputs a_input / r_input of StageParams):
// before loading the A k-slice of a tile, the block waits for the producer tiles under it; before
// the epilogue reads R, for the producer tiles under the output tile. B (weights) is never produced,
// so with kWeightsFirst (optimization R) its slice is loaded before the wait, overlapping the wait.
// Produced operands are read with ld.global.cg (L2, coherent), never through the non-coherent path.
#pragma once
#include <cuda_fp16.h>
#include <mma.h>

#include "braid/core/stage.cuh"
#include "braid/kernels/common/activation.cuh"

namespace braid::kernels {

enum class Epilogue : int { None = 0, ReLU = 1, GeLU = 2 };

struct GemmOperands {
  const __half* A = nullptr;  // [M, K]
  const __half* B = nullptr;  // [K, N]
  __half* C = nullptr;        // [M, N]
  const __half* R = nullptr;  // optional [M, N] residual
  int M = 0, N = 0, K = 0;
  int a_input = -1;  // index into StageParams::inputs of A's producer, -1 if A is not produced
  int r_input = -1;  // likewise for R
  Epilogue epi = Epilogue::None;
};

__device__ __forceinline__ __half ld_produced(const __half* p) {
  return __ushort_as_half(__ldcg(reinterpret_cast<const unsigned short*>(p)));
}

__device__ __forceinline__ float apply_epilogue(float v, Epilogue e) {
  if (e == Epilogue::ReLU) return v > 0.f ? v : 0.f;
  if (e == Epilogue::GeLU) return act::gelu(v);  // (the Hopper kernels' GeLU: one meaning in braid)
  return v;
}

constexpr int kSimpleGemmThreads = 128;

template <int BM = 64, int BN = 64, int BK = 32>
__global__ void __launch_bounds__(kSimpleGemmThreads) simple_gemm_kernel(GemmOperands op, StageParams sp) {
  using namespace nvcuda;
  static_assert(BM == 64 && BN == 64 && BK % 16 == 0, "4 warps of 32x32");
  __shared__ __align__(32) __half As[BM][BK + 8];
  __shared__ __align__(32) __half Bs[BK][BN + 8];
  __shared__ __align__(32) float Cs[BM][BN + 4];
  __shared__ BlockSync bs;

  const int tid = threadIdx.x, warp = tid / 32;
  const int wm = (warp / 2) * 32, wn = (warp % 2) * 32;
  const bool weights_first = sp.has(kWeightsFirst);
  // 16-byte loads when every row starts 16-byte aligned (cudaMalloc'd bases, K and N multiples of 8).
  const bool vec = op.K % 8 == 0 && op.N % 8 == 0 && (reinterpret_cast<uintptr_t>(op.A) & 15) == 0 &&
                   (reinterpret_cast<uintptr_t>(op.B) & 15) == 0;

  begin_block(sp, bs);
  Tile t;
  while (next_tile(sp, bs, t)) {
    const int m0 = int(t.y) * BM, n0 = int(t.x) * BN;
    const int m_last = min(m0 + BM, op.M) - 1, n_last = min(n0 + BN, op.N) - 1;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[2][2];
#pragma unroll
    for (int i = 0; i < 2; ++i)
#pragma unroll
      for (int j = 0; j < 2; ++j) wmma::fill_fragment(acc[i][j], 0.f);

    ColumnWaiter a_waiter;
    for (int k0 = 0; k0 < op.K; k0 += BK) {
      auto load_b = [&] {
        if (vec) {  // 16-byte chunks of 8 halves; a chunk is entirely in or out of bounds
          for (int e = tid; e < BK * BN / 8; e += kSimpleGemmThreads) {
            const int r = e / (BN / 8), c = (e % (BN / 8)) * 8, k = k0 + r, n = n0 + c;
            uint4 v = make_uint4(0, 0, 0, 0);
            if (k < op.K && n < op.N) v = *reinterpret_cast<const uint4*>(op.B + size_t(k) * op.N + n);
            *reinterpret_cast<uint4*>(&Bs[r][c]) = v;
          }
          return;
        }
        for (int e = tid; e < BK * BN; e += kSimpleGemmThreads) {
          const int r = e / BN, c = e % BN, k = k0 + r, n = n0 + c;
          Bs[r][c] = (k < op.K && n < op.N) ? op.B[size_t(k) * op.N + n] : __float2half(0.f);
        }
      };
      if (weights_first) load_b();
      if (op.a_input >= 0 &&
          !a_waiter.wait(sp, bs, uint32_t(op.a_input), uint32_t(m0), uint32_t(m_last), uint32_t(k0),
                         uint32_t(min(k0 + BK, op.K) - 1), t))
        return;  // a bounded wait gave up: the host reports it
      if (vec) {
        for (int e = tid; e < BM * BK / 8; e += kSimpleGemmThreads) {
          const int r = e / (BK / 8), c = (e % (BK / 8)) * 8, m = m0 + r, k = k0 + c;
          uint4 v = make_uint4(0, 0, 0, 0);
          if (m < op.M && k < op.K) {
            const uint4* src = reinterpret_cast<const uint4*>(op.A + size_t(m) * op.K + k);
            v = op.a_input >= 0 ? __ldcg(src) : *src;  // produced data: L2 (coherent) load
          }
          *reinterpret_cast<uint4*>(&As[r][c]) = v;
        }
      } else {
        for (int e = tid; e < BM * BK; e += kSimpleGemmThreads) {
          const int r = e / BK, c = e % BK, m = m0 + r, k = k0 + c;
          const __half* src = op.A + size_t(m) * op.K + k;
          As[r][c] = (m < op.M && k < op.K) ? (op.a_input >= 0 ? ld_produced(src) : *src) : __float2half(0.f);
        }
      }
      if (!weights_first) load_b();
      __syncthreads();
#pragma unroll
      for (int kk = 0; kk < BK; kk += 16) {
        wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa[2];
        wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> fb[2];
#pragma unroll
        for (int i = 0; i < 2; ++i) wmma::load_matrix_sync(fa[i], &As[wm + 16 * i][kk], BK + 8);
#pragma unroll
        for (int j = 0; j < 2; ++j) wmma::load_matrix_sync(fb[j], &Bs[kk][wn + 16 * j], BN + 8);
#pragma unroll
        for (int i = 0; i < 2; ++i)
#pragma unroll
          for (int j = 0; j < 2; ++j) wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
      }
      __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < 2; ++i)
#pragma unroll
      for (int j = 0; j < 2; ++j)
        wmma::store_matrix_sync(&Cs[wm + 16 * i][wn + 16 * j], acc[i][j], BN + 4, wmma::mem_row_major);
    if (op.R != nullptr && op.r_input >= 0 &&
        !wait_rect(sp, bs, uint32_t(op.r_input), uint32_t(m0), uint32_t(m_last), uint32_t(n0), uint32_t(n_last), t))
      return;
    __syncthreads();
    for (int e = tid; e < BM * BN; e += kSimpleGemmThreads) {
      const int r = e / BN, c = e % BN, m = m0 + r, n = n0 + c;
      if (m < op.M && n < op.N) {
        float v = Cs[r][c];
        if (op.R != nullptr) {
          const __half* src = op.R + size_t(m) * op.N + n;
          v += __half2float(op.r_input >= 0 ? ld_produced(src) : *src);
        }
        op.C[size_t(m) * op.N + n] = __float2half(apply_epilogue(v, op.epi));
      }
    }
    post(sp, bs, t);
  }
  end_block(sp, bs);
}

}  // namespace braid::kernels
