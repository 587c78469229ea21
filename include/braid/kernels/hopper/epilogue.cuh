// Epilogue of braid's Hopper GEMM and convolution: split-K reduction, bias (convolutions),
// activation (None / GeLU / ReLU / SwiGLU) and the stores of the tile (staged through shared memory
// into whole-sector writes, or straight from the accumulators: EpilogueStore in gemm_config.hpp),
// all by the consumer threads.
//
// Accumulator layout (wgmma 64xN per warpgroup, fp32): value i of a thread sits at (row, col) given
// by the identity tensor partitioned like the accumulators; values 2j and 2j+1 are adjacent columns of
// one row (stored as one 32-bit pair); AccumShape below names the fragment's modes (a warpgroup that
// computes 128 rows alone -- the ping-pong experiment, branch experiment/pingpong -- holds two 64-row
// blocks; the epilogue handles any number).
//
// Split-K partials go to global memory in the accumulators' own layout (float4 per quad of values,
// thread-interleaved, so a warp's stores are contiguous: store_partial); only rows < M are written and read.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>
#include <utility>

#include "braid/core/sync_ptx.cuh"
#include "braid/kernels/common/activation.cuh"
#include "braid/kernels/common/stmatrix_sm90.cuh"
#include "braid/kernels/common/tma_sm90.cuh"
#include "braid/kernels/hopper/gemm_config.hpp"
#include "cute/tensor.hpp"

