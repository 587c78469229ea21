// Exact unsigned 32-bit division by a divisor fixed before launch: a multiply-high, an add and a shift
// instead of the ~18-instruction reciprocal sequence the compiler inlines for every runtime `/` or `%`.
//
// Why: the persistent Hopper kernels index tiles, units and semaphores with runtime extents (grids,
// split counts, CTA groups) at many inlined call sites -- producer, consumers and poster each carry
// their own copy of the scheduler. nvdisasm line attribution of a 128x64 convolution kernel (13,968
// SASS instructions) put 277 inlined 32-bit divisions and ~7,500 instructions in that index math
// (types.hpp's delinear alone: 112 divisions), much of it on the waits' and posts' path. Code a CTA
// runs once is fetched cold after a switch from another kernel function -- measured to be what the
// kernel-switch penalty is (docs/hopper-gemm.md, "Index math without divisions").
//
// The divisor's magic number is computed on the host (construction), the division runs anywhere.
// Method: Granlund & Montgomery, "Division by invariant integers using multiplication" (1994), round-up
// variant: l = ceil(log2 d), m = floor(2^32 (2^l - d) / d) + 1 (fits 32 bits), q = (mulhi(m, n) + n) >> l
// with the sum taken in 64 bits. Exact for every n < 2^32 and every d >= 1 (tests/unit/test_fast_div.cpp
// checks it against the hardware division for every divisor up to 4096 and thousands of larger ones, at the
// edges of their multiples and of every power of two, and for every n < 2^26 with typical extents).
#pragma once
#include <cstdint>

#include "braid/core/types.hpp"

namespace braid {

struct FastDiv {
  uint32_t d = 1;  // the divisor
  uint32_t m = 1;  // magic multiplier (m - 2^32 of the round-up method's 33-bit multiplier)
  uint32_t l = 0;  // shift: ceil(log2 d)

  constexpr FastDiv() = default;
  // Host side (constexpr: also usable in constant expressions). d = 0 (an empty extent, never divided
  // by) gives quotient n and remainder n, no trap.
  constexpr explicit FastDiv(uint32_t divisor) : d(divisor), m(0), l(0) {
    if (divisor == 0) return;
    uint32_t log = 0;
    while (log < 32 && (uint64_t(1) << log) < divisor) ++log;
    l = log;
    m = uint32_t(((uint64_t(1) << 32) * ((uint64_t(1) << log) - divisor)) / divisor + 1);
  }

  BRAID_HD uint32_t div(uint32_t n) const {
#if defined(__CUDA_ARCH__)
    const uint32_t t = __umulhi(m, n);
#else
    const uint32_t t = uint32_t((uint64_t(m) * n) >> 32);
#endif
    return uint32_t((uint64_t(t) + n) >> l);
  }
  BRAID_HD uint32_t mod(uint32_t n) const { return n - div(n) * d; }
  BRAID_HD void divmod(uint32_t n, uint32_t& q, uint32_t& r) const {
    q = div(n);
    r = n - q * d;
  }
};

// A grid with the divisors of its row-major and column-major index math (FastDiv of x and y):
// what kernels index tiles with (StageParams::grid, InputRef::grid). Built from a Grid on the host --
// the conversion computes the divisors, so assigning a Grid keeps them in step; x, y, z read as a
// Grid's (never assign them one by one).
struct IndexedGrid : Grid {
  FastDiv div_x, div_y;

  constexpr IndexedGrid() : IndexedGrid(Grid{1, 1, 1}) {}
  constexpr IndexedGrid(Grid g) : Grid(g), div_x(g.x), div_y(g.y) {}  // NOLINT: implicit by design
};

// delinear(i, g) with the grid's divisors: (i / x) / y == i / (x * y).
BRAID_HD Tile delinear(uint32_t i, const IndexedGrid& g) {
  uint32_t q, x, z, y;
  g.div_x.divmod(i, q, x);
  g.div_y.divmod(q, z, y);
  return Tile{x, y, z};
}

}  // namespace braid
