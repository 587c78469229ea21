// braid's weight-streaming GEMM for few rows (decode and small token counts: M <= 64):
// Y[M, N] = act(X[M, K] . W[K, N]), fp16/bf16 in, fp32 accumulation, as a stage of a tile-synchronized
// chain.
//
// With M <= 64 a GEMM is a read of W at memory bandwidth (the weights are 95-99% of the bytes): what
// matters is keeping enough bytes of W in flight on every SM, spreading them evenly over the SMs, and
// spending few instructions per byte. So:
//  - Tensor cores, transposed: Y^T = W^T . X^T with mma.sync m16n8k16, W^T the 16-row A operand
//    (ldmatrix.trans from W's row-major tile) and X^T the 8-wide B operand: the MMA's N dimension is
//    the token dimension, so M = 8 wastes nothing (M = 1 wastes 7/8 of an MMA that costs ~nothing
//    next to its 512 bytes of W). One MMA per 16x16 block of W per 8 rows, instead of 64 CUDA-core
//    FMAs per 16 bytes.
//  - A ring of STAGES (W[64 x 128] + X[MR x 64]) chunks per CTA, loaded by TMA (a producer warp issues
//    three box loads per chunk as soon as the consumer warps release the stage, completing on the
//    stage's mbarrier; W with an L2 evict-first hint) in the 128-byte swizzle, so the ldmatrix reads
//    are conflict-free. (A cp.async version -- 16 bytes per
//    thread and copy -- streamed the weights at 2.5 TB/s on an H100.) With packed weights
//    (SkinnyConfig::packed, skinny_pack.hpp) a stage's W is one 16 KB bulk copy of bytes already laid
//    out as the boxes would leave them.
//  - Stream-K over persistent CTAs: the work is tiles x K-chunks (128 columns x 64 rows of W) laid out
//    tile by tile, and CTA j takes the contiguous range [j U / G, (j+1) U / G): every CTA streams the
//    same number of bytes (no wave quantization at any N). A tile cut between CTAs is reduced by the
//    last of its CTAs to arrive, adding the partial sums in CTA (= K) order: bit-identical however the
//    CTAs ran, so a synchronized chain matches stream order exactly. With the K-aligned split and
//    SkinnyConfig::dsmem, a tile's CTAs are one thread-block cluster and rank 0 adds the others'
//    partials from their shared memory in the same order (same bits), skipping the global round trips.
//  - The dynamic tail (SkinnyConfig::dyn_tail, the kDyn instantiations): stream-K's static ranges cover only the
//    first ~85% of every tile's K-chunks; the rest are items of kItemChunks chunks that the producer warps take
//    from a global queue as their CTAs run out of static work (a CTA that streams faster takes more). The producer
//    tells the consumers each stage's unit in a tag (detail::UnitTag); a consumer warp leaves one partial per
//    segment (a static range's part of a tile, or an item) in the tile's slot and publishes its partials at the end
//    of its sequence; the warp whose arrival completes a tile's count for its columns adds the tile's slots in
//    order -- static contributors in CTA order, then the items in K order -- so the bits do not depend on who took
//    which item.
//  - Each of the 8 warps owns 16 of the tile's 128 columns over all K (no cross-warp reduction);
//    the epilogue applies the activation from the accumulators: GeLU, or SwiGLU with W's columns
//    packed per 128 (hopper::pack_swiglu_columns with tile_n 128: 64 gate then 64 up columns), where
//    the "up" warps hand their sums to the "gate" warps through shared memory and the tile's output
//    is 64 columns wide.
//
// braid's tile: (all M rows, 128 output columns; 64 with SwiGLU). Waits: before loading an X chunk,
// for the producer tiles of X's rows over the chunk's 64 columns (probing ahead over the rest of the
// CTA's range of that tile; skipped once the producer stage has completed: producer_complete). W, never produced, is loaded
// before any wait (optimization R, kWeightsFirst) and before the PDL wait of an unsynchronized launch.
// The CTA that completes a tile posts it.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "braid/core/grid_stage.cuh"
#include "braid/core/stage.cuh"
#include "braid/kernels/attention/mma_sm80.cuh"
#include "braid/kernels/attention/wgmma_sm90.cuh"
#include "braid/kernels/common/activation.cuh"
#include "braid/kernels/common/cluster_sm90.cuh"
#include "braid/kernels/common/tma_sm90.cuh"
#include "braid/kernels/hopper/gemm_config.hpp"
#include "braid/kernels/skinny/skinny_config.hpp"
#include "braid/kernels/skinny/skinny_pack.hpp"