namespace braid::hopper::detail {

using act::gelu;
using act::silu;

template <class Element>
struct alignas(4) Pair {
  Element a, b;
};

// The output columns [lo, hi) of a tile (tile-local) that one work unit reduces and stores. A whole
// tile's unit owns them all; under reduce-scatter split-K (GemmConfig::reduce_scatter) each segment
// of a tile owns a share of them, and its partial sums of the other shares are what it hands to the
// other segments. Shares are whole 8-column groups, the groups of wgmma's accumulator fragment, so a
// thread tests a group's bit (its group index is a compile-time constant in the unrolled loops)
// rather than comparing columns. Accumulator group g holds output group g, or for SwiGLU (gate
// columns [0, tile_n/2), up columns [tile_n/2, tile_n)) output group g mod tile_n/16.
struct ColumnShare {
  int lo = 0, hi = 0;       // output columns
  uint32_t out_groups = 0;  // bit g: output columns [8g, 8g + 8) are in the share
  uint32_t acc_groups = 0;  // bit g: accumulator columns [8g, 8g + 8) feed the share
  // The output columns [lo, hi) of a tile tile_cols_out wide (tile_cols: accumulator columns).
  static __device__ __forceinline__ ColumnShare make(int lo, int hi, int tile_cols, int tile_cols_out) {
    const uint32_t n = uint32_t(hi - lo) / 8;
    const uint32_t out = (n >= 32 ? ~0u : (1u << n) - 1u) << (lo / 8);
    return {lo, hi, out, tile_cols_out < tile_cols ? out | (out << (tile_cols_out / 8)) : out};
  }
  static __device__ __forceinline__ ColumnShare all(int tile_cols, int tile_cols_out) {
    return make(0, tile_cols_out, tile_cols, tile_cols_out);
  }
  static __device__ __forceinline__ ColumnShare none() { return {}; }
  // Segment s of n: whole groups, as even as they split.
  static __device__ __forceinline__ ColumnShare of_segment(int s, int n, int tile_cols, int tile_cols_out) {
    const int groups = tile_cols_out / 8;
    return make(8 * (s * groups / n), 8 * ((s + 1) * groups / n), tile_cols, tile_cols_out);
  }
  __device__ __forceinline__ bool has_output_group(int g) const { return (out_groups >> g) & 1u; }
  __device__ __forceinline__ bool has_accum_group(int g) const { return (acc_groups >> g) & 1u; }
};

// Stores a pair as one 32-bit word (a struct store of the pair has compiled to two 16-bit stores).
template <class Element>
__device__ __forceinline__ void store_pair(void* p, Pair<Element> v) {
  uint32_t u;
  static_assert(sizeof(v) == sizeof(u), "a pair is 32 bits");
  memcpy(&u, &v, sizeof(u));
  *reinterpret_cast<uint32_t*>(p) = u;
}

// Two adjacent read-only elements (bias: never written while a kernel runs) through the
// non-coherent path.
template <class Element>
__device__ __forceinline__ Pair<Element> ldg_pair(const Element* p) {
  const unsigned int u = __ldg(reinterpret_cast<const unsigned int*>(p));
  Pair<Element> v;
  static_assert(sizeof(v) == sizeof(u), "a pair is 32 bits");
  memcpy(&v, &u, sizeof(u));
  return v;
}

// The bias of a thread's output columns, loaded into registers at the tile's start so that the loads
// complete under the mainloop: the epilogue then waits on no load at all (without a residual). A
// thread's accumulators cover kGroups = tile_n / 8 column pairs, each in every row it holds, so one
// pair per group is all of its bias. (Loaded in the epilogue, in chunks, each chunk's round trip sat
// between the mainloop and the stores: per-tile traces of 128x64 convs, epilogue median 2.8-2.9 us
// before, 1.9-2.0 us after, bench/results/pingpong-ab-h100-20261123.txt. Read through L1 instead,
// prefetched at the tile's start, to save 16 registers on 128-column tiles: 64x128 epilogue 3.9 ->
// 5.8 us, 128x128 5.8-6.0 -> 6.5-6.8 us, bench/results/conv-deep-ab-h100-20261123-83800a3.txt.)
// Bias is a weight, never a stage's output, so loading it before the tile's waits is safe in a chain.
template <class Element, int kGroups>
struct TileBias {
  Pair<Element> v[kGroups];
};

// Accumulator value i of a thread: (c2, r2, g, m) = (column of the pair, row +0/+8, 8-column group,
// 64-row block) with i = c2 + 2 r2 + 4 g + 4 kGroups m -- wgmma's 64xN fragment, ((2, 2, N/8), M/64, 1).
template <class Accum>
struct AccumShape {
  static constexpr int kValues = decltype(cute::size(Accum{}))::value;
  static constexpr int kGroups = decltype(cute::size<0, 2>(Accum{}))::value;
  static constexpr int kPerBlock = 4 * kGroups;
  static constexpr int kBlocks = kValues / kPerBlock;
  static_assert(decltype(cute::size<0>(Accum{}))::value == kPerBlock && kValues % kPerBlock == 0,
                "accumulators laid out as wgmma's ((2, 2, N/8), M/64, 1) fragment");
};

template <bool kBias, class Element, class Accum, class Coord>
__device__ __forceinline__ auto load_tile_bias(const Element* bias, const Accum&, const Coord& coord, int n_out,
                                               int n0_out) {
  constexpr int kGroups = AccumShape<Accum>::kGroups;
  TileBias<Element, kBias ? kGroups : 1> b{};
  if constexpr (kBias) {
#pragma unroll
    for (int g = 0; g < kGroups; ++g) {
      const int c = n0_out + int(cute::get<1>(coord(4 * g)));
      b.v[g] = c < n_out ? ldg_pair(bias + c) : Pair<Element>{};
    }
  }
  return b;
}

// At a tile's start, pull into L2 the residual rows its epilogue will read, so that the epilogue, a
// whole mainloop later, finds them in L2 rather than waiting on DRAM (layers, and the benchmarks,
// start with these cold). A hint only: prefetch.global.L2 returns no data, so in a chain it cannot read
// a residual row too early (the epilogue's own loads, ordered after the tile's waits, read the coherent L2).
template <int TileM, class Element>
__device__ __forceinline__ void prefetch_epilogue_inputs(const Element* residual, int M, int n_out, int m0,
                                                         int n0_out, int cols, int t) {
  constexpr int kLine = 128 / int(sizeof(Element));  // elements per 128-byte line
  const int c1 = min(n0_out + cols, n_out);
  if (t < TileM && residual != nullptr && m0 + t < M)
    for (int c = n0_out; c < c1; c += kLine) ptx::prefetch_l2(residual + size_t(m0 + t) * n_out + c);
}

// GeLU, ReLU or nothing on a pair of values (SwiGLU, which pairs two accumulators, is the loops' own).
template <Activation kAct>
__device__ __forceinline__ void activate_pair(float& v0, float& v1) {
  if constexpr (kAct == Activation::GeLU) {
    v0 = gelu(v0);
    v1 = gelu(v1);
  } else if constexpr (kAct == Activation::ReLU) {
    v0 = v0 < 0.f ? 0.f : v0;  // not fmaxf: a NaN (a race reading poison) must stay visible
    v1 = v1 < 0.f ? 0.f : v1;
  }
}

// The tile's output values: emit(row, col, pair) for every accumulator pair of this thread whose
// output element (m0 + row, n0_out + col) lies inside D, with pair = act(acc + bias[c] + residual[r, c])
// rounded once to Element.
//   accum, coord: a thread's accumulator values and their (row, col) inside the tile.
//   kBias: add the bias (one per output column, `bias`: load_tile_bias) and, when `residual` is not
//   null, residual[r, c] (same layout as D: a ResNet block's shortcut) before the activation, in fp32.
//   A compile-time switch so that the GEMMs' epilogue carries no bias code. In a chain the residual is
//   an earlier stage's output: its rows were complete before this tile's waits passed (every conv's
//   window contains its own pixels, so the chain of waits covers them transitively).
//   kBatchLoads: issue a chunk's residual loads before the first is used (see below).
//   SwiGLU pairs gate column c with up column c + tile_n/2: group g with group g + kGroups/2 of the
//   same rows.
//   share, kShare: with kShare, only the output columns of this unit's share (ColumnShare) are emitted.
//   A compile-time switch: the per-pair test made every whole tile's epilogue slower (it is
//   instruction-bound; same-call A/B, conv-epilogue-ab-h100-20261123-9eba403.txt: 128x128 3.39-3.68 ->
//   3.17-3.36 us and 128x64 1.63-1.98 -> 1.54-1.79 us per tile with the test compiled out).
//   kAct: one activation's loop; for_each_output_pair (below) dispatches the runtime activation to it
//   once, outside the loop.
// The loop over a thread's pairs, unrolled over the whole fragment.
template <Activation kAct, bool kBias, bool kBatchLoads, bool kShare, class Element, int kBiasGroups, class Accum,
          class Coord, class Emit>
__device__ __forceinline__ void for_each_output_pair_unrolled(Accum& accum, const Coord& coord, int M, int n_out,
                                                             int m0, int n0_out, const ColumnShare& share,
                                                             const TileBias<Element, kBiasGroups>& bias,
                                                             const Element* residual, Emit&& emit) {
  using Shape = AccumShape<Accum>;
  constexpr int kValues = Shape::kValues;
  if constexpr (kAct == Activation::SwiGLU) {
#pragma unroll
    for (int m = 0; m < Shape::kBlocks; ++m)
#pragma unroll
      for (int g = 0; g < Shape::kGroups / 2; ++g)
#pragma unroll
        for (int r2 = 0; r2 < 2; ++r2) {
          const int i = 2 * r2 + 4 * g + Shape::kPerBlock * m, up = i + 2 * Shape::kGroups;
          const int rl = int(cute::get<0>(coord(i))), cl = int(cute::get<1>(coord(i)));
          if (m0 + rl < M && n0_out + cl < n_out && (!kShare || share.has_output_group(g))) {
            const float v0 = silu(accum(i)) * accum(up), v1 = silu(accum(i + 1)) * accum(up + 1);
            emit(rl, cl, Pair<Element>{Element(v0), Element(v1)});
          }
        }
    return;
  }
  // Residual loads with kBatchLoads (the direct stores): each chunk's loads are all issued before the
  // first is used, so a chunk costs one L1/L2 round trip, not one per pair (ncu, 3x3 conv 64x56 N=32,
  // 128x64 tiles: loads issued pair by pair, each behind the previous pair's global store, made L1TEX
  // waits ~38% of the warps' stall cycles; batched: 0-5% faster, A/B in one device call,
  // bench/results/conv-ab-h100-20261123-3fef77a.txt). The staged path keeps pair-by-pair loads: its
  // stores go to shared memory, not ahead of the loads in the global queue. (Batching there looked
  // slower across device calls; retried in one call at session 10: the staged epilogue 3.30 -> 3.39 us
  // (128x64) and 6.8 -> 7.1 us (128x128) per tile, bench/results/conv-epilogue-h100-20261123.txt.)
  constexpr int kPairs = kValues / 2;
  constexpr int kChunk = !kBias || !kBatchLoads ? 1 : kPairs < 8 ? kPairs : 8;
  static_assert(kPairs % kChunk == 0, "accumulator pairs must split into whole chunks");
#pragma unroll
  for (int c0 = 0; c0 < kPairs; c0 += kChunk) {
    Pair<Element> s[kChunk];
    if constexpr (kBias) {
#pragma unroll
      for (int j = 0; j < kChunk; ++j) {
        const int i = 2 * (c0 + j);
        const int r = m0 + int(cute::get<0>(coord(i))), c = n0_out + int(cute::get<1>(coord(i)));
        s[j] = r < M && c < n_out && residual != nullptr && (!kShare || share.has_output_group((i / 4) % Shape::kGroups))
                   ? *reinterpret_cast<const Pair<Element>*>(residual + size_t(r) * n_out + c)
                   : Pair<Element>{};
      }
    }
#pragma unroll
    for (int j = 0; j < kChunk; ++j) {
      const int i = 2 * (c0 + j);
      const int rl = int(cute::get<0>(coord(i))), cl = int(cute::get<1>(coord(i)));
      if (m0 + rl < M && n0_out + cl < n_out && (!kShare || share.has_output_group((i / 4) % Shape::kGroups))) {
        float v0 = accum(i), v1 = accum(i + 1);
        if constexpr (kBias) {
          const Pair<Element> b = bias.v[(i / 4) % Shape::kGroups];
          v0 += float(b.a);  // the same order as the unfused ops: (acc + bias) + residual
          v1 += float(b.b);
          if (residual != nullptr) {
            v0 += float(s[j].a);
            v1 += float(s[j].b);
          }
        }
        activate_pair<kAct>(v0, v1);
        emit(rl, cl, Pair<Element>{Element(v0), Element(v1)});
      }
    }
  }
}

// One activation's loop. (Until session 60 GeLU's ran as a runtime loop over chunks of two output quads, the
// activation's code once per kernel: the erf form unrolled over a 64x128 tile was ~45 KB of a 181 KB kernel, fetched
// cold after every kernel switch, bench/results/epilogue-loop-gelu-ab-h100-20261125/. The tanh form takes six
// instructions a value, and unrolled like the other activations' it ran GPT-3's W1 0.5-1.5% faster at M = 128-768 on
// the H200, bench/results/gelu-unrolled-h200-20261129-7fbc9ae/.)
template <Activation kAct, bool kBias, bool kBatchLoads, bool kShare, class Element, int kBiasGroups, class Accum,
          class Coord, class Emit>
__device__ __forceinline__ void for_each_output_pair_as(Accum& accum, const Coord& coord, int M, int n_out, int m0,
                                                        int n0_out, const ColumnShare& share,
                                                        const TileBias<Element, kBiasGroups>& bias,
                                                        const Element* residual, Emit&& emit) {
  for_each_output_pair_unrolled<kAct, kBias, kBatchLoads, kShare>(accum, coord, M, n_out, m0, n0_out, share, bias,
                                                                  residual, emit);
}

// for_each_output_pair_as for the activation `act`. Every activation is compiled in, also for the
// convolutions (which refuse GeLU and SwiGLU): with only ReLU and none in them, ptxas laid out the rest
// of the conv kernels differently (+370 IMAD, +166 VIADD in the 128x128 whole-tile kernel) and the
// convolutions' times moved by -4..+5% (64x128 2-5% slower on five of eight layers; same-call A/B,
// bench/results/epilogue-loop-conv-ab-h100-20261125.txt). Compiled in, their SASS is the old one.
template <bool kBias, bool kBatchLoads, bool kShare, class Element, int kBiasGroups, class Accum, class Coord,
          class Emit>
__device__ __forceinline__ void for_each_output_pair(Accum& accum, const Coord& coord, Activation act, int M,
                                                     int n_out, int m0, int n0_out, const ColumnShare& share,
                                                     const TileBias<Element, kBiasGroups>& bias,
                                                     const Element* residual, Emit&& emit) {
  switch (act) {
    case Activation::SwiGLU:
      return for_each_output_pair_as<Activation::SwiGLU, kBias, kBatchLoads, kShare>(accum, coord, M, n_out, m0, n0_out, share, bias,
                                                                           residual, emit);
    case Activation::GeLU:
      return for_each_output_pair_as<Activation::GeLU, kBias, kBatchLoads, kShare>(accum, coord, M, n_out, m0, n0_out, share, bias,
                                                                         residual, emit);
    case Activation::ReLU:
      return for_each_output_pair_as<Activation::ReLU, kBias, kBatchLoads, kShare>(accum, coord, M, n_out, m0, n0_out, share, bias,
                                                                         residual, emit);
    default:
      return for_each_output_pair_as<Activation::None, kBias, kBatchLoads, kShare>(accum, coord, M, n_out, m0, n0_out, share, bias,
                                                                         residual, emit);
  }
}

// A pair of values as the 32-bit word stmatrix takes (the first in the low half), each rounded as
// Element(v) rounds it in the per-pair path: the same bits.
template <class Element>
__device__ __forceinline__ uint32_t pair_bits(float a, float b) {
  const Pair<Element> v{Element(a), Element(b)};
  uint32_t u;
  static_assert(sizeof(v) == sizeof(u), "a pair is 32 bits");
  memcpy(&u, &v, sizeof(u));
  return u;
}

// f(std::integral_constant<int, i>{}) for i = 0, 1, ..., in order: a loop whose index is a constant
// in every body (registers named by it), without relying on the unroller to fold it.
template <class F, int... I>
__device__ __forceinline__ void for_each_constant(F&& f, std::integer_sequence<int, I...>) {
  (f(std::integral_constant<int, I>{}), ...);
}

// The tile's output values, act(accumulators) rounded once to Element, written into a staging buffer
// at shared address `base` by stmatrix, in one of the two layouts the staged epilogues copy out of:
//   kPitch == 0: the TMA-stored epilogues' 64-column panels of kRows 128-byte rows with the 128-byte
//     swizzle (swizzled_offset: chunk c of row r at c ^ (r % 8)); kPanel < 0: every output column, panel
//     p at base + p kRows 128; kPanel >= 0: only that panel's 64 columns, at base.
//   kPitch > 0: store_tile_staged's padded rows of kPitch bytes (staging_pitch), every output column.
// A chunk is two adjacent output groups (8 columns each) of a warp's 16 rows -- 8 values per thread,
// four 8x8 matrices: (rows +0, group g), (+8, g), (+0, g + 1), (+8, g + 1) -- and one stmatrix .x4; lane
// l gives the address of row l % 8 (+8 for matrices 1 and 3) of group g + l / 16. (Swizzled: the warp's
// first row is a multiple of 8, so that row's chunk c lands at c ^ (l % 8). Padded: a pitch of 4 mod 8
// words puts the 8 rows of a matrix on distinct banks.) SwiGLU: output group g from gate group g and up
// group g + kGroups / 2 (AccumShape).
// No bounds tests and no column share: the buffer is the tile's own, and values of rows past M or
// columns past n_out (computed from the zeros TMA loads there), or outside a split tile's share (partial
// sums, ColumnShare), are staged and never leave it -- the copy-outs (the tensor map's clipping, the
// consumers' loops) take only D's rows and columns of the share. What the per-pair path
// (for_each_output_pair) spent per pair on addresses and tests -- a 128x128 kernel's ~400 once-per-CTA
// instructions, fetched cold after every kernel switch (bench/results/cold-code-h100-20261127/) -- is
// one address per chunk here.
template <Activation kAct, int kRows, int kPanel, int kPitch, class Element, class Accum, class Coord>
__device__ __forceinline__ void stage_rows_as(Accum& accum, const Coord& coord, uint32_t base) {
  using Shape = AccumShape<Accum>;
  constexpr bool kGlu = kAct == Activation::SwiGLU;
  constexpr int kOutGroups = kGlu ? Shape::kGroups / 2 : Shape::kGroups;
  static_assert(kPitch == 0 || (kPanel < 0 && kPitch % 16 == 0), "padded rows: whole tiles, 16-byte aligned rows");
  constexpr int kLo = kPanel < 0 ? 0 : 8 * kPanel;
  constexpr int kHi = kPanel < 0 || 8 * kPanel + 8 > kOutGroups ? kOutGroups : 8 * kPanel + 8;
  if constexpr (kLo < kHi) {
    static_assert(kLo % 2 == 0 && kHi % 2 == 0, "output groups in pairs");
    constexpr int kPairs = (kHi - kLo) / 2;  // chunks per 64-row block
    constexpr int kChunks = Shape::kBlocks * kPairs;
    const int lane = threadIdx.x % 32;
    const stsm::SwizzledRowsX4 sw(lane);
    const int row = int(cute::get<0>(coord(0))) - lane / 4 + int(sw.row);  // (the warp's first row + the lane's)
    const uint32_t at = kPitch == 0 ? base + uint32_t(row) * 128u : base + uint32_t(row) * kPitch + sw.sel * 16u;
    auto load = [&](auto chunk, float(&x)[8], float(&up)[8]) {
      constexpr int c = decltype(chunk)::value;
      constexpr int q = (c / kPairs) * Shape::kGroups + kLo + 2 * (c % kPairs);  // the first (gate) quad
#pragma unroll
      for (int e = 0; e < 8; ++e) {
        x[e] = accum(4 * q + e);
        if constexpr (kGlu) up[e] = accum(4 * (q + kOutGroups) + e);
      }
    };
    auto store = [&](int c, const float(&x)[8], const float(&up)[8]) {
      uint32_t w[4];
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        float v0 = x[2 * j], v1 = x[2 * j + 1];
        if constexpr (kGlu) {
          v0 = silu(v0) * up[2 * j];
          v1 = silu(v1) * up[2 * j + 1];
        } else {
          activate_pair<kAct>(v0, v1);
        }
        w[j] = pair_bits<Element>(v0, v1);
      }
      const int m = c / kPairs, g = kLo + 2 * (c % kPairs);
      const uint32_t off = kPitch == 0 ? uint32_t(m * 64 * 128 + ((g - kLo) / 8) * kRows * 128) + sw.chunk(g)
                                       : uint32_t(m * 64 * kPitch + g * 16);
      stsm::x4(at + off, w[0], w[1], w[2], w[3]);
    };
    for_each_constant(
        [&](auto chunk) {
          float x[8];
          [[maybe_unused]] float up[8];
          load(chunk, x, up);
          store(decltype(chunk)::value, x, up);
        },
        std::make_integer_sequence<int, kChunks>{});
  }
}

