// wg-s: which causal query blocks of the Hopper attention kernel (flash_sm90_kernel.cuh) have their key blocks
// split between two CTAs, and how. Host and device arithmetic (CPU-tested in tests/unit/test_attention_plan.cpp).
//
// Under the causal mask query block qb of a sequence reads qb + 1 key blocks (blocks of 128 queries and of 128
// keys), so the kernel's time is set by its last query blocks: at GPT-3 S = 1024, 96 CTAs on 132 SMs, the longest
// 8 key blocks where the average is 4.5; at LLaMA S = 2048, 128 CTAs, the longest 16 where the average is 8.5.
// Splitting every tile over a 2-CTA cluster (wg-c2) doubles the CTAs and makes the short tiles' partners wait at
// the cluster barrier. wg-s splits only the longest tiles, and the later CTA of a pair merges the other's partial
// through global memory: a CTA waits only for a partner that has already arrived (it is storing its partial),
// so any number of CTAs per SM-wave is safe.
//
// The split is uneven on purpose: split 0 (no diagonal block) takes max(1, floor((n - 1) / 2)) of the tile's n key
// blocks and leaves its partial; split 1 takes the rest, with the diagonal, so its partner's partial is written by
// the time it needs it. Even halves finish together, and the merge then waits for the partner's stores: on an H100
// (bench/results/attn-split-long-h100-20261128/) even halves ran GPT-3 S = 512 at 14.6 µs, this split at 14.0-14.2,
// one block more on the longer side notwithstanding.
//
// Which tiles: those from query block `split_from` on, the one that gives the shortest modelled kernel time. The
// model (long_query_split_time) places the CTAs in launch order -- per sequence the split halves, longest tile
// first, then the unsplit tiles, longest first; the heads side by side -- each on the SM that frees first, one CTA
// per SM (231 KB of shared memory), a CTA costing its key blocks plus kCtaOverheadBlocks (start, Q load, epilogue:
// ~6.5 µs against ~1.8 µs per key block on an H100, docs/attention.md) plus kMergeBlocks for the merging side.
#pragma once

#include <algorithm>
#include <functional>
#include <queue>
#include <vector>

#include "braid/core/types.hpp"

namespace braid::attention {

constexpr double kCtaOverheadBlocks = 3.5;  // a CTA's fixed cost, in key blocks' time
constexpr double kMergeBlocks = 0.5;        // the merging CTA's extra: its partner's partial read and merged

// Key blocks of split 0 of a split tile of n >= 2 key blocks (split 1 takes n minus these).
BRAID_HD int long_query_split_first(int n) { return n <= 2 ? 1 : (n - 1) / 2; }

// CTAs launched per (sequence, head).
inline int long_query_split_ctas(int q_blocks, int split_from) {
  return split_from == 0 ? q_blocks : q_blocks + (q_blocks - split_from);
}

// The CTAs' costs (key blocks' time) in launch order for one head of one sequence (the kernel's grid y order).
inline std::vector<double> long_query_split_costs(int q_blocks, int split_from) {
  std::vector<double> c;
  const int from = split_from == 0 ? q_blocks : split_from;
  for (int qb = q_blocks - 1; qb >= from; --qb) {  // split tiles, longest first: split 0, then split 1 (merges)
    const int n = qb + 1, first = long_query_split_first(n);
    c.push_back(first + kCtaOverheadBlocks);
    c.push_back(n - first + kCtaOverheadBlocks + kMergeBlocks);
  }
  for (int qb = from - 1; qb >= 0; --qb) c.push_back(qb + 1 + kCtaOverheadBlocks);  // unsplit, longest first
  return c;
}

// The modelled kernel time (key blocks' time): the CTAs in launch order -- sequence-major, the heads of each grid
// row side by side -- each on the SM that frees first.
inline double long_query_split_time(int q_blocks, int heads, int sequences, int sms, int split_from) {
  const std::vector<double> per_head = long_query_split_costs(q_blocks, split_from);
  std::priority_queue<double, std::vector<double>, std::greater<double>> free_at;
  for (int i = 0; i < sms; ++i) free_at.push(0.0);
  double end = 0;
  for (int b = 0; b < sequences; ++b)
    for (double cost : per_head)
      for (int h = 0; h < heads; ++h) {
        const double t = free_at.top() + cost;
        free_at.pop();
        free_at.push(t);
        end = std::max(end, t);
      }
  return end;
}

// The first split query block with the shortest modelled time (ties: the fewest CTAs), or 0 when no split is
// modelled faster than none (or there is one query block).
inline int long_query_split_from(int q_blocks, int heads, int sequences, int sms) {
  if (q_blocks < 2 || heads <= 0 || sequences <= 0 || sms <= 0) return 0;
  int best = 0;
  double best_time = long_query_split_time(q_blocks, heads, sequences, sms, 0);
  for (int from = q_blocks - 1; from >= 1; --from) {
    const double t = long_query_split_time(q_blocks, heads, sequences, sms, from);
    if (t < best_time - 1e-9) {
      best = from;
      best_time = t;
    }
  }
  return best;
}

}  // namespace braid::attention
