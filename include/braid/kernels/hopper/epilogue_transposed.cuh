// The epilogue of braid's transposed Hopper GEMM (GemmConfig::transposed; gemm_kernel.cuh), and D's
// tensor map for it. Included only by the transposed instantiation units (src/hopper/instances/*_t.cu);
// gemm_kernel.cuh declares both.
//
// The MMA computed D^T, so a thread's accumulator pairs are two adjacent tokens (rows of D) of one weight
// column (a column of D): straight to D they would be scattered 2-byte stores. Instead the tile goes out
// one panel of 64 output columns at a time through TileM x 64 staging buffers in the 128-byte swizzled
// layout a TMA box of 64 columns x TileM rows reads (16-byte chunk c of row r at c ^ (r % 8)): the
// consumers write their values into one transposed (stmatrix .trans: 8x8 blocks of 16-bit values, 16-byte
// rows; until 2026-11-27 two-byte shared stores, 8x the instructions), thread 0 issues the panel's bulk tensor
// store, and the consumers go on to the next panel (or tile) in the next buffer of a ring of kBufs
// (WarpSpecializedTraits::kPanelBufs: what fits beside the pipeline) -- waiting, before they rewrite a
// buffer, only until the store that last read it is done reading. (With one buffer, a panel's writes
// waited for the previous panel's store: a 64x320 tile's five panels went out one after another.) A panel narrower than 64 columns (the tile's last output columns when
// the tile is not whole 64-column panels; SwiGLU's odd 64-row block), or a D that has no tensor map (rows
// not whole 16-byte pieces), is copied out by the consumer threads instead (16-byte pieces, or elements).
//
// Fragment (wgmma 64 x N per warpgroup, the tile's weights repeated in 64-row blocks; AccumShape): value
// i = c2 + 2 r2 + 4 g + 4 G mb of a thread is weight column 16 w + l + 8 r2 + 64 mb (w: warp in the
// warpgroup, l = lane / 4) and token 8 g + 2 (lane % 4) + c2 of its warpgroup's tokens -- read from the
// partitioned identity tensor `coord` (the thread's first value) and the fragment's strides.
//
// SwiGLU: the weight is packed in 16-column blocks (8 gate, 8 up: kTransposedSwigluBlock), so gate column
// 16 j + l and its up column 16 j + 8 + l are a thread's values with r2 = 0 and r2 = 1 (i and i + 2), and
// the output column is 8 j + l: two 64-row blocks of weights make one 64-column output panel.
//
// Bank conflicts of the panel writes: each of an stmatrix's 8x8 matrices is 8 token rows of one 16-byte
// chunk, and the swizzle puts the 8 rows' chunks on distinct banks.
#pragma once
#include <cuda_runtime.h>

#include "braid/kernels/common/tma_sm90.cuh"
#include "braid/kernels/hopper/gemm_kernel.cuh"