// stage_rows_as for the activation `act`, dispatched once, outside the loops.
template <int kRows, int kPanel, int kPitch, class Element, class Accum, class Coord>
__device__ __forceinline__ void stage_rows(Accum& accum, const Coord& coord, Activation act, uint32_t base) {
  switch (act) {
    case Activation::SwiGLU:
      return stage_rows_as<Activation::SwiGLU, kRows, kPanel, kPitch, Element>(accum, coord, base);
    case Activation::GeLU:
      return stage_rows_as<Activation::GeLU, kRows, kPanel, kPitch, Element>(accum, coord, base);
    case Activation::ReLU:
      return stage_rows_as<Activation::ReLU, kRows, kPanel, kPitch, Element>(accum, coord, base);
    default:
      return stage_rows_as<Activation::None, kRows, kPanel, kPitch, Element>(accum, coord, base);
  }
}

// Stores the tile's share of columns straight from the accumulators: each warp store writes 8 rows x
// 16 bytes (half sectors). Used by the instantiations that do not stage their output (EpilogueStore::Direct).
// A whole tile's stores carry no share test (for_each_output_pair's kShare).
template <bool kBias, class Element, int kBiasGroups, class Accum, class Coord>
__device__ __forceinline__ void store_tile(Accum& accum, const Coord& coord, Activation act, Element* D, int M,
                                           int n_out, int m0, int n0_out, const ColumnShare& share, bool whole,
                                           const TileBias<Element, kBiasGroups>& bias, const Element* residual) {
  auto emit = [&](int rl, int cl, Pair<Element> v) {
    store_pair(D + size_t(m0 + rl) * n_out + n0_out + cl, v);
  };
  if (whole) for_each_output_pair<kBias, true, false>(accum, coord, act, M, n_out, m0, n0_out, share, bias, residual, emit);
  else for_each_output_pair<kBias, true, true>(accum, coord, act, M, n_out, m0, n0_out, share, bias, residual, emit);
}

