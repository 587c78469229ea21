// The skinny GEMM's configuration names and their parser (braid-bench-mlp --skinny, the autotuner's
// cache keys): every name parses back to the same configuration, and malformed names are rejected
// with a message instead of being read as something else.
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <utility>
#include <vector>
#include <string>

#include "braid/kernels/skinny/skinny_config.hpp"
#include "braid/kernels/skinny/skinny_pack.hpp"

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
  const SkinnyConfig pk = parse_skinny_config("skinny-a1s4-dsm-wg-pk-lt");  // packed weights
  EXPECT_TRUE(pk.packed && pk.wgmma && pk.dsmem && pk.late_trigger);
  EXPECT_EQ(pk.name(), "skinny-a1s4-dsm-wg-pk-lt");
  EXPECT_EQ(parse_skinny_config("p1s4-pk").name(), "skinny-p1s4-pk");
  EXPECT_FALSE(parse_skinny_config("a1s4-wg").packed);
  const SkinnyConfig dt = parse_skinny_config("skinny-p1s4-wg-pk-dt-lt");  // the dynamic tail, default share
  EXPECT_TRUE(dt.packed && dt.wgmma && dt.late_trigger);
  EXPECT_EQ(dt.dyn_tail, braid::skinny::kDefaultDynTail);
  EXPECT_EQ(dt.name(), "skinny-p1s4-wg-pk-dt-lt");
  const SkinnyConfig dt25 = parse_skinny_config("a1s4-pk-dt25");
  EXPECT_EQ(dt25.dyn_tail, 25);
  EXPECT_EQ(dt25.name(), "skinny-a1s4-pk-dt25");
  EXPECT_EQ(parse_skinny_config("a1s4-pk").dyn_tail, 0);
}

// The tuners' candidates: every name distinct and parsing back to itself, none the tuner could not run (wgmma with 8
// stages), none with the dynamic tail (measured slower: docs/skinny-gemm.md).
TEST(SkinnyConfig, TuningCandidatesAreDistinctAndRunnable) {
  const auto v = braid::skinny::tuning_candidates();
  std::vector<std::string> names;
  for (const SkinnyConfig& c : v) {
    EXPECT_EQ(parse_skinny_config(c.name()).name(), c.name());
    for (const std::string& n : names) EXPECT_NE(n, c.name());
    names.push_back(c.name());
    EXPECT_FALSE(c.wgmma && c.stages == 8) << c.name();
    EXPECT_EQ(c.dyn_tail, 0) << c.name();
  }
  EXPECT_EQ(v.size(), 24u);
}

TEST(SkinnyConfig, RejectsMalformedNames) {
  for (const char* bad : {"", "p2", "x2s4", "p0s4", "ps4", "p2s", "p2s4x", "c-3s4", "skinny-", "p2 s4", "a1s4-", "a1s4-dsmx", "a1s4dsm",
                          "a1s4-lt-dsm", "a1s4-ltx", "a1s4-lt-lt", "a1s4-wg-dsm", "a1s4-lt-wg", "a1s4-wgx", "a1s4-wg-wg",
                          "a1s4-pk-wg", "a1s4-lt-pk", "a1s4-pkx", "a1s4-pk-pk", "a1s4-pk-dsm", "a1s4-dt0", "a1s4-dt91",
                          "a1s4-dt-pk", "a1s4-lt-dt", "a1s4-dtx", "a1s4-dt-dt", "a1s4-dt15x"}) {
    EXPECT_THROW(parse_skinny_config(bad), std::invalid_argument) << bad;
  }
}

// The packed weights' layout (skinny_pack.hpp): every 16-byte group of W's columns lands in exactly one slot,
// the rest is padding, and the slot a consumer warp's ldmatrix reads for (row r, 8-column chunk c of the
// 128-column tile) -- the address formula of skinny_gemm.cuh's mma_chunk, written out here on its own -- holds
// exactly W's row 64 chunk + r, columns 128 tile + 8 c.
TEST(SkinnyPack, EveryGroupOfWOnceInTheSlotTheConsumerReads) {
  using namespace braid::skinny;
  for (auto [K, N] : {std::pair{64, 128}, std::pair{200, 328}, std::pair{1000, 776}, std::pair{8, 8}, std::pair{520, 1024}}) {
    SCOPED_TRACE("K=" + std::to_string(K) + " N=" + std::to_string(N));
    const int tiles = packed_tiles(N), cpt = packed_chunks_per_tile(K);
    ASSERT_EQ(packed_weight_bytes(K, N), size_t(tiles) * cpt * 16384);
    const uint64_t slots = packed_weight_bytes(K, N) / 16;
    std::vector<int> seen(size_t(K) * (N / 8), 0);
    uint64_t padding = 0;
    for (uint64_t q = 0; q < slots; ++q) {
      int k = -1, n = -1;
      if (!packed_slot_source(q, K, N, k, n)) {
        EXPECT_TRUE(k >= K || n >= N) << q;
        ++padding;
        continue;
      }
      ASSERT_TRUE(k >= 0 && k < K && n >= 0 && n < N && n % 8 == 0) << q;
      ++seen[size_t(k) * (N / 8) + n / 8];
    }
    for (size_t i = 0; i < seen.size(); ++i) ASSERT_EQ(seen[i], 1) << "group " << i;
    EXPECT_EQ(padding, slots - uint64_t(K) * (N / 8));
    // The consumer's addressing: chunk c's box c / 8, row r's 128 bytes, 16-byte chunk (c % 8) ^ (r % 8).
    for (int t = 0; t < tiles; ++t)
      for (int ch = 0; ch < cpt; ++ch)
        for (int r = 0; r < 64; ++r)
          for (int c = 0; c < 16; ++c) {
            const uint64_t byte = (uint64_t(t) * cpt + ch) * 16384 + (c / 8) * 8192 + r * 128 + (((c % 8) ^ (r & 7)) << 4);
            int k = -1, n = -1;
            packed_slot_source(byte / 16, K, N, k, n);
            ASSERT_EQ(k, ch * 64 + r);
            ASSERT_EQ(n, t * 128 + 8 * c);
          }
  }
  // GPT-3's W1 (K = 12288, N = 6144) packs without padding: 48 tiles x 192 chunks of 16 KB, W's own size.
  EXPECT_EQ(packed_weight_bytes(12288, 6144), size_t(12288) * 6144 * 2);
}