namespace braid::skinny {

constexpr int kWarps = 8;
constexpr int kThreads = kWarps * 32;  // the consumer warps
constexpr int kGemmThreads = kThreads + 32;  // + the producer warp (skinny_gemm_kernel, skinny_chain_kernel)
// Contributions a tile's reducing CTA loads at once (per row block). 4, not 8: at 32-64 rows 8 held the
// reduction at 128 registers with spills, and LLaMA's W1 at M = 64 took 46 instead of 41 us; 5
// contributors (GPT-3's W1, a2s4) cost nothing measurable in two rounds
// (bench/results/skinny-wg-h100-20261124/maxreduce/).
constexpr int kMaxReduce = 4;
// The dynamic tail: segments a consumer warp lists before it publishes them (one lane each; more are rare: a
// CTA's static range spans 1-3 tiles and it takes a few items).
constexpr int kMaxListedSegments = 32;

struct SkinnyParams {  // (aligned as its tensor maps are: 128 bytes in CUDA 13)
  CUtensorMap w_map;  // W [K rows, N cols], 64 x 64 boxes
  CUtensorMap x_map;  // X [M rows, K cols], 64-column x MR-row boxes
  const void* X = nullptr;  // [M, K]
  const void* W = nullptr;  // [K, N]
  const uint8_t* w_packed = nullptr;  // SkinnyConfig::packed: W unit by unit (skinny_pack.hpp), read instead of w_map
  void* Y = nullptr;        // [M, N] (SwiGLU: [M, N / 2])
  int M = 0, N = 0, K = 0;
  hopper::Activation act = hopper::Activation::None;
  int tiles = 0, chunks_per_tile = 0;  // tiles = ceil(N / 128), chunks_per_tile = ceil(K / 64)
  int cluster_reduce = 0;              // 1: a tile's CTAs are one cluster, reduced through DSMEM (SkinnyConfig::dsmem)
  // > 0: a PDL trigger (kPdlTrigger, then cleared from the stage's flags) issued when the CTA starts its
  // pdl_trigger_units-th unit before the last, instead of at block start (SkinnyGemmOp::launch).
  int pdl_trigger_units = 0;
  // With phase_ns: 1 records the first units one by one (SkinnyGemmOp::set_phases, "units"): what paces a CTA's units
  // after its PDL wait -- slot 1 the loader's issue of unit 0's X box (instead of "W issued"), slots 4 and 5 units 1
  // and 2 in (instead of unit 3 and the last), slot 6 unit 0's MMAs done and its stage released (instead of the last MMA).
  int phase_units = 0;
  float4* partials = nullptr;          // [CTAs][2 slots][warps][MR / 8][32 lanes] (cut tiles only); dynamic tail:
                                       // [tiles][slots_per_tile][warps][MR / 8][32 lanes]
  uint32_t* arrivals = nullptr;        // [tiles], zero between launches (dynamic tail: the tile's finished column groups)
  // The dynamic tail (SkinnyConfig::dyn_tail; on when items_per_tile > 0): stream-K over the first static_chunks of
  // every tile's chunks, then items of item_chunks chunks (a tile's last item may be shorter) from `queue`.
  // A tile's partial slots: its static contributors in CTA order, then its items in K order.
  int static_chunks = 0, item_chunks = 0, items_per_tile = 0, slots_per_tile = 0;
  uint32_t* queue = nullptr;           // [2]: the next item, the CTAs done taking (zero between launches)
  uint32_t* group_arrivals = nullptr;  // [tiles][kWarps]: partials published per column group (zero between launches)
  // Diagnosis only (BRAID_SKINNY_DT_DIAG, read by prepare(); 1, 2 and 4 give wrong sums, for timing): 1 no publish
  // fence, 2 no finishing, 4 no publishing, 8 no items (the kernel over plain stream-K's ranges). 16
  // (BRAID_SKINNY_NO_REDUCE, set by launch for a launch that triggers a dependent; wrong output, for timing): a cut
  // tile's contributors store their partials and end -- no arrival, no reduction, no output: how much sooner the next
  // stage could start if it reduced the partials itself.
  int dt_diag = 0;
  // Diagnostic (SkinnyGemmOp::set_phases; null: off, and only the general form records): per CTA
  // kSkinnyPhases %globaltimer stamps -- entry, W's first stages issued and the PDL wait done (both by the
  // producer warp), the first / fourth / last unit's stage full, the last MMA, the end (consumer thread 0).
  unsigned long long* phase_ns = nullptr;  // [CTAs][kSkinnyPhaseSlots]: the stamps, then %smid (skinny_config.hpp)
};

// Shared memory of one instantiation: the ring (1024-byte aligned for the swizzle), and the SwiGLU
// hand-over of the "up" warps' sums. A stage: W as two 64-column boxes of 64 rows x 128 bytes, then X.
template <int MR, int STAGES>
struct SkinnySmem {
  static constexpr int kWBoxBytes = kChunkK * 128;         // 8 KB: 64 rows x 64 columns
  static constexpr int kWBytes = 2 * kWBoxBytes;           // 16 KB
  static_assert(kWBytes == kUnitWBytes, "a packed unit is one stage's W");
  static constexpr int kXBytes = MR * kChunkK * 2;         // MR rows of 128 bytes
  static constexpr int kStageBytes = kWBytes + kXBytes;    // a multiple of 1024
  static constexpr int kRingBytes = STAGES * kStageBytes;
  static constexpr int kSwigluBytes = (kWarps / 2) * (MR / 8) * 32 * 16;
  static constexpr size_t bytes(bool swiglu) { return 1024 + size_t(kRingBytes) + (swiglu ? kSwigluBytes : 0); }
};

namespace detail {

// The CTA whose unit range holds unit u (the inverse of u_begin(j) = j U / G).
__device__ __forceinline__ uint32_t owner(uint64_t u, uint64_t U, uint32_t G) {
  return uint32_t(((u + 1) * G - 1) / U);
}
__device__ __forceinline__ uint32_t unit_begin(uint32_t j, uint64_t U, uint32_t G) { return uint32_t(j * U / G); }

// ---- The dynamic tail (SkinnyParams::items_per_tile > 0) ---------------------------------------------------------
// The producer warp decides the CTA's sequence of units and tells the consumer warps with each ring stage: the tag
// of stage i % STAGES, written before the stage's mbarrier is armed (the arrive releases it, the consumers' wait
// acquires it) and read by the consumers before they release the stage.
struct UnitTag {
  uint32_t u;     // the unit (tile u / chunks_per_tile, chunk u % chunks_per_tile); kEndUnit: the sequence ended
  uint32_t last;  // the last unit of the segment u belongs to (the producer's waits: how far to probe)
  uint32_t slot;  // bits 0-15: the segment's partial slot in its tile (dynamic tail); kFirstOfSegment
  static constexpr uint32_t kEndUnit = 0xffffffffu;
  static constexpr uint32_t kFirstOfSegment = 1u << 16;
};

// Static part of the dynamic tail: the first static_chunks (s) of every tile's chunks, numbered tile by tile
// (v = t s + c), split stream-K over the G CTAs as plain stream-K splits all units. The static contributors of
// tile t: CTAs owner(t s) .. owner(t s + s - 1).
__device__ __forceinline__ uint32_t static_contributors(const SkinnyParams& p, uint32_t t, uint32_t G) {
  const uint64_t s = uint64_t(p.static_chunks), S = uint64_t(p.tiles) * s;
  return owner(t * s + s - 1, S, G) - owner(t * s, S, G) + 1;
}

// The producer warp's sequence of units in the dynamic tail (all 32 lanes call next() together; lane 0 takes the
// items): the CTA's static range, then items from the queue until it is empty -- the take of the next item goes out
// kGrabAhead units before it is needed (an L2 atomic's round trip is ~1 us), and never before `allow_grab` (after
// the PDL wait: the queue is reset by the previous launch's last CTA).
struct UnitSource {
  static constexpr uint32_t kGrabAhead = 2;
  uint32_t cpt, s, v, v_end, item_u = 0, item_end = 0, slot = 0, grab = 0;
  bool grab_out = false, allow_grab = false, first = true;
  __device__ __forceinline__ UnitSource(const SkinnyParams& p, uint32_t me, uint32_t G)
      : cpt(uint32_t(p.chunks_per_tile)), s(uint32_t(p.static_chunks)) {
    const uint64_t S = uint64_t(p.tiles) * s;
    v = unit_begin(me, S, G);
    v_end = unit_begin(me + 1, S, G);
  }
  __device__ __forceinline__ void take(const SkinnyParams& p) {
    if (threadIdx.x % 32 == 0) grab = ptx::atom_add_relaxed(p.queue, 1u);
    grab_out = true;
  }
  // The next unit's tag; false at the end of the sequence.
  __device__ __forceinline__ bool next(const SkinnyParams& p, uint32_t me, uint32_t G, UnitTag& tg) {
    if (v < v_end) {
      const uint32_t t = v / s, c = v - t * s;
      if (first || c == 0) slot = me - owner(uint64_t(t) * s, uint64_t(p.tiles) * s, G);
      const uint32_t v_last = min(v_end, (t + 1) * s) - 1;  // this CTA's last static unit of tile t
      tg = UnitTag{t * cpt + c, t * cpt + (v_last - t * s), slot | (first || c == 0 ? UnitTag::kFirstOfSegment : 0u)};
      first = false;
      ++v;
    } else {
      if (item_u == item_end) {
        if (!grab_out) take(p);
        const uint32_t q = __shfl_sync(0xffffffffu, grab, 0);
        grab_out = false;
        const uint32_t ipt = uint32_t(p.items_per_tile);
        if (q >= uint32_t(p.tiles) * ipt) return false;
        const uint32_t t = q / ipt, it = q - t * ipt;
        const uint32_t c0 = s + it * uint32_t(p.item_chunks), c1 = min(cpt, c0 + uint32_t(p.item_chunks));
        item_u = t * cpt + c0;
        item_end = t * cpt + c1;
        slot = static_contributors(p, t, G) + it;
        first = true;
      }
      tg = UnitTag{item_u, item_end - 1, slot | (first ? UnitTag::kFirstOfSegment : 0u)};
      first = false;
      ++item_u;
    }
    const uint32_t left = v < v_end ? v_end - v : item_end - item_u;
    if (allow_grab && !grab_out && left <= kGrabAhead) take(p);
    return true;
  }
};

// W's part of unit u of GEMM g into the ring stage at dst (1024-byte aligned), counted on bar (both
// warp-specialized kernels' producers; the caller has set the stage's byte count): two 64 x 64 boxes of the
// tensor map, or with packed weights one 16 KB bulk copy of the unit's bytes, already in the boxes' swizzled
// layout (skinny_pack.hpp) -- the same bytes in shared memory either way.
__device__ __forceinline__ void load_w_unit(const SkinnyParams& g, uint32_t u, uint32_t dst, uint64_t* bar,
                                            uint64_t policy) {
  if (g.w_packed != nullptr) {
    tma::load_bulk(dst, g.w_packed + size_t(u) * kUnitWBytes, kUnitWBytes, bar, policy);
    return;
  }
  const uint32_t cpt = uint32_t(g.chunks_per_tile);
  const int k0 = int(u % cpt) * kChunkK, n0 = int(u / cpt) * kTileCols;
  tma::load_2d(dst, &g.w_map, n0, k0, bar, policy);
  tma::load_2d(dst + kChunkK * 128, &g.w_map, n0 + 64, k0, bar, policy);
}

// The barrier of the helpers below: the kernels are warp-specialized (a producer warp besides the
// consumers), so it is a named barrier over the 8 consumer warps only.
struct ConsumerBarrier {  // named barrier 1 over the kWarps consumer warps
  __device__ __forceinline__ void operator()() const { ptx::named_barrier_sync(1, kThreads); }
};

// The MMAs of one ring stage (64 rows of W's 128-column tile, X's MR rows over the same 64 columns):
// warp `warp` adds its 16 columns' W^T . X^T to acc (columns 16 warp + g (+8), rows 8b + c (+1): the
// m16n8 accumulator layout). All kWarps warps call it together.
//  - WG (SkinnyConfig::wgmma): warpgroup warp / 4 multiplies its W box (columns 64 (warp / 4) ..+63,
//    A = W^T: MN-major, 16-deep k-step = 16 rows = 2048 bytes) by X (B = X^T: K-major, +32 bytes per
//    k-step) with four m64n<MR>k16 wgmmas, both operands read once from shared memory; its m64nMR
//    accumulators are, per warp, exactly the mma.sync layout below. Complete (and the stage free) on
//    return.
//  - else: ldmatrix + mma.sync m16n8k16, two 16-deep k-steps per X fragment load.
template <class T, int MR, bool WG>
__device__ __forceinline__ void mma_chunk(float (&acc)[MR / 8][4], uint32_t w_st, uint32_t x_st, int warp, int lane) {
  constexpr int MB = MR / 8;
  constexpr int kWBoxBytes = SkinnySmem<MR, 4>::kWBoxBytes;
  if constexpr (WG) {
    namespace wg = attention::wg;
    using Mma = wg::Mma64xN<T, MR, 1, 0>;
    const uint32_t a0 = w_st + uint32_t(warp / 4) * kWBoxBytes;
    wg::fence();  // (the accumulators may have been zeroed or read since the last wgmma)
#pragma unroll
    for (int s = 0; s < kChunkK / 16; ++s)
      Mma::ss(acc, wg::desc_mn_major(a0 + uint32_t(s) * 2048u, kWBoxBytes), wg::desc_k_major(x_st + uint32_t(s) * 32u));
    wg::commit();
    wg::wait<0>();
    wg::fence_regs(acc);
  } else {
    using Mma = attention::mma::Mma<T>;
#pragma unroll
    for (int kp = 0; kp < kChunkK / 32; ++kp) {
      uint32_t xb[MB][4];
#pragma unroll
      for (int b = 0; b < MB; ++b) {
        const int m = 8 * b + (lane & 7), c = 4 * kp + (lane >> 3);
        attention::mma::ldsm_x4(x_st + m * 128 + ((c ^ (m & 7)) << 4), xb[b]);
      }
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int q = lane >> 3, r = 16 * (2 * kp + h) + (q >> 1) * 8 + (lane & 7), c = 2 * warp + (q & 1);
        uint32_t a[4];  // 16-byte chunk c of the 128-column row r: box c / 8, chunk c % 8 of its 128-byte row
        attention::mma::ldsm_x4_trans(w_st + (c / 8) * kWBoxBytes + r * 128 + (((c % 8) ^ (r & 7)) << 4), a);
#pragma unroll
        for (int b = 0; b < MB; ++b) Mma::run(acc[b], a, xb[b][2 * h], xb[b][2 * h + 1]);
      }
    }
  }
}

// Output of warp `warp`'s 16 columns of tile t from their sums v (no activation or GeLU).
template <class T, int MR>
__device__ __forceinline__ void store_cols(const SkinnyParams& p, uint32_t t, const float (&v)[MR / 8][4], int warp, int lane,
                                           hopper::Activation act) {
  using Mma = attention::mma::Mma<T>;
  const int g = lane / 4, c2 = 2 * (lane % 4);
  T* Y = static_cast<T*>(p.Y);
  const bool gelu = act == hopper::Activation::GeLU;
#pragma unroll
  for (int b = 0; b < MR / 8; ++b)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int m = 8 * b + c2 + (e & 1), n = int(t) * kTileCols + 16 * warp + g + (e >> 1) * 8;
      if (m < p.M && n < p.N) Y[size_t(m) * p.N + n] = Mma::cvt(gelu ? act::gelu(v[b][e]) : v[b][e]);
    }
}
// SwiGLU's output of gate warp `warp` (< kWarps / 2): silu(gate) * up, from the sums of its 16 gate columns and of
// the matching up columns (warp + kWarps / 2's).
template <class T, int MR>
__device__ __forceinline__ void store_swiglu_cols(const SkinnyParams& p, uint32_t t, const float (&gate)[MR / 8][4],
                                                  const float (&up)[MR / 8][4], int warp, int lane) {
  using Mma = attention::mma::Mma<T>;
  const int g = lane / 4, c2 = 2 * (lane % 4), n_out = p.N / 2;
  T* Y = static_cast<T*>(p.Y);
#pragma unroll
  for (int b = 0; b < MR / 8; ++b)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int m = 8 * b + c2 + (e & 1), n = int(t) * (kTileCols / 2) + 16 * warp + g + (e >> 1) * 8;
      if (m < p.M && n < n_out) Y[size_t(m) * n_out + n] = Mma::cvt(act::silu(gate[b][e]) * up[b][e]);
    }
}