// Row pitch (elements) of the staging buffer: 16 bytes of padding put the 8 rows of a warp's 4-byte
// writes on distinct banks, and keep every row 16-byte aligned for the copy-out.
constexpr int staging_pitch(int tile_cols) { return tile_cols + 8; }

// Stores the tile through shared memory: the consumer threads write their value pairs into `buf`
// ([kRows][staging_pitch(kCols)]), then copy it out in 16-byte pieces, a row's bytes by consecutive
// threads (whole sectors and lines). Measured on an H100 (M=1024, N=12288, K=6144, 128x128 tiles): the
// direct stores' half-sector writes cost ~13% of the GEMM. Needs n_out % 8 == 0 and D 16-byte
// aligned; otherwise it copies element by element. The leading barrier keeps the
// previous tile's copy-out from overlapping this tile's writes; `threads` consumer threads meet at
// named barrier `bar`.
// Only the share's columns (whole 16-byte pieces: ColumnShare) are copied out. Staged by stmatrix,
// every column (stage_rows); with kBias (the convolutions) pair by pair, only the share's columns, a
// whole tile's (`whole`) with no per-pair share test (for_each_output_pair's kShare).
template <bool kBias, int kRows, int kCols, class Element, int kBiasGroups, class Accum, class Coord>
__device__ __forceinline__ void store_tile_staged(Accum& accum, const Coord& coord, Activation act, Element* D, int M,
                                                  int n_out, int m0, int n0_out, const ColumnShare& share, bool whole,
                                                  const TileBias<Element, kBiasGroups>& bias, const Element* residual,
                                                  Element* buf, int t, int threads, uint32_t bar) {
  constexpr int kPitch = staging_pitch(kCols);
  ptx::named_barrier_sync(bar, threads);
  if constexpr (kBias) {  // (the convolutions': bias and residual per pair, with its bounds tests)
    auto emit = [&](int rl, int cl, Pair<Element> v) { store_pair(buf + rl * kPitch + cl, v); };
    if (whole) for_each_output_pair<kBias, false, false>(accum, coord, act, M, n_out, m0, n0_out, share, bias, residual, emit);
    else for_each_output_pair<kBias, false, true>(accum, coord, act, M, n_out, m0, n0_out, share, bias, residual, emit);
  } else {  // every column, the share's copied out below
    stage_rows<kRows, -1, kPitch * int(sizeof(Element)), Element>(
        accum, coord, act, static_cast<uint32_t>(__cvta_generic_to_shared(buf)));
  }
  ptx::named_barrier_sync(bar, threads);
  const int rows = min(kRows, M - m0);
  const int c_end = min(share.hi, n_out - n0_out);  // the share's columns inside D
  if (n_out % 8 == 0 && (reinterpret_cast<uintptr_t>(D) & 15u) == 0) {  // rows of whole 16-byte pieces
    const int chunks = (share.hi - share.lo) / 8;  // 16-byte pieces per row
    for (int i = t; i < rows * chunks; i += threads) {
      const int rl = i / chunks, c8 = share.lo + (i - rl * chunks) * 8;
      if (c8 < c_end)
        *reinterpret_cast<uint4*>(D + size_t(m0 + rl) * n_out + n0_out + c8) =
            *reinterpret_cast<const uint4*>(buf + rl * kPitch + c8);
    }
  } else {
    const int width = c_end - share.lo;
    for (int i = t; i < rows * width; i += threads) {
      const int rl = i / width, c = share.lo + (i - rl * width);
      D[size_t(m0 + rl) * n_out + n0_out + c] = buf[rl * kPitch + c];
    }
  }
}

