// braid's Hopper GEMM kernel: TMA loads, wgmma, one producer warp + one consumer warpgroup per 64
// tile rows (warp-specialized), persistent over work units (whole tiles, split-K or stream-K segments
// of tiles; work_schedule.hpp), with braid's tile synchronization in its two natural places. The
// same kernel runs implicit-GEMM convolutions (conv_traits.cuh): the traits say how A is loaded
// (a TMA tiled or im2col view) and which rows/columns of a produced tensor a k-tile reads.
//
//   producer (one elected lane): for each k-tile
//       acquire a pipeline stage
//       [R] issue the B (weights) TMA load first -- weights never wait
//       wait for the producer tiles covering A's rows x this k-tile's columns (ColumnWaiterWarp:
//           the producer warp probes up to 32 semaphores per L2 round trip), then fence.proxy.async so the TMA engine (async
//           proxy) reads what the generic-proxy stores of the producer stage released
//       issue the A TMA load (and B now, without R)
//   consumers (256 threads): wgmma mainloop (CUTLASS's sm90 collective), then the epilogue
//       (split-K reduction, activation, stores), a named barrier over the consumer threads, and one
//       thread posts the tile (release) -- every store of the tile happens-before the post.
//
// Built on CUTLASS's sm90 TMA + GMMA warp-specialized collective mainloop (the pipeline, the smem
// layouts, the wgmma loop); the kernel layer, the scheduler and the epilogue are braid's.
//
// Stage ordering: with kSync the kernel never calls griddepcontrol.wait (the semaphores are the
// dependency); with kPdlTrigger it triggers its dependents at block start (begin_block). Without
// kSync it is a plain stream-ordered kernel that waits for its PDL primary before loading.
#pragma once
#include <cuda_runtime.h>

#include <type_traits>

#include "braid/core/barrier_wait.cuh"
#include "braid/core/stage.cuh"
#include "braid/kernels/hopper/cluster_exchange.cuh"
#include "braid/kernels/hopper/epilogue.cuh"
#include "braid/kernels/hopper/gemm_config.hpp"
#include "braid/kernels/hopper/tile_scheduler.cuh"
#include "cute/tensor.hpp"
#include "cutlass/arch/reg_reconfig.h"
#include "cutlass/cutlass.h"
#include "cutlass/gemm/collective/collective_builder.hpp"
#include "cutlass/gemm/dispatch_policy.hpp"
#include "cutlass/pipeline/pipeline.hpp"

namespace braid::hopper {

namespace detail {
// The transposed kernels' epilogue and D's tensor map for it (epilogue_transposed.cuh): declared here,
// defined in a header that only their instantiation units include (src/hopper/instances/gemm_*_t.cu), so
// that work on it rebuilds those four units, not every kernel. `publish`: someone reads the tile's
// completion (posts, traces) -- its stores must then be performed before this returns.
// `buf`: kBufs panel buffers of kRows x 64 (WarpSpecializedTraits::kPanelBufs).
template <int kRows, int kCols, int kBufs, class Params, class Element, class Accum, class Coord>
__device__ __forceinline__ void store_tile_transposed(Accum& accum, const Coord& coord, const Params& p, int m0,
                                                      int n0_out, Element* buf, int t, int threads, uint32_t bar,
                                                      bool publish, Activation act);
template <int kRows, class Params>
void set_transposed_output_map(Params& p);
}  // namespace detail

// Shared memory the mainloops leave to the kernel (BlockSync, the post slots and their barriers, the
// unit ring, the split-K flag): the collective builders size their pipelines to the rest. (256 -> 512
// when the post hand-off took two mbarriers: no instantiation's stage count changed.)
constexpr int kExtraSmem = 512;

// Staged epilogues (EpilogueStore in gemm_config.hpp; epilogue.cuh, store_tile_staged) write the
// tile into a [tile_m][tile_n + 8] buffer of 2-byte elements carved out of the pipeline (128x128:
// 7 -> 6 stages). Measured on an H100 (bench/results/gemm-vs-cutlass-diagnosis-h100-20261123.md):
// compute-bound 128x128 GEMMs gain 7-16% (whole-sector stores); the bandwidth-bound ones lose the
// stage (MLP run at a2cc57d), and the 64-row weight-streaming tiles lost ~10% (9 -> 8 stages, run at
// b48d64b). Hence one instantiation per (tile, store) where both matter, and the tuners choose.
constexpr int epilogue_staging_bytes(int tile_m, int tile_n, bool staged) { return staged ? tile_m * (tile_n + 8) * 2 : 0; }

// An SM's shared memory (sm_90: 228 KiB, of which each resident CTA reserves 1 KiB) and the most one
// CTA may use (227 KiB, what the collective builders size their pipelines to). With `ctas` CTAs per SM
// a pipeline gets what is left of the SM's share: the builder's carve-out grows by the difference.
constexpr int kSmemPerSm = 233472, kSmemPerCtaMax = 232448, kSmemReservedPerCta = 1024;
constexpr int smem_per_cta(int ctas) { return ctas == 1 ? kSmemPerCtaMax : kSmemPerSm / ctas - kSmemReservedPerCta; }
constexpr int smem_carveout_for(int ctas) { return kSmemPerCtaMax - smem_per_cta(ctas); }

// A tile whose stores are done, handed from the consumer warpgroups to the poster warp (warp 1 of the
// producer warpgroup), which makes them visible at gpu scope and posts the tile's semaphore. The
// release of a post waits for the tile's stores to reach L2 (a microsecond or more under load);
// issued by a consumer thread it stalled that thread's warpgroup -- wgmma needs all four warps --
// once per tile, which cost tile-synchronized chains of short convolutions 15-20%.
//
// The hand-off, per slot s (two slots; cooperative: the CTA's tiles alternate slots; pingpong:
// warpgroup g uses slot g). post_full[s] is an mbarrier: every consumer warp of the tile arrives once
// per tile (after its stores and a __syncwarp), the poster waits for the phase. Named barrier
// kPostEmptyBarrier + s: the poster arrives once it has taken the slot; consumer warp 0, which
// writes the slot, syncs on it before writing the slot again. A warp arrives for the slot's phase k
// only after phase k-1 has completed: the consumer warps drift apart by up to a pipeline of k-tiles
// -- more than a tile where K is short -- and an arrival for a later tile must never complete an
// earlier tile's phase. (Before 2026-11-24 post_full was a named barrier the poster synced on, which
// counts the poster's own arrival: consumer warps that ran a tile ahead of a lagging poster arrived
// twice in one phase, the phase completed without the poster, and the poster later read a slot before
// it was rewritten -- a tile never posted, or a deadlock. Seen once in thousands of chain runs of
// whole-tile 128x64 convolutions; forced by StageParams::fault_poster_delay_ns: braid-stress-conv.)
struct PostSlot {
  Tile tile;
  uint32_t tile_lin;
  uint32_t done;      // no more tiles: the poster leaves
  uint32_t mhz;       // traces: the SM's clock over the mainloop (TileTrace::mainloop_mhz; fills the padding)
  uint64_t t_start;   // traces: when the consumers took the tile, and when its mainloop ended
  uint64_t t_mainloop;
};

// What every instantiation of the kernel shares, given its collective mainloop: warp roles,
// registers, shared storage. The GEMM and convolution traits add their Params and the index math
// of their A operand (which rows and columns of a produced matrix a k-tile reads).
// Pingpong (GemmConfig::pingpong): the two consumer warpgroups take alternate work units of the CTA,
// each computing a whole TileM x TileN tile; while one runs its epilogue the other's mainloop keeps
// the tensor cores busy (CUTLASS's pingpong kernel measured 97% tensor-pipe activity on the MLP
// shapes, against 90% for braid's cooperative 128x128; bench/results/gemm-shapes-*). braid's pingpong
// measured 1.14-1.22x slower per tile than its cooperative kernel (docs/hopper-gemm.md) with direct
// stores: ncu (GPT-3 out, M=2048, session 37) put ~20% more L2 traffic under it than under the
// cooperative kernel or CUTLASS's pingpong, and its consumers waited on the pipeline's full barriers
// while the producer waited on the empty ones -- the half-sector stores of the direct epilogue
// clogging the loads. Staged (Staged = true), each warpgroup stages its tile one 64-column panel at a
// time in its own half of the staging buffer and stores each panel with TMA (store_tile_tma_panels):
// 0.96-1.09x the cooperative kernel's time (median 1.01x) where direct stores took 0.96-1.34x
// (bench/results/pingpong-staged-h100-20261126/); CUTLASS's own pingpong stays 3-7% ahead on most shapes.
//
// Segmented = false: the instantiation runs whole tiles only (data-parallel schedules); the split-K /
// stream-K fixup (reduce_split_tile, reduce-scatter, the cluster exchange) is compiled out. Its mere
// presence cost the consumers registers: the 192x192 kernel ran 6-12% faster without it (same
// data-parallel schedule; bench/results/gemm-regsplit-ab-*), so GemmOp picks this instantiation
// whenever a configuration has no segments.
//
// CtasPerSm = 2 (GemmConfig::ctas_per_sm, "-o2"): two persistent CTAs share each SM, each with half its
// shared memory (a pipeline half as deep: the mainloop's carve-out, smem_carveout_for) and at most
// 128 registers per thread (__launch_bounds__): two producers and two consumers interleave. Measured on
// the deep convolutions it wins only 512x7 N=8 (4-6%) and 256x14 N=4 (1%): their k-steps are not bound
// by one CTA's latency (docs/hopper-conv.md, "Two CTAs per SM").
//
// Transposed (GemmConfig::transposed): the collective computes D^T = B^T . A^T -- its A operand is the
// weight tile (TileN weight columns, MN-major), its B operand the activation tile (TileM tokens, K-major),
// and its two consumer warpgroups split the tokens (TileM / 2 each; a 64-token tile has one warpgroup,
// which issues every MMA). The tile is still TileM x TileN of D; the MMA's view of it is kMmaM x kMmaN =
// TileN x TileM. Whole tiles only, no pingpong; the epilogue is store_tile_transposed
// (epilogue_transposed.cuh), staged through a TileM x 64 panel that goes out by TMA. ClusterM = 2 or 4:
// the weights are multicast to a cluster of vertically adjacent tiles (the same weight columns, other
// tokens), as for the row-major kernels -- in the collective's terms its A operand along its cluster's N.
template <class Element_, int TileM, int TileN, class Mainloop_, bool Staged, int ClusterM = 1, bool Pingpong = false,
          bool Segmented = true, int CtasPerSm = 1, bool Transposed = false>
struct WarpSpecializedTraits {
  using Element = Element_;
  static constexpr int kTileM = TileM;
  static constexpr int kTileN = TileN;
  static constexpr int kCtasPerSm = CtasPerSm;
  static constexpr bool kTransposed = Transposed;
  static_assert(Transposed ? ((TileM == 64 || TileM == 128 || TileM == 192 || TileM == 256) && TileN % 64 == 0 &&
                              !Pingpong && !Segmented && !Staged && CtasPerSm == 1)
                           : (TileM == 64 || TileM == 128 || (TileM == 192 && !Pingpong)),
                "tiles are 64, 128 or 192 rows tall (one consumer warpgroup per 64 rows); transposed: 64 tokens on "
                "one warpgroup or 128-256 over two, whole tiles of 64-column blocks");
  // The accumulator tile as the MMA sees it (rows x columns of its C).
  static constexpr int kMmaM = Transposed ? TileN : TileM;
  static constexpr int kMmaN = Transposed ? TileM : TileN;
  using TileShape = cute::Shape<cute::Int<kTileM>, cute::Int<TileN>, cute::Int<kTileK>>;
  // ClusterM = 2 (4: transposed): clusters of CTAs on vertically adjacent tiles, the weights multicast
  // (GemmConfig::multicast). The launch's clusters and the pipeline span ClusterM CTAs along x
  // (ClusterShape); the collective sees them along the dimension that shares the weights: its M
  // (row-major: the tiles' rows) or, transposed, its N (the tokens) -- CollectiveClusterShape.
  static constexpr int kMulticast = ClusterM;
  static_assert(ClusterM == 1 || ClusterM == 2 || (Transposed && ClusterM == 4),
                "multicast clusters of one or two CTAs (transposed: or four)");
  using ClusterShape = cute::Shape<cute::Int<ClusterM>, cute::_1, cute::_1>;
  using CollectiveClusterShape =
      cute::conditional_t<Transposed, cute::Shape<cute::_1, cute::Int<ClusterM>, cute::_1>, ClusterShape>;
  using Mainloop = Mainloop_;
  static_assert(std::is_same_v<typename Mainloop::DispatchPolicy::ClusterShape, CollectiveClusterShape>,
                "the collective's pipeline and TMA copies are built for the launch's cluster shape");
  using TiledMma = typename Mainloop::TiledMma;
  using Pipeline = typename Mainloop::MainloopPipeline;
  using PipelineState = typename Mainloop::PipelineState;

