// The paper's attention chain (cuSync, CGO 2024), kept for fidelity next to the fused kernel: after
// the QKV GEMM, three kernels that each write their result to global memory,
//   P = scale * Q.K^T           attn_scores_kernel      tiles (key tile x, query block y, head z), 64x64
//   R = dropout(softmax(P))     attn_softmax_kernel     same tiles; one CTA per (query block, head)
//                                                       reads its whole row of P, writes and posts
//                                                       every R tile of it (a softmax row needs all P)
//   T = R.V                     attn_values_kernel      tiles (head x, query block y), T = [M, NH*128]
// P and R are [B*NH, S_new, ldp] (ldp = keys rounded up to 64), fp16/bf16. Causally masked scores
// are -inf in P and 0 in R; a P tile that lies wholly above the diagonal is not computed, but it is
// posted (a RowSync semaphore counts every tile of its row). The dropout bits and semantics are the
// fused kernel's (dropout.hpp: applied to the normalized probabilities), so both chains compute the
// same function. The values kernel also performs the KV-cache update.
#pragma once
#include "braid/kernels/attention/attention_common.cuh"

namespace braid::attention {

struct UnfusedParams {
  FlashParams a;       // the layout (qkv, cache, o, B, S_new, S_cached, NH, q_rows, q_blocks, scale, dropout)
  void* P = nullptr;   // [B*NH, S_new, ldp]
  void* R = nullptr;
  int ldp = 0;         // keys, rounded up to kKeyBlock
  int key_tiles = 0;   // ldp / kKeyBlock
};

namespace detail {

// Last key (exclusive) that query block y of batch b sees.
__device__ __forceinline__ int visible_end(const FlashParams& p, int q0, int q_valid) {
  return p.causal ? p.S_cached + q0 + q_valid : p.S_cached + p.S_new;
}

}  // namespace detail

// P tile (x, y, z): 4 warps x 16 query rows, 64 keys, head size 128. Waits: the QKV tiles of its Q rows
// and of its (new) keys' K rows.
template <class T>
__global__ void __launch_bounds__(128) attn_scores_kernel(const UnfusedParams u, const StageParams sp) {
  using M = mma::Mma<T>;
  constexpr int D = kHeadDim;
  const FlashParams& p = u.a;
  extern __shared__ __align__(128) unsigned char smem[];
  __shared__ BlockSync bs;
  const uint32_t s_q = mma::smem_u32(smem), s_k = s_q + 64 * kRowBytes;
  begin_grid_block(sp, bs);
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int x = blockIdx.x, y = blockIdx.y, h = blockIdx.z;
  const Tile tile{uint32_t(x), uint32_t(y), uint32_t(h)};
  const detail::QueryBlock qb(p, y);
  const int b = qb.b, q0 = qb.q0, q_valid = qb.q_valid, row0 = qb.row0;  // row0: first row in QKV and O
  const uint32_t HD = uint32_t(p.NH) * D;
  const int kb = x * kKeyBlock, n_keys = p.S_cached + p.S_new;
  const int k_end = min(detail::visible_end(p, q0, q_valid), n_keys);
  if (kb < k_end) {  // else: wholly masked, never read
    if (!producer_complete(sp, bs, 0)) {
      if (!wait_rect(sp, bs, 0, uint32_t(row0), uint32_t(row0 + q_valid - 1), h * D, h * D + D - 1, tile)) return;
      const int lo = max(kb, p.S_cached), hi = min(kb + kKeyBlock, k_end) - 1;
      if (lo <= hi &&
          !wait_rect(sp, bs, 0, uint32_t(b * p.S_new + lo - p.S_cached), uint32_t(b * p.S_new + hi - p.S_cached),
                     HD + h * D, HD + h * D + D - 1, tile))
        return;
    }
    const T* qkv = static_cast<const T*>(p.qkv);
    for (int c = tid; c < 64 * 16; c += 128) {
      const int r = c >> 4, ch = c & 15;
      const bool okq = r < q_valid, okk = kb + r < k_end;
      mma::cp_async_16(s_q + detail::swz(r, ch), okq ? qkv + uint64_t(row0 + r) * p.qkv_ld + h * D + ch * 8 : qkv, okq);
      mma::cp_async_16(s_k + detail::swz(r, ch), okk ? detail::key_row<T>(p, b, h, kb + r, false) + ch * 8 : qkv, okk);
    }
    mma::cp_async_commit();
    mma::cp_async_wait<0>();
    __syncthreads();
    float s[8][4];
#pragma unroll
    for (int i = 0; i < 8; ++i) s[i][0] = s[i][1] = s[i][2] = s[i][3] = 0.f;
#pragma unroll
    for (int kk = 0; kk < 8; ++kk) {
      uint32_t qf[4];
      mma::ldsm_x4(s_q + detail::swz(warp * 16 + lane % 16, kk * 2 + lane / 16), qf);
#pragma unroll
      for (int np = 0; np < 4; ++np) {
        uint32_t r[4];
        mma::ldsm_x4(s_k + detail::swz(np * 16 + (lane / 16) * 8 + lane % 8, kk * 2 + (lane / 8) % 2), r);
        M::run(s[2 * np], qf, r[0], r[1]);
        M::run(s[2 * np + 1], qf, r[2], r[3]);
      }
    }
    const int g = lane / 4, c2 = (lane % 4) * 2;
    const float scale = p.scale_log2 * 0.6931471805599453f;  // natural-log units in P
    T* P = static_cast<T*>(u.P);
#pragma unroll
    for (int rr = 0; rr < 2; ++rr) {
      const int qi = warp * 16 + g + 8 * rr;
      if (qi >= q_valid) continue;
      const int qp = p.S_cached + q0 + qi;
      T* dst = P + (uint64_t(b * p.NH + h) * p.S_new + q0 + qi) * u.ldp + kb + c2;
#pragma unroll
      for (int nt = 0; nt < 8; ++nt) {
        const int kp = kb + nt * 8 + c2;
        const float v0 = kp < n_keys && !(p.causal && kp > qp) ? s[nt][2 * rr] * scale : -INFINITY;
        const float v1 = kp + 1 < n_keys && !(p.causal && kp + 1 > qp) ? s[nt][2 * rr + 1] * scale : -INFINITY;
        *reinterpret_cast<uint32_t*>(dst + nt * 8) = M::pack(v0, v1);
      }
    }
  }
  post(sp, bs, tile);
  end_block(sp, bs);
}

// R for query block y, head h (blockIdx.x = y, blockIdx.y = h): one warp per row at a time, 8 warps.
// Waits for every P tile of the rows it reads, then writes and posts R tiles (0..key_tiles-1, y, h).
template <class T>
__global__ void __launch_bounds__(256) attn_softmax_kernel(const UnfusedParams u, const StageParams sp) {
  using M = mma::Mma<T>;
  const FlashParams& p = u.a;
  __shared__ BlockSync bs;
  begin_grid_block(sp, bs);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int y = blockIdx.x, h = blockIdx.y;
  const detail::QueryBlock qb(p, y);
  const int b = qb.b, q0 = qb.q0, q_valid = qb.q_valid;
  const int n_keys = p.S_cached + p.S_new;
  const int vis = min(detail::visible_end(p, q0, q_valid), n_keys);
  const Tile first{0, uint32_t(y), uint32_t(h)};
  for (int x = 0; x * kKeyBlock < vis; ++x)
    if (!wait(sp, bs, 0, Tile{uint32_t(x), uint32_t(y), uint32_t(h)}, first)) return;
  const uint32_t bh = uint32_t(b * p.NH + h);
  for (int qi = warp; qi < q_valid; qi += 8) {
    const int qp = p.S_cached + q0 + qi;
    const int n = p.causal ? min(qp + 1, n_keys) : n_keys;
    const uint64_t off = (uint64_t(bh) * p.S_new + q0 + qi) * u.ldp;
    const T* prow = static_cast<const T*>(u.P) + off;
    T* rrow = static_cast<T*>(u.R) + off;
    float mx = -INFINITY;
    for (int k = lane; k < n; k += 32) mx = fmaxf(mx, mma::to_float(__ldcg(prow + k)));
#pragma unroll
    for (int o = 16; o > 0; o /= 2) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, o));
    float sum = 0.f;
    for (int k = lane; k < n; k += 32) sum += __expf(mma::to_float(__ldcg(prow + k)) - mx);
#pragma unroll
    for (int o = 16; o > 0; o /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, o);
    const float inv = 1.f / sum;
    for (int k = lane; k < u.ldp; k += 32) {
      float v = 0.f;
      if (k < n) {
        v = __expf(mma::to_float(__ldcg(prow + k)) - mx) * inv;
        if (p.drop_threshold != 0)
          v = dropout_bits(p.seed, bh, uint32_t(qp), uint32_t(k)) >= p.drop_threshold ? v * p.keep_scale : 0.f;
      }
      rrow[k] = M::cvt(v);
    }
  }
  for (int x = 0; x < u.key_tiles; ++x) post(sp, bs, Tile{uint32_t(x), uint32_t(y), uint32_t(h)});
  end_block(sp, bs);
}