// The whole-tile epilogue with TMA stores (WarpSpecializedTraits::kTmaStore): the tile is staged in
// 64-column panels of 128-byte rows with the 128-byte swizzle (16-byte chunk c of row r at c ^ (r % 8):
// the 8 rows of each of a warp's stmatrix matrices, 16 bytes each, hit distinct banks; stage_rows),
// which is what a TMA box of 64 columns x kRows rows reads; thread 0 then issues one bulk tensor store
// per panel and the consumers go on to their next tile's MMAs at once -- the copy-out by all consumer
// threads that store_tile_staged does held them for it (short-K GEMMs: 15-20% of the time). Before the buffer is
// rewritten, thread 0 waits until the previous tile's stores have read it. Without a tensor map for D
// (`d_map` null: rows not 16-byte pieces, or a panel wider than the output tile) the consumers copy
// the staged tile out themselves, as store_tile_staged.
// swizzled_offset: that layout's byte offset of element (rl, cl), for the copy-outs and the convolutions'
// per-pair writes (the GEMMs' writes compute one address per stmatrix chunk instead: stage_rows). Unsigned:
// rl and cl are never negative, and the divisions by powers of two become shifts and masks without the
// sign fix-ups (in the per-pair path, ~400 instructions hoisted into a 128x128 kernel's prologue).
__device__ __forceinline__ uint32_t swizzled_offset(int rl, int cl, int rows) {
  const uint32_t r = uint32_t(rl), c = uint32_t(cl);
  return (c / 64) * uint32_t(rows) * 128 + r * 128 + ((((c % 64) / 8) ^ (r & 7)) << 4) + (c % 8) * 2;
}
template <bool kBias, int kRows, int kCols, class Element, int kBiasGroups, class Accum, class Coord>
__device__ __forceinline__ void store_tile_tma(Accum& accum, const Coord& coord, Activation act, Element* D, int M,
                                               int n_out, int m0, int n0_out, int tile_n_out,
                                               const TileBias<Element, kBiasGroups>& bias, const Element* residual,
                                               Element* buf, const CUtensorMap* d_map, int t, int threads, uint32_t bar) {
  unsigned char* bytes = reinterpret_cast<unsigned char*>(buf);
  if (t == 0) tma::store_wait_read();  // the previous tile's stores are done reading the buffer
  ptx::named_barrier_sync(bar, threads);
  const uint32_t base = static_cast<uint32_t>(__cvta_generic_to_shared(buf));
  if constexpr (kBias) {  // (the convolutions': bias and residual per pair, with its bounds tests)
    const ColumnShare share = ColumnShare::all(kCols, tile_n_out);
    auto emit = [&](int rl, int cl, Pair<Element> v) { store_pair(bytes + swizzled_offset(rl, cl, kRows), v); };
    for_each_output_pair<kBias, false, false>(accum, coord, act, M, n_out, m0, n0_out, share, bias, residual, emit);
  } else {
    stage_rows<kRows, -1, 0, Element>(accum, coord, act, base);
  }
  if (d_map != nullptr) {
    tma::fence_proxy_async_smem();
    ptx::named_barrier_sync(bar, threads);
    if (t == 0) {
      for (int pnl = 0; pnl < tile_n_out / 64; ++pnl) tma::store_2d(d_map, base + pnl * kRows * 128, n0_out + 64 * pnl, m0);
      tma::store_commit();
    }
    return;
  }
  ptx::named_barrier_sync(bar, threads);
  const int rows = min(kRows, M - m0), c_end = min(tile_n_out, n_out - n0_out);
  if (n_out % 8 == 0 && (reinterpret_cast<uintptr_t>(D) & 15u) == 0) {
    const int chunks = tile_n_out / 8;
    for (int i = t; i < rows * chunks; i += threads) {
      const int rl = i / chunks, c8 = (i - rl * chunks) * 8;
      if (c8 < c_end)
        *reinterpret_cast<uint4*>(D + size_t(m0 + rl) * n_out + n0_out + c8) =
            *reinterpret_cast<const uint4*>(bytes + swizzled_offset(rl, c8, kRows));
    }
  } else {
    for (int i = t; i < rows * c_end; i += threads) {
      const int rl = i / c_end, c = i - rl * c_end;
      D[size_t(m0 + rl) * n_out + n0_out + c] = *reinterpret_cast<const Element*>(bytes + swizzled_offset(rl, c, kRows));
    }
  }
}

