// braid's fused attention kernel (flash-style: S = Q.K^T, online softmax, dropout, O = P.V, never
// writing S or P), head size 128, as a stage of a tile-synchronized chain.
//
// Layout (one tensor-parallel GPU, NH heads of 128): the QKV GEMM's output row t = b * S_new + i
// holds [Q heads | K heads | V heads]; the cache holds K and V of earlier tokens as [B, S_max, NH*128];
// O is [B * S_new, NH*128] -- row-major, so the output GEMM reads it as its A operand. Keys of a
// query row are the S_cached cached ones, then the S_new new ones (causal: up to its own position).
//
// braid's tile is (x = head, y = block of q_rows query rows of one batch): it waits for the QKV tiles
// holding its Q rows, then, one 64-key block at a time, for the tiles holding those keys' K and V
// (cached keys need no wait), and posts O's tile once it is stored. Key splits (decode: few query
// rows, many keys) are CTAs of the same tile (blockIdx.z): each writes fp32 partials, and the last to
// arrive (counter per tile) merges them in split order -- deterministic -- stores O and posts.
//
// CTA: kWarps warps, 16 query rows each (BM = 16 * kWarps); K and V blocks double-buffered in shared
// memory by cp.async (XOR-swizzled 16-byte chunks: ldmatrix conflict-free); mma.sync m16n8k16.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "braid/core/stage.cuh"
#include "braid/kernels/attention/dropout.hpp"
#include "braid/kernels/attention/mma_sm80.cuh"