// T tile (head x, query block y) = R.V over the visible key blocks: 4 warps x 16 rows. Waits: the R tiles
// of its rows (input 0) and the QKV tiles of the new keys' V rows (input 1); with update_cache, also the
// K and V rows of its own new tokens, which it copies into the cache.
template <class T>
__global__ void __launch_bounds__(128) attn_values_kernel(const UnfusedParams u, const StageParams sp) {
  using M = mma::Mma<T>;
  constexpr int D = kHeadDim;
  const FlashParams& p = u.a;
  extern __shared__ __align__(128) unsigned char smem[];
  __shared__ BlockSync bs;
  const uint32_t s_r = mma::smem_u32(smem), s_v = s_r + 64 * 128;  // R block [64][64], V block [64][128]
  begin_grid_block(sp, bs);
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int h = blockIdx.x, y = blockIdx.y;
  const Tile tile{uint32_t(h), uint32_t(y), 0};
  const detail::QueryBlock qb(p, y);
  const int b = qb.b, q0 = qb.q0, q_valid = qb.q_valid, row0 = qb.row0;  // row0: first row in QKV and O
  const uint32_t HD = uint32_t(p.NH) * D;
  const int n_keys = p.S_cached + p.S_new;
  const int vis = min(detail::visible_end(p, q0, q_valid), n_keys);
  const bool r_done = producer_complete(sp, bs, 0), qkv_done = producer_complete(sp, bs, 1);
  const T* R = static_cast<const T*>(u.R) + (uint64_t(b * p.NH + h) * p.S_new + q0) * u.ldp;
  float o[16][4];
#pragma unroll
  for (int i = 0; i < 16; ++i) o[i][0] = o[i][1] = o[i][2] = o[i][3] = 0.f;
  const T* base = static_cast<const T*>(p.qkv);
  for (int kb = 0; kb < vis; kb += kKeyBlock) {
    if (!r_done && !wait(sp, bs, 0, Tile{uint32_t(kb / kKeyBlock), uint32_t(y), uint32_t(h)}, tile)) return;
    const int lo = max(kb, p.S_cached), hi = min(kb + kKeyBlock, vis) - 1;
    if (!qkv_done && lo <= hi &&
        !wait_rect(sp, bs, 1, uint32_t(b * p.S_new + lo - p.S_cached), uint32_t(b * p.S_new + hi - p.S_cached),
                   2 * HD + h * D, 2 * HD + h * D + D - 1, tile))
      return;
    for (int c = tid; c < 64 * 8; c += 128) {
      const int r = c >> 3, ch = c & 7;
      const bool ok = r < q_valid;
      mma::cp_async_16(s_r + detail::swz64(r, ch), ok ? R + uint64_t(r) * u.ldp + kb + ch * 8 : R, ok);
    }
    for (int c = tid; c < 64 * 16; c += 128) {
      const int r = c >> 4, ch = c & 15;
      const bool ok = kb + r < vis;
      mma::cp_async_16(s_v + detail::swz(r, ch), ok ? detail::key_row<T>(p, b, h, kb + r, true) + ch * 8 : base, ok);
    }
    mma::cp_async_commit();
    mma::cp_async_wait<0>();
    __syncthreads();
#pragma unroll
    for (int ks = 0; ks < 4; ++ks) {
      uint32_t a[4];
      mma::ldsm_x4(s_r + detail::swz64(warp * 16 + lane % 16, ks * 2 + lane / 16), a);
#pragma unroll
      for (int dp = 0; dp < 8; ++dp) {
        uint32_t r[4];
        mma::ldsm_x4_trans(s_v + detail::swz(ks * 16 + ((lane / 8) % 2) * 8 + lane % 8, dp * 2 + lane / 16), r);
        M::run(o[2 * dp], a, r[0], r[1]);
        M::run(o[2 * dp + 1], a, r[2], r[3]);
      }
    }
    __syncthreads();
  }
  const int g = lane / 4, c2 = (lane % 4) * 2;
  T* out = static_cast<T*>(p.o);
#pragma unroll
  for (int rr = 0; rr < 2; ++rr) {
    const int qi = warp * 16 + g + 8 * rr;
    if (qi >= q_valid) continue;
    T* dst = out + uint64_t(row0 + qi) * p.o_ld + h * D + c2;
#pragma unroll
    for (int dt = 0; dt < 16; ++dt) *reinterpret_cast<uint32_t*>(dst + dt * 8) = M::pack(o[dt][2 * rr], o[dt][2 * rr + 1]);
  }
  if (p.write_cache) {
    if (!qkv_done &&
        (!wait_rect(sp, bs, 1, uint32_t(row0), uint32_t(row0 + q_valid - 1), HD + h * D, HD + h * D + D - 1, tile) ||
         !wait_rect(sp, bs, 1, uint32_t(row0), uint32_t(row0 + q_valid - 1), 2 * HD + h * D, 2 * HD + h * D + D - 1, tile)))
      return;
    detail::copy_new_kv_to_cache<T>(p, b, h, q0, q_valid, tid, 128);
  }
  post(sp, bs, tile);
  end_block(sp, bs);
}

}  // namespace braid::attention