// store_tile_tma for one warpgroup of a pingpong CTA (its tile's threads `threads`, barrier `bar`):
// the tile goes out one 64-column panel at a time through `panel` (kRows x 64, 128-byte swizzled rows,
// 1024-byte aligned: the warpgroup's half of the staging buffer), each panel one bulk tensor store. Before
// a panel is written, thread 0 waits until the previous panel's store has read the buffer. Half the
// buffer per warpgroup keeps the pipeline as deep as the cooperative staged kernel's; the waits between
// panels run while the other warpgroup's MMAs keep the tensor cores busy. Without a tensor map for D
// the warpgroup copies each panel out itself.
template <bool kBias, int kRows, int kCols, class Element, int kBiasGroups, class Accum, class Coord>
__device__ __forceinline__ void store_tile_tma_panels(Accum& accum, const Coord& coord, Activation act, Element* D,
                                                      int M, int n_out, int m0, int n0_out, int tile_n_out,
                                                      const TileBias<Element, kBiasGroups>& bias,
                                                      const Element* residual, Element* panel,
                                                      const CUtensorMap* d_map, int t, int threads, uint32_t bar) {
  static_assert(kCols % 64 == 0, "whole 64-column panels");
  unsigned char* bytes = reinterpret_cast<unsigned char*>(panel);
  const uint32_t base = static_cast<uint32_t>(__cvta_generic_to_shared(panel));
  // A loop of constants over the tile's panels: each panel's output groups are constants, so its pass holds
  // only its own chunks' code and the earlier panels' accumulators are dead (a runtime loop spilled 454 bytes).
  for_each_constant(
      [&](auto panel_index) {
        constexpr int pnl = decltype(panel_index)::value;
        const int lo = 64 * pnl;
        if (lo >= tile_n_out) return;  // (SwiGLU: the output tile is half as wide)
        if (t == 0) tma::store_wait_read();  // the previous panel's store is done reading the buffer
        ptx::named_barrier_sync(bar, threads);
        if constexpr (kBias) {
          const ColumnShare share = ColumnShare::make(lo, lo + 64, kCols, tile_n_out);
          auto emit = [&](int rl, int cl, Pair<Element> v) { store_pair(bytes + swizzled_offset(rl, cl - lo, kRows), v); };
          for_each_output_pair<kBias, false, true>(accum, coord, act, M, n_out, m0, n0_out, share, bias, residual, emit);
        } else {
          stage_rows<kRows, pnl, 0, Element>(accum, coord, act, base);
        }
        if (d_map != nullptr) {
          tma::fence_proxy_async_smem();
          ptx::named_barrier_sync(bar, threads);
          if (t == 0) {
            tma::store_2d(d_map, base, n0_out + lo, m0);
            tma::store_commit();
          }
          return;
        }
        ptx::named_barrier_sync(bar, threads);
        const int rows = min(kRows, M - m0), c_end = min(64, n_out - n0_out - lo);
        for (int i = t; i < rows * 64; i += threads) {
          const int rl = i / 64, c = i % 64;
          if (c < c_end)
            D[size_t(m0 + rl) * n_out + n0_out + lo + c] =
                *reinterpret_cast<const Element*>(bytes + swizzled_offset(rl, c, kRows));
        }
      },
      std::make_integer_sequence<int, kCols / 64>{});
}

