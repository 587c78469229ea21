// Key splits of braid's attention kernels (flash_kernel.cuh, flash_decode_kernel.cuh): the CTAs of one
// tile each cover a range of keys and write an fp32 partial (unnormalized O rows, and per row the
// running max in log2 units and the softmax sum) to p.part_o / p.part_ml; the last CTA of the tile to
// arrive merges every split's partial in split order -- the same sums in the same order whatever order
// the CTAs ran in, so the result is deterministic -- stores O, and is the one that posts the tile.
#pragma once
#include <cstdint>

#include "braid/kernels/attention/attention_common.cuh"

namespace braid::attention::detail {

// Block-level, after this CTA wrote its partials: true (in every thread) in the tile's last CTA to
// arrive, which then owns the merge; it also re-arms the tile's counter for the next launch.
__device__ __forceinline__ bool arrive_last_split(const FlashParams& p, uint32_t tile_lin, uint32_t& s_last) {
  __threadfence();  // this CTA's partials before its arrival
  __syncthreads();
  if (threadIdx.x == 0) s_last = atomicAdd(p.arrivals + tile_lin, 1u) == uint32_t(p.splits - 1) ? 1u : 0u;
  __syncthreads();
  if (s_last == 0) return false;
  __threadfence();  // every other split's partials after their arrivals
  if (threadIdx.x == 0) p.arrivals[tile_lin] = 0;  // every split of this launch has arrived
  return true;
}

// Block-level, in the last CTA: O rows row0 .. row0 + q_valid - 1 of head h = sum over splits of
// 2^(m_s - m) * o_s, divided by sum over splits of 2^(m_s - m) * l_s. Latency-bound (a handful of rows,
// many splits): first every split's weight of every row into shared memory w_s (room for
// (2 * splits + 1) * q_rows floats), all (split, row) pairs loaded at once; then each thread sums 4
// consecutive dims over the splits, 4 splits' loads in flight.
template <class T>
__device__ __forceinline__ void merge_split_partials(const FlashParams& p, uint32_t tile_lin, int q_valid, int row0,
                                                     int h, float* w_s, int tid, int nthreads) {
  using M = mma::Mma<T>;
  constexpr int D = kHeadDim;
  const uint64_t base0 = uint64_t(tile_lin) * p.splits * p.q_rows;
  float* inv_s = w_s + p.splits * p.q_rows;  // [q_rows]; the sums follow it
  float* sum_s = inv_s + p.q_rows;
  for (int i = tid; i < p.splits * q_valid; i += nthreads) {
    const int sidx = i / q_valid, qi = i % q_valid;
    const float2 ml = __ldcg(reinterpret_cast<const float2*>(p.part_ml + (base0 + uint64_t(sidx) * p.q_rows + qi) * 2));
    w_s[sidx * p.q_rows + qi] = ml.x;
    sum_s[sidx * p.q_rows + qi] = ml.y;
  }
  __syncthreads();
  for (int qi = tid; qi < q_valid; qi += nthreads) {
    float mx = -INFINITY;
    for (int sidx = 0; sidx < p.splits; ++sidx) mx = fmaxf(mx, w_s[sidx * p.q_rows + qi]);
    const float m_use = mx == -INFINITY ? 0.f : mx;
    float sum = 0.f;
    for (int sidx = 0; sidx < p.splits; ++sidx) {
      const float w = exp2f(w_s[sidx * p.q_rows + qi] - m_use);
      w_s[sidx * p.q_rows + qi] = w;
      sum += w * sum_s[sidx * p.q_rows + qi];
    }
    inv_s[qi] = sum > 0.f ? 1.f / sum : 0.f;
  }
  __syncthreads();
  T* out = static_cast<T*>(p.o);
  for (int idx = tid * 4; idx < q_valid * D; idx += nthreads * 4) {
    const int qi = idx / D, d = idx % D;
    float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
    int sidx = 0;
    for (; sidx + 4 <= p.splits; sidx += 4) {
      float4 v[4];
#pragma unroll
      for (int u = 0; u < 4; ++u)
        v[u] = __ldcg(reinterpret_cast<const float4*>(p.part_o + (base0 + uint64_t(sidx + u) * p.q_rows + qi) * D + d));
#pragma unroll
      for (int u = 0; u < 4; ++u) {
        const float w = w_s[(sidx + u) * p.q_rows + qi];
        acc.x += w * v[u].x;
        acc.y += w * v[u].y;
        acc.z += w * v[u].z;
        acc.w += w * v[u].w;
      }
    }
    for (; sidx < p.splits; ++sidx) {
      const float4 v = __ldcg(reinterpret_cast<const float4*>(p.part_o + (base0 + uint64_t(sidx) * p.q_rows + qi) * D + d));
      const float w = w_s[sidx * p.q_rows + qi];
      acc.x += w * v.x;
      acc.y += w * v.y;
      acc.z += w * v.z;
      acc.w += w * v.w;
    }
    const float inv = inv_s[qi];
    T* dst = out + uint64_t(row0 + qi) * p.o_ld + h * D + d;
    *reinterpret_cast<uint2*>(dst) = make_uint2(M::pack(acc.x * inv, acc.y * inv), M::pack(acc.z * inv, acc.w * inv));
  }
}

}  // namespace braid::attention::detail
