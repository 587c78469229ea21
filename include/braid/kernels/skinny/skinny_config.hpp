// The skinny GEMM's shape constants and its launch configuration (host and device).
#pragma once
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

namespace braid::skinny {

// Stamps per CTA of the skinny GEMM's phase diagnostic (SkinnyParams::phase_ns, SkinnyGemmOp::set_phases), and the
// values recorded per CTA: the stamps, then the SM the CTA ran on (%smid; where it sits decides its share of the
// memory bandwidth, docs/skinny-gemm.md).
constexpr int kSkinnyPhases = 8;
constexpr int kSkinnyPhaseSlots = kSkinnyPhases + 1;

constexpr int kMaxRows = 64;    // M <= 64
constexpr int kTileCols = 128;  // W columns per tile: 8 warps x 16
constexpr int kChunkK = 64;     // W rows per K-chunk (one ring stage)
// The dynamic tail (SkinnyConfig::dyn_tail): K-chunks per work item taken from the queue, and the default share of
// every tile's K-chunks handed out that way (percent).
constexpr int kItemChunks = 4;
constexpr int kDefaultDynTail = 15;

// The fused chain's (skinny_chain.cuh) per-CTA %globaltimer stamps of a launch (SkinnyChainOp::
// set_timeline; diagnosis, braid-bench-mlp --fused-timeline): where the time of each phase goes.
enum ChainEvent : int {
  kEvStart = 0,        // kernel entry
  kEvPhase0Mma,        // the consumers' last phase-0 MMA done
  kEvPhase0End,        // phase 0 finished (reduction, stores, posts, end_block_elected)
  kEvPhase1FirstX,     // the producer issued the first phase-1 X chunk (its wait satisfied)
  kEvPhase1FirstData,  // the consumers have the first phase-1 stage
  kEvEnd,              // the consumers' last phase-1 tile finished
  kChainEvents
};

struct SkinnyConfig {
  int ctas_per_sm = 2;  // persistent CTAs per SM (capped by what fits)
  int stages = 4;       // ring depth: 4, 6 or 8 chunks of 64 W rows (16 KB of W each)
  int ctas = 0;         // > 0: exactly this many CTAs (tests: tiles cut at many places)
  // K-aligned split (with ctas == 0): tiles x S CTAs, the most that fit in ctas_per_sm per SM, so CTA
  // (tile t, split s) reads K range s of tile t and, at any moment, the CTAs of every tile read the
  // same rows of W: whole rows at once, where the DRAM pages are. (Plain stream-K over all slots
  // spreads the CTAs' K positions and ran 10% slower on LLaMA's W1, H100.)
  bool aligned = false;
  // Aligned split only: a tile's S CTAs (2 <= S <= 8) run as one thread-block cluster and reduce their
  // partial sums through distributed shared memory (rank = K order), instead of storing them to global
  // memory for the tile's last CTA to arrive: no fence, atomic or dependent global loads at the tail.
  bool dsmem = false;
  // As a PDL primary ("-lt"): trigger the dependent launch a few microseconds before the CTAs' streams
  // end instead of at block start (SkinnyGemmOp::launch says why). Only the launch timing differs.
  bool late_trigger = false;
  // The MMAs as wgmma ("-wg"): each warpgroup multiplies its 64 columns of W (A, MN-major, straight
  // from the ring) by X (B, K-major) with m64n<MR>k16, reading each operand once from shared memory,
  // instead of 8 warps' ldmatrix + mma.sync, which read X once per warp. The accumulators land in the
  // same registers (the m16n8 layout), so the reduction and the epilogue are shared. Why: the mma.sync
  // consumer's shared-memory reads and MMA issue grow with MR, and at MR = 32-64 they, not DRAM, set
  // the pace (LLaMA's W1: 43 us at T = 32 vs 35 at T = 8). Stages 4 or 6.
  bool wgmma = false;
  // W read from a packed copy ("-pk", skinny_pack.hpp): the op keeps W unit by unit as the ring stage holds it
  // (64 K-rows x 128 columns, two 64-column halves in the 128-byte swizzle, 16 KB contiguous), and the producer
  // loads a stage's W with one 16 KB bulk copy instead of two tensor-map boxes. Why: on an H200 the boxes stream
  // GPT-3's W1 at 3.85 TB/s and contiguous 16 KB copies at 3.9-4.1 (braid-micro-weight-stream ceiling), and a bulk
  // copy needs no tensor map (the first loads go out without fetching one). The same bytes land in shared memory,
  // so the same bits come out. Costs a copy of W, made by prepare().
  bool packed = false;
  // A dynamic tail ("-dt", "-dt<percent>"): stream-K's static ranges cover only the first (100 - dyn_tail)% of every
  // tile's K-chunks; the rest are items of kItemChunks chunks that the CTAs' producers take from a queue as they
  // run out of work, so a CTA that streams faster takes more (skinny_gemm.cuh, "The dynamic tail"). A tile's sum
  // adds its static contributors' partials in CTA order, then its items' in K order: the same bits whichever CTA
  // took which item. Why: the CTAs of plain stream-K stream the same bytes but end over a 3.5-4 us spread
  // (docs/skinny-gemm.md), and the kernel ends with the slowest. 0: off.
  int dyn_tail = 0;
  // "skinny-p2s4" (stream-K over 2 CTAs per SM), "skinny-a1s4" (aligned split, <= 1 per SM), or
  // "skinny-c37s4" (37 CTAs).
  std::string name() const {
    const std::string how = ctas > 0 ? "c" + std::to_string(ctas) : (aligned ? "a" : "p") + std::to_string(ctas_per_sm);
    return "skinny-" + how + "s" + std::to_string(stages) + (dsmem ? "-dsm" : "") + (wgmma ? "-wg" : "") +
           (packed ? "-pk" : "") +
           (dyn_tail > 0 ? "-dt" + (dyn_tail == kDefaultDynTail ? std::string() : std::to_string(dyn_tail)) : "") +
           (late_trigger ? "-lt" : "");
  }
};

// "skinny-p2s4" / "p2s4" / "a1s4" / "a2s4-dsm" / "a1s4-wg" / "a1s4-lt" / "c48s8" -> the configuration
// (suffixes in the order -dsm, -wg, -pk, -dt[percent], -lt) (throws
// std::invalid_argument otherwise).
inline SkinnyConfig parse_skinny_config(std::string s) {
  if (s.rfind("skinny-", 0) == 0) s = s.substr(7);
  const size_t at = s.find('s');
  SkinnyConfig c;
  char* end = nullptr;
  if (s.size() < 4 || (s[0] != 'p' && s[0] != 'a' && s[0] != 'c') || at == std::string::npos)
    throw std::invalid_argument("skinny config '" + s +
                                "': expected p<CTAs per SM>s<stages>, a<CTAs per SM>s<stages> or c<CTAs>s<stages>");
  const long n = std::strtol(s.c_str() + 1, &end, 10);
  if (end != s.c_str() + at || n < 1) throw std::invalid_argument("skinny config '" + s + "': bad CTA count");
  const long st = std::strtol(s.c_str() + at + 1, &end, 10);
  if (std::string(end).rfind("-dsm", 0) == 0) {  // the cluster reduction
    c.dsmem = true;
    end += 4;
  }
  if (std::string(end).rfind("-wg", 0) == 0) {  // wgmma consumers
    c.wgmma = true;
    end += 3;
  }
  if (std::string(end).rfind("-pk", 0) == 0) {  // packed weights
    c.packed = true;
    end += 3;
  }
  if (std::string(end).rfind("-dt", 0) == 0) {  // the dynamic tail, kDefaultDynTail or the given percent
    end += 3;
    c.dyn_tail = kDefaultDynTail;
    if (*end >= '0' && *end <= '9') {
      const long pct = std::strtol(end, &end, 10);
      if (pct < 1 || pct > 90) throw std::invalid_argument("skinny config '" + s + "': -dt<percent> takes 1 to 90");
      c.dyn_tail = int(pct);
    }
  }
  if (std::string(end) == "-lt") {  // the late PDL trigger
    c.late_trigger = true;
    end += 3;
  }
  if (*end != '\0' || st < 1) throw std::invalid_argument("skinny config '" + s + "': bad stage count");
  if (s[0] == 'c') c.ctas = int(n);
  else c.ctas_per_sm = int(n);
  c.aligned = s[0] == 'a';
  c.stages = int(st);
  return c;
}

// The configurations the benchmarks' tuners time for a skinny GEMM (braid-bench-mlp, braid-bench-attn): the
// K-aligned split at 1 and 2 CTAs per SM and with 8 stages, stream-K at 1 per SM, the cluster reduction at 1 and
// 2 per SM and with 8 stages (LLaMA's MLP at T = 1 and 8 on an H200: a1s8-pk + a1s8-dsm-pk 41.0-41.1 µs against
// 41.7-41.8 for the best pair without it, bench/results/fused-chain-h200-20261128/); each also with wgmma consumers
// (not with 8 stages), and each of those also reading packed weights.
// Not the dynamic tail (-dt): on an H200 it lost to these everywhere (docs/skinny-gemm.md, "The dynamic tail");
// name it with braid-bench-mlp --skinny to time it.
inline std::vector<SkinnyConfig> tuning_candidates() {
  std::vector<SkinnyConfig> v;
  for (SkinnyConfig c : {SkinnyConfig{1, 4, 0, true}, {2, 4, 0, true}, {1, 8, 0, true}, {1, 4, 0}, {1, 4, 0, true, true},
                         {2, 4, 0, true, true}, {1, 8, 0, true, true}})
    for (bool wg : {false, true})
      for (bool pk : {false, true})
        if (!wg || c.stages != 8) {
          c.wgmma = wg;
          c.packed = pk;
          v.push_back(c);
        }
  return v;
}

}  // namespace braid::skinny
