// The attention block plan (workloads/attention_plan.hpp): grids, what each attention tile reads of
// the QKV GEMM (its head's Q rows; the K and V rows of the keys it sees, causal or not, per batch),
// what each output-GEMM tile reads of the attention stage, StridedSync grouping a head's Q, K and V
// column tiles on one semaphore, and clear errors on inconsistent shapes.
#include <gtest/gtest.h>

#include <set>
#include <tuple>

#include "braid/kernels/attention/long_query_split.hpp"
#include "braid/workloads/attention_plan.hpp"

using namespace braid;
using braid::workloads::AttentionBlockDesc;
using braid::workloads::make_attention_block_plan;
using braid::workloads::qkv_strided_policy;

namespace {

std::set<std::pair<uint32_t, uint32_t>> reads(const Plan& p, int consumer, Tile t) {
  for (const auto& d : p.deps)
    if (d.consumer == consumer) {
      std::vector<Tile> out;
      d.reads(t, out);
      std::set<std::pair<uint32_t, uint32_t>> s;
      for (Tile x : out) s.insert({x.x, x.y});
      return s;
    }
  return {};
}

AttentionBlockDesc gpt3_prompt(int S) {
  AttentionBlockDesc d;
  d.B = 1;
  d.S_new = S;
  d.NH = 12;
  d.H = 12288;
  d.q_rows = 64;
  return d;
}

}  // namespace

TEST(AttentionPlan, GridsFollowHeadsRowsAndTiles) {
  const Plan p = make_attention_block_plan("gpt3", gpt3_prompt(512));
  ASSERT_EQ(p.stages.size(), 3u);
  EXPECT_EQ(p.stages[0].grid, (Grid{36, 4, 1}));   // 3 * 1536 / 128 column tiles, 512 / 128 row tiles
  EXPECT_EQ(p.stages[1].grid, (Grid{12, 8, 1}));   // heads x 64-row query blocks
  EXPECT_EQ(p.stages[2].grid, (Grid{96, 4, 1}));   // 12288 / 128, 512 / 128
  EXPECT_EQ(p.producers_of(1), std::vector<int>{0});
  EXPECT_EQ(p.producers_of(2), std::vector<int>{1});
}

TEST(AttentionPlan, CausalTileReadsItsQRowsAndTheKeysBeforeIt) {
  const Plan p = make_attention_block_plan("gpt3", gpt3_prompt(512));
  // Head 5, query block 3 (rows 192..255): Q tile (5, 1); K and V tiles of rows 0..255, i.e. row tiles
  // 0 and 1 of columns 12 + 5 and 24 + 5.
  const std::set<std::pair<uint32_t, uint32_t>> want = {{5, 1}, {17, 0}, {17, 1}, {29, 0}, {29, 1}};
  EXPECT_EQ(reads(p, 1, Tile{5, 3, 0}), want);
  // The first block sees only row tile 0.
  EXPECT_EQ(reads(p, 1, Tile{0, 0, 0}), (std::set<std::pair<uint32_t, uint32_t>>{{0, 0}, {12, 0}, {24, 0}}));
  // Not causal: every key of the sequence.
  AttentionBlockDesc d = gpt3_prompt(512);
  d.causal = false;
  const Plan q = make_attention_block_plan("full", d);
  EXPECT_EQ(reads(q, 1, Tile{0, 0, 0}).size(), 1u + 4u + 4u);
}

TEST(AttentionPlan, DecodeTilesReadTheirOwnBatchRowOnly) {
  AttentionBlockDesc d;
  d.B = 4;
  d.S_new = 1;
  d.S_cached = 2048;
  d.NH = 8;
  d.H = 8192;
  d.q_rows = 1;
  d.qkv_tile_m = 64;
  d.out_tile_m = 64;
  const Plan p = make_attention_block_plan("llama-decode", d);
  EXPECT_EQ(p.stages[1].grid, (Grid{8, 4, 1}));
  // Batch 2, head 3: row 2 lies in QKV row tile 0; cached keys need no wait.
  EXPECT_EQ(reads(p, 1, Tile{3, 2, 0}), (std::set<std::pair<uint32_t, uint32_t>>{{3, 0}, {11, 0}, {19, 0}}));
  // The output GEMM's single row tile reads all four batch rows of every head.
  EXPECT_EQ(reads(p, 2, Tile{0, 0, 0}).size(), 8u * 4u);
}

TEST(AttentionPlan, StridedSyncGroupsAHeadsQKVTiles) {
  const GroupPolicy s = qkv_strided_policy(12, 128);
  const Grid g{36, 4, 1};
  EXPECT_EQ(s.num_sems(g), 12u * 4u);
  for (uint32_t h = 0; h < 12; ++h) {
    EXPECT_EQ(s.sem(Tile{h, 2, 0}, g), s.sem(Tile{h + 12, 2, 0}, g));
    EXPECT_EQ(s.sem(Tile{h, 2, 0}, g), s.sem(Tile{h + 24, 2, 0}, g));
    EXPECT_EQ(s.value(Tile{h, 2, 0}, g), 3u);
  }
  EXPECT_NE(s.sem(Tile{0, 2, 0}, g), s.sem(Tile{1, 2, 0}, g));
  // 256-wide tiles hold two heads: 6 tiles apart.
  const GroupPolicy w = qkv_strided_policy(12, 256);
  EXPECT_EQ(w.dim[0].stride, 6u);
  EXPECT_THROW(qkv_strided_policy(3, 256), PlanError);  // 384 columns per Q|K|V part: not whole tiles
  AttentionBlockDesc d = gpt3_prompt(256);
  d.qkv_policy = s;
  EXPECT_NO_THROW(make_attention_block_plan("strided", d));
}