// Split-K workspace layout: a thread's accumulator values in quads, quad q = values 4q .. 4q+3 (one
// 8-column group's two columns in rows r and r + 8: AccumShape), stored as a float4 at q * threads + t
// of the segment's slot. Consecutive threads' quads are contiguous (a warp's 16-byte stores and
// loads cover whole lines), and a quad is a 16-byte piece that cp.async can copy. A quad is stored,
// and read, when its first row is inside D (rows r + 8 >= M ride along: defined, never emitted).
template <class Coord>
__device__ __forceinline__ bool quad_live(const Coord& coord, int q, int M, int m0) {
  return m0 + int(cute::get<0>(coord(4 * q))) < M;
}

// This split's partial sums -> its slot of the tile's workspace, except the columns of `own` (what
// this segment reduces itself: none, unless reduce-scatter).
template <class Accum, class Coord>
__device__ __forceinline__ void store_partial(const Accum& accum, const Coord& coord, float4* slot, int t, int M,
                                              int m0, int threads, const ColumnShare& own) {
  constexpr int kQuads = AccumShape<Accum>::kValues / 4;
  constexpr int kGroups = AccumShape<Accum>::kGroups;
#pragma unroll
  for (int q = 0; q < kQuads; ++q)
    if (quad_live(coord, q, M, m0) && !own.has_accum_group(q % kGroups))
      __stcg(slot + q * threads + t, make_float4(accum(4 * q), accum(4 * q + 1), accum(4 * q + 2), accum(4 * q + 3)));
}

__device__ __forceinline__ void add_quad(float4& a, const float4& b) {
  a.x += b.x;
  a.y += b.y;
  a.z += b.z;
  a.w += b.w;
}

// accum <- partial_0 + partial_1 + ... + partial_{S-1} for the columns of `share`, in segment order
// whichever segment runs this (bit-identical results however the segments were scheduled, and
// whichever segment reduces which columns). `mine` is this segment's index: its partials are still
// in registers. Two ways to read the other segments' partials, the same sums:
//   registers (reduce_partials): in chunks of kChunk quads; for each segment the chunk's loads are
//     all issued before any is used, so a chunk costs one L2 round trip per segment (loading and
//     adding pair by pair cost one round trip per pair and segment: tens of microseconds per tile
//     under load). (Chunks of 8 quads made the 128x128 kernels spill ~400 bytes.)
//   shared memory (reduce_partials_smem, the staged epilogue's buffer, free until the tile's stores):
//     each thread copies its own quads of every other segment with cp.async (no registers held, so
//     all of them in flight at once) and sums them from shared memory -- one round trip per round
//     of quads that fit the buffer, instead of one per chunk and segment (trace phases of a split
//     128x128 tile: the chunked reads took 3.3-3.9 us, as long for a third of the data, i.e.
//     latency; bench/results/conv-rs-phases-h100-20261123.txt).
template <class Accum, class Coord>
__device__ __forceinline__ void reduce_partials(Accum& accum, const Coord& coord, const float4* tile_ws, int segs,
                                                int mine, int t, int M, int m0, int slot_quads, int threads,
                                                const ColumnShare& share) {
  constexpr int kQuads = AccumShape<Accum>::kValues / 4;
  constexpr int kGroups = AccumShape<Accum>::kGroups;
  constexpr int kChunk = kQuads < 4 ? kQuads : 4;
  static_assert(kQuads % kChunk == 0, "accumulator quads must split into whole chunks");
#pragma unroll
  for (int c0 = 0; c0 < kQuads; c0 += kChunk) {
    bool live[kChunk];
#pragma unroll
    for (int j = 0; j < kChunk; ++j)
      live[j] = quad_live(coord, c0 + j, M, m0) && share.has_accum_group((c0 + j) % kGroups);
    float4 sum[kChunk];
    for (int s = 0; s < segs; ++s) {
      float4 v[kChunk];
      if (s == mine) {
#pragma unroll
        for (int j = 0; j < kChunk; ++j) {
          const int q = c0 + j;
          v[j] = make_float4(accum(4 * q), accum(4 * q + 1), accum(4 * q + 2), accum(4 * q + 3));
        }
      } else {
        const float4* src = tile_ws + size_t(s) * slot_quads + t;
#pragma unroll
        for (int j = 0; j < kChunk; ++j) v[j] = live[j] ? __ldcg(src + (c0 + j) * threads) : make_float4(0.f, 0.f, 0.f, 0.f);
      }
#pragma unroll
      for (int j = 0; j < kChunk; ++j) {
        if (s == 0) sum[j] = v[j];
        else add_quad(sum[j], v[j]);
      }
    }
#pragma unroll
    for (int j = 0; j < kChunk; ++j) {
      const int q = c0 + j;
      accum(4 * q) = sum[j].x;
      accum(4 * q + 1) = sum[j].y;
      accum(4 * q + 2) = sum[j].z;
      accum(4 * q + 3) = sum[j].w;
    }
  }
}