  static constexpr int kProducerThreads = 128;  // one warpgroup; warp 0 lane 0 issues the TMA loads
  static constexpr bool kPingpong = Pingpong;
  static constexpr bool kSegmented = Segmented && !Pingpong;  // (pingpong tiles are whole)
  // Cooperative: a warpgroup per 64 rows of one tile. Pingpong: two warpgroups, a tile each.
  static constexpr int kConsumerThreads = Pingpong ? 256 : Transposed ? (TileM == 64 ? 128 : 256) : TileM / 64 * 128;
  static constexpr int kTileThreads = Pingpong ? 128 : kConsumerThreads;  // the threads of one tile's MMAs and epilogue
  static constexpr int kThreads = kProducerThreads + kConsumerThreads;
  static_assert(int(cute::size(TiledMma{})) == kTileThreads, "one consumer warpgroup per 64 tile rows, or per tile (pingpong)");
  static_assert(!Pingpong || (ClusterM == 1 && TileN % 64 == 0), "pingpong tiles: no multicast; staged in 64-column panels");
  static constexpr uint32_t kConsumerBarrier = 8;  // named barrier id (CUTLASS's own ids are below 8)
  // A tile's threads (pingpong: warpgroup 1's own barrier; 11-12 are the post hand-off's).
  static constexpr uint32_t tile_barrier(int wg) { return wg == 0 ? kConsumerBarrier : 13u; }
  // Pingpong: warpgroup g arrives on mma_done_barrier(g) once it issued its unit's MMAs; the other
  // syncs on it before its next unit's (see the consumer loop).
  static constexpr uint32_t mma_done_barrier(int wg) { return wg == 0 ? 14u : 15u; }
  // The post hand-off (see PostSlot): full[s] is SharedStorage::post_full[s] (an mbarrier); empty[s]
  // is named barrier 11 + s (the poster arrives, consumer warp 0 waits). (9 and 10 are free.)
  static constexpr uint32_t kPostEmptyBarrier = 11;
  // Register split (setmaxnreg; 0 = keep the compiler's 168 of a 384-thread CTA). 128 x 128 tiles need
  // no more than 168 anywhere; 128 x 256 tiles hold 128 accumulators per consumer thread. The
  // producer's share must hold its loop without spills (40 did not: its TMA issue starved the MMAs).
  // 128 * producer + 256 * consumer <= 65536.
  // 64-row tiles: 256 threads, 255 registers each without reallocation.
  // Pingpong: a consumer thread holds a whole 128 x 128 tile's share (128 accumulators), as 128 x 256.
  // 128 x 192 tiles with the fixup (96 accumulators per consumer thread): the compiler's 168 spilled
  // 428 / 1824 bytes (ptxas), 40 / 232 spills 244 / 524; their whole-tile kernel spills nothing at 168
  // and does spill with 40 / 232, so it keeps the default.
  // Transposed: 96-160 accumulators per consumer thread (CUTLASS's cooperative split, 40 / 232, as its
  // transposed probe ran).
  static constexpr bool kBigAccumulators = Transposed ||
                                           (TileM == 128 && (TileN == 256 || (TileN == 192 && Segmented))) ||
                                           (Pingpong && TileM * TileN >= 128 * 128);
  // Pingpong 128x128: 80 / 208 -- ptxas reports no spills, where 40 / 232 spilled 248 bytes (the
  // producer's loop does not fit 40) and the pingpong kernel ran 20-30% slower than cooperative
  // (bench/results/gemm-pingpong-*). 128x256 spills at every split tried (24-64 / 216-240).
  // 192-row tiles: 512 threads (three consumer warpgroups), 128 registers each unless reallocated
  // (a 64 x 192 share is 96 accumulators per consumer thread). Measured on 192x192 (gemm-regsplit-ab):
  // with the split-K fixup, 56 / 152 (the producer spills ~90 bytes below 96) beat 96 / 136 by 6-10%;
  // without it, 96 / 136 (no producer spills; ptxas: the mainloop fits 128) was fastest of all.
  static constexpr bool kThreeConsumers = !Pingpong && !Transposed && TileM == 192;
  // The consumers look the next unit up while the current unit's last MMAs run (hopper_gemm_kernel):
  // between two tiles that index arithmetic held the tensor cores idle 0.86 -> 0.18 us per unit, 2-6%
  // of a short-K GEMM with 128x128 tiles. Not where the accumulators fill the register budget (128x256,
  // 192-row tiles): the next unit, live across the epilogue, doubled 128x256's epilogue (1.7 -> 3.4 us)
  // and made it 3-10% slower (bench/results/gemm-unit-gap-h100-20261125/).
  static constexpr bool kLookAhead = !kBigAccumulators && !kThreeConsumers;
  static constexpr int kProducerRegs =
      kThreeConsumers ? (kSegmented ? 56 : 96) : !kBigAccumulators ? 0 : Pingpong ? 80 : 40;
  // (A 64-token transposed tile has one consumer warpgroup: 256 threads, room for 40 / 256.)
  static constexpr int kConsumerRegs = kThreeConsumers               ? (kSegmented ? 152 : 136)
                                       : !kBigAccumulators           ? 0
                                       : Pingpong                    ? 208
                                       : Transposed && TileM == 64 ? 256
                                                                     : 232;
  static_assert(kProducerThreads * kProducerRegs + kConsumerThreads * kConsumerRegs <= 65536, "register file");

