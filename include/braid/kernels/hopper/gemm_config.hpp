// Host-visible description of braid's Hopper GEMM (no CUDA templates here, so that tools and
// workloads include it without pulling CUTLASS/CuTe into their translation units).
//
//   D[M, Nout] = act(A[M,K] . B[K,N])     A, B, D row-major, fp16 or bf16, fp32 accumulation
//   act = None | GeLU (tanh form) | ReLU  Nout = N   (convolutions add a per-column bias first)
//   act = SwiGLU                          Nout = N / 2, B packed by pack_swiglu_columns(): each
//                                         tile_n-wide block of B holds tile_n/2 gate columns followed
//                                         by the matching tile_n/2 up columns, so one output tile
//                                         computes silu(gate) * up from its own accumulators. Where
//                                         tile_n/2 does not divide F, the last block is padded with
//                                         zero columns: N = swiglu_packed_cols(F, tile_n), Nout = F
//                                         (GemmArgs::n_out).
//   transposed kernels (GemmConfig::transposed) compute the same D as D^T = B^T A^T, the weights as the
//                                         MMA's 64-row operand; their SwiGLU B is packed in 16-column
//                                         blocks (8 gate, 8 up: kTransposedSwigluBlock), whatever the tile.
#pragma once
#include <cstddef>
#include <cstdint>
#include <algorithm>
#include <string>
#include <vector>

#include "braid/order/tile_order.hpp"