// Output of a complete tile t from its sums v (all kWarps warps): the activation and the stores. With
// SwiGLU the "up" warps hand their sums to the "gate" warps through xchg (`bar` between); the caller
// posts after a barrier, which also retires the hand-over before its reuse.
// `act`: p.act, or the lean form's constant.
template <class T, int MR, class Bar>
__device__ __forceinline__ void store_tile(const SkinnyParams& p, uint32_t t, const float (&v)[MR / 8][4], float4* xchg,
                                           int warp, int lane, Bar bar, hopper::Activation act) {
  constexpr int MB = MR / 8;
  if (act == hopper::Activation::SwiGLU) {
    if (warp >= kWarps / 2)
#pragma unroll
      for (int b = 0; b < MB; ++b)
        xchg[((warp - kWarps / 2) * MB + b) * 32 + lane] = make_float4(v[b][0], v[b][1], v[b][2], v[b][3]);
    bar();
    if (warp < kWarps / 2) {
      float up[MB][4];
#pragma unroll
      for (int b = 0; b < MB; ++b) {
        const float4 u = xchg[(warp * MB + b) * 32 + lane];
        up[b][0] = u.x, up[b][1] = u.y, up[b][2] = u.z, up[b][3] = u.w;
      }
      store_swiglu_cols<T, MR>(p, t, v, up, warp, lane);
    }
  } else {
    store_cols<T, MR>(p, t, v, warp, lane, act);
  }
}

