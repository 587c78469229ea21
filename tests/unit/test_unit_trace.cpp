// The per-unit trace summary (braid-gemm --unit-trace): hand-built records of two CTAs, one tile cut
// into two segments, with known times.
#include <gtest/gtest.h>

#include "braid/bench/unit_trace.hpp"

using braid::hopper::UnitTrace;

TEST(UnitTraceSummary, SplitsTimeIntoMainloopFixupEpilogueAndIdle) {
  auto rec = [](uint32_t block, uint64_t start, uint64_t ml, uint64_t fix, uint64_t end, uint16_t kb, uint16_t ke,
                uint16_t seg, uint16_t nseg, uint32_t reduced) {
    UnitTrace r{};
    r.start_ns = start;
    r.mainloop_end_ns = ml;
    r.fixup_end_ns = fix;
    r.end_ns = end;
    r.k_begin = kb;
    r.k_end = ke;
    r.seg = seg;
    r.nseg = nseg;
    r.block = block;
    r.reduced = reduced;
    return r;
  };
  std::vector<UnitTrace> recs = {
      // block 0: a whole tile (10 k-steps, 10 us mainloop, 2 us epilogue), then segment 0 of a split tile
      rec(0, 1000, 11000, 11000, 13000, 0, 10, 0, 1, 1),
      rec(0, 14000, 19000, 20000, 20000, 0, 5, 0, 2, 0),
      // block 1 starts 2 us later: segment 1 of the split tile, reduces it (fixup 3 us, epilogue 2 us)
      rec(1, 3000, 8000, 11000, 13000, 5, 10, 1, 2, 1),
      UnitTrace{},  // an unused record
  };
  const auto s = braid::bench::summarize_unit_trace(recs);
  EXPECT_EQ(s.units, 3);
  EXPECT_DOUBLE_EQ(s.span_us, 19.0);
  EXPECT_DOUBLE_EQ(s.mainloop_per_kstep_us, (10.0 + 5.0 + 5.0) / 20.0);
  EXPECT_EQ(s.passing, 1);
  EXPECT_EQ(s.reducing, 1);
  EXPECT_EQ(s.stored, 2);
  EXPECT_DOUBLE_EQ(s.fixup_passing_us, 1.0);
  EXPECT_DOUBLE_EQ(s.fixup_reducing_us, 3.0);
  EXPECT_DOUBLE_EQ(s.epilogue_us, 2.0);
  EXPECT_DOUBLE_EQ(s.cta_start_us, 1.0);        // (0 + 2) / 2
  EXPECT_DOUBLE_EQ(s.gap_us, 1.0);              // block 0: 13 -> 14
  EXPECT_DOUBLE_EQ(s.idle_end_us, (0.0 + 7.0) / 2);
  EXPECT_NE(braid::bench::describe(s).find("span 19.0 us"), std::string::npos);
  EXPECT_EQ(braid::bench::summarize_unit_trace({}).units, 0);
}
