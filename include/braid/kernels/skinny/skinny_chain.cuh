// Two dependent skinny GEMMs in one persistent launch (the MLP at few tokens):
//   phase 0: H = act0(X . W1)        phase 1: Y = act1(H . W2)
// with tile synchronization *inside* the launch: phase 1's X chunks (columns of H) wait for the H
// tiles they read, through the chain's semaphores of stage 0, while its weights stream regardless.
//
// Why: at few tokens each GEMM is a read of its weights at DRAM bandwidth, and a chain of two launches
// pays two ramps (launch, first loads) and two tails (the split-K reduction while DRAM idles, the
// spread of the CTAs' finishing times). One launch pays each once: every CTA streams its W1 units,
// then its W2 units, and its ring already holds W2 chunks while the last H tiles are reduced.
// Measured (H100, docs/skinny-gemm.md): 8-9 us *slower* than the two-launch PDL chain with the late
// trigger -- every H tile completes at the end of phase 0, so phase 1 waits for all of it, plus the
// semaphore round trips, with only the ring's W2 stages in flight. On an H200 (session 53) 12-20 us
// slower (GPT-3 T = 1 best 91 vs 78-81 us, LLaMA 50 vs 41): the boundary (last phase-0 MMA to first
// phase-1 data) takes ~7 us, and a deeper ring for W2 during it (12 stages, tried) streamed both phases
// slower. Kept as a tested, benchmarked variant (the MLP benchmark tries it) and as the base for a
// schedule whose H tiles complete early.
//
// Roles (kWarps + 1 warps):
//  - 8 consumer warps (warps 0-7: two whole warpgroups, for the wgmma consumers): the MMAs of each
//    ring stage (detail::mma_chunk, as skinny_gemm_kernel), the reduction of cut tiles, the epilogue
//    and the posts (detail::store_tile, reduce_cut_tile), with a named barrier among themselves. A consumed stage is released on its `empty` mbarrier.
//  - 1 producer warp: issues every stage's TMA loads. W's boxes go out as soon as a stage is free;
//    X's box goes out when its columns are known ready. It blocks on a wait only when the ring is full
//    of stages waiting for X -- so the consumers are never held up by a wait and always finish (and
//    reduce, and post) the W1 units of their own CTA: no CTA can stall the H tiles another CTA waits
//    for (a kernel that waited before consuming its earlier stages could deadlock: CTA a waiting for
//    tile 7 with its own tile-5 units unconsumed, CTA b the other way round).
// Every CTA must be resident at once (a wait may be for a CTA not yet started otherwise):
// SkinnyChainOp::prepare checks the occupancy.
//
// Each phase's work split (CTA count, units per CTA) is exactly its SkinnyGemmOp's, and its cut tiles
// are reduced the same way (K order, whoever arrives last), so the output is bit-identical to the two
// GEMMs run one after the other. (A -dsm configuration's cluster reduction gives the same bits as the
// global one used here.) Stage bookkeeping: stage 0 completes (end_block_elected) as each CTA's
// consumers finish their phase-0 units -- so phase 1's waits take the one-load fast path
// (ColumnWaiterWarp::stage_done) once every CTA is past phase 0 -- and stage 1 at the end.
#pragma once
#include "braid/kernels/skinny/skinny_gemm.cuh"

