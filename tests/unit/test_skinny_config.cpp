// The skinny GEMM's configuration names and their parser (braid-bench-mlp --skinny, the autotuner's
// cache keys): every name parses back to the same configuration, and malformed names are rejected
// with a message instead of being read as something else.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "braid/kernels/skinny/skinny_config.hpp"

using braid::skinny::parse_skinny_config;
using braid::skinny::SkinnyConfig;

TEST(SkinnyConfig, NamesRoundTrip) {
  for (SkinnyConfig c : {SkinnyConfig{2, 4, 0}, SkinnyConfig{1, 8, 0}, SkinnyConfig{1, 6, 48}, SkinnyConfig{2, 4, 264},
                         SkinnyConfig{1, 4, 0, true}, SkinnyConfig{2, 6, 0, true}}) {
    const SkinnyConfig back = parse_skinny_config(c.name());
    EXPECT_EQ(back.name(), c.name());
    EXPECT_EQ(back.stages, c.stages);
    EXPECT_EQ(back.ctas, c.ctas);
    EXPECT_EQ(back.aligned, c.aligned);
    if (c.ctas == 0) EXPECT_EQ(back.ctas_per_sm, c.ctas_per_sm);
  }
  EXPECT_EQ(SkinnyConfig{}.name(), "skinny-p2s4");
  const SkinnyConfig c = parse_skinny_config("c96s8");
  EXPECT_EQ(c.ctas, 96);
  EXPECT_EQ(c.stages, 8);
  EXPECT_EQ(c.name(), "skinny-c96s8");
  EXPECT_TRUE(parse_skinny_config("skinny-a1s4").aligned);
  EXPECT_EQ(parse_skinny_config("a1s4").name(), "skinny-a1s4");
  const SkinnyConfig d = parse_skinny_config("skinny-a2s6-dsm");  // the cluster (DSMEM) reduction
  EXPECT_TRUE(d.dsmem && d.aligned);
  EXPECT_EQ(d.stages, 6);
  EXPECT_EQ(d.name(), "skinny-a2s6-dsm");
  EXPECT_FALSE(parse_skinny_config("a2s6").dsmem);
  const SkinnyConfig lt = parse_skinny_config("skinny-a1s4-dsm-lt");  // the late PDL trigger
  EXPECT_TRUE(lt.dsmem && lt.late_trigger && lt.aligned);
  EXPECT_EQ(lt.name(), "skinny-a1s4-dsm-lt");
  EXPECT_TRUE(parse_skinny_config("a1s4-lt").late_trigger && !parse_skinny_config("a1s4-lt").dsmem);
  EXPECT_FALSE(parse_skinny_config("a1s4-dsm").late_trigger);
  const SkinnyConfig wg = parse_skinny_config("skinny-a1s4-dsm-wg-lt");  // wgmma consumers
  EXPECT_TRUE(wg.wgmma && wg.dsmem && wg.late_trigger);
  EXPECT_EQ(wg.name(), "skinny-a1s4-dsm-wg-lt");
  EXPECT_TRUE(parse_skinny_config("p1s6-wg").wgmma && !parse_skinny_config("p1s6-wg").dsmem);
  EXPECT_EQ(parse_skinny_config("a1s4-wg").name(), "skinny-a1s4-wg");
  EXPECT_FALSE(parse_skinny_config("a1s4-dsm-lt").wgmma);
}

TEST(SkinnyConfig, RejectsMalformedNames) {
  for (const char* bad : {"", "p2", "x2s4", "p0s4", "ps4", "p2s", "p2s4x", "c-3s4", "skinny-", "p2 s4", "a1s4-", "a1s4-dsmx", "a1s4dsm",
                          "a1s4-lt-dsm", "a1s4-ltx", "a1s4-lt-lt", "a1s4-wg-dsm", "a1s4-lt-wg", "a1s4-wgx", "a1s4-wg-wg"}) {
    EXPECT_THROW(parse_skinny_config(bad), std::invalid_argument) << bad;
  }
}