namespace braid::attention {

constexpr int kHeadDim = 128;
constexpr int kKeyBlock = 64;
constexpr int kRowBytes = kHeadDim * 2;  // one head row in shared memory: 16 chunks of 16 bytes

struct FlashParams {
  const void* qkv = nullptr;  // [B * S_new, 3 * NH * 128]
  uint32_t qkv_ld = 0;        // elements per row
  void* k_cache = nullptr;    // [B, S_max, NH * 128]; may be null when S_cached == 0 and !write_cache
  void* v_cache = nullptr;
  uint32_t cache_ld = 0;          // NH * 128
  uint64_t cache_bstride = 0;     // S_max * NH * 128
  void* o = nullptr;              // [B * S_new, NH * 128]
  uint32_t o_ld = 0;
  int B = 0, S_new = 0, S_cached = 0, NH = 0;
  int q_rows = 0;    // query rows per braid tile: min(BM, S_new)
  int q_blocks = 0;  // tiles per batch along the queries
  int splits = 1, split_keys = 0;  // key splits per tile, keys per split (a multiple of kKeyBlock)
  float scale_log2 = 0;            // softmax scale * log2(e)
  uint32_t drop_threshold = 0;     // 0: no dropout
  float keep_scale = 1;            // 1 / (1 - p)
  uint64_t seed = 0;
  int causal = 1;
  int write_cache = 0;  // split 0 of each tile copies its new tokens' K, V into the cache
  float* part_o = nullptr;     // splits > 1: [tiles, splits, q_rows, 128]
  float* part_ml = nullptr;    //             [tiles, splits, q_rows, 2] (running max in log2 units, sum)
  uint32_t* arrivals = nullptr;  //           [tiles], zero between launches
};

namespace detail {

// Byte offset of 16-byte chunk `chunk` of row r in a [rows][128] tile: chunks XOR-swizzled by r % 8,
// so the 8 rows one ldmatrix phase reads fall in 8 different bank groups.
__device__ __forceinline__ uint32_t swz(int r, int chunk) { return uint32_t(r * kRowBytes + ((chunk ^ (r & 7)) << 4)); }

}  // namespace detail

template <class T, int kWarps>
__global__ void __launch_bounds__(kWarps * 32) flash_attention_kernel(const FlashParams p, const StageParams sp) {
  using M = mma::Mma<T>;
  constexpr int kThreads = kWarps * 32, BM = kWarps * 16, D = kHeadDim;
  extern __shared__ __align__(128) unsigned char smem[];
  __shared__ BlockSync bs;
  __shared__ uint32_t s_last;
  const uint32_t s_q = mma::smem_u32(smem);
  const uint32_t s_k = s_q + BM * kRowBytes;
  const uint32_t s_v = s_k + 2 * kKeyBlock * kRowBytes;

  begin_block(sp, bs);
  if (!sp.has(kSync)) ptx::pdl_wait_primary();  // stream order (possibly PDL-launched)
  if (sp.trace != nullptr && threadIdx.x == 0) {
    bs.t_start = ptx::globaltimer_ns();
    bs.wait_ns = 0;
  }

  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int h = blockIdx.x, y = blockIdx.y, split = blockIdx.z;
  const Tile tile{uint32_t(h), uint32_t(y), 0};
  const int b = y / p.q_blocks, q0 = (y % p.q_blocks) * p.q_rows;
  const int q_valid = min(p.q_rows, p.S_new - q0);
  const int row0 = b * p.S_new + q0;  // first row of this tile in QKV and O
  const uint32_t HD = uint32_t(p.NH) * D;
  const int key_end = p.causal ? p.S_cached + q0 + q_valid : p.S_cached + p.S_new;
  const int k_begin = split * p.split_keys;
  const int k_end = min(key_end, k_begin + p.split_keys);
  const int n_blocks = k_end > k_begin ? (k_end - k_begin + kKeyBlock - 1) / kKeyBlock : 0;
  const T* qkv = static_cast<const T*>(p.qkv);

  // Waits for the QKV tiles holding K and V of the new keys in [kb, kb + 64) (cached keys: none).
  auto wait_keys = [&](int kb) -> bool {
    const int lo = max(kb, p.S_cached), hi = min(kb + kKeyBlock, k_end) - 1;
    if (hi < lo) return true;
    const uint32_t r0 = uint32_t(b * p.S_new + lo - p.S_cached), r1 = uint32_t(b * p.S_new + hi - p.S_cached);
    return wait_rect(sp, bs, 0, r0, r1, HD + h * D, HD + h * D + D - 1, tile) &&
           wait_rect(sp, bs, 0, r0, r1, 2 * HD + h * D, 2 * HD + h * D + D - 1, tile);
  };
  // Global address of key kp's K (or V) row of head h, from the cache or from the QKV output.
  auto key_row = [&](int kp, bool v) -> const T* {
    if (kp < p.S_cached)
      return static_cast<const T*>(v ? p.v_cache : p.k_cache) + uint64_t(b) * p.cache_bstride +
             uint64_t(kp) * p.cache_ld + h * D;
    return qkv + uint64_t(b * p.S_new + kp - p.S_cached) * p.qkv_ld + (v ? 2 : 1) * HD + h * D;
  };
  auto load_kv = [&](int buf, int kb) {
    const uint32_t dk = s_k + buf * kKeyBlock * kRowBytes, dv = s_v + buf * kKeyBlock * kRowBytes;
    for (int c = tid; c < kKeyBlock * 16; c += kThreads) {
      const int r = c >> 4, ch = c & 15, kp = kb + r;
      const bool ok = kp < k_end;  // rows past the split's keys: zeros (never NaN times a zero weight)
      mma::cp_async_16(dk + detail::swz(r, ch), ok ? key_row(kp, false) + ch * 8 : qkv, ok);
      mma::cp_async_16(dv + detail::swz(r, ch), ok ? key_row(kp, true) + ch * 8 : qkv, ok);
    }
  };

  // Group 0: Q (rows past the tile's queries zero-filled); group 1: the first key block.
  if (!wait_rect(sp, bs, 0, uint32_t(row0), uint32_t(row0 + q_valid - 1), h * D, h * D + D - 1, tile)) return;
  for (int c = tid; c < BM * 16; c += kThreads) {
    const int r = c >> 4, ch = c & 15;
    const bool ok = r < q_valid;
    mma::cp_async_16(s_q + detail::swz(r, ch), ok ? qkv + uint64_t(row0 + r) * p.qkv_ld + h * D + ch * 8 : qkv, ok);
  }
  mma::cp_async_commit();
  if (n_blocks > 0) {
    if (!wait_keys(k_begin)) {
      mma::cp_async_wait<0>();
      return;
    }
    load_kv(0, k_begin);
  }
  mma::cp_async_commit();
  mma::cp_async_wait<1>();
  __syncthreads();

  uint32_t qf[8][4];  // this warp's 16 query rows as A fragments, all 128 dims
#pragma unroll
  for (int kk = 0; kk < 8; ++kk) mma::ldsm_x4(s_q + detail::swz(warp * 16 + lane % 16, kk * 2 + lane / 16), qf[kk]);

  float o[16][4];
#pragma unroll
  for (int i = 0; i < 16; ++i) o[i][0] = o[i][1] = o[i][2] = o[i][3] = 0.f;
  float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.f, 0.f};
  const int g = lane / 4, c2 = (lane % 4) * 2;
  const int qpos0 = p.S_cached + q0 + warp * 16 + g;  // global position of this thread's first row
  const uint32_t bh = uint32_t(b * p.NH + h);