// reduce_partials through shared memory: `buf` holds `slots` float4s per consumer thread and is free
// (only this thread's own copies are read back, so no barrier is needed between the copies and the
// sums; the caller's next barrier must come before anything else writes `buf`). The thread's quads
// to reduce (live rows, the share's groups; bit q of a mask: quad q) go in rounds; rank c of a round
// (the quad's place among the round's) has `peers` slots, slot j at (c peers + j) threads + t.
//   segs - 1 <= slots (the usual case): the other segments' quads all at once, one L2 round trip per
//     round. The sum in segment order, ((p_0 + p_1) + ...) with this segment's own quad (registers)
//     at its place: runtime loops add the others before it into the rank's first slot, an unrolled
//     loop adds own (mine first: p_1 + p_0 == p_0 + p_1), runtime loops add the rest.
//   more segments (stream-K tails; `own_stored`: the caller stored this segment's partials too):
//     every segment's quads from the workspace, in batches -- the first fills all slots, later ones
//     slots 1 .. with slot 0 the running sum.
// Only the unrolled loops touch the accumulators: runtime loops over segments inside them spilled ~1
// KB more, and a register-chunked fallback compiled into the same kernel cost the whole-tile
// convolutions 7-15% (its spills: net-h100-20261123-8d8d0c7).
__host__ __device__ constexpr bool smem_reduce_own_stored(int segs, int slots) { return segs - 1 > slots; }
template <class Accum, class Coord>
__device__ __forceinline__ void reduce_partials_smem(Accum& accum, const Coord& coord, const float4* tile_ws, int segs,
                                                     int mine, int t, int M, int m0, int slot_quads, int threads,
                                                     const ColumnShare& share, float4* buf, int slots) {
  using Shape = AccumShape<Accum>;
  constexpr int kQuads = Shape::kValues / 4;
  constexpr int kGroups = Shape::kGroups;
  static_assert(kQuads <= 32, "a thread's quads fit a 32-bit mask");
  const bool batched = smem_reduce_own_stored(segs, slots);
  const int peers = batched ? slots : segs - 1, per_round = slots / peers;
  uint32_t todo = 0;
#pragma unroll
  for (int q = 0; q < kQuads; ++q)
    if (share.has_accum_group(q % kGroups) && quad_live(coord, q, M, m0)) todo |= 1u << q;
  float4* mine_buf = buf + t;
  const uint32_t buf_base = static_cast<uint32_t>(__cvta_generic_to_shared(mine_buf));
  const uint32_t slot_bytes = uint32_t(threads) * 16u, rank_bytes = uint32_t(peers) * slot_bytes;
  const int rank_stride = peers * threads;
  // Segment s's quads of the round into slot `slot` of their ranks.
  auto copy = [&](uint32_t round, int s, int slot) {
    const float4* src = tile_ws + size_t(s) * slot_quads + t;
    const uint32_t dst = buf_base + uint32_t(slot) * slot_bytes;
    for (uint32_t m = round; m != 0; m &= m - 1u) {
      const int q = __ffs(m) - 1;
      const uint32_t c = __popc(round & ((1u << q) - 1u));
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst + c * rank_bytes), "l"(src + q * threads)
                   : "memory");
    }
  };
  auto wait_copies = [] { asm volatile("cp.async.commit_group;\n\tcp.async.wait_group 0;" ::: "memory"); };
  // slot 0 of every rank += slot j, for j in [j0, j1)
  auto add_slots = [&](int n, int j0, int j1) {
    for (int c = 0; c < n; ++c) {
      float4* r = mine_buf + c * rank_stride;
      for (int j = j0; j < j1; ++j) add_quad(r[0], r[j * threads]);
    }
  };
  while (todo != 0) {
    uint32_t round = 0;  // the next per_round quads still to do
    for (int i = 0; i < per_round && todo != 0; ++i) {
      round |= todo & (0u - todo);
      todo &= todo - 1u;
    }
    const int n = __popc(round);
    if (!batched) {
      for (int s = 0; s < segs; ++s)
        if (s != mine) copy(round, s, s < mine ? s : s - 1);
      wait_copies();
      const int own_after = mine > 0 ? mine : 1;  // own follows the others [0, own_after)
      add_slots(n, 1, own_after);
#pragma unroll
      for (int q = 0; q < kQuads; ++q)
        if ((round >> q) & 1u)
          add_quad(mine_buf[__popc(round & ((1u << q) - 1u)) * rank_stride],
                   make_float4(accum(4 * q), accum(4 * q + 1), accum(4 * q + 2), accum(4 * q + 3)));
      add_slots(n, own_after, segs - 1);
    } else {
      for (int lo = 0; lo < segs;) {
        const int first = lo == 0 ? 0 : 1, hi = min(segs, lo + peers - first);
        for (int s = lo; s < hi; ++s) copy(round, s, first + s - lo);
        wait_copies();
        add_slots(n, 1, first + hi - lo);
        lo = hi;
      }
    }
#pragma unroll
    for (int q = 0; q < kQuads; ++q)
      if ((round >> q) & 1u) {
        const float4 r = mine_buf[__popc(round & ((1u << q) - 1u)) * rank_stride];
        accum(4 * q) = r.x;
        accum(4 * q + 1) = r.y;
        accum(4 * q + 2) = r.z;
        accum(4 * q + 3) = r.w;
      }
  }
}

}  // namespace braid::hopper::detail
