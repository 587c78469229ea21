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

// The model's time by hand: one SM runs every CTA in turn; two SMs and one head of four query blocks split from 3
// (costs in launch order 1 + o, 3 + o + m, then 3 + o, 2 + o, 1 + o with o the overhead, m the merge).
TEST(LongQuerySplit, ModelsTheKernelTimeAsListScheduling) {
  const double o = attention::kCtaOverheadBlocks, m = attention::kMergeBlocks;
  // Q = 3, no split, one SM: 1 + 2 + 3 blocks and three overheads.
  EXPECT_DOUBLE_EQ(attention::long_query_split_time(3, 1, 1, 1, 0), 6 + 3 * o);
  // Q = 4 split from 3 on two SMs: SM A takes 1+o, SM B 3+o+m; A frees first and takes 3+o (ends 4+2o), then B
  // (3+o+m < 4+2o) takes 2+o (ends 5+2o+m), then A takes 1+o (ends 5+3o).
  const double want = std::max(5 + 2 * o + m, 5 + 3 * o);
  EXPECT_DOUBLE_EQ(attention::long_query_split_time(4, 1, 1, 2, 3), want);
  EXPECT_EQ(attention::long_query_split_costs(4, 3).size(), 5u);
  // Enough SMs for every CTA: the longest CTA.
  EXPECT_DOUBLE_EQ(attention::long_query_split_time(8, 12, 1, 1000, 0), 8 + o);
  EXPECT_DOUBLE_EQ(attention::long_query_split_time(8, 12, 1, 1000, 5), 5 + o + m);  // 8 -> 3 + 5, the merging side
}

// The first split block is the argmin of the modelled time over every choice (none included; ties: fewer CTAs),
// over heads, sequences, query blocks and SM counts; and on 132 SMs the prompts of issue 4 split where their causal
// tail dominates (GPT-3 and LLaMA S = 1024; LLaMA S = 2048, 160 CTAs in more than one wave) and not at GPT-3 S = 2048
// (192 tiles already fill the SMs to their average).
TEST(LongQuerySplit, PicksTheShortestModelledTime) {
  for (int sms : {1, 7, 78, 132})
    for (int heads : {1, 3, 8, 12})
      for (int seqs : {1, 2})
        for (int q = 1; q <= 16; ++q) {
          SCOPED_TRACE("sms=" + std::to_string(sms) + " heads=" + std::to_string(heads) + " sequences=" +
                       std::to_string(seqs) + " q_blocks=" + std::to_string(q));
          const int from = attention::long_query_split_from(q, heads, seqs, sms);
          ASSERT_GE(from, 0);
          ASSERT_LT(from, std::max(q, 1));
          const double chosen = attention::long_query_split_time(q, heads, seqs, sms, from);
          for (int other = 0; other < q; ++other) {
            const double t = attention::long_query_split_time(q, heads, seqs, sms, other);
            EXPECT_LE(chosen, t + 1e-9) << "from " << other << " is modelled faster";
            const bool fewer_ctas = from != 0 && (other == 0 || other > from);
            if (fewer_ctas) EXPECT_GT(t, chosen + 1e-9) << "a tie with fewer CTAs";
          }
          if (from != 0) EXPECT_LT(chosen, attention::long_query_split_time(q, heads, seqs, sms, 0) - 1e-9);
        }
  EXPECT_EQ(attention::long_query_split_from(8, 12, 1, 132), 5);  // GPT-3 S = 1024: 132 CTAs
  EXPECT_EQ(attention::long_query_split_ctas(8, 5) * 12, 132);
  EXPECT_EQ(attention::long_query_split_from(8, 8, 1, 132), 5);   // LLaMA S = 1024
  const int llama2048 = attention::long_query_split_from(16, 8, 1, 132);
  EXPECT_GT(llama2048, 8);
  EXPECT_GT(attention::long_query_split_ctas(16, llama2048) * 8, 132);  // more than one wave
  EXPECT_EQ(attention::long_query_split_from(16, 12, 1, 132), 0);  // GPT-3 S = 2048
  EXPECT_EQ(attention::long_query_split_from(1, 1, 1, 132), 0);    // one query block: nothing to split
}