  for (int j = 0; j < n_blocks; ++j) {
    const int kb = k_begin + j * kKeyBlock;
    if (j + 1 < n_blocks) {
      if (!wait_keys(kb + kKeyBlock)) {
        mma::cp_async_wait<0>();
        return;
      }
      load_kv((j + 1) & 1, kb + kKeyBlock);
    }
    mma::cp_async_commit();  // possibly empty: keeps "all but the newest group" = block j
    mma::cp_async_wait<1>();
    __syncthreads();
    const uint32_t sk = s_k + (j & 1) * kKeyBlock * kRowBytes, sv = s_v + (j & 1) * kKeyBlock * kRowBytes;

    float s[8][4];
#pragma unroll
    for (int i = 0; i < 8; ++i) s[i][0] = s[i][1] = s[i][2] = s[i][3] = 0.f;
#pragma unroll
    for (int kk = 0; kk < 8; ++kk)
#pragma unroll
      for (int np = 0; np < 4; ++np) {
        uint32_t r[4];
        mma::ldsm_x4(sk + detail::swz(np * 16 + (lane / 16) * 8 + lane % 8, kk * 2 + (lane / 8) % 2), r);
        M::run(s[2 * np], qf[kk], r[0], r[1]);
        M::run(s[2 * np + 1], qf[kk], r[2], r[3]);
      }

    // Mask keys past the split and (causal) after the query; online softmax in log2 units.
    const bool edge = kb + kKeyBlock > k_end || (p.causal && kb + kKeyBlock - 1 > p.S_cached + q0 + warp * 16);
    if (edge) {
#pragma unroll
      for (int nt = 0; nt < 8; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int kp = kb + nt * 8 + c2 + (e & 1), qp = qpos0 + (e >> 1) * 8;
          if (kp >= k_end || (p.causal && kp > qp)) s[nt][e] = -INFINITY;
        }
    }
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      float mx = m[r];
#pragma unroll
      for (int nt = 0; nt < 8; ++nt) mx = fmaxf(mx, fmaxf(s[nt][2 * r], s[nt][2 * r + 1]) * p.scale_log2);
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
      const float m_use = mx == -INFINITY ? 0.f : mx;  // a row with no visible key yet
      const float alpha = exp2f(m[r] - m_use);
      m[r] = mx;
      l[r] *= alpha;
#pragma unroll
      for (int dt = 0; dt < 16; ++dt) {
        o[dt][2 * r] *= alpha;
        o[dt][2 * r + 1] *= alpha;
      }
#pragma unroll
      for (int nt = 0; nt < 8; ++nt)
#pragma unroll
        for (int e = 2 * r; e < 2 * r + 2; ++e) {
          const float pv = exp2f(fmaf(s[nt][e], p.scale_log2, -m_use));
          l[r] += pv;  // the normalizer is the softmax's: dropout applies after it
          s[nt][e] = pv;
        }
    }
    if (p.drop_threshold != 0) {
#pragma unroll
      for (int nt = 0; nt < 8; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int kp = kb + nt * 8 + c2 + (e & 1), qp = qpos0 + (e >> 1) * 8;
          s[nt][e] = dropout_bits(p.seed, bh, uint32_t(qp), uint32_t(kp)) >= p.drop_threshold ? s[nt][e] * p.keep_scale
                                                                                              : 0.f;
        }
    }

    // O += P . V: P's accumulators are already A fragments (see mma_sm80.cuh).
#pragma unroll
    for (int ks = 0; ks < 4; ++ks) {
      const uint32_t a[4] = {M::pack(s[2 * ks][0], s[2 * ks][1]), M::pack(s[2 * ks][2], s[2 * ks][3]),
                             M::pack(s[2 * ks + 1][0], s[2 * ks + 1][1]), M::pack(s[2 * ks + 1][2], s[2 * ks + 1][3])};
#pragma unroll
      for (int dp = 0; dp < 8; ++dp) {
        uint32_t r[4];
        mma::ldsm_x4_trans(sv + detail::swz(ks * 16 + ((lane / 8) % 2) * 8 + lane % 8, dp * 2 + lane / 16), r);
        M::run(o[2 * dp], a, r[0], r[1]);
        M::run(o[2 * dp + 1], a, r[2], r[3]);
      }
    }
    __syncthreads();  // buffer j & 1 is free for block j + 2
  }

