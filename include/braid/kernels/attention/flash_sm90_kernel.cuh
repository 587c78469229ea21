// braid's Hopper attention kernel for prompts (TMA + wgmma, warp-specialized): the same function and
// the same braid tile contract as flash_kernel.cuh (S = Q.K^T, online softmax, dropout, O = P.V, causal,
// waits on the QKV tiles it reads, a post per O tile), for head size 128, no cached keys, and query
// blocks of 128 rows (S_new a multiple of 128).
//
// CTA = 3 warpgroups, one braid tile (head h, 128 query rows of batch b), or half of its key blocks (wg-c2: every
// tile over a 2-CTA cluster; wg-s: the long causal tiles over two CTAs of the grid, long_query_split.hpp):
//   warpgroup 0, the producer (24 registers): one thread waits on the QKV tiles (Q rows first, then
//     the K and V rows of each 128-key block) and issues the TMA loads -- Q once, then K and V of each
//     key block into 3-stage rings (K and V with their own full/empty mbarriers: S = Q.K^T starts
//     while V is in flight, and K's slot is free again as soon as S is computed).
//   warpgroups 1 and 2, the consumers (240 registers): 64 query rows each. Per key block j:
//     S[64 x 128] = Q.K_j^T (8 wgmma k-steps, both operands in shared memory) is issued together with
//     the previous block's O[64 x 128] += P.V (P as the register A operand -- the accumulator layout
//     is the A-fragment layout, wgmma_sm90.cuh -- and V MN-major from shared memory); the mask
//     (causal diagonal block), online softmax in log2 units and dropout of block j run while that
//     P.V finishes; then O is rescaled and P_j packed (FlashAttention-3's intra-warpgroup overlap).
//     At the end O is normalized, staged through the warpgroup's own (now unused) Q rows and stored
//     with 16-byte coalesced stores; then the block posts its tile.
//
// Memory ordering: the producer's waits end in an acquire (braid::wait_elected); a generic-to-async
// proxy fence orders them before the TMA reads of the produced rows (design-notes.md).
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "braid/core/grid_stage.cuh"
#include "braid/core/stage.cuh"
#include "braid/kernels/attention/attention_common.cuh"
#include "braid/kernels/attention/attention_op.hpp"
#include "braid/kernels/attention/long_query_split.hpp"
#include "braid/kernels/attention/wgmma_sm90.cuh"
#include "braid/kernels/common/cluster_sm90.cuh"
#include "braid/kernels/common/stmatrix_sm90.cuh"
#include "braid/kernels/common/tma_sm90.cuh"