  static constexpr bool kStagedEpilogue = Staged;
  // Whole-tile staged instantiations store through TMA (epilogue.cuh, store_tile_tma): the staging
  // buffer holds 64-column swizzled panels, 1024-byte aligned (the pipeline's carve-out for the
  // padded layout leaves room for the alignment).
  static constexpr bool kTmaStore = Staged && !kSegmented;
  // Transposed: the epilogue's TileM x 64 output panels (store_tile_transposed) go out by TMA from a ring
  // of kPanelBufs buffers -- as many as fit beside the pipeline the builder sized (its carve-out leaves
  // room for one), at most a tile's panels. With one buffer each panel waited for the previous panel's
  // bulk store to have read it, and a 64x320 tile's five panels went out one after another.
  template <int kPanels_>
  struct SharedStorageFor {
    typename Mainloop::TensorStorage tensors;
    alignas(16) typename Mainloop::PipelineStorage pipeline;
    BlockSync bs;
    PostSlot post[2];      // finished tiles from the consumers to the poster warp
    uint64_t post_full[2];  // mbarriers: every consumer warp of the slot's tile handed it over (PostSlot)
    UnitRing ring;         // dynamic dispatch: unit indices from the producer warp to the consumers
    uint32_t reduce_here;  // split-K: this CTA's split finished the tile last
    ClusterExchangeBarriers xbar;  // split-K through distributed shared memory (cluster_exchange.cuh)
    alignas(kTmaStore || Transposed ? 1024 : 128) Element_ staging[Transposed ? TileM * 64 * kPanels_
                                                      : kTmaStore ? TileM * TileN
                                                      : kStagedEpilogue ? TileM * detail::staging_pitch(TileN) : 8];  // the output tile
  };
  static constexpr int kPanelBytes = TileM * 64 * int(sizeof(Element_));  // (a multiple of the 1024-byte alignment)
  static constexpr int panel_buffers() {
    if (!Transposed) return 1;
    const int fit = 1 + (smem_per_cta(CtasPerSm) - int(sizeof(SharedStorageFor<1>))) / kPanelBytes;
    return fit < 1 ? 1 : fit > TileN / 64 ? TileN / 64 : fit;
  }
  static constexpr int kPanelBufs = panel_buffers();
  using SharedStorage = SharedStorageFor<kPanelBufs>;
  static constexpr size_t kSmemBytes = sizeof(SharedStorage);
  static_assert(kSmemBytes <= size_t(smem_per_cta(CtasPerSm)), "the shared storage does not fit CtasPerSm CTAs per SM");
  static_assert(CtasPerSm == 1 || (CtasPerSm == 2 && kThreads * 2 * 128 <= 65536 && !kBigAccumulators),
                "two CTAs per SM: at most 128 registers per thread, no register reallocation");
  // Split-K partials reduced through the staging buffer: float4 slots per consumer thread.
  static constexpr int kReduceSlotsPerThread = int(sizeof(SharedStorage::staging) / 16 / kConsumerThreads);
  static_assert(!kStagedEpilogue || kReduceSlotsPerThread >= 2,
                "the staging buffer holds at least two split-K slots per consumer thread");
  static_assert(sizeof(BlockSync) + 2 * sizeof(PostSlot) + 2 * sizeof(uint64_t) + sizeof(UnitRing) + sizeof(uint32_t) +
                    sizeof(ClusterExchangeBarriers) + 16 <= kExtraSmem,
                "carve out more shared memory");
  // The cluster exchange (two segments) puts a share of the peer's quads -- half a tile of fp32 -- into
  // the staging buffer: 128x128 and 128x64 staged tiles hold exactly that.
  static constexpr bool kClusterExchange =
      ClusterM == 1 && kSegmented && kStagedEpilogue && kReduceSlotsPerThread * 2 >= TileM * TileN / 4 / kConsumerThreads;
  // The S-way cluster reduction (2-8 segments, every CTA one unit: cluster_exchange.cuh,
  // reduce_partials_cluster) keeps each CTA's partials in its own pipeline buffers -- idle once the
  // CTA's only mainloop is done -- for the peers to read: they must hold a whole fp32 tile.
  // Its in-order sums hold a few float4s beside the accumulators: offered where a consumer thread's
  // registers leave room (ptxas: 128x64, 64x64, 64x128 without spills; 128x128 at 168 registers
  // spilled 254 bytes, so it keeps the pair exchange).
  static constexpr int kConsumerRegBudget = kConsumerRegs > 0 ? kConsumerRegs : (65536 / kThreads > 255 ? 255 : 65536 / kThreads);
  static constexpr bool kClusterReduce = ClusterM == 1 && kSegmented && !Pingpong &&
                                         sizeof(typename Mainloop::TensorStorage) >= size_t(TileM) * TileN * 4 &&
                                         2 * TileM * TileN / kConsumerThreads + 64 <= kConsumerRegBudget;
  static_assert(!kStagedEpilogue || sizeof(Element_) * TileM * detail::staging_pitch(TileN) == epilogue_staging_bytes(TileM, TileN, true),
                "the staging buffer is what the pipeline's carve-out left for it");
  static_assert(!kTmaStore || TileN % 64 == 0, "TMA-stored tiles are whole 64-column panels");

  // The parameters every instantiation has (the traits' Params derive from this).
  struct ParamsBase {
    typename Mainloop::Params mainloop;
    int M, N, K;       // GEMM shape (N: B's width; packed gate|up columns for SwiGLU)
    int n_out;         // D's width: N, or N/2 for SwiGLU (less where B's last blocks are padding)
    Element* D;
    const Element* bias;      // per output column (only read when the traits' kBias)
    const Element* residual;  // null, or added like bias, one per output element (only with kBias)
    Activation act;
    WorkSchedule sched;               // data-parallel / split-K / stream-K units of the CTAs
    IndexedGrid groups;               // the grid of tile groups sched's order walks (set at launch from sp.grid)
    float4* partials;                 // workspace: [slot][tile values in quads] (tiles cut into segments)
    unsigned long long* arrivals;     // cumulative segment arrivals per tile position (never reset)
    StageParams sp;                   // sp.grid: output tile grid; sp.shape: tile_m x output tile cols
    CUtensorMap d_map;                // D as boxes of 64 columns x tile_m rows (kTmaStore instantiations)
    int d_tma;                        // d_map is valid (else the consumers copy the staged tile out)
    UnitTrace* unit_trace;            // diagnostic per-unit records (null: off), unit_trace_stride per block
    uint32_t unit_trace_stride;
  };
  // Fills d_map/d_tma for D [M, n_out] (row-major) when the TMA-store epilogue can write it.
  static void set_output_map(ParamsBase& p, int tile_n_out) {
    p.d_tma = 0;
    if constexpr (Transposed) {
      detail::set_transposed_output_map<TileM>(p);
    } else if constexpr (kTmaStore) {
      if (p.n_out % 8 == 0 && tile_n_out % 64 == 0 && (reinterpret_cast<uintptr_t>(p.D) & 15u) == 0 &&
          tma::encode_2d(p.d_map, p.D, 2, uint64_t(p.n_out), uint64_t(p.M), uint64_t(p.n_out) * 2, 64, TileM).empty())
        p.d_tma = 1;
    }
  }

  // The producer's walk over A's k-tiles (produce): a_cursor(tAgA, k) stands at k-tile k of the unit's row
  // tile (tAgA: the TMA partition of that row tile, (TMA, TMA_M, TMA_K, k)); load() issues that k-tile's
  // TMA load into a pipeline stage, ++ moves to the next k-tile. This one indexes the TMA view with a
  // coordinate iterator over A's k-mode (as CUTLASS's collectives do: an int for a GEMM); indexing it
  // with the flat k-tile index cost a convolution's producer two integer divisions per k-tile.
  // ConvTraits has its own (conv_traits.cuh).
  template <class TensorA, class KIterator>
  struct ViewACursor {
    TensorA tAgA;
    KIterator k;
    template <class TmaA, class Dst>
    __device__ __forceinline__ void load(const TmaA& tma, uint64_t& bar, Dst&& dst) const {
      cute::copy(tma.with(bar, 0), tAgA(cute::_, cute::_, cute::_, *k), dst);
    }
    __device__ __forceinline__ void operator++() { ++k; }
  };
  template <class TensorA>
  static __device__ __forceinline__ auto a_cursor(const TensorA& tAgA, int k) {
    const auto shape_k = cute::shape<3>(tAgA);
    auto it = cute::make_coord_iterator(cute::idx2crd(k, shape_k), shape_k);
    return ViewACursor<TensorA, decltype(it)>{tAgA, it};
  }

