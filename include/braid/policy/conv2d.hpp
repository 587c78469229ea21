// Conv2DTileSync: tile dependencies between two implicit-GEMM convolutions.
//
// The producer convolution writes an NHWC tensor Y[N, H, W, C] viewed as a GEMM output of
// N*H*W rows (pixels, row m = (n*H + h)*W + w) by C columns, tiled tile_m x tile_n. The consumer
// convolution (R x S filter, padding pad, stride 1, same H x W) reads, for each output pixel, the
// R x S window of input pixels around it, all C channels. So a consumer row-tile needs the producer
// row-tiles covering its pixels shifted by every window offset, for every producer column-tile.
// Producer side it is per-tile synchronization (or per-row: see the `policy` member); consumer side,
// `for_each_producer_tile` enumerates the window. Pure index math, host and device.
#pragma once
#include "braid/core/types.hpp"
#include "braid/policy/policy.hpp"

namespace braid {

struct Conv2DWindow {
  uint32_t N = 1, H = 1, W = 1;  // consumer input = producer output image size
  uint32_t R = 3, S = 3, pad = 1;
  uint32_t tile_m = 128;  // rows (pixels) per producer tile
  uint32_t tile_n = 128;  // channels per producer tile
  uint32_t C = 64;        // producer output channels

  BRAID_HD constexpr uint32_t pixels() const { return N * H * W; }
  BRAID_HD constexpr Grid producer_grid() const { return Grid{ceil_div(C, tile_n), ceil_div(pixels(), tile_m), 1}; }

  // Producer row-tiles [lo, hi] read by consumer rows [m0, m1] for window offset (r, s).
  // Conservative in the flattened index (a superset near image borders), never a subset.
  BRAID_HD constexpr void row_tiles_for_offset(uint32_t m0, uint32_t m1, uint32_t r, uint32_t s, uint32_t& lo,
                                               uint32_t& hi) const {
    const int64_t shift = (int64_t(r) - pad) * W + (int64_t(s) - pad);
    int64_t a = int64_t(m0) + shift, b = int64_t(m1) + shift;
    const int64_t last = int64_t(pixels()) - 1;
    a = a < 0 ? 0 : (a > last ? last : a);
    b = b < 0 ? 0 : (b > last ? last : b);
    lo = uint32_t(a) / tile_m;
    hi = uint32_t(b) / tile_m;
  }
  // Producer row-tiles [lo, hi] read by consumer row-tile y (consumer tile height cons_tile_m) over
  // the whole window.
  BRAID_HD constexpr void row_tiles(uint32_t y, uint32_t cons_tile_m, uint32_t& lo, uint32_t& hi) const {
    const uint32_t m0 = y * cons_tile_m;
    uint32_t m1 = m0 + cons_tile_m - 1;
    if (m1 >= pixels()) m1 = pixels() - 1;
    uint32_t lo0 = 0, hi0 = 0, lo1 = 0, hi1 = 0;
    row_tiles_for_offset(m0, m1, 0, 0, lo0, hi0);
    row_tiles_for_offset(m0, m1, R - 1, S - 1, lo1, hi1);
    lo = lo0 < lo1 ? lo0 : lo1;
    hi = hi0 > hi1 ? hi0 : hi1;
  }
  // Visit every producer tile a consumer tile (row-tile y) depends on.
  template <class F>
  BRAID_HD void for_each_producer_tile(Tile consumer, uint32_t cons_tile_m, F&& f) const {
    uint32_t lo = 0, hi = 0;
    row_tiles(consumer.y, cons_tile_m, lo, hi);
    const Grid g = producer_grid();
    for (uint32_t y = lo; y <= hi; ++y)
      for (uint32_t x = 0; x < g.x; ++x) f(Tile{x, y, 0});
  }
};

// The producer-side policy of Conv2DTileSync: one semaphore per producer tile.
inline constexpr GroupPolicy Conv2DTileSync() { return GroupPolicy{PolicyKind::Conv2DTileSync, {}}; }

}  // namespace braid