namespace braid::hopper::detail {

// (pair_bits: epilogue.cuh; stmatrix: common/stmatrix_sm90.cuh.)
template <Activation kAct, int kRows, int kCols, int kBufs, class Params, class Element, class Accum, class Coord>
__device__ __forceinline__ void store_tile_transposed_as(Accum& accum, const Coord& coord, const Params& p, int m0,
                                                         int n0_out, Element* buf, int t, int threads, uint32_t bar,
                                                         bool publish) {
  using Shape = AccumShape<Accum>;
  static_assert(Shape::kBlocks == kCols / 64, "the MMA's M is the tile's weight columns, in 64-row blocks");
  constexpr bool kGlu = kAct == Activation::SwiGLU;
  constexpr int kBlocksPerPanel = kGlu ? 2 : 1;  // 64-row blocks of weights per 64-column output panel
  constexpr int kPanels = (Shape::kBlocks + kBlocksPerPanel - 1) / kBlocksPerPanel;
  const int M = p.M, n_out = p.n_out;
  Element* D = p.D;
  const int rows = min(kRows, M - m0);
  unsigned char* bytes = reinterpret_cast<unsigned char*>(buf);
  const uint32_t base = static_cast<uint32_t>(__cvta_generic_to_shared(buf));
  const bool whole_pieces = n_out % 8 == 0 && (reinterpret_cast<uintptr_t>(D) & 15u) == 0;
  // Where this thread's values land in the panel, from its first value's (weight column wc0, token tok0)
  // and the fragment's strides (AccumShape): value (c2, r2, g) of a 64-row block is token tok0 + 8 g + c2,
  // weight column wc0 + 8 r2 (+ 64 per block); wc0 = 16 w + l, tok0 = 2 (lane % 4) + the warpgroup's first
  // token. A warp's values of 8 tokens x 8 output columns are an 8x8 matrix in stmatrix's fragment (thread:
  // column l, rows 2 (lane % 4) + c2), and one stmatrix .x4 .trans stores four of them transposed -- tokens
  // as rows, 16 bytes of 8 output columns each, at the addresses lanes 8k..8k+7 give for matrix k:
  //   without SwiGLU, matrices (r2, g), (r2 + 1, g), (r2, g + 1), (r2 + 1, g + 1) of the panel's block:
  //     chunks wc0 / 8 and wc0 / 8 + 1 (8 columns on) of token groups g, g + 1;
  //   SwiGLU (packed in 16-column blocks, kTransposedSwigluBlock: value i's up value is i + 2, output column
  //     8 j + l of gate column 16 j + l), matrices (b, g), (b + 1, g), (b, g + 1), (b + 1, g + 1) of the
  //     panel's two blocks: chunks wc0 / 16 and wc0 / 16 + 4 (32 output columns on); a lone last block (a
  //     192-wide tile's third) by stmatrix .x2, matrices (0, g), (0, g + 1).
  // Row r's chunk c sits at c ^ (r % 8) (the 128-byte swizzle); the warpgroup's first token is a multiple
  // of 8, so that is c ^ (lane % 8) for the row lane gives.
  static_assert(Shape::kGroups % 2 == 0, "8-token groups in pairs");
  static_assert(kBufs >= 1, "at least one panel buffer");
  constexpr uint32_t kPanelBytes = uint32_t(kRows) * 128;  // (1024-byte aligned: the swizzle's atom)
  const int wc0 = int(cute::get<0>(coord(0))), tok0 = int(cute::get<1>(coord(0)));
  const int lane = threadIdx.x % 32;
  const int chunk0 = kGlu ? wc0 / 16 : wc0 / 8;
  constexpr int kSecondChunk = kGlu ? 4 : 1;
  const int tok4 = tok0 - 2 * (lane % 4) + 8 * (lane / 16) + lane % 8;
  const uint32_t addr4 = base + uint32_t(tok4 * 128 + (((chunk0 + kSecondChunk * ((lane / 8) % 2)) ^ (lane % 8)) << 4));
  const int tok2 = tok0 - 2 * (lane % 4) + 8 * ((lane / 8) % 2) + lane % 8;
  const uint32_t addr2 = base + uint32_t(tok2 * 128 + ((chunk0 ^ (lane % 8)) << 4));
  auto value = [&](int i) {
    float v = accum(i);
    if constexpr (kGlu) v = silu(v) * accum(i + 2);
    else if constexpr (kAct == Activation::GeLU) v = gelu(v);
    return v;
  };
  auto pair = [&](int i) { return pair_bits<Element>(value(i), value(i + 1)); };  // (c2 = 0, 1)
#pragma unroll
  for (int q = 0; q < kPanels; ++q) {
    const int lo = 64 * q;  // the panel's first output column in the tile
    // The panel's output columns: 64, or 32 where SwiGLU's last 64-row block is alone (a 192-wide tile's
    // 96 output columns) -- never more, or the copy-out would overwrite the next tile's first columns.
    const int blocks = min(kBlocksPerPanel, Shape::kBlocks - q * kBlocksPerPanel);
    const int width = blocks * (kGlu ? 32 : 64);
    const int cols = min(width, n_out - n0_out - lo);
    if (cols <= 0) break;  // (the tile's last columns lie past D)
    const bool by_tma = p.d_tma && width == 64;  // a whole 64-column panel (the map clips it at D's edges)
    // The panel's buffer. Only a tile's last panel may be copied out by the threads (SwiGLU's lone block),
    // so with a tensor map every earlier panel committed one bulk group: before panel q rewrites the
    // buffer of panel q - kBufs, all but the kBufs - 1 latest groups must have been read. A tile's first
    // panel waits for every store before it (the previous tile's), so panels 1 .. kBufs - 1 need no wait.
    // Without a tensor map every panel is copied out: one buffer, a barrier before each rewrite.
    const uint32_t off = p.d_tma ? uint32_t(q % kBufs) * kPanelBytes : 0u;
    if (q == 0 || !p.d_tma || q >= kBufs) {
      if (t == 0) {
        if (q == 0) tma::store_wait_read();
        else tma::store_wait_read_but<kBufs - 1>();
      }
      ptx::named_barrier_sync(bar, threads);  // ... and every thread's copy-out of the buffer is done
    }
    const int i0 = Shape::kPerBlock * q * kBlocksPerPanel;  // value (0, 0, 0) of the panel's (first) block
#pragma unroll
    for (int g = 0; g < Shape::kGroups; g += 2) {
      const int i = i0 + 4 * g;
      const uint32_t at = uint32_t(g * 8 * 128);  // token group g's rows
      if constexpr (!kGlu)
        stsm::x4_trans(addr4 + off + at, pair(i), pair(i + 2), pair(i + 4), pair(i + 6));
      else if (blocks == 2)
        stsm::x4_trans(addr4 + off + at, pair(i), pair(i + Shape::kPerBlock), pair(i + 4), pair(i + Shape::kPerBlock + 4));
      else
        stsm::x2_trans(addr2 + off + at, pair(i), pair(i + 4));
    }
    if (by_tma) {
      tma::fence_proxy_async_smem();  // the generic-proxy writes, before the async proxy reads them
      ptx::named_barrier_sync(bar, threads);
      if (t == 0) {
        tma::store_2d(&p.d_map, base + off, n0_out + lo, m0);  // (rows past M clipped by the tensor map)
        tma::store_commit();
      }
      continue;
    }
    ptx::named_barrier_sync(bar, threads);
    Element* out = D + size_t(m0) * n_out + n0_out + lo;
    if (whole_pieces) {  // cols is a multiple of 8 here
      for (int k = t; k < rows * 8; k += threads) {
        const int r = k / 8, c8 = (k % 8) * 8;
        if (c8 < cols)
          *reinterpret_cast<uint4*>(out + size_t(r) * n_out + c8) =
              *reinterpret_cast<const uint4*>(bytes + off + swizzled_offset(r, c8, kRows));
      }
    } else {
      for (int k = t; k < rows * 64; k += threads) {
        const int r = k / 64, c = k % 64;
        if (c < cols) out[size_t(r) * n_out + c] = *reinterpret_cast<const Element*>(bytes + off + swizzled_offset(r, c, kRows));
      }
    }
  }
  // Someone reads the tile's completion: its bulk stores must be performed before the post (the poster's
  // release is cumulative over the barrier this thread arrives on next).
  if (publish && p.d_tma && t == 0) {
    tma::store_wait_all();
    ptx::fence_proxy_async_global();
  }
}

template <int kRows, int kCols, int kBufs, class Params, class Element, class Accum, class Coord>
__device__ __forceinline__ void store_tile_transposed(Accum& accum, const Coord& coord, const Params& p, int m0,
                                                      int n0_out, Element* buf, int t, int threads, uint32_t bar,
                                                      bool publish, Activation act) {
  switch (act) {
    case Activation::GeLU:
      return store_tile_transposed_as<Activation::GeLU, kRows, kCols, kBufs>(accum, coord, p, m0, n0_out, buf, t, threads,
                                                                             bar, publish);
    case Activation::SwiGLU:
      return store_tile_transposed_as<Activation::SwiGLU, kRows, kCols, kBufs>(accum, coord, p, m0, n0_out, buf, t,
                                                                               threads, bar, publish);
    default:  // (ReLU is the convolutions'; GemmOp refuses it)
      return store_tile_transposed_as<Activation::None, kRows, kCols, kBufs>(accum, coord, p, m0, n0_out, buf, t, threads,
                                                                             bar, publish);
  }
}

// D [M, n_out] as boxes of 64 columns x kRows rows with the 128-byte swizzle, where its rows are whole
// 16-byte pieces (else d_tma stays 0 and the consumers copy every panel out).
template <int kRows, class Params>
void set_transposed_output_map(Params& p) {
  p.d_tma = 0;
  if (p.n_out % 8 == 0 && (reinterpret_cast<uintptr_t>(p.D) & 15u) == 0 &&
      tma::encode_2d(p.d_map, p.D, 2, uint64_t(p.n_out), uint64_t(p.M), uint64_t(p.n_out) * 2, 64, kRows).empty())
    p.d_tma = 1;
}

}  // namespace braid::hopper::detail