namespace braid::attention {

struct FlashSm90Params {
  FlashParams p;          // layout, softmax/dropout constants (q_rows = 128; no cache reads)
  CUtensorMap qkv_map;    // the QKV output [B * S_new, 3 * NH * 128], boxes of 64 columns x 128 rows
  // wg-s (long_query_split.hpp): query blocks split_from .. q_blocks - 1 of every sequence and head have their key
  // blocks split between two CTAs (long_query_split_first), and the later of the two merges; 0: none. The launch grid's y then lists per
  // sequence the split blocks' halves, longest first, and then the unsplit blocks, longest first.
  int split_from = 0;
  float* split_part = nullptr;      // [split tiles][2 warpgroups][kSplitVals / 4][128 threads] float4: the earlier CTA's partial
  uint64_t* split_state = nullptr;  // [split tiles]: +1 per arrival, +2 when the partial is out; zero between launches
  // Diagnostic (AttentionArgs::phase_ns; null: off): per CTA (linear block index) kPhases %globaltimer stamps --
  // entry, the primary grid done, Q issued (producer thread); Q arrived, K_0 arrived, S_0 done, the key loop done,
  // O stored (first consumer thread).
  uint64_t* phase_ns = nullptr;
  // -lt (AttentionConfig::late_trigger; AttentionOp clears the launch's kPdlTrigger then): every thread lets the
  // dependent grid launch when its part of the key loop is done -- the producer once its loads are issued, the
  // consumers after their last P.V -- instead of at the block's start.
  int late_trigger = 0;
};

namespace sm90 {

constexpr int kBlockM = 128;   // query rows per CTA (two consumer warpgroups of 64)
constexpr int kBlockN = 128;   // keys per block
constexpr int kStages = 3;     // K/V ring (2 until 2026-11-27: 3 is 1-1.5 us faster at S = 2048, the same below)
constexpr int kThreads = 384;  // producer warpgroup + 2 consumer warpgroups
constexpr uint32_t kPanelBytes = 128 * 128;                // 128 rows x 64 columns of 16 bits
constexpr uint32_t kTileBytes = 2 * kPanelBytes;           // 128 rows x 128 columns
constexpr uint32_t kSmemQ = 0;
constexpr uint32_t kSmemK = kTileBytes;
constexpr uint32_t kSmemV = kSmemK + kStages * kTileBytes;
constexpr uint32_t kSmemBytes = kSmemV + kStages * kTileBytes + 1024;  // + alignment slack
constexpr int kProducerRegs = 24, kConsumerRegs = 240;  // consumers spill below 240; the producer's (cold) wait path spills at 24
constexpr int kSplitVals = 64 + 4;  // a consumer thread's partial of a key split: O, and per row the max and the sum
constexpr int kPhases = kPromptKernelPhases;  // FlashSm90Params::phase_ns stamps per CTA

}  // namespace sm90

// kDropout: the dropout code compiled in (p.drop_threshold != 0; AttentionOp picks the instance). Without it the
// kernel that prompts run at p = 0 carries no dropout code: at 1-4 key blocks per CTA every instruction of the
// loop is fetched cold, and 64 unrolled counter hashes sat between the softmax and the next block's MMAs.
// kLean: the lean form (gemm_config.hpp, "The forms of braid's GEMM kernels"), launched only without tile sync
// and traces (AttentionOp::launch): the waits on the QKV tiles and the post compile out.
template <class T, bool kDropout, bool kLean = false>
__global__ void __launch_bounds__(sm90::kThreads, 1)
    flash_attention_sm90_kernel(const __grid_constant__ FlashSm90Params P, const StageParams sp_arg) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  const StageParams sp = stage_params_for_form<kLean>(sp_arg);
  using namespace sm90;
  using Mma = wg::Mma64x128<T, 0>;   // S = Q.K^T: K K-major
  using MmaT = wg::Mma64x128<T, 1>;  // O += P.V: V MN-major
  const FlashParams& p = P.p;
  constexpr int D = kHeadDim;
  extern __shared__ unsigned char smem_raw[];
  __shared__ BlockSync bs;
  __shared__ __align__(8) uint64_t q_full, k_full[kStages], v_full[kStages], k_empty[kStages], v_empty[kStages];
  __shared__ uint32_t s_merges;  // wg-s: this CTA arrived second at its split tile (it merges, stores and posts)
  const uint32_t smem = (mma::smem_u32(smem_raw) + 1023u) & ~1023u;  // the 128-byte swizzle's alignment