// The end of CTA me's segment of a cut tile t (stream-K over G CTAs and U units): leave the partial
// sums in global memory; the last of the tile's CTAs to arrive adds them all in CTA (= K) order --
// the same bits whoever arrives last -- into sum and returns true (it finishes the tile).
// One thread's acq_rel atomic between two CTA barriers publishes every thread's partial (release,
// cumulative through the barrier) and, in the last CTA to arrive, makes the others' partials
// visible to all its threads (acquire, then the barrier) -- no per-thread fences: at the end of
// the kernel the store -> fence -> atomic -> load chain is the tail the DRAM stream waits for.
template <int MR, class Bar>
__device__ __forceinline__ bool reduce_cut_tile(const SkinnyParams& p, uint32_t t, uint32_t me, uint64_t U, uint32_t G,
                                                const float (&acc)[MR / 8][4], float (&sum)[MR / 8][4],
                                                uint32_t& s_last, int tid, int warp, int lane, Bar bar) {
  constexpr int MB = MR / 8;
  const uint32_t cpt = uint32_t(p.chunks_per_tile);
  const uint32_t first = owner(uint64_t(t) * cpt, U, G), last = owner(uint64_t(t) * cpt + cpt - 1, U, G);
  // A CTA's partial of tile t: slot 0 if t is its first tile, slot 1 if t is its last (cut) one. Ranges are
  // contiguous and non-empty (G <= U), so every contributor after `first` starts inside tile t: only
  // `first` can hold t as its last tile -- one 64-bit division per tile, not one per contributor and
  // row block. (That was the tail: 8 (MB) x 8 divisions per thread at M = 64 cost ~35 us, ~7 at M = 32;
  // bench/results/skinny-wg-h100-20261124/.)
  const uint32_t first_slot = unit_begin(first, U, G) / cpt == t ? 0u : 1u;
  auto slot_of = [&](uint32_t j) {
    const uint32_t s = j == first ? first_slot : 0u;
    return p.partials + ((size_t(j) * 2 + s) * kWarps + warp) * MB * 32 + lane;
  };
  float4* mine = slot_of(me);
#pragma unroll
  for (int b = 0; b < MB; ++b) __stcg(mine + b * 32, make_float4(acc[b][0], acc[b][1], acc[b][2], acc[b][3]));
  if (p.dt_diag & 16) return false;  // (diagnosis: SkinnyParams::dt_diag)
  bar();
  if (tid == 0) s_last = ptx::atom_add_acq_rel(p.arrivals + t, 1u) == last - first ? 1u : 0u;
  bar();
  if (s_last == 0) return false;
  if (tid == 0) p.arrivals[t] = 0;
#pragma unroll
  for (int b = 0; b < MB; ++b) sum[b][0] = sum[b][1] = sum[b][2] = sum[b][3] = 0.f;
  // Contributors in groups of kMaxReduce, every row block's loads of a group in flight together, then
  // added in CTA (= K) order: each sum sees 0 + the first CTA's partial + the next's ..., as the cluster
  // reduction does (the same bits).
  for (uint32_t j0 = first; j0 <= last; j0 += kMaxReduce) {
    const float4* src[kMaxReduce];
#pragma unroll
    for (int q = 0; q < kMaxReduce; ++q) {
      const uint32_t j = j0 + q;
      src[q] = j <= last && j != me ? slot_of(j) : nullptr;
    }
#pragma unroll
    for (int b = 0; b < MB; ++b) {
      float4 v[kMaxReduce];
#pragma unroll
      for (int q = 0; q < kMaxReduce; ++q)
        v[q] = src[q] != nullptr ? __ldcg(src[q] + b * 32) : make_float4(acc[b][0], acc[b][1], acc[b][2], acc[b][3]);
#pragma unroll
      for (int q = 0; q < kMaxReduce; ++q)
        if (j0 + q <= last) {
          sum[b][0] += v[q].x;
          sum[b][1] += v[q].y;
          sum[b][2] += v[q].z;
          sum[b][3] += v[q].w;
        }
    }
  }
  return true;
}

// The dynamic tail's partials (SkinnyParams::partials, [tiles][slots_per_tile][kWarps][MB][32 lanes]): warp w's
// float4s of tile t's slot 0, and the stride from one slot to the next.
template <int MR>
__device__ __forceinline__ float4* tail_partial(const SkinnyParams& p, uint32_t t, uint32_t slot, int w, int lane) {
  return p.partials + ((size_t(t) * uint32_t(p.slots_per_tile) + slot) * kWarps + uint32_t(w)) * (MR / 8) * 32 + lane;
}
// Warp w's sums of tile t's n partial slots, added in slot order (static contributors in CTA order, then the items
// in K order: the same bits whoever computed which), kBatch slots' loads in flight at once (64 registers: a tile's
// slots in one round trip at M <= 8 -- this is the kernel's tail).
template <int MR>
__device__ __forceinline__ void sum_tail_slots(const SkinnyParams& p, uint32_t t, int w, uint32_t n, int lane,
                                               float (&sum)[MR / 8][4]) {
  constexpr int MB = MR / 8, kBatch = MB >= 8 ? 2 : 16 / MB;
  const float4* base = tail_partial<MR>(p, t, 0, w, lane);
  const size_t stride = size_t(kWarps) * MB * 32;
#pragma unroll
  for (int b = 0; b < MB; ++b) sum[b][0] = sum[b][1] = sum[b][2] = sum[b][3] = 0.f;
  for (uint32_t j0 = 0; j0 < n; j0 += kBatch) {
    float4 v[kBatch][MB];
#pragma unroll
    for (int q = 0; q < kBatch; ++q)
#pragma unroll
      for (int b = 0; b < MB; ++b)
        v[q][b] = j0 + q < n ? __ldcg(base + (j0 + q) * stride + b * 32) : make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
    for (int q = 0; q < kBatch; ++q)
      if (j0 + q < n)
#pragma unroll
        for (int b = 0; b < MB; ++b) {
          sum[b][0] += v[q][b].x;
          sum[b][1] += v[q][b].y;
          sum[b][2] += v[q][b].z;
          sum[b][3] += v[q][b].w;
        }
  }
}

