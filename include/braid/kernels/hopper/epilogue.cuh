// Epilogue of braid's Hopper GEMM and convolution: split-K reduction, bias (convolutions),
// activation (None / GeLU / ReLU / SwiGLU), direct stores from the wgmma accumulators, all by the
// consumer threads.
//
// Accumulator layout (wgmma 64xN per warpgroup, fp32): value i of a thread sits at (row, col) given
// by the identity tensor partitioned like the accumulators; values 2j and 2j+1 are adjacent columns of
// one row (stored as one 32-bit pair), and the second half of a thread's values holds the columns
// tile_n/2 to the right of the first half (SwiGLU pairs gate column c with up column c + tile_n/2).
//
// Split-K partials go to global memory in the accumulators' own layout (float2 per value pair,
// thread-interleaved, so a warp's stores are contiguous); only rows < M are written and read.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "braid/kernels/common/activation.cuh"
#include "braid/kernels/hopper/gemm_config.hpp"
#include "cute/tensor.hpp"

namespace braid::hopper::detail {

using act::gelu_erf;
using act::silu;

template <class Element>
struct alignas(4) Pair {
  Element a, b;
};

// Stores the tile: D[r, c] = act(acc + bias[c] + residual[r, c]) for every accumulator value with
// r < M and c < n_out.
//   accum, coord: a thread's accumulator values and their (row, col) inside the tile.
//   kBias: add bias[c] (one per output column) and, when `residual` is not null, residual[r, c] (same
//   layout as D: a ResNet block's shortcut) before the activation, in fp32, rounding once. A
//   compile-time switch so that the GEMMs' epilogue carries no bias code. In a chain the residual is
//   an earlier stage's output: its rows were complete before this tile's waits passed (every conv's
//   window contains its own pixels, so the chain of waits covers them transitively).
template <bool kBias, class Element, class Accum, class Coord>
__device__ __forceinline__ void store_tile(Accum& accum, const Coord& coord, Activation act, Element* D, int M,
                                           int n_out, int m0, int n0_out, const Element* bias,
                                           const Element* residual) {
  constexpr int kValues = decltype(cute::size(accum))::value;
  if (act == Activation::SwiGLU) {
    constexpr int kHalf = kValues / 2;
#pragma unroll
    for (int i = 0; i < kHalf; i += 2) {
      const int r = m0 + int(cute::get<0>(coord(i))), c = n0_out + int(cute::get<1>(coord(i)));
      if (r < M && c < n_out) {
        const float v0 = silu(accum(i)) * accum(i + kHalf), v1 = silu(accum(i + 1)) * accum(i + 1 + kHalf);
        *reinterpret_cast<Pair<Element>*>(D + size_t(r) * n_out + c) = Pair<Element>{Element(v0), Element(v1)};
      }
    }
    return;
  }
#pragma unroll
  for (int i = 0; i < kValues; i += 2) {
    const int r = m0 + int(cute::get<0>(coord(i))), c = n0_out + int(cute::get<1>(coord(i)));
    if (r < M && c < n_out) {
      float v0 = accum(i), v1 = accum(i + 1);
      if constexpr (kBias) {
        const Pair<Element> b = *reinterpret_cast<const Pair<Element>*>(bias + c);
        v0 += float(b.a);
        v1 += float(b.b);
        if (residual != nullptr) {
          const Pair<Element> s = *reinterpret_cast<const Pair<Element>*>(residual + size_t(r) * n_out + c);
          v0 += float(s.a);
          v1 += float(s.b);
        }
      }
      if (act == Activation::GeLU) {
        v0 = gelu_erf(v0);
        v1 = gelu_erf(v1);
      } else if (act == Activation::ReLU) {
        v0 = v0 < 0.f ? 0.f : v0;  // not fmaxf: a NaN (a race reading poison) must stay visible
        v1 = v1 < 0.f ? 0.f : v1;
      }
      *reinterpret_cast<Pair<Element>*>(D + size_t(r) * n_out + c) = Pair<Element>{Element(v0), Element(v1)};
    }
  }
}

// This split's partial sums -> its slot of the tile's workspace.
template <class Accum, class Coord>
__device__ __forceinline__ void store_partial(const Accum& accum, const Coord& coord, float2* slot, int t, int M,
                                              int m0, int threads) {
  constexpr int kValues = decltype(cute::size(accum))::value;
#pragma unroll
  for (int i = 0; i < kValues; i += 2)
    if (m0 + int(cute::get<0>(coord(i))) < M) __stcg(slot + (i / 2) * threads + t, make_float2(accum(i), accum(i + 1)));
}

// accum <- partial_0 + partial_1 + ... + partial_{S-1}, in segment order whichever segment runs this
// (bit-identical results however the segments were scheduled). `mine` is this segment's index: its
// partials are still in registers. The values go in chunks of kChunk pairs: for each segment the
// chunk's loads are all issued before any is used, so a chunk costs one L2 round trip per segment
// (loading and adding pair by pair cost one round trip per pair and segment: tens of microseconds
// per tile under load).
template <class Accum, class Coord>
__device__ __forceinline__ void reduce_partials(Accum& accum, const Coord& coord, const float2* tile_ws, int segs,
                                                int mine, int t, int M, int m0, int slot_values, int threads) {
  constexpr int kPairs = decltype(cute::size(accum))::value / 2;
  constexpr int kChunk = kPairs < 8 ? kPairs : 8;
  static_assert(kPairs % kChunk == 0, "accumulator pairs must split into whole chunks");
#pragma unroll
  for (int c0 = 0; c0 < kPairs; c0 += kChunk) {
    bool live[kChunk];
#pragma unroll
    for (int j = 0; j < kChunk; ++j) live[j] = m0 + int(cute::get<0>(coord(2 * (c0 + j)))) < M;
    float2 sum[kChunk];
    for (int s = 0; s < segs; ++s) {
      float2 v[kChunk];
      if (s == mine) {
#pragma unroll
        for (int j = 0; j < kChunk; ++j) v[j] = make_float2(accum(2 * (c0 + j)), accum(2 * (c0 + j) + 1));
      } else {
        const float2* src = tile_ws + size_t(s) * slot_values + t;
#pragma unroll
        for (int j = 0; j < kChunk; ++j) v[j] = live[j] ? __ldcg(src + (c0 + j) * threads) : make_float2(0.f, 0.f);
      }
#pragma unroll
      for (int j = 0; j < kChunk; ++j) {
        if (s == 0) {
          sum[j] = v[j];
        } else {
          sum[j].x += v[j].x;
          sum[j].y += v[j].y;
        }
      }
    }
#pragma unroll
    for (int j = 0; j < kChunk; ++j) {
      accum(2 * (c0 + j)) = sum[j].x;
      accum(2 * (c0 + j) + 1) = sum[j].y;
    }
  }
}

}  // namespace braid::hopper::detail
