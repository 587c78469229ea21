// FastDiv (core/fast_div.hpp) is exact: every quotient and remainder equals the hardware division's,
// for every divisor 1..4096 against a sweep of dividends, for every n of a few divisors exhaustively
// over 2^26 values, and at the edges of every power of two up to 2^32 - 1 (where the magic number
// is hardest). The tile orders and delinear with precomputed divisors agree with the plain formulas
// on every tile of many grids; the work schedule's split-K units are unchanged.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "braid/core/fast_div.hpp"
#include "braid/kernels/hopper/work_schedule.hpp"
#include "braid/order/tile_order.hpp"

using braid::FastDiv;

namespace {

// Dividends that stress a divisor d: around 0, around multiples of d, around powers of two, the top.
std::vector<uint32_t> edge_dividends(uint32_t d) {
  std::vector<uint32_t> n = {0u, 1u, 2u, 0x7fffffffu, 0x80000000u, 0x80000001u, 0xfffffffeu, 0xffffffffu};
  for (uint64_t k : {uint64_t(1), uint64_t(2), uint64_t(3), uint64_t(1000), uint64_t(0xffffffffu) / d}) {
    const uint64_t base = k * d;
    for (int64_t delta = -2; delta <= 2; ++delta) {
      const int64_t v = int64_t(base) + delta;
      if (v >= 0 && v <= int64_t(0xffffffffu)) n.push_back(uint32_t(v));
    }
  }
  for (int b = 1; b < 32; ++b) {
    n.push_back((1u << b) - 1);
    n.push_back(1u << b);
    n.push_back((1u << b) + 1);
  }
  return n;
}

void expect_exact(const FastDiv& f, uint32_t n) {
  const uint32_t d = f.d;
  uint32_t q = 0, r = 0;
  f.divmod(n, q, r);
  ASSERT_EQ(q, n / d) << "n=" << n << " d=" << d;
  ASSERT_EQ(r, n % d) << "n=" << n << " d=" << d;
  ASSERT_EQ(f.div(n), n / d);
  ASSERT_EQ(f.mod(n), n % d);
}

}  // namespace

TEST(FastDiv, SmallDivisorsAgainstEdgesAndRandomDividends) {
  std::mt19937 rng(12345);
  for (uint32_t d = 1; d <= 4096; ++d) {
    const FastDiv f(d);
    for (uint32_t n : edge_dividends(d)) expect_exact(f, n);
    for (int i = 0; i < 200; ++i) expect_exact(f, uint32_t(rng()));
    for (int i = 0; i < 50; ++i) expect_exact(f, uint32_t(rng()) % (64u * d));  // index-sized values
  }
}

TEST(FastDiv, LargeDivisorsAndPowersOfTwo) {
  std::mt19937 rng(777);
  std::vector<uint32_t> divisors = {0x7fffffffu, 0x80000000u, 0x80000001u, 0xfffffffeu, 0xffffffffu, 641u, 6700417u};
  for (int b = 0; b < 32; ++b) {
    const uint32_t p = 1u << b;
    divisors.push_back(p);
    if (p > 1) divisors.push_back(p - 1);
    divisors.push_back(p + 1);
  }
  for (int i = 0; i < 2000; ++i) divisors.push_back(uint32_t(rng()) | 1u), divisors.push_back(uint32_t(rng()) >> (i % 31));
  for (uint32_t d : divisors) {
    if (d == 0) continue;
    const FastDiv f(d);
    for (uint32_t n : edge_dividends(d)) expect_exact(f, n);
    for (int i = 0; i < 100; ++i) expect_exact(f, uint32_t(rng()));
  }
}

TEST(FastDiv, ExhaustiveForTypicalExtents) {
  // Grid extents and split counts the kernels divide by (3 and 7: odd, 96 and 132: tiles and SMs,
  // 49: 7x7 pixels); every dividend below 2^26 (index-sized) and a stride through the rest.
  for (uint32_t d : {3u, 7u, 49u, 96u, 132u, 1000u}) {
    const FastDiv f(d);
    for (uint32_t n = 0; n < (1u << 26); ++n) {
      if (f.div(n) != n / d || f.mod(n) != n % d) FAIL() << "n=" << n << " d=" << d;
    }
    for (uint64_t n = 1u << 26; n <= 0xffffffffu; n += 65521) expect_exact(f, uint32_t(n));
  }
}

TEST(FastDiv, ZeroDivisorDoesNotTrap) {
  const FastDiv f(0u);
  uint32_t q = 1, r = 1;
  f.divmod(1234u, q, r);
  EXPECT_EQ(q, 1234u);
  EXPECT_EQ(r, 1234u);
}

TEST(IndexedGrid, OrdersMatchThePlainFormulas) {
  using braid::Grid;
  using braid::IndexedGrid;
  using braid::OrderKind;
  using braid::Tile;
  using braid::TileOrder;
  const std::vector<Grid> grids = {{1, 1, 1}, {7, 3, 1}, {3, 7, 2}, {48, 1, 1}, {1, 48, 1}, {96, 4, 1},
                                   {36, 12, 3}, {13, 17, 5}, {128, 96, 1}, {5, 1, 40}};
  for (const Grid& g : grids) {
    const IndexedGrid ig(g);
    EXPECT_EQ(ig.x, g.x);
    EXPECT_EQ(ig.y, g.y);
    EXPECT_EQ(ig.z, g.z);
    std::vector<uint32_t> table(size_t(braid::num_tiles(g)));
    for (uint32_t i = 0; i < table.size(); ++i) table[i] = uint32_t(table.size()) - 1 - i;  // reversed
    for (uint32_t i = 0; i < braid::num_tiles(g) + 3; ++i) {  // (+3: indices past the grid, as tickets run out)
      const Tile plain{i % g.x, (i / g.x) % g.y, i / (g.x * g.y)};
      EXPECT_EQ(braid::delinear(i, ig), plain) << i;
      EXPECT_EQ(braid::delinear(i, g), plain) << i;
      const TileOrder row{OrderKind::RowMajor, nullptr}, col{OrderKind::ColumnMajor, nullptr};
      EXPECT_EQ(row.at(i, ig), plain);
      const Tile col_plain{(i / g.y) % g.x, i % g.y, i / (g.x * g.y)};
      EXPECT_EQ(col.at(i, ig), col_plain) << i;
      EXPECT_EQ(col.at(i, g), col_plain) << i;
      if (i < table.size()) {
        const TileOrder tab{OrderKind::Table, table.data()};
        EXPECT_EQ(tab.at(i, ig), braid::delinear(table[i], g));
      }
    }
  }
}

TEST(IndexedGrid, SplitKUnitsUseTheSplitDivisor) {
  using namespace braid::hopper;
  for (uint32_t splits : {2u, 3u, 5u, 8u})
    for (uint32_t k_tiles : {7u, 24u, 72u, 193u}) {
      const WorkSchedule s = WorkSchedule::make(Decomposition::SplitK, 37, k_tiles, 132, splits);
      for (uint32_t u = 0; u < 37 * splits; ++u) {
        WorkUnit w;
        s.unit_at(u, w);
        EXPECT_EQ(w.pos, u / splits);
        EXPECT_EQ(w.seg, u % splits);
        EXPECT_EQ(w.k_begin, uint32_t(uint64_t(u % splits) * k_tiles / splits));
        EXPECT_EQ(w.k_end, uint32_t(uint64_t(u % splits + 1) * k_tiles / splits));
      }
    }
  EXPECT_THROW(WorkSchedule::make(Decomposition::SplitK, 4, 0x40000000u, 132, 4), std::invalid_argument);
}