namespace braid::hopper {

enum class DType : uint8_t { F16, BF16 };
enum class Activation : uint8_t { None, GeLU, SwiGLU, ReLU };

// The forms of braid's GEMM kernels (hopper_gemm_kernel's and skinny_gemm_kernel's last template argument).
//   kFormGeneral: every ordering (tile sync, wait kernel, PDL, stream order), dynamic dispatch, tile and
//     unit traces, and the activation chosen at run time.
//   lean_form(act): a launch that waits for no tile and posts none (stream order, or PDL alone), with a
//     static tile order, no traces and one activation. The paths it cannot take are not in its code.
//   synced_form(act) (whole-tile GEMM and conv kernels): a launch with tile sync -- waits, posts, the wait
//     kernel's start mark, bounded waits -- and otherwise as lean: static order, no traces, one activation.
// Why a second form: a kernel that runs after another one fetches its code again (the SMs' instruction
// caches hold the other kernel's), and the general function is 5-12x the size of cuBLASLt's for the same
// tile -- every activation and store path, the waiting producer, the poster warp, the traces -- so the
// first instructions of each path it does run are fetched cold from far apart: braid's GEMMs took
// 1.03-1.12x their time after another kernel, cuBLASLt's 0.98-1.02x (docs/hopper-gemm.md, sessions 43-46).
// The chains that run without tile sync (the tuners' pick on most MLP, attention and conv shapes) launch the
// lean forms (GemmKernel, ConvKernel, SkinnyGemmOp and AttentionOp pick the form per launch:
// launch_fits_lean_form / launch_fits_synced_form in gemm_op.hpp; set_lean_forms turns both off). The synced forms:
// a tile-synchronized chain pays the same cold-code cost and more (both kernels' code is live at once).
constexpr int kFormGeneral = 0;
constexpr int lean_form(Activation a) { return 1 + int(a); }
constexpr int synced_form(Activation a) { return 8 + int(a); }
constexpr bool form_is_synced(int form) { return form >= 8; }
// The activation a form other than kFormGeneral is compiled for.
constexpr Activation form_activation(int form) { return Activation(form_is_synced(form) ? form - 8 : form - 1); }

inline const char* dtype_name(DType d) { return d == DType::F16 ? "fp16" : "bf16"; }
inline const char* activation_name(Activation a) {
  return a == Activation::None ? "none" : a == Activation::GeLU ? "gelu" : a == Activation::ReLU ? "relu" : "swiglu";
}

// Columns of a SwiGLU weight with F outputs packed in tile_n-wide blocks (pack_swiglu_columns): 2F,
// rounded up to whole blocks. The padding (zero gate and up columns) lets any tile width serve any F --
// LLaMA-65B's F = 2752 is 43 blocks of 64 but not whole blocks of 96 (the 192-wide tiles that give one
// wave at some token counts) -- and its outputs are silu(0) * 0 = 0, never stored (they lie past Nout).
constexpr int swiglu_packed_cols(int F, int tile_n) {
  const int h = tile_n / 2;
  return (F + h - 1) / h * tile_n;
}

// Host-side packing of SwiGLU weights: W [K, 2F] = [gate | up] -> packed [K, P], P =
// swiglu_packed_cols(F, tile_n), where each tile_n block holds tile_n/2 gate columns then the same
// tile_n/2 up columns; where tile_n/2 does not divide F, the last block's missing columns are zeros
// (then GemmArgs::n_out = F).
template <class T>
void pack_swiglu_columns(const T* w, T* packed, int K, int F, int tile_n) {
  const int h = tile_n / 2, P = swiglu_packed_cols(F, tile_n);
  for (int k = 0; k < K; ++k) {
    T* row = packed + size_t(k) * P;
    for (int j = F; j < P / 2; ++j) {  // the padding (zero bits: +0 in fp16 and bf16)
      const int blk = j / h, c = j % h;
      row[size_t(blk) * tile_n + c] = T{};
      row[size_t(blk) * tile_n + h + c] = T{};
    }
    for (int j = 0; j < F; ++j) {
      const int blk = j / h, c = j % h;
      row[size_t(blk) * tile_n + c] = w[size_t(k) * 2 * F + j];
      row[size_t(blk) * tile_n + h + c] = w[size_t(k) * 2 * F + F + j];
    }
  }
}

// The packing block of a SwiGLU weight for the transposed kernels (GemmConfig::transposed): there the
// weight columns are the rows of wgmma's accumulator fragment, and a thread holds rows r and r + 8 of each
// 16-row group, so gate column c and up column c sit 8 apart in blocks of 16 (pack_swiglu_columns with
// tile_n = 16). Any tile width then reads whole blocks.
constexpr int kTransposedSwigluBlock = 16;

// The transposed kernels' instantiations (GemmConfig::transposed; tokens x weight columns, and the cluster
// size the weights are multicast to, 1 = none), one instantiation unit per tile
// (src/hopper/instances/gemm_f16_<m>x<n>_t.cu): 64 tokens on one consumer warpgroup, more split between two.
// 320 weight columns (five 64-row MMA blocks) is a width the row-major kernels cannot have (wgmma's N is at
// most 256): GPT-3's QKV GEMM (N = 4608) is then 15 column blocks, 120 tiles at 512 tokens (64x320) or 1024
// (128x320) -- one wave on 132 SMs, cuBLASLt's tiling, which at 512 tokens multicasts the weights to clusters
// of 4 along the tokens, as 64x320-t-mc4 does. (Multicast instances of 128x192, 128x320 and 64x192, and 64x192
// on one warpgroup, were built and measured without gain: docs/hopper-gemm.md, "Multicast in the transposed
// kernels".)
constexpr bool is_transposed_tile(int tile_m, int tile_n, int multicast = 1) {
  if (multicast == 4) return (tile_m == 64 || tile_m == 128) && tile_n == 320;
  return multicast == 1 && ((tile_m == 192 && tile_n == 192) || (tile_m == 256 && tile_n == 128) ||
                            (tile_m == 128 && (tile_n == 192 || tile_n == 256 || tile_n == 320)) ||
                            (tile_m == 64 && tile_n == 320));
}
inline const char* transposed_tile_list() {
  return "192x192, 128x192, 128x256, 128x320, 256x128 and 64x320; 64x320 and 128x320 also multicast to clusters of 4";
}

constexpr int kTileM = 128;  // the default tile height
constexpr int kTileK = 64;   // every tile's K depth

// How the epilogue writes a tile to D (epilogue.cuh). Staged: through a padded shared-memory buffer
// into whole-sector 16-byte stores; the buffer is carved out of the pipeline, so the kernel has one
// stage fewer. Direct: straight from the accumulators (each warp store writes 8 rows x 16 bytes,
// half sectors). Which wins depends on the shape: a compute-bound 128x128 GEMM gains 7-16% from
// staging, a weight-streaming one loses the stage (bench/results/gemm-vs-cutlass-diagnosis-*.md),
// so both are instantiated where it matters and the tuners try both.
enum class EpilogueStore : uint8_t { Default, Direct, Staged };
// Default: staged for 128x128 tiles (measured faster on the compute-bound GEMMs), direct otherwise.
constexpr bool stages_epilogue_by_default(int tile_m, int tile_n) { return tile_m == 128 && tile_n == 128; }
constexpr bool stages_epilogue(int tile_m, int tile_n, EpilogueStore e) {
  return e == EpilogueStore::Default ? stages_epilogue_by_default(tile_m, tile_n) : e == EpilogueStore::Staged;
}

// The tile is tile_m x tile_n x 64: tile_m 128 (two consumer warpgroups of 64 rows each), 64 (one:
// more pipeline stages of weights when tokens are few) or 192 (three: with tile_n 192 or 128, tile
// counts that fit the SM count, e.g. 128 tiles of 192x192 for GPT-3's W1 at 768 tokens; fp16), one
// TMA producer warp. Instantiated: 64/128 x 128/256 (fp16, bf16), 192x192, 192x128, 128x192, 64x192,
// 128x64, 192x96, 64x96 (fp16); staged for the TMA store besides the default: 128x256, 192x192, 192x128, 64x128, 64x192,
// 128x64 (fp16, whole tiles); B multicast (-mc2, fp16): 128x128, 128x256, 128x192, 64x192, 64x128
// (src/hopper/gemm_op.cu).
struct GemmConfig {
  int tile_n = 128;  // 64, 96 (192x96, 64x96), 128, 192 or 256
  int splits = 1;    // split-K: the last split of a tile to finish reduces all partials in split order
                     // (deterministic) and runs the epilogue; 1 = no split
  int ctas = 0;      // persistent CTAs; 0 = one per SM, capped at the number of work units
  // Tile order (the stage's braid order when the GEMM runs in a chain). Column-major (row blocks
  // fastest) makes the CTAs running at the same time share B's column tiles in L2: for the MLP's
  // skinny GEMMs (M = tokens << N, K) it reads the weights once instead of once per row block.
  OrderKind order = OrderKind::ColumnMajor;
  // Stream-K (work_schedule.hpp): whole waves of tiles data-parallel, the last partial wave's
  // iterations shared evenly by all CTAs (segments reduced in order by the last to arrive:
  // deterministic). Excludes splits > 1.
  bool stream_k = false;
  int tile_m = kTileM;  // 128, 64 or 192
  EpilogueStore store = EpilogueStore::Default;  // named only where it differs from the tile's default
  // Split-K only: every segment of a tile reduces and stores a share of the tile's columns instead of
  // the last to arrive doing the whole tile (gemm_kernel.cuh, reduce_split_tile). Same outputs, bit
  // for bit. Needs static dispatch (a chain's dynamic order is refused).
  bool reduce_scatter = false;
  // Split-K 2 with the staged epilogue only: reduce-scatter where the two segments of a tile run as a
  // cluster of two CTAs and hand each other their partial sums through distributed shared memory
  // (into the peer's staging buffer) instead of through L2 (gemm_kernel.cuh, cluster_exchange.cuh).
  // Same outputs, bit for bit. Implies reduce_scatter's restrictions (static dispatch).
  bool dsmem_reduce = false;
  // TMA multicast of the weights: 2 = the CTAs run as clusters of two that compute vertically
  // adjacent tiles (rows y, y + 1 of the same column block) over the same k-steps; each loads half of
  // the shared B tile and multicasts it to both, so the L2 serves a third (128x256) to a quarter
  // (128x128) fewer bytes per k-step. 1 = every CTA loads its own (gemm_kernel.cuh, produce).
  // Data-parallel, split-K (last arrival) or stream-K; static dispatch, row- or column-major order.
  // Transposed kernels: whole tiles, the cluster sizes is_transposed_tile names (64x320, 128x320: 4).
  int multicast = 1;
  // CTA groups without multicast ("-g<N>"): the schedule deals groups of N vertically adjacent tiles
  // (one column block of B) to N consecutive CTAs that walk the same k-steps in step -- as -mc2 does,
  // without a cluster -- so that B's k-steps are read from DRAM once per group and from L2 by the other
  // members (work_schedule.hpp). For stream-K on medium M, whose CTAs otherwise read a column block at
  // unrelated k-steps. Static dispatch, row- or column-major order; not with -mc, -rs/-dsm or -pp.
  int group = 1;
  // Pingpong ("-pp"): the CTA's two consumer warpgroups take alternate tiles, a whole 128x128 tile
  // each, so one warpgroup's epilogue runs while the other's MMAs keep the tensor cores busy
  // (gemm_kernel.cuh). Cooperative (default): both warpgroups share each tile, and the tensor cores
  // idle during its epilogue. Pingpong: 128x128 tiles, data-parallel (no split-K, stream-K or
  // multicast), static dispatch; direct stores, or (fp16, "-staged-pp") TMA stores of 64-column panels.
  bool pingpong = false;
  // Persistent CTAs per SM ("-o2"): 2 = two CTAs share each SM, each with half the shared memory (a
  // pipeline half as deep) and at most 128 registers per thread, so that two producers and two
  // consumers interleave where one CTA's latency bounds the k-loop. Convolutions, fp16 64x64 and 64x32
  // tiles with their default stores, without multicast.
  int ctas_per_sm = 1;
  // Transposed ("-t"): the kernel computes D^T = B^T . A^T -- the weight columns are the MMA's 64-row M
  // operand (MN-major from shared memory), the tokens its N operand, split between two consumer
  // warpgroups -- the orientation cuBLASLt's kernels run the MLP shapes in
  // (bench/results/gemm-192x192-vs-cublas-ncu-h100-20261127/). A tile is still tile_m tokens (D's rows)
  // x tile_n weight columns (D's columns): grids, orders, policies and waits are unchanged; the producer
  // waits before loading the activations as always. The epilogue stages the transposed fragment in
  // shared memory, 64 weight columns at a time, and stores whole rows. fp16; the tiles of
  // is_transposed_tile (tile_m 256: two warpgroups of 128 tokens; 64: one warpgroup); whole tiles (no
  // split-K or stream-K), no pingpong; the weights multicast (-mc4) where instantiated; SwiGLU
  // weights packed per kTransposedSwigluBlock.
  bool transposed = false;
  // In-flight cap ("-f<N>"): the producer keeps at most N k-tiles of loads outstanding (it also waits for the release of
  // k-tile i - N before loading k-tile i), whatever the ring's depth; 0 = the ring's depth. A weight stream over ~90 or
  // more CTAs is 5-10% faster with 4-5 stages of 16 KB in flight than with 8 (bench/results/inflight-h200-20261129/),
  // and the 64-row tiles' rings are 6-13 stages deep. A runtime setting: same kernel, same bits. N >= the ring's depth
  // changes nothing; N = 1 is refused (a consumer releases a stage once the next one's MMAs are issued).
  int inflight = 0;
  // The block width a SwiGLU weight is packed in for this configuration (pack_swiglu_columns).
  int swiglu_block() const { return transposed ? kTransposedSwigluBlock : tile_n; }
  // A tile's segments wait for each other (reduce-scatter, through L2 or in clusters): static dispatch,
  // PDL or stream order only.
  bool segments_wait_for_peers() const { return reduce_scatter || dsmem_reduce; }
  // (Pingpong tiles store directly by default; "-staged-pp" stages them per warpgroup for TMA stores.)
  bool staged() const { return transposed ? false : pingpong ? store == EpilogueStore::Staged : stages_epilogue(tile_m, tile_n, store); }
  bool default_store() const {
    if (transposed) return store == EpilogueStore::Default;
    return pingpong ? store != EpilogueStore::Staged : staged() == stages_epilogue_by_default(tile_m, tile_n);
  }
  // Which kernel function the configuration runs (per element type): tile, epilogue store, whole-tile or
  // segmented (split-K and stream-K share one), multicast, pingpong, CTAs per SM. The first run of a
  // function right after another one is slower (docs/hopper-gemm.md, "the kernel-switch penalty";
  // docs/hopper-conv.md), so the chain tuners weigh a switch between neighbouring stages.
  // (bench/conv_picks.py's kernel_function is the same rule, on configuration names.)
  std::string kernel_function() const {
    return std::to_string(tile_m) + "x" + std::to_string(tile_n) + (staged() ? "-staged" : "-direct") +
           (splits > 1 || stream_k ? "-segmented" : "-whole") + (multicast > 1 ? "-mc" + std::to_string(multicast) : "") +
           (pingpong ? "-pp" : "") + (ctas_per_sm > 1 ? "-o" + std::to_string(ctas_per_sm) : "") +
           (transposed ? "-t" : "");
  }
  std::string name() const {
    return std::to_string(tile_m) + "x" + std::to_string(tile_n) + (transposed ? "-t" : "") +
           (default_store() ? "" : store == EpilogueStore::Staged ? "-staged" : "-direct") + (pingpong ? "-pp" : "") +
           (splits > 1 ? "-sk" + std::to_string(splits) : std::string()) +
           (reduce_scatter ? "-rs" : "") + (dsmem_reduce ? "-dsm" : "") +
           (multicast > 1 ? "-mc" + std::to_string(multicast) : std::string()) +
           (group > 1 ? "-g" + std::to_string(group) : std::string()) +
           (ctas_per_sm > 1 ? "-o" + std::to_string(ctas_per_sm) : std::string()) + (stream_k ? "-streamk" : "") +
           (ctas > 0 ? "-c" + std::to_string(ctas) : std::string()) +
           (inflight > 0 ? "-f" + std::to_string(inflight) : std::string()) +
           (order == OrderKind::RowMajor ? "-rowmajor" : order == OrderKind::Table ? "-table" : "");
  }
};

// The in-flight caps (GemmConfig::inflight) the tuners try on a 64-row tile `tile_n` weight columns wide: 64 and 80 KB
// of weights per CTA (a k-tile of weights is tile_n x 64 x 2 bytes), the 4-5 stages of 16 KB that streamed best over
// ~90+ CTAs (bench/results/inflight-h200-20261129/). 64x64: 8, 10; 64x128: 4, 5; 64x192: 2, 3. Never below 2 k-tiles,
// the least cap PersistentOp::check_schedule accepts (a consumer releases a stage once the next one's MMAs are issued).
inline std::vector<int> inflight_candidates(int tile_n) {
  const int ktile_bytes = tile_n * kTileK * 2;
  std::vector<int> caps;
  for (int kb : {64, 80}) {
    const int cap = std::max(2, kb * 1024 / ktile_bytes);
    if (caps.empty() || caps.back() != cap) caps.push_back(cap);
  }
  return caps;
}

// Parses what GemmConfig::name() prints ("128x256-sk3-c66-rowmajor", "64x128-streamk", "128x128-direct",
// "128x128-sk3-rs-rowmajor", "128x256-mc2", "128x192-g4-streamk", "128x128-pp", "64x64-sk3-o2", "192x192-t", "64x128-staged-f4"). Returns an
// empty string, or what is wrong with the text.
inline std::string parse_gemm_config(const std::string& text, GemmConfig& out) {
  GemmConfig c;
  size_t p = 0;
  auto number = [&](int& v) {
    size_t q = p;
    while (q < text.size() && text[q] >= '0' && text[q] <= '9') ++q;
    if (q == p || q - p > 6) return false;
    v = std::stoi(text.substr(p, q - p));
    p = q;
    return true;
  };
  if (!number(c.tile_m) || p >= text.size() || text[p] != 'x')
    return "a tile config starts with <tile_m>x<tile_n> (got '" + text + "')";
  ++p;
  if (!number(c.tile_n)) return "no tile width after " + std::to_string(c.tile_m) + "x in '" + text + "'";
  while (p < text.size()) {
    if (text[p] != '-') return "expected '-' at offset " + std::to_string(p) + " of '" + text + "'";
    ++p;
    if (text.compare(p, 7, "streamk") == 0) {
      c.stream_k = true;
      p += 7;
    } else if (text.compare(p, 6, "staged") == 0) {
      c.store = EpilogueStore::Staged;
      p += 6;
    } else if (text.compare(p, 6, "direct") == 0) {
      c.store = EpilogueStore::Direct;
      p += 6;
    } else if (text.compare(p, 8, "rowmajor") == 0) {
      c.order = OrderKind::RowMajor;
      p += 8;
    } else if (text.compare(p, 3, "dsm") == 0) {
      c.dsmem_reduce = true;
      p += 3;
    } else if (text[p] == 't' && (p + 1 == text.size() || text[p + 1] == '-')) {
      c.transposed = true;
      p += 1;
    } else if (text.compare(p, 2, "pp") == 0) {
      c.pingpong = true;
      p += 2;
    } else if (text.compare(p, 2, "mc") == 0) {
      p += 2;
      if (!number(c.multicast)) return "no cluster size after -mc in '" + text + "'";
    } else if (text.compare(p, 1, "g") == 0) {
      p += 1;
      if (!number(c.group)) return "no group size after -g in '" + text + "'";
    } else if (text.compare(p, 1, "o") == 0) {
      p += 1;
      if (!number(c.ctas_per_sm)) return "no CTA count per SM after -o in '" + text + "'";
    } else if (text.compare(p, 2, "rs") == 0) {
      c.reduce_scatter = true;
      p += 2;
    } else if (text.compare(p, 2, "sk") == 0) {
      p += 2;
      if (!number(c.splits)) return "no split count after -sk in '" + text + "'";
    } else if (text.compare(p, 1, "c") == 0) {
      p += 1;
      if (!number(c.ctas)) return "no CTA count after -c in '" + text + "'";
    } else if (text.compare(p, 1, "f") == 0) {
      p += 1;
      if (!number(c.inflight) || c.inflight < 1) return "no k-tile count (>= 1) after -f in '" + text + "'";
    } else {
      return "unknown option at offset " + std::to_string(p) + " of '" + text + "' (known: -t -staged -direct -pp -sk<N> -rs -dsm -mc<N> -g<N> -o<N> -streamk -c<N> -f<N> -rowmajor)";
    }
  }
  out = c;
  return "";
}


}  // namespace braid::hopper