TEST(AttentionPlan, RejectsInconsistentShapes) {
  AttentionBlockDesc d = gpt3_prompt(100);  // 100 query rows are not whole 64-row blocks
  EXPECT_THROW(make_attention_block_plan("bad", d), PlanError);
  d = gpt3_prompt(128);
  d.NH = 0;
  EXPECT_THROW(make_attention_block_plan("bad", d), PlanError);
}

TEST(AttentionPlan, UnfusedChainHasFiveStagesAndThePapersDependencies) {
  AttentionBlockDesc d = gpt3_prompt(256);
  d.fused = false;
  const Plan p = make_attention_block_plan("paper", d);
  ASSERT_EQ(p.stages.size(), 5u);
  EXPECT_EQ(p.stages[1].grid, (Grid{4, 4, 12}));  // P: 64-key tiles x query blocks x heads
  EXPECT_EQ(p.stages[2].grid, (Grid{4, 4, 12}));  // R: the same tiles
  EXPECT_EQ(p.stages[3].grid, (Grid{12, 4, 1}));  // T: heads x query blocks
  EXPECT_EQ(p.producers_of(3), (std::vector<int>{2, 0}));  // R first, then the QKV GEMM (V rows)
  // P tile (key tile 1, query block 2, head 3): Q rows 128..191 (QKV row tile 1, column 3), K rows
  // 64..127 (row tile 0, column 12 + 3).
  EXPECT_EQ(reads(p, 1, Tile{1, 2, 3}), (std::set<std::pair<uint32_t, uint32_t>>{{3, 1}, {15, 0}}));
  // Above the diagonal: nothing to read.
  EXPECT_TRUE(reads(p, 1, Tile{3, 0, 3}).empty());
  // R tile of query block 1 waits for the visible P tiles 0 and 1 of its rows (any key tile x).
  std::vector<Tile> r;
  p.deps[1].reads(Tile{3, 1, 5}, r);
  EXPECT_EQ(r.size(), 2u);
  for (Tile t : r) EXPECT_EQ(t.z, 5u);
}

// wg-s (kernels/attention/long_query_split.hpp): the split of a tile's key blocks covers them once, leaves split 1
// (with the diagonal) at least as many as split 0, and both at least one; the first split query block is, of
// those whose CTAs fit one wave (one CTA per SM), one with the shortest longest CTA, and of those the one with the
// fewest CTAs; 0 exactly when no split fits or shortens the longest CTA. Checked against an independent count over
// heads x sequences, query blocks and SM counts.
TEST(LongQuerySplit, SplitsEachTileUnevenlyWithTheDiagonalOnTheLongerSide) {
  for (int n = 2; n <= 64; ++n) {
    const int first = attention::long_query_split_first(n), second = n - first;
    EXPECT_GE(first, 1) << n;
    EXPECT_GE(second, first) << n;
    EXPECT_LE(second - first, 2) << n;  // never worse than one block over an even split
    if (n >= 3) {
      EXPECT_GT(second, first) << n;  // the merging side has more: its partner's partial is out by then
    }
  }
}

TEST(LongQuerySplit, PicksTheShortestLongestCtaThatFitsOneWave) {
  for (int sms : {78, 114, 132})
    for (int rows = 1; rows <= 40; ++rows)
      for (int q = 1; q <= 24; ++q) {
        SCOPED_TRACE("sms=" + std::to_string(sms) + " heads x sequences=" + std::to_string(rows) + " q_blocks=" + std::to_string(q));
        // Longest CTA of each feasible first split block, counted tile by tile.
        auto longest_of = [&](int from) {
          int longest = 0;
          for (int qb = 0; qb < q; ++qb) {
            const int n = qb + 1;
            if (qb >= from) {
              const int a = attention::long_query_split_first(n);
              longest = std::max({longest, a, n - a});
            } else {
              longest = std::max(longest, n);
            }
          }
          return longest;
        };
        int best_longest = q, best_ctas = 0;
        for (int from = 1; from < q; ++from)
          if (rows * (2 * q - from) <= sms) best_longest = std::min(best_longest, longest_of(from));
        for (int from = 1; from < q; ++from)
          if (rows * (2 * q - from) <= sms && longest_of(from) == best_longest && best_longest < q)
            best_ctas = best_ctas == 0 ? rows * (2 * q - from) : std::min(best_ctas, rows * (2 * q - from));
        const int from = attention::long_query_split_from(q, rows, sms);
        if (best_longest == q) {
          EXPECT_EQ(from, 0);
          continue;
        }
        ASSERT_GT(from, 0);
        EXPECT_EQ(longest_of(from), best_longest);
        EXPECT_EQ(attention::long_query_split_max_blocks(q, from), best_longest);
        EXPECT_EQ(rows * attention::long_query_split_ctas(q, from), best_ctas);
        EXPECT_LE(rows * attention::long_query_split_ctas(q, from), sms);
      }
  // GPT-3 at S = 1024 (12 heads, 8 blocks) on 132 SMs: blocks 5-7 split (2 + 4, 3 + 4, 3 + 5), 132 CTAs, 5 key
  // blocks on the longest CTA where there were 8.
  EXPECT_EQ(attention::long_query_split_from(8, 12, 132), 5);
  EXPECT_EQ(attention::long_query_split_ctas(8, 5) * 12, 132);
  EXPECT_EQ(attention::long_query_split_max_blocks(8, 5), 5);
  // GPT-3 at S = 2048: 192 tiles, more than the SMs already.
  EXPECT_EQ(attention::long_query_split_from(16, 12, 132), 0);
  // One query block: nothing to split.
  EXPECT_EQ(attention::long_query_split_from(1, 1, 132), 0);
}
