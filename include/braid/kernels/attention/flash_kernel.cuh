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
#include "braid/kernels/attention/attention_common.cuh"
#include "braid/kernels/attention/split_merge.cuh"

namespace braid::attention {

template <class T, int kWarps>
__global__ void __launch_bounds__(kWarps * 32) flash_attention_kernel(const FlashParams p, const StageParams sp) {
  using M = mma::Mma<T>;
  constexpr int kThreads = kWarps * 32, BM = kWarps * 16, D = kHeadDim;
  extern __shared__ __align__(128) unsigned char smem[];
  __shared__ BlockSync bs;
  __shared__ uint32_t s_last;
  const uint32_t s_q = mma::smem_u32(smem);
  const uint32_t s_k = s_q + BM * kRowBytes;
  const uint32_t s_v = s_k + p.kv_buffers * kKeyBlock * kRowBytes;  // 1 buffer: single-block splits (decode)

  begin_grid_block(sp, bs);

  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  // Causal prompts: tiles of late queries see the most keys; reverse_rows launches them first (the
  // longest jobs first shortens the tail in stream order; tile sync wants the early rows first).
  const int h = blockIdx.x, y = p.reverse_rows ? int(gridDim.y - 1 - blockIdx.y) : int(blockIdx.y), split = blockIdx.z;
  const Tile tile{uint32_t(h), uint32_t(y), 0};
  const detail::QueryBlock qb(p, y);
  const int b = qb.b, q0 = qb.q0, q_valid = qb.q_valid, row0 = qb.row0;  // row0: first row in QKV and O
  const uint32_t HD = uint32_t(p.NH) * D;
  const detail::KeyRange keys(p, qb, split);
  const int k_begin = keys.begin, k_end = keys.end;
  const int n_blocks = k_end > k_begin ? (k_end - k_begin + kKeyBlock - 1) / kKeyBlock : 0;
  const T* qkv = static_cast<const T*>(p.qkv);

  // Waits for the QKV tiles holding K and V of the new keys in [kb, kb + 64) (cached keys: none).
  // Two shortcuts keep satisfied waits cheap: when the QKV stage has already completed this run (its
  // run counter, read with acquire once per CTA) nothing is waited on at all; otherwise `ready_until`
  // remembers the first QKV row not known complete, so the K and V tiles of a QKV row tile are waited
  // on once, not once per key block (K and V alternate semaphores, which the per-input last-semaphore
  // skip of braid::wait cannot catch).
  const bool qkv_done = producer_complete(sp, bs, 0);
  uint32_t ready_until = 0;  // QKV rows [b * S_new, ready_until) of this batch known complete
  auto wait_keys = [&](int kb) -> bool {
    if (qkv_done) return true;
    const int lo = max(kb, p.S_cached), hi = min(kb + kKeyBlock, k_end) - 1;
    if (hi < lo) return true;
    uint32_t r0 = uint32_t(b * p.S_new + lo - p.S_cached);
    const uint32_t r1 = uint32_t(b * p.S_new + hi - p.S_cached);
    if (r1 < ready_until) return true;
    r0 = max(r0, ready_until);
    if (!wait_rect(sp, bs, 0, r0, r1, HD + h * D, HD + h * D + D - 1, tile) ||
        !wait_rect(sp, bs, 0, r0, r1, 2 * HD + h * D, 2 * HD + h * D + D - 1, tile))
      return false;
    const uint32_t tr = sp.inputs[0].shape.rows;  // every row of the waited tiles is complete
    ready_until = (r1 / tr + 1) * tr;
    return true;
  };
  auto key_row = [&](int kp, bool v) -> const T* { return detail::key_row<T>(p, b, h, kp, v); };
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
  if (!qkv_done && !wait_rect(sp, bs, 0, uint32_t(row0), uint32_t(row0 + q_valid - 1), h * D, h * D + D - 1, tile)) return;
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
      load_kv((j + 1) % p.kv_buffers, kb + kKeyBlock);
    }
    mma::cp_async_commit();  // possibly empty: keeps "all but the newest group" = block j
    mma::cp_async_wait<1>();
    __syncthreads();
    const int buf = j % p.kv_buffers;
    const uint32_t sk = s_k + buf * kKeyBlock * kRowBytes, sv = s_v + buf * kKeyBlock * kRowBytes;

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
      const float alpha = mma::fast_exp2(m[r] - m_use);
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
          const float pv = mma::fast_exp2(fmaf(s[nt][e], p.scale_log2, -m_use));
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
    __syncthreads();  // buffer j % kv_buffers is free for block j + kv_buffers
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
    post_tile = detail::arrive_last_split(p, tile_lin, s_last);
    if (post_tile)  // the key buffers are free now: room for the merge's weights
      detail::merge_split_partials<T>(p, tile_lin, q_valid, row0, h, reinterpret_cast<float*>(smem + BM * kRowBytes), tid,
                                      kThreads);
  }

  // The KV-cache update: split 0 copies the new tokens' K and V rows of this tile to their positions.
  if (p.write_cache && split == 0) {
    if (!qkv_done &&
        (!wait_rect(sp, bs, 0, uint32_t(row0), uint32_t(row0 + q_valid - 1), HD + h * D, HD + h * D + D - 1, tile) ||
         !wait_rect(sp, bs, 0, uint32_t(row0), uint32_t(row0 + q_valid - 1), 2 * HD + h * D, 2 * HD + h * D + D - 1,
                    tile)))
      return;
    detail::copy_new_kv_to_cache<T>(p, b, h, q0, q_valid, tid, kThreads);
  }

  if (post_tile) post(sp, bs, tile);
  end_block(sp, bs);
}

}  // namespace braid::attention