namespace braid::skinny {

constexpr int kChainThreads = kGemmThreads;  // 8 consumer warps + the producer warp

struct SkinnyChainParams {
  SkinnyParams g[2];  // the two GEMMs, as their SkinnyGemmOps prepared them (cluster_reduce cleared)
  int ctas[2] = {0, 0};  // each phase's CTAs (<= gridDim.x): CTAs past it have no units in the phase
  unsigned long long* timeline = nullptr;  // [CTAs][kChainEvents], or nullptr
};

template <class T, int MR, int STAGES, bool WG>
__global__ void __launch_bounds__(kChainThreads, 2)
    skinny_chain_kernel(const __grid_constant__ SkinnyChainParams cp, const __grid_constant__ StageParams sp0,
                        const __grid_constant__ StageParams sp1) {
  using Smem = SkinnySmem<MR, STAGES>;
  constexpr int MB = MR / 8;
  extern __shared__ __align__(128) uint8_t smem_raw[];
  __shared__ BlockSync bs[2];
  __shared__ uint32_t s_last;
  __shared__ __align__(8) uint64_t full[STAGES], empty[STAGES];
  uint8_t* smem = smem_raw + ((1024 - attention::mma::smem_u32(smem_raw) % 1024) % 1024);
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  // This CTA's units: phase 0's [b[0], b[0] + n[0]) then phase 1's [b[1], b[1] + n[1]); position i of
  // the sequence -> ring stage i % STAGES.
  const uint32_t me = blockIdx.x;
  uint32_t b[2], n[2], cpt[2];
  uint64_t U[2];
  for (int q = 0; q < 2; ++q) {
    cpt[q] = uint32_t(cp.g[q].chunks_per_tile);
    U[q] = uint64_t(cp.g[q].tiles) * cpt[q];
    const uint32_t G = uint32_t(cp.ctas[q]);
    b[q] = me < G ? detail::unit_begin(me, U[q], G) : 0;
    n[q] = me < G ? detail::unit_begin(me + 1, U[q], G) - b[q] : 0;
  }
  const int total = int(n[0] + n[1]);
  auto phase_of = [&](int i) { return i < int(n[0]) ? 0 : 1; };
  auto unit_of = [&](int i) { return i < int(n[0]) ? b[0] + uint32_t(i) : b[1] + uint32_t(i) - n[0]; };
  const uint32_t ring = attention::mma::smem_u32(smem);
  auto stamp = [&](ChainEvent e) {
    if (cp.timeline != nullptr) cp.timeline[size_t(me) * kChainEvents + e] = ptx::globaltimer_ns();
  };
  if (tid == 0) stamp(kEvStart);
  // Unit i's W boxes into ring stage i % STAGES (the stage's byte count: W and X). Rows past K or N
  // arrive as zeros.
  const uint64_t w_policy = tma::policy_evict_first();
  auto load_w = [&](int i, bool expect = true) {
    uint64_t* bar = &full[i % STAGES];
    if (expect) tma::arrive_expect_tx(bar, Smem::kStageBytes);
    detail::load_w_unit(cp.g[phase_of(i)], unit_of(i), ring + uint32_t(i % STAGES) * Smem::kStageBytes, bar, w_policy);
  };
  // The producer's lane initializes the mbarriers and fills the ring with W before begin_block: W is
  // never produced, and begin_block's epoch loads (two stages: two L2 round trips) would otherwise
  // delay the first bytes. begin_block's barrier publishes the initialization to the consumers.
  const int pre = min(STAGES, total);
  if (warp == kWarps && lane == 0) {
    for (int s = 0; s < STAGES; ++s) {
      tma::init(&full[s], 1);
      tma::init(&empty[s], kWarps);
    }
    tma::fence_init();
    for (int q = 0; q < 2; ++q) {
      if (cp.g[q].w_packed == nullptr) tma::prefetch_map(&cp.g[q].w_map);
      tma::prefetch_map(&cp.g[q].x_map);
    }
    for (int j = 0; j < pre; ++j) load_w(j);
  }
  begin_block(sp0, bs[0]);
  begin_block(sp1, bs[1]);
  const StageParams* const sp[2] = {&sp0, &sp1};  // (grid constants: addressable in place)

  if (warp == kWarps) {
    // ---- producer warp ----------------------------------------------------------------------------
    const uint64_t x_policy = tma::policy_evict_last();
    bool need_wait[2];
    for (int q = 0; q < 2; ++q) need_wait[q] = sp[q]->has(kSync) && sp[q]->num_inputs > 0;
    bool fence_x = false;  // acquired produced data since the last X load was issued
    detail::XChunkWaiter xw;
    // Is unit i's X chunk ready? (Each phase is one GEMM; its first unit starts a segment.)
    auto x_ready = [&](int i, bool block) {
      const int q = phase_of(i);
      return xw.ready(cp.g[q], *sp[q], bs[q], i, unit_of(i), i == 0 || i == int(n[0]), b[q] + n[q] - 1, block,
                      need_wait[q], fence_x, nullptr);
    };
    auto load_x = [&](int i) {
      const int q = phase_of(i);
      const int k0 = int(unit_of(i) % cpt[q]) * kChunkK;
      if (fence_x) ptx::fence_proxy_async_global();  // acquired data -> the TMA engine's reads
      fence_x = false;
      tma::load_2d(ring + uint32_t(i % STAGES) * Smem::kStageBytes + Smem::kWBytes, &cp.g[q].x_map, k0, 0,
                   &full[i % STAGES], x_policy);
    };
    int x_next = 0;  // the first position whose X chunk is not issued yet
    for (int j = 0; j < total; ++j) {
      if (j >= pre) {  // (the first `pre` were issued before begin_block)
        tma::wait(&empty[j % STAGES], uint32_t(j / STAGES - 1) & 1u);
        if (x_next == j && x_ready(j, false)) {
          // X known ready (phase 0's X; phase 1's once its H tiles were seen posted): X first, as the lone
          // kernel does -- behind W's 16 KB, X's reads (DRAM misses or L2 hits shared by the CTAs at this K
          // position) finished the stage late: GPT-3 T = 1 streamed W1 ~10% slower with W first (H200).
          if (lane == 0) {
            tma::arrive_expect_tx(&full[j % STAGES], Smem::kStageBytes);
            load_x(j);
            load_w(j, false);
            if (j == int(n[0])) stamp(kEvPhase1FirstX);
          }
          ++x_next;
          __syncwarp();
          continue;
        }
        if (lane == 0) load_w(j);  // W first: its bytes stream while the wait for X's producer tiles runs
      }
      // X chunks in order, as far as they are known ready; blocking only for the one the next W load
      // needs consumed (x_next + STAGES <= j + 1: the ring is full).
      while (x_next <= j && x_ready(x_next, x_next + STAGES <= j + 1)) {
        if (lane == 0) load_x(x_next);
        if (lane == 0 && x_next == int(n[0])) stamp(kEvPhase1FirstX);
        ++x_next;
      }
      __syncwarp();
    }
    while (x_next < total) {
      x_ready(x_next, true);
      if (lane == 0) load_x(x_next);
      if (lane == 0 && x_next == int(n[0])) stamp(kEvPhase1FirstX);
      ++x_next;
      __syncwarp();
    }
  } else {
    // ---- consumer warps ---------------------------------------------------------------------------
    float acc[MB][4];
#pragma unroll
    for (int k = 0; k < MB; ++k) acc[k][0] = acc[k][1] = acc[k][2] = acc[k][3] = 0.f;
    float4* xchg = reinterpret_cast<float4*>(smem + Smem::kRingBytes);
    auto finish_tile = [&](int q, uint32_t t, float (&v)[MB][4]) {
      detail::store_tile<T, MR>(cp.g[q], t, v, xchg, warp, lane, detail::ConsumerBarrier{}, cp.g[q].act);
      detail::ConsumerBarrier{}();  // every consumer's stores of tile t are done (and xchg is free again)
      if (tid == 0 && *static_cast<volatile uint32_t*>(&bs[q].ok)) post_elected(*sp[q], bs[q].epoch, Tile{t, 0, 0});
    };
    // The end of phase q for this CTA: its stores and posts for the stage are done.
    auto end_phase = [&](int q) {
      detail::ConsumerBarrier{}();
      if (tid == 0) end_block_elected(*sp[q], bs[q].epoch);
    };
    if (n[0] == 0) end_phase(0);
    uint32_t seg_start = b[0];
    for (int i = 0; i < total; ++i) {
      const int q = phase_of(i);
      const uint32_t u = unit_of(i);
      if (i == int(n[0])) seg_start = b[1];
      tma::wait(&full[i % STAGES], uint32_t(i / STAGES) & 1u);
      const uint32_t w_st = ring + uint32_t(i % STAGES) * Smem::kStageBytes;
      if (tid == 0 && i == int(n[0])) stamp(kEvPhase1FirstData);
      detail::mma_chunk<T, MR, WG>(acc, w_st, w_st + Smem::kWBytes, warp, lane);
      detail::release_stage<WG>(&empty[i % STAGES], lane);  // this warp is done with the stage
      if (tid == 0 && i == int(n[0]) - 1) stamp(kEvPhase0Mma);

      const bool phase_end = i == (q == 0 ? int(n[0]) : total) - 1;
      if (phase_end || u % cpt[q] == cpt[q] - 1) {  // the end of a segment of tile t
        const uint32_t t = u / cpt[q];
        if (seg_start % cpt[q] == 0 && u % cpt[q] == cpt[q] - 1) {
          finish_tile(q, t, acc);  // the whole tile is this CTA's
        } else {
          float sum[MB][4];
          if (detail::reduce_cut_tile<MR>(cp.g[q], t, me, U[q], uint32_t(cp.ctas[q]), acc, sum, s_last, tid, warp, lane,
                                          detail::ConsumerBarrier{}))
            finish_tile(q, t, sum);
        }
        seg_start = u + 1;
#pragma unroll
        for (int k = 0; k < MB; ++k) acc[k][0] = acc[k][1] = acc[k][2] = acc[k][3] = 0.f;
      }
      if (q == 0 && i == int(n[0]) - 1) {
        end_phase(0);
        if (tid == 0) stamp(kEvPhase0End);
      }
    }
    if (tid == 0) stamp(kEvEnd);
  }
  end_block(sp1, bs[1]);  // (all warps: its barrier is a __syncthreads)
}

}  // namespace braid::skinny