#pragma unroll
  for (int r = 0; r < 2; ++r) {
    l[r] += __shfl_xor_sync(0xffffffffu, l[r], 1);
    l[r] += __shfl_xor_sync(0xffffffffu, l[r], 2);
  }
  T* out = static_cast<T*>(p.o);
  bool post_tile = true;
  if (p.splits == 1) {
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const int qi = warp * 16 + g + 8 * r;
      if (qi >= q_valid) continue;
      const float inv = l[r] > 0.f ? 1.f / l[r] : 0.f;
      T* dst = out + uint64_t(row0 + qi) * p.o_ld + h * D + c2;
#pragma unroll
      for (int dt = 0; dt < 16; ++dt)
        *reinterpret_cast<uint32_t*>(dst + dt * 8) = M::pack(o[dt][2 * r] * inv, o[dt][2 * r + 1] * inv);
    }
  } else {
    // Partials of this split; the last split of the tile to arrive merges all of them in split order.
    const uint32_t tile_lin = uint32_t(y) * uint32_t(p.NH) + uint32_t(h);
    const uint64_t base = (uint64_t(tile_lin) * p.splits + split) * p.q_rows;
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const int qi = warp * 16 + g + 8 * r;
      if (qi >= q_valid) continue;
      float* po = p.part_o + (base + qi) * D + c2;
#pragma unroll
      for (int dt = 0; dt < 16; ++dt) *reinterpret_cast<float2*>(po + dt * 8) = make_float2(o[dt][2 * r], o[dt][2 * r + 1]);
      if (lane % 4 == 0) *reinterpret_cast<float2*>(p.part_ml + (base + qi) * 2) = make_float2(m[r], l[r]);
    }
    __threadfence();
    __syncthreads();
    if (tid == 0) s_last = atomicAdd(p.arrivals + tile_lin, 1u) == uint32_t(p.splits - 1) ? 1u : 0u;
    __syncthreads();
    post_tile = s_last != 0;
    if (post_tile) {
      __threadfence();
      if (tid == 0) p.arrivals[tile_lin] = 0;  // every split of this launch has arrived
      const uint64_t base0 = uint64_t(tile_lin) * p.splits * p.q_rows;
      for (int idx = tid; idx < q_valid * D; idx += kThreads) {
        const int qi = idx / D, d = idx % D;
        float mx = -INFINITY;
        for (int sidx = 0; sidx < p.splits; ++sidx)
          mx = fmaxf(mx, __ldcg(p.part_ml + (base0 + uint64_t(sidx) * p.q_rows + qi) * 2));
        const float m_use = mx == -INFINITY ? 0.f : mx;
        float acc = 0.f, sum = 0.f;
        for (int sidx = 0; sidx < p.splits; ++sidx) {
          const uint64_t rr = base0 + uint64_t(sidx) * p.q_rows + qi;
          const float w = exp2f(__ldcg(p.part_ml + rr * 2) - m_use);
          sum += w * __ldcg(p.part_ml + rr * 2 + 1);
          acc += w * __ldcg(p.part_o + rr * D + d);
        }
        const float v = sum > 0.f ? acc / sum : 0.f;
        out[uint64_t(row0 + qi) * p.o_ld + h * D + d] = M::cvt(v);
      }
    }
  }

  // The KV-cache update: split 0 copies the new tokens' K and V rows of this tile to their positions.
  if (p.write_cache && split == 0) {
    if (!wait_rect(sp, bs, 0, uint32_t(row0), uint32_t(row0 + q_valid - 1), HD + h * D, HD + h * D + D - 1, tile) ||
        !wait_rect(sp, bs, 0, uint32_t(row0), uint32_t(row0 + q_valid - 1), 2 * HD + h * D, 2 * HD + h * D + D - 1,
                   tile))
      return;
    for (int c = tid; c < q_valid * 32; c += kThreads) {
      const int qi = c / 32, half = (c / 16) % 2, ch = c % 16;
      const uint4* src = reinterpret_cast<const uint4*>(qkv + uint64_t(row0 + qi) * p.qkv_ld + (half + 1) * HD + h * D) + ch;
      uint4* dst = reinterpret_cast<uint4*>(static_cast<T*>(half ? p.v_cache : p.k_cache) + uint64_t(b) * p.cache_bstride +
                                            uint64_t(p.S_cached + q0 + qi) * p.cache_ld + h * D) + ch;
      *dst = __ldcg(src);
    }
  }

  if (post_tile) post(sp, bs, tile);
  end_block(sp, bs);
}

}  // namespace braid::attention