// A consumer warp is done with a ring stage (after mma_chunk): release it to the producer warp, whose TMA
// refills it. The mma.sync consumer read the stage through the generic proxy (ldmatrix) and the refill writes it
// through the async proxy: without fence.proxy.async between them the mbarrier orders nothing across proxies,
// and a refill's first bytes (X's box goes out first) landed while a slower warp still read the stage -- other
// sums for some tokens of some warps' columns, seen only with other kernels' CTAs sharing the SMs (the decode
// attention PDL-launched beside the QKV GEMM, H200; bench/results/skinny-ws-h200-20261128/). The wgmma consumer
// reads through the async proxy and has waited for its wgmmas: no fence.
template <bool WG>
__device__ __forceinline__ void release_stage(uint64_t* empty_bar, int lane) {
  if constexpr (!WG) tma::fence_proxy_async_smem();
  __syncwarp();
  if (lane == 0) tma::arrive(empty_bar);
}

// The producer warp's waits for X (both warp-specialized kernels; called by the whole warp): is the X chunk of
// unit u of GEMM g, at position i of the CTA's sequence of units, ready? A comparison against the columns known ready
// in the current segment (a tile's units in this CTA: it starts at i when `segment_start` or at a tile's first unit);
// past them, with `block` (the ring is full of stages waiting for X), the stage-done fast path, then the bounded wait:
// the warp probes up to 32 producer tiles at once, to the segment's last column (range_last: the CTA's last unit of
// g) -- one L2 round trip clears a run of complete tiles. need_wait: X is produced and not known complete (cleared
// when it is, or when a bounded wait gives up: then bs.ok is cleared, X is loaded as it is and nothing more is
// posted). fence_x: set after an acquire (the caller fences the async proxy before its next X load). wait_ns (may
// be null): lane 0 adds the time waited.
struct XChunkWaiter {
  ColumnWaiterWarp waiter;
  int segment = -1;  // the sequence position where the waiter's current segment starts
  __device__ __forceinline__ bool ready(const SkinnyParams& g, const StageParams& sp, BlockSync& bs, int i, uint32_t u,
                                        bool segment_start, uint32_t range_last, bool block, bool& need_wait,
                                        bool& fence_x, uint64_t* wait_ns) {
    if (!need_wait) return true;
    const uint32_t cpt = uint32_t(g.chunks_per_tile), t = u / cpt;
    const uint32_t k_lo = (u % cpt) * kChunkK, k_hi = min(uint32_t(g.K), k_lo + kChunkK) - 1;
    if ((segment_start || u % cpt == 0) && i != segment) {
      waiter.reset(k_lo);
      segment = i;
    }
    if (k_hi < waiter.ready_until) return true;
    if (!block) return false;
    if (waiter.stage_done(sp, bs.epoch, 0)) {
      fence_x = true;
      need_wait = false;
      return true;
    }
    const uint32_t last = min(range_last, t * cpt + cpt - 1);
    const uint32_t k_last = min(uint32_t(g.K), (last % cpt + 1) * kChunkK) - 1;
    bool acquired = false;
    uint64_t waited = 0;
    const bool ok = waiter.wait(sp, bs.epoch, 0, 0, uint32_t(g.M - 1), k_hi, k_last, Tile{t, 0, 0}, &waited, acquired);
    const bool lane0 = threadIdx.x % 32 == 0;
    if (wait_ns != nullptr && lane0) *wait_ns += waited;
    fence_x = true;
    if (!ok) {
      need_wait = false;
      if (lane0) bs.ok = 0;
    }
    return true;
  }
};

// A tile's post from one consumer thread after the consumer warps' barrier (the warp-specialized
// kernel's post(): its producer warp does not take part): publish tile t unless a wait gave up, and
// record its trace (start, end, wait time, SM, block, and the mainloop end `t_mainloop`).
__device__ __forceinline__ void post_tile_elected(const StageParams& sp, BlockSync& bs, Tile t, uint64_t t_mainloop) {
  if (!*static_cast<volatile uint32_t*>(&bs.ok)) return;
  post_elected(sp, bs.epoch, t);
  if (sp.trace != nullptr) {
    TileTrace& r = sp.trace[linear(t, sp.grid)];
    r.start_ns = bs.t_start;
    r.end_ns = ptx::globaltimer_ns();
    r.wait_ns = *static_cast<volatile uint64_t*>(&bs.wait_ns);
    r.smid = ptx::smid();
    r.block = braid::detail::block_linear();
    r.mainloop_end_ns = t_mainloop;
  }
}

}  // namespace detail