  const int tid = threadIdx.x, wgi = tid / 128;
  uint64_t* const phases =
      P.phase_ns == nullptr ? nullptr : P.phase_ns + (blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z)) * kPhases;
  auto stamp = [&](int k) {
    if (phases != nullptr) phases[k] = ptx::globaltimer_ns();
  };
  if (tid == 0) stamp(0);
  if (tid == 0) {
    tma::prefetch_map(&P.qkv_map);  // the descriptor's fetch under the set-up, not before the first load
    tma::init(&q_full, 1);
    for (int s = 0; s < kStages; ++s) {
      tma::init(&k_full[s], 1);
      tma::init(&v_full[s], 1);
      tma::init(&k_empty[s], 2 * 128);
      tma::init(&v_empty[s], 2 * 128);
    }
    tma::fence_init();
  }
  begin_grid_block(sp, bs);  // (its barrier also publishes the mbarrier initialization)
  if (tid == 0) stamp(1);

  // This CTA's tile (head h, query block y) and, where the tile's keys are split, which half it computes.
  const int h = blockIdx.x;
  int y, split = 0, split_tile = -1;  // split_tile: wg-s's index of a split tile (its partial and state)
  if (P.split_from > 0) {
    const int Q = p.q_blocks, X = Q - P.split_from, i = int(blockIdx.y) % (Q + X), sb = int(blockIdx.y) / (Q + X);
    const int qblk = i < 2 * X ? Q - 1 - i / 2 : P.split_from - 1 - (i - 2 * X);
    y = sb * Q + qblk;
    if (i < 2 * X) {
      split = i % 2;
      split_tile = (sb * p.NH + h) * X + (qblk - P.split_from);
    }
  } else {
    y = p.reverse_rows ? int(gridDim.y - 1 - blockIdx.y) : int(blockIdx.y);
  }
  const Tile tile{uint32_t(h), uint32_t(y), 0};
  const detail::QueryBlock qb(p, y);
  const int b = qb.b, q0 = qb.q0, row0 = qb.row0;
  const uint32_t HD = uint32_t(p.NH) * D;
  const int key_end = p.causal ? q0 + kBlockM : p.S_new;
  const int n_total = key_end / kBlockN;
  // Key split, over a cluster (cluster_merge: every tile, rank 0 merges through DSMEM; split 0 takes the first
  // ceil(n/2) key blocks) or over two CTAs of the grid (wg-s: the long tiles, the later merges through global memory;
  // split 0 takes long_query_split_first(n)); split 1 takes the rest, with the causal diagonal.
  const bool pair = p.cluster_merge != 0;
  if (pair) split = int(blockIdx.z);
  const bool halves = pair || split_tile >= 0;
  const int first_half = split_tile >= 0 ? long_query_split_first(n_total) : (n_total + 1) / 2;
  const int j_begin = split == 0 ? 0 : first_half;
  const int n_blocks = (halves && split == 0 ? first_half : n_total) - j_begin;  // this CTA's blocks
  const bool holds_diagonal = !halves || split == (n_total >= 2 ? 1 : 0);
  const bool qkv_done = producer_complete(sp, bs, 0);

  if (wgi == 0) {
    // ---- producer ----
    wg::regs_dec<kProducerRegs>();
    if (tid == 0) {
      const InputRef& ir = sp.inputs[0];
      bool ok = true;
      uint32_t last_sem = 0xffffffffu;
      // Waits for the QKV tiles covering rows [r0, r1] x columns [c0, c0 + 127]; the first failure
      // (bounded wait) is recorded and the loads go on regardless, so no consumer ever hangs.
      const bool waits = !qkv_done && sp.has(kSync) && ir.sems != nullptr && ir.policy.enabled();
      auto wait_tiles = [&](uint32_t r0, uint32_t r1, uint32_t c0) {
        if (!waits || !ok) return;
        for (uint32_t ty = ir.shape.row_tile(r0); ty <= ir.shape.row_tile(r1); ++ty)
          for (uint32_t tx = ir.shape.col_tile(c0); tx <= ir.shape.col_tile(c0 + D - 1); ++tx) {
            const Tile pt{tx, ty, 0};
            const uint32_t s = ir.policy.sem(pt, ir.grid);
            if (s == last_sem) continue;
            if (!wait_elected(sp, bs.epoch, 0, pt, tile, &bs.wait_ns)) {
              ok = false;
              bs.ok = 0;
              return;
            }
            last_sem = s;
          }
        ptx::fence_proxy_async_global();  // the acquired rows, then TMA reads of them
      };
      const uint64_t keep = tma::policy_evict_last();  // K and V are read by every query block of the head
      wait_tiles(uint32_t(row0), uint32_t(row0 + kBlockM - 1), uint32_t(h * D));
      tma::arrive_expect_tx(&q_full, kTileBytes);
      for (int pnl = 0; pnl < 2; ++pnl)
        tma::load_2d(smem + kSmemQ + pnl * kPanelBytes, &P.qkv_map, h * D + pnl * 64, row0, &q_full, keep);
      stamp(2);
      uint32_t ready_until = 0;  // QKV rows known complete (K and V of a row tile are waited on once)
      for (int j = 0; j < n_blocks; ++j) {
        const int s = j % kStages;
        const uint32_t free_phase = ((j / kStages) & 1) ^ 1;  // the consumers' release of block j - kStages
        if (j >= kStages) tma::wait(&k_empty[s], free_phase);
        const uint32_t r0 = uint32_t(b * p.S_new + (j_begin + j) * kBlockN), r1 = r0 + kBlockN - 1;
        if (waits && r1 >= ready_until) {
          wait_tiles(max(r0, ready_until), r1, HD + h * D);
          wait_tiles(max(r0, ready_until), r1, 2 * HD + h * D);
          ready_until = (ir.shape.row_tile(r1) + 1) * ir.shape.rows;
        }
        tma::arrive_expect_tx(&k_full[s], kTileBytes);
        for (int pnl = 0; pnl < 2; ++pnl)
          tma::load_2d(smem + kSmemK + s * kTileBytes + pnl * kPanelBytes, &P.qkv_map, HD + h * D + pnl * 64, int(r0),
                       &k_full[s], keep);
        if (j >= kStages) tma::wait(&v_empty[s], free_phase);
        tma::arrive_expect_tx(&v_full[s], kTileBytes);
        for (int pnl = 0; pnl < 2; ++pnl)
          tma::load_2d(smem + kSmemV + s * kTileBytes + pnl * kPanelBytes, &P.qkv_map, 2 * HD + h * D + pnl * 64,
                       int(r0), &v_full[s], keep);
      }
    }
    if (P.late_trigger) ptx::pdl_launch_dependents();  // (the producer warpgroup's part of -lt: its loads are issued)
    if (pair) {  // (the consumers' two cluster barriers: every thread of the cluster arrives at each)
      cluster::sync();
      cluster::sync();
    }
  } else {
    // ---- consumers: warpgroup c owns query rows c * 64 .. c * 64 + 63 of the block ----
    wg::regs_inc<kConsumerRegs>();
    const int c = wgi - 1, t = tid % 128, warp = t / 32, lane = t % 32;
    const int g = lane / 4, c2 = (lane % 4) * 2;
    const int qpos0 = q0 + c * 64 + warp * 16 + g;  // this thread's first row (second: + 8)
    const uint32_t bh = uint32_t(b * p.NH + h);
    const uint32_t q_base = smem + kSmemQ + uint32_t(c) * 64 * 128;

    float o[64];
#pragma unroll
    for (int i = 0; i < 64; ++i) o[i] = 0.f;
    float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.f, 0.f};
    float sc[64];    // S of the current block, then its probabilities (fp32)
    uint32_t pa[32];  // the previous block's probabilities, 16-bit: the A operand of O += P.V

    auto issue_scores = [&](int j) {  // S = Q.K_j^T, asynchronous
      const uint32_t k_base = smem + kSmemK + (j % kStages) * kTileBytes;
#pragma unroll
      for (int kk = 0; kk < 8; ++kk) {
        const uint32_t off = (kk / 4) * kPanelBytes + (kk % 4) * 32;
        Mma::ss(sc, wg::desc_k_major(q_base + off), wg::desc_k_major(k_base + off), kk > 0);
      }
      wg::commit();
    };
    auto issue_values = [&](int j) {  // O += P_j.V_j, asynchronous
      const uint32_t v_base = smem + kSmemV + (j % kStages) * kTileBytes;
#pragma unroll
      for (int kk = 0; kk < 8; ++kk) {
        const uint32_t a[4] = {pa[4 * kk], pa[4 * kk + 1], pa[4 * kk + 2], pa[4 * kk + 3]};
        MmaT::rs(o, a, wg::desc_mn_major(v_base + kk * 16 * 128, kPanelBytes), true);
      }
      wg::commit();
    };
    // Mask, online softmax (log2 units) and dropout of block j in sc; returns O's rescale per row
    // (applied by the caller once the previous block's P.V has finished with O).
    auto softmax = [&](int j, float (&alpha)[2]) {
      const int kb = (j_begin + j) * kBlockN;
      if (p.causal && j_begin + j == n_total - 1) {  // causal: only the diagonal block has keys after some rows
#pragma unroll
        for (int i = 0; i < 64; ++i) {
          const int kp = kb + (i / 4) * 8 + c2 + (i & 1), qp = qpos0 + ((i >> 1) & 1) * 8;
          if (kp > qp) sc[i] = -INFINITY;
        }
      }
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        float mx = m[r];
#pragma unroll
        for (int n = 0; n < 16; ++n) mx = fmaxf(mx, fmaxf(sc[4 * n + 2 * r], sc[4 * n + 2 * r + 1]) * p.scale_log2);
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
        const float m_use = mx == -INFINITY ? 0.f : mx;  // a row with no visible key yet
        alpha[r] = mma::fast_exp2(m[r] - m_use);
        m[r] = mx;
        float sum = 0.f;
#pragma unroll
        for (int n = 0; n < 16; ++n)
#pragma unroll
          for (int e = 2 * r; e < 2 * r + 2; ++e) {
            const float pv = mma::fast_exp2(fmaf(sc[4 * n + e], p.scale_log2, -m_use));
            sum += pv;  // the normalizer is the softmax's: dropout applies after it
            sc[4 * n + e] = pv;
          }
        l[r] = l[r] * alpha[r] + sum;
      }
      if (kDropout && p.drop_threshold != 0) {
#pragma unroll
        for (int i = 0; i < 64; ++i) {
          const int kp = kb + (i / 4) * 8 + c2 + (i & 1), qp = qpos0 + ((i >> 1) & 1) * 8;
          sc[i] = dropout_bits(p.seed, bh, uint32_t(qp), uint32_t(kp)) >= p.drop_threshold ? sc[i] * p.keep_scale : 0.f;
        }
      }
    };
    auto to_operand = [&] {
#pragma unroll
      for (int i = 0; i < 32; ++i) pa[i] = mma::Mma<T>::pack(sc[2 * i], sc[2 * i + 1]);
    };

    // Block j's S = Q.K^T runs on the tensor cores under block j-1's P.V, and block j's softmax under
    // P.V's tail (FlashAttention-3's intra-warpgroup overlap); block 0, with no P.V before it, goes
    // through the same code (one copy of the softmax: at 1-4 key blocks per CTA every instruction is
    // fetched cold, so a second copy costs its fetch). K and V stages are released separately: K_j as
    // soon as S_j is done, V_j once P_j.V_j is.
    tma::wait(&q_full, 0);
    if (tid == 128) stamp(3);
    // Traces (general form only): the SM clock from Q's arrival to the last P.V, and when that was.
    const bool traced = sp.trace != nullptr && tid == 128;
    const uint64_t trace_t0 = traced ? ptx::globaltimer_ns() : 0, trace_c0 = traced ? ptx::clock_cycles() : 0;
    float alpha[2];
    if (n_blocks > 0) {  // (split 1 of a one-block tile has none: its partial is empty)
    for (int j = 0; j < n_blocks; ++j) {
      tma::wait(&k_full[j % kStages], (j / kStages) & 1);
      if (j == 0 && tid == 128) stamp(4);
      wg::fence_regs(o);
      wg::fence();
      issue_scores(j);
      if (j > 0) {
        tma::wait(&v_full[(j - 1) % kStages], ((j - 1) / kStages) & 1);
        issue_values(j - 1);
        wg::wait<1>();  // S_j done; P_{j-1}.V_{j-1} may still run
      } else {
        wg::wait<0>();
        if (tid == 128) stamp(5);
      }
      wg::fence_regs(sc);
      tma::arrive(&k_empty[j % kStages]);
      softmax(j, alpha);
      if (j > 0) {
        wg::wait<0>();
        wg::fence_regs(o);
        tma::arrive(&v_empty[(j - 1) % kStages]);
#pragma unroll
        for (int i = 0; i < 64; ++i) o[i] *= alpha[(i >> 1) & 1];
      }
      to_operand();
    }
    tma::wait(&v_full[(n_blocks - 1) % kStages], ((n_blocks - 1) / kStages) & 1);
    wg::fence_regs(o);
    wg::fence();
    issue_values(n_blocks - 1);
    wg::wait<0>();
    wg::fence_regs(o);
    tma::arrive(&v_empty[(n_blocks - 1) % kStages]);
    }
    if (tid == 128) stamp(6);
    if (P.late_trigger) ptx::pdl_launch_dependents();
    if (traced) {  // (post() writes the record's other fields from thread 0)
      TileTrace& r = sp.trace[linear(tile, sp.grid)];
      r.mainloop_end_ns = ptx::globaltimer_ns();
      r.mainloop_mhz = clock_mhz(ptx::clock_cycles() - trace_c0, r.mainloop_end_ns - trace_t0);
    }

    bool stores = split == 0;  // this CTA writes O
    if (split_tile >= 0) {
      // wg-s: the first of the tile's two CTAs to get here leaves its partial (O, and per row the max and this
      // thread's part of the sum; 17 16-byte stores per thread) in global memory and goes; the second waits for it
      // (its partner is past its last MMA and only storing: a short wait that cannot deadlock) and merges. The
      // merge is symmetric -- each product rounded, then one commutative add -- so the bits do not depend on which
      // CTA came first.
      uint64_t* state = P.split_state + split_tile;
      // [warpgroup][16-byte word k][thread]: a warp's store or load of word k is 512 contiguous bytes.
      float4* part = reinterpret_cast<float4*>(P.split_part) + (size_t(split_tile) * 2 + c) * (kSplitVals / 4) * 128 + t;
      if (tid == 128) s_merges = atomicAdd(reinterpret_cast<unsigned long long*>(state), 1ull) != 0 ? 1u : 0u;
      ptx::named_barrier_sync(3, 256);
      stores = s_merges != 0;
      if (!stores) {
#pragma unroll
        for (int k = 0; k < 16; ++k) __stcg(part + k * 128, make_float4(o[4 * k], o[4 * k + 1], o[4 * k + 2], o[4 * k + 3]));
        __stcg(part + 16 * 128, make_float4(m[0], m[1], l[0], l[1]));
        ptx::named_barrier_sync(3, 256);
        if (tid == 128) {
          __threadfence();  // every consumer thread's partial (ordered before by the barrier), then the release
          atomicAdd(reinterpret_cast<unsigned long long*>(state), 2ull);
        }
      } else {
        if (tid == 128) {
          uint64_t seen = 0, waited = 0;  // 4: both arrivals and the partner's partial
          if (!braid::detail::spin_until(state, 4, sp.timeout_ns, sp.err, seen, waited))
            braid::detail::report(sp.err, kErrSplitPeerTimeout, sp.stage_id, 0, 0, uint32_t(split_tile), tile, tile, 4,
                                  seen, waited);
          *state = 0;  // re-armed for the next launch: no other access this launch
        }
        ptx::named_barrier_sync(3, 256);
        const float4 ml = __ldcg(part + 16 * 128);
        const float mo[2] = {ml.x, ml.y}, lo[2] = {ml.z, ml.w};
        float a_me[2], a_ot[2];
#pragma unroll
        for (int r = 0; r < 2; ++r) {
          const float mt = fmaxf(m[r], mo[r]), m_use = mt == -INFINITY ? 0.f : mt;
          a_me[r] = mma::fast_exp2(m[r] - m_use);
          a_ot[r] = mma::fast_exp2(mo[r] - m_use);
          l[r] = __fadd_rn(__fmul_rn(l[r], a_me[r]), __fmul_rn(lo[r], a_ot[r]));
        }
#pragma unroll
        for (int k = 0; k < 16; ++k) {
          const float4 v = __ldcg(part + k * 128);
          const float vo[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const int r = (e >> 1) & 1;
            o[4 * k + e] = __fadd_rn(__fmul_rn(o[4 * k + e], a_me[r]), __fmul_rn(vo[e], a_ot[r]));
          }
        }
      }
    }
    if (pair) {
      // Split 1 leaves its partial (O, and per row the max and this thread's part of the sum) in its own
      // K/V ring -- free once both warpgroups are past their last MMAs -- as [warpgroup][value][thread];
      // rank 0 reads it through distributed shared memory and merges. The second cluster barrier keeps
      // split 1 (and its shared memory) alive until then.
      float* xch = reinterpret_cast<float*>(smem_raw + (smem + kSmemK - mma::smem_u32(smem_raw)));
      ptx::named_barrier_sync(3, 256);  // both consumer warpgroups are done with the rings
      if (split == 1) {
#pragma unroll
        for (int i = 0; i < 64; ++i) xch[(c * kSplitVals + i) * 128 + t] = o[i];
        xch[(c * kSplitVals + 64) * 128 + t] = m[0];
        xch[(c * kSplitVals + 65) * 128 + t] = m[1];
        xch[(c * kSplitVals + 66) * 128 + t] = l[0];
        xch[(c * kSplitVals + 67) * 128 + t] = l[1];
      }
      cluster::sync();
      if (split == 0) {
        const uint32_t base = cluster::map(cluster::smem_addr(xch), 1u);
        auto peer = [&](int v) { return cluster::ld_f32(base + uint32_t(((c * kSplitVals + v) * 128 + t) * 4)); };
        float a0[2], a1[2];
#pragma unroll
        for (int r = 0; r < 2; ++r) {
          const float m1 = peer(64 + r), l1 = peer(66 + r), mt = fmaxf(m[r], m1);
          const float m_use = mt == -INFINITY ? 0.f : mt;
          a0[r] = mma::fast_exp2(m[r] - m_use);
          a1[r] = mma::fast_exp2(m1 - m_use);
          l[r] = l[r] * a0[r] + l1 * a1[r];
          m[r] = mt;
        }
#pragma unroll
        for (int i = 0; i < 64; ++i) o[i] = o[i] * a0[(i >> 1) & 1] + peer(i) * a1[(i >> 1) & 1];
      }
    }

    // Normalize, stage O in this warpgroup's Q rows (its last wgmma has read them), store coalesced.
    if (stores) {
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      l[r] += __shfl_xor_sync(0xffffffffu, l[r], 1);
      l[r] += __shfl_xor_sync(0xffffffffu, l[r], 2);
    }
    const float inv[2] = {l[0] > 0.f ? 1.f / l[0] : 0.f, l[1] > 0.f ? 1.f / l[1] : 0.f};
    unsigned char* stage = smem_raw + (q_base - mma::smem_u32(smem_raw));
    // By stmatrix (common/stmatrix_sm90.cuh, SwizzledRowsX4: column groups n and n + 1 of the warp's 16 rows per
    // instruction, one address per lane): 8 instructions where 32 two-value stores each computed their own (the
    // epilogue runs once per CTA, its code fetched cold).
    {
      const stsm::SwizzledRowsX4 sw(lane);
      const uint32_t at = q_base + (uint32_t(warp * 16) + sw.row) * 128u;
#pragma unroll
      for (int n = 0; n < 16; n += 2) {
        const uint32_t off = uint32_t((n / 8) * kPanelBytes) + sw.chunk(n);
        auto pk = [&](int i) { return mma::Mma<T>::pack(o[i] * inv[(i >> 1) & 1], o[i + 1] * inv[(i >> 1) & 1]); };
        stsm::x4(at + off, pk(4 * n), pk(4 * n + 2), pk(4 * n + 4), pk(4 * n + 6));
      }
    }
    ptx::named_barrier_sync(1 + c, 128);
    T* out = static_cast<T*>(p.o);
#pragma unroll
    for (int it = 0; it < 8; ++it) {
      const int idx = it * 128 + t, r = idx / 16, ch = idx % 16;
      const uint32_t off = (ch / 8) * kPanelBytes + r * 128 + (((ch % 8) ^ (r & 7)) << 4);
      *reinterpret_cast<uint4*>(out + uint64_t(row0 + c * 64 + r) * p.o_ld + h * D + ch * 8) =
          *reinterpret_cast<const uint4*>(stage + off);
    }
    }
    // The KV-cache update: the block's new tokens' K and V rows (every one waited on by the producer
    // of the CTA that holds the diagonal block, and loaded through the barriers above).
    if (tid == 128) stamp(7);
    if (p.write_cache && holds_diagonal) detail::copy_new_kv_to_cache<T>(p, b, h, q0 + c * 64, 64, t, 128);
    if (pair) cluster::sync();
  }

  bool posts = split == 0;
  if (split_tile >= 0) {  // (uniform in the CTA) the merging CTA posts: s_merges to the producer's thread 0
    __syncthreads();
    posts = s_merges != 0;
  }
  if (posts) post(sp, bs, tile);
  end_block(sp, bs);
#endif
}

}  // namespace braid::attention