  // The produced operand (activations: the one the producer waits for) and the weights, as the
  // collective names them: its A and B, or B and A when transposed. TMA copies and shared-memory tensors.
  static __device__ __forceinline__ const auto& act_load(const typename Mainloop::Params& m) {
    if constexpr (Transposed) return m.tma_load_b;
    else return m.tma_load_a;
  }
  static __device__ __forceinline__ const auto& wgt_load(const typename Mainloop::Params& m) {
    if constexpr (Transposed) return m.tma_load_a;
    else return m.tma_load_b;
  }
  static __device__ __forceinline__ auto act_smem(typename Mainloop::TensorStorage& t) {
    using namespace cute;
    if constexpr (Transposed) return make_tensor(make_smem_ptr(t.smem_B.data()), typename Mainloop::SmemLayoutB{});
    else return make_tensor(make_smem_ptr(t.smem_A.data()), typename Mainloop::SmemLayoutA{});
  }
  static __device__ __forceinline__ auto wgt_smem(typename Mainloop::TensorStorage& t) {
    using namespace cute;
    if constexpr (Transposed) return make_tensor(make_smem_ptr(t.smem_A.data()), typename Mainloop::SmemLayoutA{});
    else return make_tensor(make_smem_ptr(t.smem_B.data()), typename Mainloop::SmemLayoutB{});
  }
};

// 128 rows: cooperative (two consumer warpgroups of 64 rows); 64 rows: one consumer warpgroup, so
// that a pipeline stage spends less shared memory on the token operand and more stages of weights
// are in flight when tokens are few.
// LayoutB: RowMajor for the GEMMs' [K, N] weights, ColumnMajor (K-major) for convolution filters.
// Staged: the pipeline leaves room for the epilogue's staging buffer.
// ClusterM = 2: the collective's B copy is a TMA multicast across a cluster of two CTAs along M (each
// loads half of the B tile for both), and its pipeline counts both CTAs' consumers before a stage
// is refilled. The tile shape stays per CTA.
// Pingpong: CUTLASS's pingpong policy builds the one-warpgroup MMA of a whole tile (TileM / 64 atoms
// along M in one warpgroup).
// 192 rows: three consumer warpgroups of 64 rows (tiles that fit the SM count: 192x192 makes GPT-3's
// W1 at 768 tokens 128 tiles, one wave on 132 SMs, where cuBLASLt runs 192x192 too; docs/hopper-gemm.md).
// CUTLASS's builder lays its cooperative MMA out as two warpgroups along M; the same collective takes
// any number (its mainloop partitions by size(TiledMma) / 128), so the 192-row collective is the
// builder's with a 3 x 1 warpgroup layout of the same wgmma atom.
template <class Element, int TileM, int TileN, bool Staged, class LayoutB, int ClusterM, bool Pingpong, int CtasPerSm = 1>
struct GemmMainloopFor {
  using TileShape = cute::Shape<cute::Int<TileM>, cute::Int<TileN>, cute::Int<kTileK>>;
  using Builder = cutlass::gemm::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, Element, cutlass::layout::RowMajor, 8, Element, LayoutB, 8,
      float, TileShape, cute::Shape<cute::Int<ClusterM>, cute::_1, cute::_1>,
      cutlass::gemm::collective::StageCountAutoCarveout<kExtraSmem + epilogue_staging_bytes(TileM, TileN, Staged) +
                                                        smem_carveout_for(CtasPerSm)>,
      cute::conditional_t<Pingpong, cutlass::gemm::KernelTmaWarpSpecializedPingpong,
                          cute::conditional_t<(TileM >= 128), cutlass::gemm::KernelTmaWarpSpecializedCooperative,
                                              cutlass::gemm::KernelTmaWarpSpecialized>>>;
  using ThreeWarpgroupMma = decltype(cute::make_tiled_mma(
      cute::GMMA::ss_op_selector<Element, Element, float, TileShape, Builder::GmmaMajorA, Builder::GmmaMajorB>(),
      cute::Layout<cute::Shape<cute::_3, cute::_1, cute::_1>>{}));
  using type = cute::conditional_t<
      TileM == 192,
      cutlass::gemm::collective::CollectiveMma<
          typename Builder::DispatchPolicy, TileShape, Element, cutlass::gemm::TagToStrideA_t<cutlass::layout::RowMajor>,
          Element, cutlass::gemm::TagToStrideB_t<LayoutB>, ThreeWarpgroupMma, typename Builder::GmemTiledCopyA,
          typename Builder::SmemLayoutAtomA, void, cute::identity, typename Builder::GmemTiledCopyB,
          typename Builder::SmemLayoutAtomB, void, cute::identity>,
      typename Builder::CollectiveOp>;
};
template <class Element, int TileM, int TileN, bool Staged, class LayoutB = cutlass::layout::RowMajor, int ClusterM = 1,
          bool Pingpong = false, int CtasPerSm = 1>
using GemmMainloop = typename GemmMainloopFor<Element, TileM, TileN, Staged, LayoutB, ClusterM, Pingpong, CtasPerSm>::type;

// The transposed collective (WarpSpecializedTraits, Transposed): D^T[N, M] = B^T[N, K] . A^T[K, M] on
// braid's row-major A, B, D -- column-major A' (the weights, MN-major in shared memory) and B' (the
// activations, K-major). Tile (TileN weights, TileM tokens, 64); CUTLASS's builder lays its two
// cooperative warpgroups along M, here they split the tokens: one warpgroup's wgmma atom of 64 x TileM/2,
// laid out 1 x 2 and repeated over the TileN weights by the collective (the layout of CUTLASS's probe,
// src/cutlass/sm90_gemm_transposed.cu). 64 tokens: one warpgroup, atom 64 x 64 (split in two, each
// warpgroup's n32 MMAs would read every 64-row weight block from shared memory for half the work; measured
// slower, docs/hopper-gemm.md). The pipeline leaves room for a TileM x 64 staging panel (1024-byte aligned
// for the TMA store: 256x128 keeps 4 stages; 128x320, 56 KB per stage, 3).
// ClusterN > 1: the collective's cluster of ClusterN CTAs along its N (the tokens), so that its A copy --
// the weights -- is a TMA multicast over them (WarpSpecializedTraits::CollectiveClusterShape).
template <class Element, int TileM, int TileN, int ClusterN = 1>
struct TransposedGemmMainloopFor {
  using Col = cutlass::layout::ColumnMajor;
  using TileShape = cute::Shape<cute::Int<TileN>, cute::Int<TileM>, cute::Int<kTileK>>;
  using Builder = cutlass::gemm::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, Element, Col, 8, Element, Col, 8, float, TileShape,
      cute::Shape<cute::_1, cute::Int<ClusterN>, cute::_1>,
      cutlass::gemm::collective::StageCountAutoCarveout<kExtraSmem + TileM * 64 * 2 + 1024>,
      cutlass::gemm::KernelTmaWarpSpecializedCooperative>;
  static constexpr int kWarpgroups = TileM == 64 ? 1 : 2;
  using WarpgroupShape = cute::Shape<cute::_64, cute::Int<TileM / kWarpgroups>, cute::Int<kTileK>>;
  using TiledMma = decltype(cute::make_tiled_mma(
      cute::GMMA::ss_op_selector<Element, Element, float, WarpgroupShape, Builder::GmmaMajorA, Builder::GmmaMajorB>(),
      cute::Layout<cute::Shape<cute::_1, cute::Int<kWarpgroups>, cute::_1>>{}));
  using type = cutlass::gemm::collective::CollectiveMma<
      typename Builder::DispatchPolicy, TileShape, Element, cutlass::gemm::TagToStrideA_t<Col>, Element,
      cutlass::gemm::TagToStrideB_t<Col>, TiledMma, typename Builder::GmemTiledCopyA, typename Builder::SmemLayoutAtomA,
      void, cute::identity, typename Builder::GmemTiledCopyB, typename Builder::SmemLayoutAtomB, void, cute::identity>;
};

// D[M, n_out] = act(A[M, K] . B[K, N]): A's k-tile k reads rows of the tile, columns [64k, 64k+64).
// Transposed: the collective of TransposedGemmMainloopFor (WarpSpecializedTraits says what changes). (A
// specialization, not a conditional_t: only the chosen collective may be instantiated -- each builder
// refuses the other's tiles.)
template <class Element, int TileM, int TileN, bool Staged, int ClusterM, bool Pingpong, bool Transposed>
struct GemmTraitsMainloopFor {
  using type = GemmMainloop<Element, TileM, TileN, Staged, cutlass::layout::RowMajor, ClusterM, Pingpong>;
};
template <class Element, int TileM, int TileN, bool Staged, int ClusterM, bool Pingpong>
struct GemmTraitsMainloopFor<Element, TileM, TileN, Staged, ClusterM, Pingpong, true> {
  using type = typename TransposedGemmMainloopFor<Element, TileM, TileN, ClusterM>::type;
};
template <class Element, int TileM, int TileN, bool Staged, int ClusterM, bool Pingpong, bool Transposed>
using GemmTraitsMainloop = typename GemmTraitsMainloopFor<Element, TileM, TileN, Staged, ClusterM, Pingpong, Transposed>::type;
template <class Element_, int TileM, int TileN, bool Staged = stages_epilogue_by_default(TileM, TileN), int ClusterM = 1,
          bool Pingpong = false, bool Segmented = true, bool Transposed = false>
struct GemmTraits
    : WarpSpecializedTraits<Element_, TileM, TileN, GemmTraitsMainloop<Element_, TileM, TileN, Staged, ClusterM, Pingpong, Transposed>,
                            Staged, ClusterM, Pingpong, Segmented, 1, Transposed> {
  using Base = WarpSpecializedTraits<Element_, TileM, TileN,
                                     GemmTraitsMainloop<Element_, TileM, TileN, Staged, ClusterM, Pingpong, Transposed>,
                                     Staged, ClusterM, Pingpong, Segmented, 1, Transposed>;
  using Mainloop = typename Base::Mainloop;
  static constexpr bool kBias = false;
  struct Params : Base::ParamsBase {};

  // The TMA views of the activations and the weights: (BLK_M, BLK_K, m, k) and (BLK_N, BLK_K, n, k) --
  // the collective's A and B, or (transposed: it multiplies B^T by A^T) its B and A.
  static __device__ __forceinline__ auto load_tensors(Mainloop& mainloop, const Params& p) {
    using namespace cute;
    if constexpr (Transposed) {
      auto t = mainloop.load_init(make_shape(p.N, p.M, p.K, 1), p.mainloop);
      return make_tuple(get<1>(t)(_, _, _, _, 0), get<0>(t)(_, _, _, _, 0));
    } else {
      auto t = mainloop.load_init(make_shape(p.M, p.N, p.K, 1), p.mainloop);
      return make_tuple(get<0>(t)(_, _, _, _, 0), get<1>(t)(_, _, _, _, 0));
    }
  }
  // Rows [r0, r1] of the produced A that row-tile y reads.
  static __device__ __forceinline__ void a_rows(const Params& p, uint32_t y, uint32_t& r0, uint32_t& r1) {
    r0 = y * TileM;
    r1 = min(r0 + TileM, uint32_t(p.M)) - 1;
  }
  // Last column of A that k-tile k reads; the first and last columns of a unit's k range.
  static __device__ __forceinline__ uint32_t a_col_end(const Params& p, int k) {
    return min(uint32_t(k + 1) * kTileK, uint32_t(p.K)) - 1;
  }
  static __device__ __forceinline__ uint32_t a_first_col(const Params&, int k_begin) { return uint32_t(k_begin) * kTileK; }
  static __device__ __forceinline__ uint32_t a_last_col(const Params& p, int k_end) {
    return min(uint32_t(k_end) * kTileK, uint32_t(p.K)) - 1;
  }
};

// The producer warp's loop over this CTA's work units: for each k-tile, acquire a pipeline stage,
// [R] load B (weights), [kWait] wait for the A columns this k-tile reads, then load A.
// `early_weights` (plain loop only): this warp has not waited for the primary grid yet -- the first unit's
// first stages get their weights, then the warp waits (griddepcontrol.wait), then their activations.
template <class Traits, bool kWait>
__device__ __forceinline__ void produce(const typename Traits::Params& p, typename Traits::SharedStorage& smem,
                                        typename Traits::Pipeline& pipeline, const PersistentScheduler& sched,
                                        bool early_weights = false) {
  using namespace cute;
  using Mainloop = typename Traits::Mainloop;
  using Pipeline = typename Traits::Pipeline;
  using PipelineState = typename Traits::PipelineState;
  const StageParams& sp = p.sp;
  // The lane that issues the loads, chosen by elect.sync (lane 0: the warp is converged here). The
  // compiler knows an elected branch runs on one thread, so the TMA operands go to uniform registers
  // directly; under `lane == 0` every issue sat in a one-pass ELECT / R2UR loop (SASS), a dozen
  // instructions per load in the thread whose issue rate bounds the mainloop. It must be lane 0: the
  // pipeline arms a stage's full barrier from its leader thread (threadIdx.x % 128 == 0) only, and a
  // stage never armed would leave the consumers in their (bounded, reported) full-barrier wait.
  const bool elected = cute::elect_one_sync() != 0;
  Mainloop mainloop;
  auto load_inputs = Traits::load_tensors(mainloop, p);
  Tensor gA_mk = get<0>(load_inputs);  // (BLK_M, BLK_K, m, k)
  Tensor gB_nk = get<1>(load_inputs);  // (BLK_N, BLK_K, n, k)
  Tensor sA = Traits::act_smem(smem.tensors);  // the activations' stages (A; the collective's B when transposed)
  Tensor sB = Traits::wgt_smem(smem.tensors);  // the weights' stages
  // Multicast: this CTA loads its slice (its cluster rank) of the weight tile into every cluster CTA's
  // stage, each stage's full barrier expecting the whole tile's bytes; the activations are its own.
  constexpr bool kMc = Traits::kMulticast > 1;
  const uint32_t mc_rank = kMc ? cluster::rank() : 0u;
  const uint16_t mc_mask_b = kMc ? uint16_t((1u << Traits::kMulticast) - 1u) : uint16_t(0);
  const auto& act_load = Traits::act_load(p.mainloop);
  const auto& wgt_load = Traits::wgt_load(p.mainloop);
  auto tma_a = act_load.get_slice(0);
  auto tma_b = wgt_load.get_slice(mc_rank);
  Tensor tAsA = tma_a.partition_D(sA);
  Tensor tBsB = tma_b.partition_D(sB);
  // A's k-tiles are walked by the traits' cursor (Traits::a_cursor): the one thread that issues the loads
  // runs one dependent chain per k-tile, and a convolution's im2col coordinates cost it twice a GEMM's
  // instructions when re-derived from the TMA view at every k-tile.
  const bool weights_first = !kWait || sp.has(kWeightsFirst);
  const uint64_t epoch = smem.bs.epoch;
  ColumnWaiterWarp waiter;
  bool ok = true;
  PipelineState write = cutlass::make_producer_start_state<Pipeline>();
  // The in-flight cap (GemmConfig::inflight, WorkSchedule::inflight): before k-tile i's loads, also wait for the
  // consumers' release of k-tile i - cap -- the empty barrier of the state (Stages - cap) past `write`, whose wait is
  // for the release of the k-tile that used its stage last -- so that at most `cap` k-tiles are in flight whatever
  // the ring's depth. Runtime-uniform; off (cap >= Stages) it is one predicate per k-tile.
  const uint32_t inflight = p.sched.inflight;
  const bool capped = inflight > 0 && inflight < uint32_t(Pipeline::Stages);
  auto wait_inflight = [&](const PipelineState& at) {
    PipelineState lag = at;
    lag.advance(uint32_t(Pipeline::Stages) - inflight);
    while (pipeline.producer_try_acquire(lag) != cutlass::BarrierStatus::WaitDone) {
    }
  };
  ScheduledUnit w;
  for (auto cur = sched.begin(); sched.next_produced(cur, w, smem.ring, sp);) {
    if (!kMc && !w.in_grid) continue;  // a group member below the grid, no cluster to keep in step: skip
    Tensor tAgA = tma_a.partition_S(gA_mk(_, _, int(w.tile.y), _));
    Tensor tBgB = tma_b.partition_S(gB_nk(_, _, int(w.tile.x), _));
    uint32_t r0 = 0, r1 = 0, c_last = 0;
    uint64_t wait_ns = 0;
    // The unit's k-loop from k-tile `k`, with or without waits. Once the producer stage is known
    // complete the plain loop runs: no per-k-tile check, no warp reconvergence around it. The waiting
    // loop hands over to the plain one as soon as every column the unit reads is known ready (one
    // probe usually clears a conv's whole window, or a GEMM's remaining K range when its producer is
    // ahead): a unit that started while its producer was still running pays for the probes only.
    auto load_unit = [&](auto with_waits, int k) {
      constexpr bool kW = decltype(with_waits)::value;
      // B before A, except while waiting without optimization R (kWeightsFirst overlaps B's load with the
      // wait). The plain loop always loads B first: once nothing is waited for, the order of a stage's two
      // loads changes nothing, and the choice made per k-tile cost a waiting kernel's plain loop ~17 SASS
      // instructions per k-tile in the thread that issues the loads.
      const bool b_first = !kW || weights_first;
      auto a_k = Traits::a_cursor(tAgA, k);  // A's k-tile k
      for (; k < int(w.k_end); ++k, ++a_k) {
        if constexpr (kW)
          if (!ok || waiter.ready_until > c_last) break;  // uniform over the warp (ballot-derived state)
        const int stage = write.index();
        if (elected) {
          // (Unbounded, CUTLASS's wait: the one thread that issues the loads bounds a convolution's
          // mainloop, and a bounded acquire here made conv pairs 1-16% slower -- bounded-waits-ab
          // results. A stage the consumers never release means they are stuck, in a bounded wait or
          // where Chain::check's deadline sees it.)
          if (capped) wait_inflight(write);
          pipeline.producer_acquire(write);
          if (b_first)
            copy(wgt_load.with(*pipeline.producer_get_barrier(write), mc_mask_b), tBgB(_, _, _, k),
                 tBsB(_, _, _, stage));
        }
        if constexpr (kW) {
          if (ok) {
            bool acquired = false;
            const uint32_t c1 = Traits::a_col_end(p, k);
            ok = waiter.wait(sp, epoch, 0, r0, r1, c1, c_last, w.tile, &wait_ns, acquired);
            if (acquired && elected) ptx::fence_proxy_async_global();
            // On failure (bounded wait timed out, or another wait failed) keep loading without
            // waiting: the consumers never hang, the result is garbage, and Chain::check throws the
            // recorded SyncError.
          }
        }
        if (elected) {
          auto* bar = pipeline.producer_get_barrier(write);
          a_k.load(act_load, *bar, tAsA(_, _, _, stage));
          if (!b_first) copy(wgt_load.with(*bar, mc_mask_b), tBgB(_, _, _, k), tBsB(_, _, _, stage));
        }
        ++write;
      }
      return k;
    };
    // Early weights: B of the unit's first stages (as many as the pipeline holds), the wait for the primary
    // grid, then A of those stages; returns the next k-tile. (Elected lane only.)
    auto load_early = [&](int k) {
      // (Capped, no more than the cap: a stage past it would wait for a release that needs the activations loaded
      // after the wait below.)
      const int pre = min(capped ? int(inflight) : int(Pipeline::Stages), int(w.k_end) - k);
      PipelineState s = write;
      for (int i = 0; i < pre; ++i, ++s) {
        if (capped) wait_inflight(s);
        pipeline.producer_acquire(s);
        copy(wgt_load.with(*pipeline.producer_get_barrier(s), mc_mask_b), tBgB(_, _, _, k + i), tBsB(_, _, _, s.index()));
      }
      ptx::pdl_wait_primary();
      auto a_k = Traits::a_cursor(tAgA, k);
      for (int i = 0; i < pre; ++i, ++a_k, ++write)
        a_k.load(act_load, *pipeline.producer_get_barrier(write), tAsA(_, _, _, write.index()));
      return k + pre;
    };
    if constexpr (kWait) {
      if (!w.in_grid) {  // a multicast member below the grid: zeros for A, nothing to wait for
        load_unit(cute::false_type{}, int(w.k_begin));
        continue;
      }
      Traits::a_rows(p, w.tile.y, r0, r1);
      waiter.reset(Traits::a_first_col(p, int(w.k_begin)));
      c_last = Traits::a_last_col(p, int(w.k_end));
      const bool was_done = waiter.producer_done;
      // The plain loop in the elected lane alone (see below); the pipeline state only it uses stays behind in
      // the other lanes.
      int k = int(w.k_begin);
      if (waiter.stage_done(sp, epoch, 0)) {
        if (!was_done && elected) ptx::fence_proxy_async_global();
      } else {
        k = load_unit(cute::true_type{}, k);
      }
      if (elected) load_unit(cute::false_type{}, k);
      __syncwarp();
      if (elected && sp.trace != nullptr && w.seg == 0) sp.trace[w.tile_lin].wait_ns = wait_ns;
    } else {
      // One lane walks the plain loop: with the whole warp in it, every TMA issue sat in a waterfall
      // loop over the (possibly divergent) lanes and the warp reconverged per k-tile (3-5% of a
      // 128x128 GEMM's time).
      if (elected) load_unit(cute::false_type{}, early_weights ? load_early(int(w.k_begin)) : int(w.k_begin));
      early_weights = false;
    }
  }
  if (early_weights && elected) ptx::pdl_wait_primary();  // (no unit: nothing loaded; wait all the same)
  // Multicast: the peer's consumers release this CTA's stages too (their arrivals land on its empty
  // barriers); wait for every stage to be released before the CTA may leave.
  if constexpr (kMc)
    if (elected)
      for (uint32_t n = 0; n < Pipeline::Stages; ++n, ++write)
        bounded_barrier_wait([&] { return pipeline.producer_try_acquire(write) == cutlass::BarrierStatus::WaitDone; },
                             sp, kSiteClusterTail, uint32_t(write.index()), write.phase(), Tile{});
}

// Reduce-scatter: spin until a tile's arrival counter reaches `target` (every segment arrived; counters
// are cumulative, never reset, and a tile's round adds a multiple of its segment count). Bounded by the
// stage's timeout: reports the tile and its counter. Out of line: the spin loop inlined into the
// consumers' epilogue made the 128x128 kernel spill more (ptxas).
static __device__ __noinline__ void wait_for_segments(const StageParams& sp, const uint64_t* counter, uint64_t target,
                                               const ScheduledUnit& w) {
  uint64_t seen = 0, waited = 0;
  if (!braid::detail::spin_until(counter, target, sp.timeout_ns, sp.err, seen, waited) &&
      (!braid::detail::aborted(sp.err) || sp.timeout_ns))
    braid::detail::report(sp.err, kErrSplitPeerTimeout, sp.stage_id, w.seg, w.nseg, w.pos, w.tile, w.tile, target,
                          seen, waited);
}

// A unit of a tile cut into segments (split-K, stream-K), after its mainloop. Every segment stores
// partial sums to the tile's workspace and arrives on the tile's counter: one thread's acq_rel atomic
// between two CTA barriers publishes every consumer thread's partial stores (release, cumulative
// through the barrier) and makes the other segments' partials visible to the whole CTA (acquire). No
// per-thread fences: a fence.sc per thread per segment cost tens of microseconds per unit under load.
//   last arrival (default): every segment stores all its partials; the last to arrive sums them in
//     segment order and runs the whole tile's epilogue. The others are done: returns false.
//   reduce-scatter (WorkSchedule::reduce_scatter): segment s owns a share of the tile's output
//     columns (ColumnShare::of_segment); it stores only the other shares' partials, waits until every
//     segment of the tile has arrived, sums its own share in segment order and stores that share. The
//     reads and the epilogue of a split tile are spread over its segments' SMs instead of landing on
//     the last one (128x128 tiles, split 3: 128 KB of partials read by one CTA, then the whole tile's
//     epilogue -- 9-13 us under load, against 3.2 us for a whole tile's epilogue alone). Waiting on
//     peers needs them co-scheduled: static split-K whose tiles' segments share a round of units
//     (WorkSchedule::make; the host refuses dynamic dispatch). The sums are the same, in the same
//     order, as the last-arrival reduction's: bit-identical outputs.
// `share` <- the output columns this unit stores.
//   cluster exchange (WorkSchedule::cluster == 2, GemmConfig::dsmem_reduce): reduce-scatter with the
//     two segments a cluster's two CTAs, the partials handed over through distributed shared memory
//     into the staging buffer (cluster_exchange.cuh); nothing goes to the workspace. `xphase` counts
//     the exchanges (its parity is the mbarriers' phase).
// A split tile's segments in a cluster: pairs of staged kernels push each other's shares into the
// staging buffer (exchange_partials_cluster: any number of rounds of units); larger clusters, and
// kernels without the buffer, pull the shares from the peers' idle pipeline buffers
// (reduce_partials_cluster: one unit per CTA, checked by the host -- PersistentOp::build).
template <class Traits>
__host__ __device__ constexpr bool cluster_pulls(uint32_t cluster) {
  return cluster > 2 || !Traits::kClusterExchange;
}

template <class Traits, class Accum, class Coord>
__device__ __forceinline__ bool reduce_split_tile(const typename Traits::Params& p, const StageParams& sp,
                                                  typename Traits::SharedStorage& smem, const ScheduledUnit& w,
                                                  Accum& accum, const Coord& coord, int t, int m0, int tile_n_out,
                                                  bool scatter, detail::ColumnShare& share, uint32_t& xphase) {
  constexpr int kSlotQuads = Traits::kTileM * Traits::kTileN / 4;
  // Stream-K with an owner (WorkSchedule::owner_reduces): segment 0 owns the whole tile and stores no
  // partials; the others store all theirs and leave.
  // (Not under wait-kernel ordering: a stage whose consumer runs alongside it may not get its later
  // CTAs onto SMs held by consumer CTAs spinning on its tiles -- the last-arrival reduction never waits.)
  const bool owner = !scatter && p.sched.owner_reduces && !sp.has(kMarkStarted);
  const detail::ColumnShare own =
      scatter ? detail::ColumnShare::of_segment(int(w.seg), int(w.nseg), Traits::kTileN, tile_n_out)
      : owner && w.seg == 0 ? detail::ColumnShare::all(Traits::kTileN, tile_n_out)
                            : detail::ColumnShare::none();
  if constexpr (Traits::kClusterExchange || Traits::kClusterReduce) {
    if (p.sched.cluster > 1) {
      if (cluster_pulls<Traits>(p.sched.cluster)) {
        if constexpr (Traits::kClusterReduce)
          reduce_partials_cluster(accum, int(w.seg), int(w.nseg), t, Traits::kConsumerThreads, Traits::kTileN,
                                  tile_n_out, reinterpret_cast<float4*>(&smem.tensors), &smem.xbar.ready,
                                  Traits::kConsumerBarrier, sp, w);
      } else if constexpr (Traits::kClusterExchange) {
        ptx::named_barrier_sync(Traits::kConsumerBarrier, Traits::kConsumerThreads);  // the staging buffer is free
        exchange_partials_cluster(accum, int(w.seg), t, Traits::kConsumerThreads, Traits::kTileN, tile_n_out,
                                  reinterpret_cast<float4*>(smem.staging), smem.xbar, xphase & 1u, sp, w);
        ++xphase;
      }
      share = own;
      return true;
    }
  }
  // Reduced through shared memory in batches, a segment's own share comes from the workspace too.
  const bool store_own = Traits::kStagedEpilogue && detail::smem_reduce_own_stored(int(w.nseg), Traits::kReduceSlotsPerThread);
  const float4* tile_ws = p.partials + size_t(w.slot) * kSlotQuads;
  if (!owner || w.seg != 0 || store_own)
    detail::store_partial(accum, coord, p.partials + (size_t(w.slot) + w.seg) * kSlotQuads, t, p.M, m0,
                          Traits::kConsumerThreads, store_own ? detail::ColumnShare::none() : own);
  ptx::named_barrier_sync(Traits::kConsumerBarrier, Traits::kConsumerThreads);
  if (t == 0) {
    uint64_t* counter = reinterpret_cast<uint64_t*>(p.arrivals + w.pos);
    const uint64_t prev = ptx::atom_add_acq_rel(counter, 1ull);
    if (!scatter && !owner) {
      smem.reduce_here = (prev + 1) % uint64_t(w.nseg) == 0;
    } else if (scatter || w.seg == 0) {
      wait_for_segments(sp, counter, prev - prev % w.nseg + w.nseg, w);
      smem.reduce_here = 1;  // after a timeout too (reported): never hang, the host throws
    } else {
      smem.reduce_here = 0;
    }
  }
  ptx::named_barrier_sync(Traits::kConsumerBarrier, Traits::kConsumerThreads);
  if (!smem.reduce_here) return false;
  share = scatter ? own : detail::ColumnShare::all(Traits::kTileN, tile_n_out);
  // The staged epilogue's buffer is free here (the barrier above is past the previous tile's
  // copy-out; store_tile_staged's leading barrier comes before this tile's writes to it), and holds
  // the partials; the direct-store instantiations read them into registers.
  if constexpr (Traits::kStagedEpilogue)
    detail::reduce_partials_smem(accum, coord, tile_ws, int(w.nseg), int(w.seg), t, p.M, m0, kSlotQuads,
                                 Traits::kConsumerThreads, share, reinterpret_cast<float4*>(smem.staging),
                                 Traits::kReduceSlotsPerThread);
  else
    detail::reduce_partials(accum, coord, tile_ws, int(w.nseg), int(w.seg), t, p.M, m0, kSlotQuads,
                            Traits::kConsumerThreads, share);
  return true;
}

// CUTLASS's PipelineTmaAsync built for a 1x1x1 cluster (no multicast: every CTA loads its own tiles)
// sends every consumer release to CTA 0 of the cluster (its private dst_blockid_ is 0, and the
// release is a cluster-addressed arrival). Launched as a real cluster (the split-K exchange), CTA 1
// would then release CTA 0's stages. The pipeline is standard-layout with dst_blockid_ its first
// member (CUTLASS 4.2, pinned by scripts/setup.sh; PipelineLayout mirrors it, checked below), so the
// pipeline's address is that member's: point it at this CTA's own rank.
template <class Pipeline>
__device__ __forceinline__ void release_stages_locally(Pipeline& pipeline) {
  struct PipelineLayout {
    uint32_t dst_blockid, is_signaling_thread;
    void *full, *empty;
    typename Pipeline::Params params;
  };
  static_assert(std::is_standard_layout_v<Pipeline> && sizeof(Pipeline) == sizeof(PipelineLayout),
                "CUTLASS's PipelineTmaAsync changed layout: revisit release_stages_locally");
  *reinterpret_cast<uint32_t*>(&pipeline) = cluster::rank();
}

// kForm: kFormGeneral, a lean form or a synced form (gemm_config.hpp, "The forms of braid's GEMM kernels").

template <class Traits, int kForm = kFormGeneral>
__global__ void __launch_bounds__(Traits::kThreads, Traits::kCtasPerSm) hopper_gemm_kernel(const __grid_constant__ typename Traits::Params p) {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  constexpr bool kLean = kForm != kFormGeneral;          // one activation, a static order, no traces
  constexpr bool kNoSync = kLean && !form_is_synced(kForm);  // ... and no waits, posts or start mark
  using namespace cute;
  using Mainloop = typename Traits::Mainloop;
  using Pipeline = typename Traits::Pipeline;
  using PipelineState = typename Traits::PipelineState;
  using SharedStorage = typename Traits::SharedStorage;
  using Element = typename Traits::Element;
  constexpr int kTileM = Traits::kTileM;
  constexpr int kTileN = Traits::kTileN;

  extern __shared__ __align__(1024) char smem_raw[];
  SharedStorage& smem = *reinterpret_cast<SharedStorage*>(smem_raw);
  const StageParams& sp = p.sp;

  const int warp_group = threadIdx.x / 128;
  const int warp_in_group = (threadIdx.x / 32) % 4;
  const int lane = threadIdx.x % 32;

  // Launched as clusters: split-K through distributed shared memory (WorkSchedule::cluster), or B
  // multicast (Traits::kMulticast; the pipeline then spans the cluster).
  const bool exchange = Traits::kSegmented && Traits::kMulticast == 1 && p.sched.cluster > 1;
  const bool clustered = exchange || Traits::kMulticast > 1;
  // Tiles are posted by the poster warp (PostSlot) when this launch posts at all.
  const bool posting = !kNoSync && sp.has(kSync) && sp.sems != nullptr && sp.policy.enabled();
  // (The lean forms: constants, so that the paths they select are compiled out.)
  const bool sync = !kNoSync && sp.has(kSync);
  const bool dynamic = !kLean && sp.has(kDynamicOrder);
  TileTrace* const tile_trace = kLean ? nullptr : sp.trace;
  UnitTrace* const unit_trace = kLean ? nullptr : p.unit_trace;
  const Activation act = kLean ? form_activation(kForm) : p.act;
  if (threadIdx.x == 0) {
    Mainloop::prefetch_tma_descriptors(p.mainloop);
    if (dynamic) smem.ring.init(Traits::kConsumerThreads);  // published by begin_block's barrier
    if (posting) {  // (published by begin_block's barrier; only where tiles are posted)
      for (uint64_t& b : smem.post_full) cutlass::arch::ClusterBarrier::init(&b, Traits::kTileThreads / 32);
      cutlass::arch::fence_barrier_init();
    }
    if (exchange) {
      tma::init(&smem.xbar.full, 1);
      // (pulling: `ready` takes one arrival from each peer -- "my partials are in my buffers")
      tma::init(&smem.xbar.ready, cluster_pulls<Traits>(p.sched.cluster) ? p.sched.cluster - 1 : 1);
      tma::fence_init();  // .release.cluster: the peer's remote arrivals and st.async see the initialization
    }
  }

  typename Pipeline::Params pp;
  if (warp_group == 0 && warp_in_group == 0) pp.role = Pipeline::ThreadCategory::Producer;
  if (warp_group > 0) pp.role = Pipeline::ThreadCategory::Consumer;
  pp.is_leader = (threadIdx.x % 128) == 0;
  pp.num_consumers = Traits::kTileThreads;  // the threads that consume (and release) one stage
  pp.transaction_bytes = p.mainloop.tma_transaction_bytes;
  Pipeline pipeline(smem.pipeline, pp, typename Traits::ClusterShape{});
  // Any launch in clusters without multicast -- the split-K exchange, or clusters that only place the
  // CTAs (launch_kernel_persistent, BRAID_PLACEMENT_CLUSTER) -- keeps each CTA's stage releases local.
  if (Traits::kMulticast == 1 && cluster::size() > 1) release_stages_locally(pipeline);

  // __syncthreads: also publishes the pipeline's barrier initialization.
  if constexpr (kNoSync) begin_block_unsynchronized(sp);
  else begin_block(sp, smem.bs);
  if (clustered) cluster::sync();  // the peer's barriers are initialized before any remote arrival or multicast
  // Stream order (possibly PDL-launched): wait for the primary grid. Early weights: a launch whose B nobody
  // produces (kWeightsFirst: GemmOp refuses a second input, the chains' optimization R) lets its producer warp
  // load the weights of its first stages before it waits (produce) -- the weights of a kernel made resident
  // early by PDL come in while the primary is still running; every other thread waits here.
  const bool early_weights = !sync && !dynamic && sp.has(kWeightsFirst);
  if (!sync && !(early_weights && warp_group == 0 && warp_in_group == 0)) ptx::pdl_wait_primary();

  const PersistentScheduler sched(sp, p.sched, p.groups, /*may_be_dynamic=*/!kLean);
  Mainloop mainloop;
  uint32_t n_posted = 0;

  if (warp_group == 0) {
    // ------------------------------------------------------------------ producer warp
    if constexpr (Traits::kProducerRegs > 0) cutlass::arch::warpgroup_reg_dealloc<Traits::kProducerRegs>();
    if (warp_in_group == 0) {  // the whole warp walks the loop: it probes semaphores, lane 0 issues TMA
      // Two instantiations of the loop: the one that waits carries the semaphore probing; the plain
      // one (stream order, or a GEMM whose A nobody produces) stays small, so that the producer's
      // few registers hold it without spilling and the TMA loads issue back to back.
      if constexpr (kNoSync) produce<Traits, false>(p, smem, pipeline, sched, early_weights);
      else if (sync && sp.num_inputs > 0) produce<Traits, true>(p, smem, pipeline, sched);
      else produce<Traits, false>(p, smem, pipeline, sched, early_weights);
    } else if (warp_in_group == 1 && posting) {
      // ---------------------------------------------------------------- poster warp
      for (uint32_t n = 0;; ++n) {
        // (Pingpong: the warpgroups post alternate tiles, warpgroup g in slot g.)
        const uint32_t slot = n & 1u, parity = (n >> 1) & 1u;
        if (sp.fault_poster_delay_ns) braid::detail::sleep_ns(sp.fault_poster_delay_ns);  // (tests: a lagging poster)
        bounded_barrier_wait([&] { return cutlass::arch::ClusterBarrier::try_wait(&smem.post_full[slot], parity); }, sp,
                             kSitePostFull, slot, parity, Tile{});
        const PostSlot ps = smem.post[slot];
        if (ps.done) break;
        if (lane == 0) {
          post_elected(sp, smem.bs.epoch, ps.tile);  // release: cumulative over the barrier
          if (tile_trace != nullptr) {
            TileTrace& r = tile_trace[ps.tile_lin];
            r.start_ns = ps.t_start;
            r.mainloop_end_ns = ps.t_mainloop;
            r.mainloop_mhz = ps.mhz;
            r.end_ns = ptx::globaltimer_ns();
            r.smid = ptx::smid();
            r.block = blockIdx.x;
          }
        }
        __syncwarp();
        ptx::named_barrier_arrive(Traits::kPostEmptyBarrier + slot, 64);
      }
    }
  } else {
    // ------------------------------------------------------------------ consumer warpgroups
    if constexpr (Traits::kConsumerRegs > 0) cutlass::arch::warpgroup_reg_alloc<Traits::kConsumerRegs>();
    constexpr bool kPingpong = Traits::kPingpong;
    constexpr int kTileThreads = Traits::kTileThreads;
    // t: the thread's index among its tile's threads (cooperative: 0..255 or 0..127; pingpong: within
    // its warpgroup `wg`, which takes the CTA's units wg, wg + 2, ...).
    const int wg = kPingpong ? (threadIdx.x - Traits::kProducerThreads) / 128 : 0;
    const int t = kPingpong ? (threadIdx.x - Traits::kProducerThreads) % 128 : threadIdx.x - Traits::kProducerThreads;
    const uint32_t tile_barrier = Traits::tile_barrier(wg);
    typename Traits::TiledMma tiled_mma;
    auto thr_mma = tiled_mma.get_thread_slice(t);
    // (Transposed: the MMA's tile is kTileN x kTileM -- coord gives (weight column, token).)
    Tensor coord = thr_mma.partition_C(make_identity_tensor(make_shape(Int<Traits::kMmaM>{}, Int<Traits::kMmaN>{})));
    const int tile_n_out = act == Activation::SwiGLU ? kTileN / 2 : kTileN;
    PipelineState read;
    ScheduledUnit w;
    // This warp hands slot `slot` over for the slot's phase `phase` (see PostSlot): its stores -- and, in
    // the slot's warp 0, the slot's contents -- happen-before its arrival (__syncwarp, then lane 0's
    // release arrival); it arrives only once the slot's previous phase has completed. That wait is on
    // the CTA's other consumer warps only (each bounded in its own waits), nearly always already over,
    // and left unbounded, to keep the consumers' loop small: with the bounded form inlined at its three
    // call sites (and the slot barriers initialized in every launch) the 128x64 convolutions ran 2-7%
    // slower than before the hand-off fix even in stream order; as here, 0-6% faster (A/B of three
    // builds in one device call, bench/results/handoff-cost-h100-20261124/). A chain stuck here is still
    // reported by Chain::wait_bounded (nothing moves).
    auto hand_over = [&](uint32_t slot, uint32_t phase) {
      if (phase > 0) cutlass::arch::ClusterBarrier::wait(&smem.post_full[slot], (phase - 1) & 1u);
      __syncwarp();
      if (lane == 0) cutlass::arch::ClusterBarrier::arrive(&smem.post_full[slot]);
    };
    [[maybe_unused]] uint32_t xphase = 0;  // cluster exchanges done (reduce_split_tile)
    uint32_t n_units = 0;  // the CTA's units walked so far (pingpong: every other one is this warpgroup's)
    // With Traits::kLookAhead the next unit is looked up while the current one's last MMAs run
    // (between mma and mma_tail below): the scheduler's and the tile order's index arithmetic is a
    // chain of dependent integer operations one thread runs at a few cycles each. Otherwise each unit
    // is looked up at the top of the loop.
    auto cur = sched.begin();
    ScheduledUnit w_next;
    bool more = Traits::kLookAhead && sched.next_consumed(cur, w_next, smem.ring, sp);
    auto look_ahead = [&] {
      if constexpr (Traits::kLookAhead) more = sched.next_consumed(cur, w_next, smem.ring, sp);
    };
    for (;; ++n_units) {
      if constexpr (Traits::kLookAhead) {
        if (!more) break;
        w = w_next;
      } else if (!sched.next_consumed(cur, w, smem.ring, sp)) {
        break;
      }
      if constexpr (kPingpong) {
        if ((n_units & 1u) != uint32_t(wg)) {  // the other warpgroup's unit: skip its pipeline stages
          read.advance(int(w.k_end - w.k_begin));
          look_ahead();
          continue;
        }
      }
      if (Traits::kMulticast == 1 && !w.in_grid) {  // (as the producer: nothing loaded for it)
        look_ahead();
        continue;
      }
      const bool timed = (tile_trace != nullptr || unit_trace != nullptr) && t == 0;
      const uint64_t t_start = timed ? ptx::globaltimer_ns() : 0;
      const uint64_t c_start = timed ? ptx::clock_cycles() : 0;
      // The unit's record (diagnostic, PersistentOp::run_unit_trace); out of the hot path when off.
      auto record_unit = [&](uint64_t t_mainloop, uint64_t t_fixup, uint32_t reduced) {
        if (unit_trace == nullptr || t != 0 || n_units >= p.unit_trace_stride) return;
        UnitTrace& r = unit_trace[size_t(blockIdx.x) * p.unit_trace_stride + n_units];
        r.start_ns = t_start;
        r.mainloop_end_ns = t_mainloop;
        r.fixup_end_ns = t_fixup;
        r.end_ns = ptx::globaltimer_ns();
        r.tile_lin = w.tile_lin;
        r.smid = ptx::smid();
        r.k_begin = uint16_t(w.k_begin);
        r.k_end = uint16_t(w.k_end);
        r.seg = uint16_t(w.seg);
        r.nseg = uint16_t(w.nseg);
        r.block = blockIdx.x;
        r.reduced = reduced;
      };
      Tensor accum = partition_fragment_C(tiled_mma, make_shape(Int<Traits::kMmaM>{}, Int<Traits::kMmaN>{}));
      const int k_count = int(w.k_end - w.k_begin);
      const int n0_out = int(w.tile.x) * tile_n_out;
      if constexpr (Traits::kBias)
        detail::prefetch_epilogue_inputs<kTileM>(p.residual, p.M, p.n_out, int(w.tile.y) * kTileM, n0_out,
                                                 tile_n_out, t);
      const auto bias = detail::load_tile_bias<Traits::kBias>(p.bias, accum, coord, p.n_out, n0_out);
      // Pingpong: the warpgroups' mainloops run in unit order. A warpgroup that skipped the other's
      // unit must not wait on a stage's full barrier before the producer loaded that stage's previous
      // fill: the parity wait would pass a phase early, on stale data. Once the other warpgroup issued
      // all of its unit's MMAs, every stage of that unit was loaded, so this one's waits are in phase.
      // (It also keeps the warpgroups alternating: one's epilogue under the other's MMAs.)
      if constexpr (kPingpong)
        if (n_units > 0) ptx::named_barrier_sync(Traits::mma_done_barrier(wg ^ 1), 2 * kTileThreads);
      // The unit's first stage, bounded (barrier_wait.cuh): a unit whose loads never come is where a
      // consumer would hang; the collective's own wait then passes at once. (Its later stages' waits,
      // inside CUTLASS's mainloop, are unbounded: Chain::check's deadline reports those.)
      if (k_count > 0)
        bounded_barrier_wait([&] { return pipeline.consumer_try_wait(read) == cutlass::BarrierStatus::WaitDone; },
                             sp, kSitePipelineFull, uint32_t(read.index()), read.phase(), w.tile);
      // The pipeline state is the same in every consumer thread, but the compiler cannot tell (it is
      // carried through the scheduler's unit loop): broadcast from lane 0 it becomes warp-uniform, and
      // the mainloop's descriptor and barrier arithmetic moves to uniform registers.
      read = PipelineState(__shfl_sync(0xffffffffu, read.index(), 0), __shfl_sync(0xffffffffu, read.phase(), 0),
                           __shfl_sync(0xffffffffu, read.count(), 0));
      mainloop.mma(pipeline, read, accum, __shfl_sync(0xffffffffu, k_count, 0), t, smem.tensors, p.mainloop);
      if constexpr (kPingpong) ptx::named_barrier_arrive(Traits::mma_done_barrier(wg), 2 * kTileThreads);
      look_ahead();  // (kLookAhead: w stays this unit's; the last k-tile's MMAs are still running)
      mainloop.mma_tail(pipeline, read, k_count);
      read.advance(k_count);
      if (!w.in_grid) continue;  // a multicast member below the grid: nothing to store or post
      const uint64_t t_mainloop = timed ? ptx::globaltimer_ns() : 0;
      const uint32_t mhz = timed ? clock_mhz(ptx::clock_cycles() - c_start, t_mainloop - t_start) : 0u;
      uint64_t t_fixup = t_mainloop;

      const int m0 = int(w.tile.y) * kTileM;
      detail::ColumnShare share = detail::ColumnShare::all(kTileN, tile_n_out);
      bool scatter = false;
      if constexpr (Traits::kSegmented) {  // (pingpong and whole-tile instantiations: data-parallel only, GemmOp checks)
        scatter = w.nseg > 1 && p.sched.reduce_scatter;
        if (w.nseg > 1) {  // the tile is cut into segments: see reduce_split_tile
          const bool reduces = reduce_split_tile<Traits>(p, sp, smem, w, accum, coord, t, m0, tile_n_out, scatter, share, xphase);
          if (timed) t_fixup = ptx::globaltimer_ns();
          if (!reduces) {
            record_unit(t_mainloop, t_fixup, 0u);
            continue;
          }
        }
      }
      // One store path per instantiation: both inlined into one kernel made the 128x128 convolution
      // spill (ptxas: 132 bytes of spill loads; 72 with the staged path alone), and calling the other
      // out of line serialized the wgmma mainloop (ptxas C7520). The staged path copies out element
      // by element when D's rows are not whole 16-byte pieces. (The spills were not what makes the
      // 128x128 epilogue slow: same per-tile epilogue time without them, conv-deep-ab results.)
      if constexpr (Traits::kTransposed) {
        detail::store_tile_transposed<kTileM, kTileN, Traits::kPanelBufs>(accum, coord, p, m0, n0_out, smem.staging, t, Traits::kConsumerThreads,
                                                      Traits::kConsumerBarrier, posting || tile_trace != nullptr, act);
      } else if constexpr (Traits::kTmaStore) {
        if constexpr (kPingpong)  // each warpgroup its own half of the buffer, a 64-column panel at a time
          detail::store_tile_tma_panels<Traits::kBias, kTileM, kTileN>(
              accum, coord, act, p.D, p.M, p.n_out, m0, n0_out, tile_n_out, bias, p.residual,
              smem.staging + wg * (kTileM * 64), p.d_tma ? &p.d_map : nullptr, t, kTileThreads, tile_barrier);
        else
          detail::store_tile_tma<Traits::kBias, kTileM, kTileN>(accum, coord, act, p.D, p.M, p.n_out, m0, n0_out, tile_n_out,
                                                                bias, p.residual, smem.staging, p.d_tma ? &p.d_map : nullptr,
                                                                t, Traits::kConsumerThreads, Traits::kConsumerBarrier);
        // Someone reads the tile's completion: its stores must be performed before the post (the
        // poster's release is cumulative over the barrier thread 0 arrives on after this).
        if ((posting || tile_trace != nullptr) && p.d_tma && t == 0) {
          tma::store_wait_all();
          ptx::fence_proxy_async_global();
        }
      } else if constexpr (Traits::kStagedEpilogue)
        detail::store_tile_staged<Traits::kBias, kTileM, kTileN>(accum, coord, act, p.D, p.M, p.n_out, m0, n0_out,
                                                                 share, !scatter, bias, p.residual, smem.staging, t,
                                                                 Traits::kConsumerThreads, Traits::kConsumerBarrier);
      else
        detail::store_tile<Traits::kBias>(accum, coord, act, p.D, p.M, p.n_out, m0, n0_out, share, !scatter, bias,
                                          p.residual);
      record_unit(t_mainloop, t_fixup, 1u);
      // Reduce-scatter: the tile is whole once every segment stored its share; the last to finish
      // posts it (its acq_rel arrival orders the others' stores before its post). Counted only when
      // someone reads the tile's completion (posts, traces).
      if (Traits::kSegmented && scatter && (posting || tile_trace != nullptr)) {
        ptx::named_barrier_sync(Traits::kConsumerBarrier, Traits::kConsumerThreads);
        if (t == 0) {
          const uint64_t prev = ptx::atom_add_acq_rel(reinterpret_cast<uint64_t*>(p.arrivals + w.pos), 1ull);
          smem.reduce_here = (prev + 1) % uint64_t(w.nseg) == 0;
        }
        ptx::named_barrier_sync(Traits::kConsumerBarrier, Traits::kConsumerThreads);
        if (!smem.reduce_here) continue;
      }
      if (posting) {
        // Hand the tile to the poster warp: every consumer thread's stores are ordered before its
        // post by the barrier; slot reuse waits for the poster to have taken the slot's last tile.
        // Pingpong: warpgroup g always uses slot g (the CTA's units, all posted, alternate).
        const uint32_t slot = kPingpong ? uint32_t(wg) : n_posted & 1u;
        const uint32_t phase = kPingpong ? n_posted : n_posted >> 1;  // the slot's uses so far
        if (phase > 0 && t < 32) ptx::named_barrier_sync(Traits::kPostEmptyBarrier + slot, 64);
        if (t == 0) smem.post[slot] = PostSlot{w.tile, w.tile_lin, 0u, mhz, t_start, t_mainloop};
        hand_over(slot, phase);
        ++n_posted;
      } else if (tile_trace != nullptr) {
        ptx::named_barrier_sync(tile_barrier, kTileThreads);  // the tile's stores are done
        if (t == 0) {
          TileTrace& r = tile_trace[w.tile_lin];
          r.start_ns = t_start;
          r.mainloop_end_ns = t_mainloop;
          r.mainloop_mhz = mhz;
          r.end_ns = ptx::globaltimer_ns();
          r.smid = ptx::smid();
          r.block = blockIdx.x;
        }
      }
    }
    if constexpr (Traits::kTmaStore || Traits::kTransposed)
      if (t == 0) tma::store_wait_all();  // the staging buffer outlives its last store's reads
    // Pingpong: the last unit's arrival on its mma-done barrier has no next unit to meet it.
    if constexpr (kPingpong)
      if (n_units > 0 && ((n_units - 1) & 1u) != uint32_t(wg))
        ptx::named_barrier_sync(Traits::mma_done_barrier(wg ^ 1), 2 * kTileThreads);
    if (posting) {  // the end marker, then the poster's last arrival (every arrive meets its wait)
      if constexpr (kPingpong) {
        // The poster expects the marker in the slot after the last post: every unit was posted
        // (data-parallel), so the warpgroup whose turn is unit n_units sends it. Each warpgroup
        // first takes the poster's arrival for its own last post.
        if (n_posted >= 1 && t < 32) ptx::named_barrier_sync(Traits::kPostEmptyBarrier + uint32_t(wg), 64);
        if ((n_units & 1u) == uint32_t(wg)) {
          if (t == 0) smem.post[wg].done = 1u;
          hand_over(uint32_t(wg), n_posted);
        }
      } else {
        const uint32_t slot = n_posted & 1u;
        if (n_posted >= 2 && t < 32) ptx::named_barrier_sync(Traits::kPostEmptyBarrier + slot, 64);
        if (t == 0) smem.post[slot].done = 1u;
        hand_over(slot, n_posted >> 1);
        if (n_posted >= 1 && t < 32) ptx::named_barrier_sync(Traits::kPostEmptyBarrier + (slot ^ 1u), 64);
      }
    }
  }
  if (clustered) cluster::sync();  // no CTA leaves while its peer may still address its shared memory
  if constexpr (!kNoSync) end_block(sp, smem.bs);
#endif
}

}  // namespace braid::hopper