// MR: rows computed (a multiple of 8 >= M); WG: wgmma consumers (mma_chunk). Grid: (G persistent
// CTAs), G <= tiles x chunks_per_tile; block: kGemmThreads.
// Dynamic shared memory: SkinnySmem<MR, STAGES>::bytes(act == SwiGLU).
// kForm: hopper::kFormGeneral (any ordering, traces, the activation at run time) or a lean form
// (hopper::lean_form(act): launched without tile sync, dynamic order or traces; one activation) -- the
// Hopper GEMM's forms and their reason (gemm_config.hpp, "The forms of braid's GEMM kernels").
//
// Warp-specialized (as skinny_chain.cuh): warps 0-7 consume (MMAs, reduction, epilogue, posts; a named
// barrier among themselves) and release each stage on its `empty` mbarrier; warp 8 issues every TMA load,
// refilling a stage as soon as it is released -- STAGES units in flight, not STAGES - 1 behind a CTA
// barrier -- and runs the waits for X's producer tiles itself, so a wait never stalls the MMAs of the
// stages already loaded. Why: on an H200 the CTA-barrier ring streamed GPT-3's W1 at 3.47 TB/s against
// 3.85 for the same loads from a producer warp (bench/results/skinny-ws-h200-20261128/; on an H100 the
// two rings were equal).
// Two CTAs per SM (the "p2"/"a2" configurations) up to 32 rows; at 64 rows one: 288 threads x 2 CTAs
// cap a thread at 96 registers, and the 64-row accumulators and reduction then spill ~260 bytes.
template <class T, int MR, int STAGES, bool WG, int kForm = hopper::kFormGeneral, bool kDyn = false>
__global__ void __launch_bounds__(kGemmThreads, MR >= 64 ? 1 : 2) skinny_gemm_kernel(const __grid_constant__ SkinnyParams p,
                                                                       const StageParams sp) {
  constexpr bool kLean = kForm != hopper::kFormGeneral;
  const hopper::Activation act = kLean ? hopper::form_activation(kForm) : p.act;
  TileTrace* const trace = kLean ? nullptr : sp.trace;
  const bool sync = !kLean && sp.has(kSync);
  using Smem = SkinnySmem<MR, STAGES>;
  constexpr int MB = MR / 8;  // 8-row blocks of X (the MMA's N dimension)
  extern __shared__ __align__(128) uint8_t smem_raw[];
  __shared__ BlockSync bs;
  __shared__ uint32_t s_last;
  // full[s]: stage s holds unit i (i % STAGES == s), phase (i / STAGES) & 1; empty[s]: its 8 consumer warps are done.
  __shared__ __align__(8) uint64_t full[STAGES], empty[STAGES];
  __shared__ detail::UnitTag tags[kDyn ? STAGES : 1];  // kDyn: stage i % STAGES holds this unit (detail::UnitTag)
  // kDyn: each consumer warp's tiles of the segments it has not published yet (the dynamic tail's publication)
  __shared__ uint32_t seg_list[kWarps][kDyn ? kMaxListedSegments : 1];
  uint8_t* smem = smem_raw + ((1024 - attention::mma::smem_u32(smem_raw) % 1024) % 1024);
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const bool producer = warp == kWarps, loader = producer && lane == 0;
  const uint32_t G = gridDim.x, me = blockIdx.x;
  // Phase stamps: thread 0 (a consumer) and the loader lane, each its own entries.
  unsigned long long* const phases =
      !kLean && p.phase_ns != nullptr && (tid == 0 || loader) ? p.phase_ns + size_t(me) * kSkinnyPhaseSlots : nullptr;
  auto stamp = [&](int k) {
    if (phases != nullptr) phases[k] = ptx::globaltimer_ns();
  };
  if (tid == 0) {
    stamp(0);
    if (phases != nullptr) phases[kSkinnyPhases] = ptx::smid();
  }
  const uint32_t cpt = uint32_t(p.chunks_per_tile);
  const uint64_t U = uint64_t(p.tiles) * cpt;
  const uint32_t u_begin = detail::unit_begin(me, U, G), u_end = detail::unit_begin(me + 1, U, G);
  const int n_units = int(u_end - u_begin);
  const uint32_t ring = attention::mma::smem_u32(smem);

  // Unit u_begin + i -> ring stage i % STAGES, issued by the loader lane: the stage's byte count, W's two
  // boxes, and X's box (after the waits for it, or first when nothing is waited for). Rows past K or N,
  // and X rows past M, arrive as zeros.
  const uint64_t w_policy = tma::policy_evict_first(), x_policy = tma::policy_evict_last();
  bool fence_x = false;  // the producer acquired X's producer tiles since its last X load
  auto load_w = [&](int i, uint32_t u, bool expect = true) {
    uint64_t* bar = &full[i % STAGES];
    if (expect) tma::arrive_expect_tx(bar, Smem::kStageBytes);
    detail::load_w_unit(p, u, ring + uint32_t(i % STAGES) * Smem::kStageBytes, bar, w_policy);
  };
  auto load_x = [&](int i, uint32_t u) {
    const int k0 = int(u % cpt) * kChunkK;
    const uint32_t dst = ring + uint32_t(i % STAGES) * Smem::kStageBytes + Smem::kWBytes;
    if (fence_x) ptx::fence_proxy_async_global();  // acquired X -> the TMA engine's reads (once per acquire:
    fence_x = false;                               // a fence per chunk would stall every TMA issue)
    tma::load_2d(dst, &p.x_map, k0, 0, &full[i % STAGES], x_policy);
    if (p.phase_units != 0 && i == 0) stamp(1);
  };

  // The loader lane initializes the mbarriers and, W never being produced (optimization R), fills the
  // ring with W before begin_block (its epoch load is an L2 round trip) and the PDL wait. begin_block's
  // barrier publishes the initialization. The loader lane also owns bs.wait_ns (the trace's wait time).
  const bool weights_first = !sync || sp.has(kWeightsFirst);
  // kDyn: the producer warp's sequence of units (detail::UnitSource: the static range, then the queue's items); its
  // first `pre` units are static.
  detail::UnitSource src(p, me, G);
  const int pre = weights_first ? min(STAGES, kDyn ? int(src.v_end - src.v) : n_units) : 0;
  auto init_ring = [&] {  // (the loader lane)
    for (int s = 0; s < STAGES; ++s) {
      tma::init(&full[s], 1);
      tma::init(&empty[s], kWarps);
    }
    tma::fence_init();
    if (p.w_packed == nullptr) tma::prefetch_map(&p.w_map);
    tma::prefetch_map(&p.x_map);
  };
  if constexpr (kDyn) {
    if (producer) {
      if (lane == 0) init_ring();
      for (int i = 0; i < pre; ++i) {  // (every lane keeps the source's state)
        detail::UnitTag tg;
        src.next(p, me, G, tg);
        if (lane == 0) {
          tags[i] = tg;
          load_w(i, tg.u);
        }
      }
      if (lane == 0) {
        bs.wait_ns = 0;
        stamp(1);
      }
    }
  } else if (loader) {
    init_ring();
    for (int i = 0; i < pre; ++i) load_w(i, u_begin + uint32_t(i));
    bs.wait_ns = 0;
    if (p.phase_units == 0) stamp(1);
  }
  if constexpr (kLean) begin_block_unsynchronized(sp);
  else begin_block(sp, bs);
  if (trace != nullptr && tid == 0) bs.t_start = ptx::globaltimer_ns();
  if (!sync) {  // stream order: X (and Y) belong to the primary until it ends
    const uint64_t t0 = trace != nullptr && loader ? ptx::globaltimer_ns() : 0;
    ptx::pdl_wait_primary();
    if (trace != nullptr && loader) bs.wait_ns += ptx::globaltimer_ns() - t0;  // (the trace's pale part)
  }
  if (loader) stamp(2);
  // X is produced and its producer has not completed this run. (A first stage has no X producer; an
  // unsynchronized launch's producer has ended.)
  bool need_wait = !kLean && sp.num_inputs > 0 && !producer_complete(sp, bs, 0);
  fence_x = sync && sp.num_inputs > 0;  // producer_complete's acquire (thread 0's, through its barrier), or the waits to come

  if (producer) {
    // ---- producer warp ------------------------------------------------------------------------------
    if constexpr (kDyn) {
      detail::XChunkWaiter xw;
      auto x_ready = [&](int i, bool block) {
        const detail::UnitTag tg = tags[i % STAGES];
        return xw.ready(p, sp, bs, i, tg.u, (tg.slot & detail::UnitTag::kFirstOfSegment) != 0, tg.last, block, need_wait,
                        fence_x, trace != nullptr ? &bs.wait_ns : nullptr);
      };
      src.allow_grab = true;  // (after the PDL wait above, or in a synchronized launch begin_block's)
      int x_next = 0;  // the first unit whose X box is not issued yet
      int j = 0;
      for (;; ++j) {
        if (j >= pre) {  // (the first `pre` units' W went out before begin_block)
          detail::UnitTag tg;
          if (!src.next(p, me, G, tg)) break;
          if (j >= STAGES) tma::wait(&empty[j % STAGES], uint32_t(j / STAGES - 1) & 1u);
          if (lane == 0) tags[j % STAGES] = tg;
          __syncwarp();  // (the other lanes read the tag in x_ready)
          if (!need_wait && x_next == j) {
            // Nothing to wait for: X first -- behind W's 16 KB, X's first reads (DRAM misses shared by the CTAs
            // at this K position) finished the stage late.
            if (lane == 0) {
              tma::arrive_expect_tx(&full[j % STAGES], Smem::kStageBytes);
              load_x(j, tg.u);
              load_w(j, tg.u, false);
            }
            ++x_next;
            __syncwarp();
            continue;
          }
          if (lane == 0) load_w(j, tg.u);  // W first: its bytes stream while the wait for X's producer tiles runs
        }
        // X boxes in order, as far as they are known ready; blocking only when the ring is full of stages
        // waiting for X (the next W load needs unit x_next consumed).
        while (x_next <= j && x_ready(x_next, x_next + STAGES <= j + 1)) {
          if (lane == 0) load_x(x_next, tags[x_next % STAGES].u);
          ++x_next;
        }
        __syncwarp();
      }
      const int n = j;  // the units of this CTA's sequence
      while (x_next < n) {
        x_ready(x_next, true);
        if (lane == 0) load_x(x_next, tags[x_next % STAGES].u);
        ++x_next;
        __syncwarp();
      }
      {  // the end of the sequence, told in the next stage once it is free: an end tag, a plain arrival
        if (n >= STAGES) tma::wait(&empty[n % STAGES], uint32_t(n / STAGES - 1) & 1u);
        if (lane == 0) {
          tags[n % STAGES].u = detail::UnitTag::kEndUnit;
          tma::arrive(&full[n % STAGES]);
        }
      }
      // The last CTA done taking items resets the queue for the next launch: every CTA's last take (the one that found
      // the queue empty) came back before its arrival here (acq_rel: ordered before the reset).
      if (lane == 0 && ptx::atom_add_acq_rel(p.queue + 1, 1u) == G - 1) {
        p.queue[0] = 0;
        p.queue[1] = 0;
      }
    } else {
      detail::XChunkWaiter xw;
      auto x_ready = [&](int i, bool block) {
        return xw.ready(p, sp, bs, i, u_begin + uint32_t(i), i == 0, u_end - 1, block, need_wait, fence_x,
                        trace != nullptr ? &bs.wait_ns : nullptr);
      };
      int x_next = 0;  // the first unit whose X box is not issued yet
      for (int j = 0; j < n_units; ++j) {
        if (j >= pre) {  // (the first `pre` units' W went out before begin_block)
          if (j >= STAGES) tma::wait(&empty[j % STAGES], uint32_t(j / STAGES - 1) & 1u);
          if (x_next == j && x_ready(j, false)) {
            // X known ready (nothing to wait for, or its producer tiles already seen posted): X first -- behind
            // W's 16 KB, X's first reads (DRAM misses shared by the CTAs at this K position) finished the stage
            // late.
            if (lane == 0) {
              tma::arrive_expect_tx(&full[j % STAGES], Smem::kStageBytes);
              load_x(j, u_begin + uint32_t(j));
              load_w(j, u_begin + uint32_t(j), false);
            }
            ++x_next;
            __syncwarp();
            continue;
          }
          if (lane == 0) load_w(j, u_begin + uint32_t(j));  // W first: its bytes stream while the wait for X's producer tiles runs
        }
        // X boxes in order, as far as they are known ready; blocking only when the ring is full of stages
        // waiting for X (the next W load needs unit x_next consumed).
        while (x_next <= j && x_ready(x_next, x_next + STAGES <= j + 1)) {
          if (lane == 0) load_x(x_next, u_begin + uint32_t(x_next));
          ++x_next;
        }
        __syncwarp();
      }
      while (x_next < n_units) {
        x_ready(x_next, true);
        if (lane == 0) load_x(x_next, u_begin + uint32_t(x_next));
        ++x_next;
        __syncwarp();
      }
    }
    // The cluster reduction's two cluster barriers count every thread of the cluster (the consumers' one
    // segment per CTA: the K-aligned split gives each CTA one cut tile).
    if (p.cluster_reduce) {
      cluster::sync();
      cluster::sync();
    }
  } else {
    // ---- consumer warps -----------------------------------------------------------------------------
    float acc[MB][4];
#pragma unroll
    for (int b = 0; b < MB; ++b) acc[b][0] = acc[b][1] = acc[b][2] = acc[b][3] = 0.f;
    float4* xchg = reinterpret_cast<float4*>(smem + Smem::kRingBytes);
    // Traces: when this CTA's last MMA of the segment it finishes a tile with was done (thread 0's warp),
    // as the tile's mainloop end -- what splits the time after a consumer's wait into its loads and MMAs,
    // and the reduction and stores.
    uint64_t t_mainloop = 0;
    // Output of a complete tile t from its sums v: activation, stores, then (after every consumer's
    // stores; the barrier also retires the SwiGLU hand-over before reuse) the post.
    auto finish_tile = [&](uint32_t t, float (&v)[MB][4]) {
      detail::store_tile<T, MR>(p, t, v, xchg, warp, lane, detail::ConsumerBarrier{}, act);
      detail::ConsumerBarrier{}();
      if constexpr (!kLean)
        if (tid == 0) detail::post_tile_elected(sp, bs, Tile{t, 0, 0}, t_mainloop);
    };
    // End of a segment of tile t that started at unit u0 and ends at unit u.
    auto finish_segment = [&](uint32_t t, uint32_t u0, uint32_t u) {
      if (u0 % cpt == 0 && u % cpt == cpt - 1) {  // the whole tile is this CTA's
        finish_tile(t, acc);
        return;
      }
      if (p.cluster_reduce) {
        // The tile's CTAs are this cluster (rank = K order, one segment each): every CTA leaves its sums in
        // its own ring (free: every unit is consumed and the producer has no more loads), rank 0 adds them
        // in rank order -- the order of the global reduction below, so the same bits -- finishes and posts
        // the tile; the second barrier keeps the other CTAs (and their shared memory) alive until rank 0
        // has read them. (The producer warp takes part in both cluster barriers.)
        float4* mine = reinterpret_cast<float4*>(smem);
        detail::ConsumerBarrier{}();  // every consumer warp is done reading the ring
#pragma unroll
        for (int b = 0; b < MB; ++b) mine[(warp * MB + b) * 32 + lane] = make_float4(acc[b][0], acc[b][1], acc[b][2], acc[b][3]);
        cluster::sync();
        if (cluster::rank() == 0) {
          float sum[MB][4];
          const uint32_t n = cluster::size();
          const uint32_t local = cluster::smem_addr(mine + warp * MB * 32 + lane);
#pragma unroll
          for (int b = 0; b < MB; ++b) sum[b][0] = sum[b][1] = sum[b][2] = sum[b][3] = 0.f;
          for (uint32_t r = 0; r < n; ++r) {  // rank order; a rank's row blocks loaded together
            const uint32_t remote = cluster::map(local, r);
            float4 v[MB];
#pragma unroll
            for (int b = 0; b < MB; ++b) v[b] = cluster::ld_f32x4(remote + uint32_t(b) * 32u * 16u);
#pragma unroll
            for (int b = 0; b < MB; ++b) {
              sum[b][0] += v[b].x;
              sum[b][1] += v[b].y;
              sum[b][2] += v[b].z;
              sum[b][3] += v[b].w;
            }
          }
          finish_tile(t, sum);
        }
        cluster::sync();
        return;
      }
      float sum[MB][4];
      if (detail::reduce_cut_tile<MR>(p, t, me, U, G, acc, sum, s_last, tid, warp, lane, detail::ConsumerBarrier{}))
        finish_tile(t, sum);
    };

    if constexpr (kDyn) {
      // ---- the dynamic tail: the units the producer's tags name; per-warp ends ----------------------------------
      // A warp owns its 16 columns, so a segment's end is the warp's own: it stores its partial sums to the tile's
      // slot (fire and forget) and notes the tile in its list. Only at the end of its sequence (or when the list is
      // full) does it publish them: one fence, then each lane one segment's relaxed atomic on its tile's column-group
      // counter, all in flight together. Why not at each segment's end: a fence there waits for the warp's stores
      // under a saturated memory system, and the stalled warps held the ring (GPT-3's W1, a2s4: 48.5 us against
      // 40.4 without publishing; bench/results/skinny-dyn-tail-h200-20261128/). The warp whose arrival completes a
      // count (every slot of the tile) adds the slots in order and stores the group's output; with SwiGLU a group
      // is a gate warp and its up warp. Under tile sync the tile's last group to finish posts it.
      const bool swiglu = act == hopper::Activation::SwiGLU;
      const uint32_t groups = swiglu ? kWarps / 2 : kWarps, group = uint32_t(warp) % groups;
      const uint32_t ipt = uint32_t(p.items_per_tile), per_slot = swiglu ? 2u : 1u;
      uint32_t* const my_segs = seg_list[warp];
      int n_segs = 0;
      unsigned long long last_full = 0, last_mma = 0;  // (phase stamps, thread 0)
      auto finish_group = [&](uint32_t t, uint32_t slots) {  // (after publish's acquire)
        if (lane == 0) p.group_arrivals[t * kWarps + group] = 0;  // (every arrival of this launch is in: ready for the next)
        float v[MB][4];
        detail::sum_tail_slots<MR>(p, t, int(group), slots, lane, v);
        if (swiglu) {
          float up[MB][4];
          detail::sum_tail_slots<MR>(p, t, int(group + groups), slots, lane, up);
          detail::store_swiglu_cols<T, MR>(p, t, v, up, int(group), lane);
        } else {
          detail::store_cols<T, MR>(p, t, v, warp, lane, act);
        }
        if constexpr (!kLean) {
          __syncwarp();
          if (lane == 0 && ptx::atom_add_acq_rel(p.arrivals + t, 1u) == groups - 1) {
            p.arrivals[t] = 0;
            detail::post_tile_elected(sp, bs, Tile{t, 0, 0}, t_mainloop);
          }
        }
      };
      // Publish the listed segments: lane k arrives for segment k (after the warp's fence: release), then the
      // segments whose count this warp completed are finished, in list order.
      auto publish = [&] {
        __syncwarp();
        if (n_segs == 0 || (p.dt_diag & 4)) {
          n_segs = 0;
          return;
        }
        const bool mine = lane < n_segs;
        const uint32_t t = mine ? my_segs[lane] : 0u;
        const uint32_t slots = mine ? detail::static_contributors(p, t, G) + ipt : 0u;
        if (!(p.dt_diag & 1)) ptx::fence_acq_rel_gpu();  // (release: this warp's partial stores, through the __syncwarp)
        const uint32_t old = mine ? ptx::atom_add_relaxed(p.group_arrivals + t * kWarps + group, 1u) : 0u;
        uint32_t done = __ballot_sync(0xffffffffu, mine && old + 1 == slots * per_slot);
        n_segs = 0;
        if (done == 0 || (p.dt_diag & 2)) return;
        // The relaxed atomics that completed the counts + this fence = acquire (once for all of them: a fence per
        // finish also waited for the previous finish's stores).
        if (lane == 0) ptx::fence_acq_rel_gpu();
        __syncwarp();
        while (done != 0) {
          const int k = __ffs(done) - 1;
          done &= done - 1;
          finish_group(__shfl_sync(0xffffffffu, t, k), __shfl_sync(0xffffffffu, slots, k));
        }
      };
      const int n_est = int(U / G);  // (the late trigger's position: the mean sequence length)
      for (int i = 0;; ++i) {
        if (p.pdl_trigger_units > 0 && i == max(0, n_est - p.pdl_trigger_units)) ptx::pdl_launch_dependents();
        tma::wait(&full[i % STAGES], uint32_t(i / STAGES) & 1u);
        const detail::UnitTag tg = tags[i % STAGES];
        if (tg.u == detail::UnitTag::kEndUnit) break;
        if (phases != nullptr) {  // (unit3's stamp: here the first item's unit, the end of the static range)
          if (i == 0) stamp(3);
          if (tg.u % cpt >= uint32_t(p.static_chunks) && phases[4] == 0) stamp(4);
          last_full = ptx::globaltimer_ns();
        }
        const uint32_t w_st = ring + uint32_t(i % STAGES) * Smem::kStageBytes;
        detail::mma_chunk<T, MR, WG>(acc, w_st, w_st + Smem::kWBytes, warp, lane);
        detail::release_stage<WG>(&empty[i % STAGES], lane);
        if (phases != nullptr) last_mma = ptx::globaltimer_ns();
        if (tg.u == tg.last) {  // the end of a segment: its partial to its slot, its tile to the list
          const uint32_t t = tg.u / cpt;
          if (trace != nullptr) t_mainloop = ptx::globaltimer_ns();
          float4* mine = detail::tail_partial<MR>(p, t, tg.slot & 0xffffu, warp, lane);
#pragma unroll
          for (int b = 0; b < MB; ++b) {
            __stcg(mine + b * 32, make_float4(acc[b][0], acc[b][1], acc[b][2], acc[b][3]));
            acc[b][0] = acc[b][1] = acc[b][2] = acc[b][3] = 0.f;
          }
          if (lane == 0) my_segs[n_segs] = t;
          if (++n_segs == kMaxListedSegments) publish();  // (a full list: publish what it holds)
        }
      }
      publish();
      if (phases != nullptr) {
        phases[5] = last_full;
        phases[6] = last_mma;
        stamp(7);
      }
    } else {
    uint32_t seg_start = u_begin;
    for (int i = 0; i < n_units; ++i) {
      if (p.pdl_trigger_units > 0 && i == max(0, n_units - p.pdl_trigger_units)) ptx::pdl_launch_dependents();
      tma::wait(&full[i % STAGES], uint32_t(i / STAGES) & 1u);
      if (tid == 0) {
        if (i == 0) stamp(3);
        if (p.phase_units != 0) {
          if (i == 1) stamp(4);
          if (i == 2) stamp(5);
        } else {
          if (i == min(3, n_units - 1)) stamp(4);
          if (i == n_units - 1) stamp(5);
        }
      }
      const uint32_t w_st = ring + uint32_t(i % STAGES) * Smem::kStageBytes;
      detail::mma_chunk<T, MR, WG>(acc, w_st, w_st + Smem::kWBytes, warp, lane);
      detail::release_stage<WG>(&empty[i % STAGES], lane);
      if (tid == 0 && i == 0 && p.phase_units != 0) stamp(6);

      const uint32_t u = u_begin + uint32_t(i);
      if (i == n_units - 1 || u % cpt == cpt - 1) {
        if (trace != nullptr && tid == 0) t_mainloop = ptx::globaltimer_ns();
        if (tid == 0 && i == n_units - 1 && p.phase_units == 0) stamp(6);
        finish_segment(u / cpt, seg_start, u);
        seg_start = u + 1;
#pragma unroll
        for (int b = 0; b < MB; ++b) acc[b][0] = acc[b][1] = acc[b][2] = acc[b][3] = 0.f;
      }
    }
    if (tid == 0) stamp(7);
    }
  }
  if constexpr (!kLean) end_block(sp, bs);  // (all warps: its barrier is a __syncthreads)
}

}  // namespace braid::skinny
