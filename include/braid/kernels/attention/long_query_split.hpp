// wg-s: which causal query blocks of the Hopper attention kernel (flash_sm90_kernel.cuh) have their key blocks
// split between two CTAs, and how. Host and device arithmetic (CPU-tested in tests/unit/test_attention_plan.cpp).
//
// Under the causal mask query block qb of a sequence reads qb + 1 key blocks (blocks of 128 queries and of 128
// keys), so the kernel's time is its last query block's: at GPT-3 S = 1024, 8 key blocks where the average is 4.5
// (96 CTAs on 132 SMs). Splitting every tile over a 2-CTA cluster (wg-c2) makes more CTAs than SMs and makes the
// short tiles' partners wait at the cluster barrier. wg-s splits only the longest tiles, as many as fit beside the
// others in one wave (the kernel's 231 KB of shared memory: one CTA per SM), and the later CTA of a pair merges
// through global memory -- no CTA waits for one that has not started.
//
// The split is uneven on purpose: split 0 (no diagonal block) takes max(1, floor((n - 1) / 2)) of the tile's n key
// blocks and leaves its partial; split 1 takes the rest, with the diagonal, so its partner's partial is written by
// the time it needs it. Even halves finish together, and the merge then waits for the partner's stores: on an H100
// (bench/results/attn-split-long-h100-20261128/) even halves ran GPT-3 S = 512 at 14.6 µs, this split at 14.0-14.2,
// one block more on the longer side notwithstanding.
#pragma once

#include "braid/core/types.hpp"

namespace braid::attention {

// Key blocks of split 0 of a split tile of n >= 2 key blocks (split 1 takes n minus these).
BRAID_HD int long_query_split_first(int n) { return n <= 2 ? 1 : (n - 1) / 2; }

// The key blocks of the longest CTA when query blocks split_from .. q_blocks - 1 are split (0: none).
inline int long_query_split_max_blocks(int q_blocks, int split_from) {
  int longest = 0;
  for (int qb = 0; qb < q_blocks; ++qb) {
    const int n = qb + 1;
    const int here = split_from > 0 && qb >= split_from ? n - long_query_split_first(n) : n;
    longest = here > longest ? here : longest;
  }
  return longest;
}

// CTAs launched per (sequence, head).
inline int long_query_split_ctas(int q_blocks, int split_from) {
  return split_from == 0 ? q_blocks : q_blocks + (q_blocks - split_from);
}

// The first split query block: of those whose CTAs fit one wave on `sms` SMs (`rows_of_tiles` = heads x
// sequences), the one with the shortest longest CTA, and of those the fewest CTAs; 0 when no split fits or none
// shortens the longest CTA.
inline int long_query_split_from(int q_blocks, int rows_of_tiles, int sms) {
  if (q_blocks < 2 || rows_of_tiles <= 0 || sms <= 0) return 0;
  int best = 0, best_longest = q_blocks;
  for (int from = q_blocks - 1; from >= 1; --from) {
    if (long_query_split_ctas(q_blocks, from) > sms / rows_of_tiles) break;
    const int longest = long_query_split_max_blocks(q_blocks, from);
    if (longest < best_longest) {
      best = from;
      best_longest = longest;
    }
  }
  return best;
}

}  // namespace braid::attention
