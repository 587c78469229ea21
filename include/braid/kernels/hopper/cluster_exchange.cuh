// Split-K partials exchanged inside a thread-block cluster (GemmConfig::dsmem_reduce): the two
// segments of a tile run as the two CTAs of a cluster, and each writes the partial sums of the
// other's share of columns straight into the other's shared memory (st.async into the staging
// buffer, counted on the receiver's mbarrier), instead of storing them to an L2 workspace and
// reading the peer's back.
//
// Why: a split 128x128 tile's reduction through L2 costs ~5.7 us of its epilogue under load even
// when every read is issued at once (bench/results/conv-epilogue-ab-h100-20261123-ab734e6.txt): all
// split CTAs write and read ~64 KB each at the same moment, an aggregate L2 burst. Through
// distributed shared memory each CTA moves 32 KB over the SM-to-SM network and none through L2.
//
// Protocol, per split tile (every consumer thread; `phase` flips once per tile):
//   1. (caller) a consumer barrier: this CTA's staging buffer is free (the previous tile's copy-out
//      read it; store_tile_staged's own leading barrier protects the next use).
//   2. thread 0: full.arrive.expect_tx(bytes this CTA will receive), then arrives (release.cluster)
//      on the peer's `ready`: "write into my buffer".
//   3. every thread waits for its own `ready` (the peer's buffer is free), st.asyncs the quads of
//      the peer's share into the peer's buffer (completing bytes on the peer's `full`), and waits for
//      its own `full` (every byte from the peer has landed).
//   4. own share: accum += received -- with two segments p0 + p1 == p1 + p0 bit for bit (IEEE
//      addition commutes), the same sums as the workspace reductions in segment order.
// No CTA leaves while the other can still touch its shared memory: each CTA's last remote access to
// its peer (an arrival on `ready`, the st.asyncs into the buffer) is one the peer waits for before
// going on; the kernel still ends with a cluster barrier.
// Bounded: with a stage timeout, a wait that runs out reports kErrSplitPeerTimeout (the tile, its
// segment) and goes on, so the consumers never hang (the host throws the recorded error).
#pragma once
#include <cstdint>

#include "braid/core/stage.cuh"
#include "braid/kernels/common/cluster_sm90.cuh"
#include "braid/kernels/common/tma_sm90.cuh"
#include "braid/kernels/hopper/epilogue.cuh"
#include "braid/kernels/hopper/tile_scheduler.cuh"

namespace braid::hopper {

// The two mbarriers of the exchange (in the kernel's SharedStorage).
struct ClusterExchangeBarriers {
  uint64_t full;   // arrival count 1 (thread 0's expect_tx) + the bytes the peer writes
  uint64_t ready;  // arrival count 1: the peer's buffer is free for this CTA's quads
};

namespace cluster {

using braid::cluster::ld_f32x4;
using braid::cluster::map;
using braid::cluster::rank;
using braid::cluster::size;
using braid::cluster::smem_addr;
using braid::cluster::sync;
// (mbarrier init, its cluster-scope fence and arrive.expect_tx: tma::init / fence_init / arrive_expect_tx.)
__device__ __forceinline__ void arrive_remote(uint32_t cluster_bar) {
  asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" ::"r"(cluster_bar) : "memory");
}
__device__ __forceinline__ bool try_wait(uint64_t* bar, uint32_t parity) {
  uint32_t done;
  asm volatile(
      "{\n\t.reg .pred p;\n\t"
      "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2;\n\t"
      "selp.u32 %0, 1, 0, p;\n\t}"
      : "=r"(done)
      : "r"(smem_addr(bar)), "r"(parity)
      : "memory");
  return done != 0;
}
// 16 bytes into another CTA's shared memory, completing 16 bytes on its mbarrier `cluster_bar`.
__device__ __forceinline__ void st_async(uint32_t cluster_dst, const float4& v, uint32_t cluster_bar) {
  asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.f32 [%0], {%1, %2, %3, %4}, [%5];" ::"r"(
                   cluster_dst),
               "f"(v.x), "f"(v.y), "f"(v.z), "f"(v.w), "r"(cluster_bar)
               : "memory");
}

// Waits for phase `parity` of `bar`; bounded by the stage's timeout (reports the tile and segment).
__device__ __noinline__ inline bool wait_phase(uint64_t* bar, uint32_t parity, const StageParams& sp,
                                               const ScheduledUnit& w) {
  if (try_wait(bar, parity)) return true;
  const uint64_t t0 = ptx::globaltimer_ns();
  for (uint32_t iter = 1;; ++iter) {
    if (try_wait(bar, parity)) return true;
    if ((iter & 63) == 0) {
      const uint64_t waited = ptx::globaltimer_ns() - t0;
      if (braid::detail::aborted(sp.err) || (sp.timeout_ns && waited > sp.timeout_ns)) {
        if (!braid::detail::aborted(sp.err) || sp.timeout_ns)
          braid::detail::report(sp.err, kErrSplitPeerTimeout, sp.stage_id, w.seg, w.nseg, w.pos, w.tile, w.tile,
                                parity, 0, waited);
        return false;
      }
    }
  }
}

}  // namespace cluster

// Quads (AccumShape: quad q = 8-column group q % kGroups of 64-row block q / kGroups) of the
// accumulator groups of `share`, as a mask.
template <class Accum>
__device__ __forceinline__ uint32_t share_quads(const detail::ColumnShare& share) {
  using Shape = detail::AccumShape<Accum>;
  static_assert(Shape::kValues / 4 <= 32, "a thread's quads fit a 32-bit mask");
  const uint32_t groups = Shape::kGroups >= 32 ? share.acc_groups : share.acc_groups & ((1u << Shape::kGroups) - 1u);
  uint32_t m = 0;
#pragma unroll
  for (int b = 0; b < Shape::kBlocks; ++b) m |= groups << (b * Shape::kGroups);
  return m;
}

// Steps 2-4 of the protocol above for a tile of two segments; this CTA is segment `mine` (= its rank
// in the cluster). `buf`: the staging buffer, `slots` float4s per consumer thread (slot c of thread t
// at c * threads + t), at least the quads of a share. accum's own-share quads <- the sums.
template <class Accum>
__device__ __forceinline__ void exchange_partials_cluster(Accum& accum, int mine, int t, int threads, int tile_cols,
                                                          int tile_cols_out, float4* buf,
                                                          ClusterExchangeBarriers& xb, uint32_t phase,
                                                          const StageParams& sp, const ScheduledUnit& w) {
  constexpr int kQuads = detail::AccumShape<Accum>::kValues / 4;
  const int peer = mine ^ 1;
  const uint32_t own = share_quads<Accum>(detail::ColumnShare::of_segment(mine, 2, tile_cols, tile_cols_out));
  const uint32_t theirs = share_quads<Accum>(detail::ColumnShare::of_segment(peer, 2, tile_cols, tile_cols_out));
  if (t == 0) {
    tma::arrive_expect_tx(&xb.full, uint32_t(__popc(own)) * 16u * uint32_t(threads));
    cluster::arrive_remote(cluster::map(cluster::smem_addr(&xb.ready), uint32_t(peer)));
  }
  bool ok = cluster::wait_phase(&xb.ready, phase, sp, w);
  const uint32_t dst = cluster::map(cluster::smem_addr(buf + t), uint32_t(peer));
  const uint32_t dst_bar = cluster::map(cluster::smem_addr(&xb.full), uint32_t(peer));
  if (ok) {
#pragma unroll
    for (int q = 0; q < kQuads; ++q)
      if ((theirs >> q) & 1u)
        cluster::st_async(dst + uint32_t(__popc(theirs & ((1u << q) - 1u))) * uint32_t(threads) * 16u,
                          make_float4(accum(4 * q), accum(4 * q + 1), accum(4 * q + 2), accum(4 * q + 3)), dst_bar);
    ok = cluster::wait_phase(&xb.full, phase, sp, w);
  }
  const float4* mine_buf = buf + t;
#pragma unroll
  for (int q = 0; q < kQuads; ++q)
    if ((own >> q) & 1u) {
      const float4 r = mine_buf[__popc(own & ((1u << q) - 1u)) * threads];
      accum(4 * q) += r.x;
      accum(4 * q + 1) += r.y;
      accum(4 * q + 2) += r.z;
      accum(4 * q + 3) += r.w;
    }
}

// The S-way cluster reduction (GemmConfig::dsmem_reduce with split-K 2-8 where the pair exchange
// above does not apply): a tile's S segments are the S CTAs of a cluster, each running that one unit,
// so that after its mainloop a CTA's pipeline buffers are idle (every stage consumed, no later unit
// for the producer to load). Each CTA
//   1. writes its partials of the other segments' shares into its own buffers ([quad][thread] float4,
//      the workspace's layout), local shared-memory stores;
//   2. (consumer barrier) thread 0 arrives, release at cluster scope, on every peer's `done` (S - 1
//      arrivals each): "my partials are in my buffers";
//   3. waits for its own `done` (acquire, cluster scope): every peer's partials are readable;
//   4. sums its own share (ColumnShare::of_segment, as reduce-scatter) in segment order 0 .. S-1,
//      reading peer s's quads over distributed shared memory and its own from registers -- the
//      reduce-scatter's sums in its order, so bit-identical outputs.
// Nothing goes through L2. Measured on the deep convolutions (bench/results/conv-64x32-dsm-h100-20261124/):
// correct, and no faster than the L2 reductions -- their 2.3-4.5 us per split tile is mostly the wait for
// the tile's slowest segment, which this waits for too -- while clustered CTAs run their k-steps ~13%
// slower; so it is a selectable option (-sk<N>-dsm), not a default candidate. A CTA must not
// leave while peers may read its buffers: the kernel ends with a cluster barrier. `done` is used once
// (phase 0). Bounded: a wait that runs out reports kErrSplitPeerTimeout and goes on (garbage, never a hang).
template <class Accum>
__device__ __forceinline__ void reduce_partials_cluster(Accum& accum, int mine, int segs, int t, int threads,
                                                        int tile_cols, int tile_cols_out, float4* buf, uint64_t* done,
                                                        uint32_t consumer_barrier, const StageParams& sp,
                                                        const ScheduledUnit& w) {
  constexpr int kQuads = detail::AccumShape<Accum>::kValues / 4;
  constexpr int kMaxSegs = 8;  // clusters of at most 8 CTAs (the portable size; PersistentOp::check_schedule)
  const uint32_t own = share_quads<Accum>(detail::ColumnShare::of_segment(mine, segs, tile_cols, tile_cols_out));
#pragma unroll
  for (int q = 0; q < kQuads; ++q)
    if (!((own >> q) & 1u)) buf[q * threads + t] = make_float4(accum(4 * q), accum(4 * q + 1), accum(4 * q + 2), accum(4 * q + 3));
  ptx::named_barrier_sync(consumer_barrier, uint32_t(threads));
  if (t == 0) {
    asm volatile("fence.acq_rel.cluster;" ::: "memory");  // every consumer's stores (ordered by the barrier)
    for (int r = 0; r < segs; ++r)
      if (r != mine) cluster::arrive_remote(cluster::map(cluster::smem_addr(done), uint32_t(r)));
  }
  cluster::wait_phase(done, 0u, sp, w);  // (on a timeout: reported, and the sums are garbage)
  const uint32_t src = cluster::smem_addr(buf + t);
  // In batches of four segments (every read of a batch issued before its adds; eight float4s live at
  // once spilled the 128x128 kernel's registers), the running sum in segment order.
  constexpr int kBatch = 4;
#pragma unroll
  for (int q = 0; q < kQuads; ++q)
    if ((own >> q) & 1u) {
      const float4 mine_q = make_float4(accum(4 * q), accum(4 * q + 1), accum(4 * q + 2), accum(4 * q + 3));
      const uint32_t src_q = src + uint32_t(q * threads) * 16u;
      float4 sum = mine_q;
#pragma unroll
      for (int s0 = 0; s0 < kMaxSegs; s0 += kBatch) {
        if (s0 >= segs) break;
        float4 v[kBatch];
#pragma unroll
        for (int j = 0; j < kBatch; ++j) {
          const int s = s0 + j;
          if (s < segs) v[j] = s == mine ? mine_q : cluster::ld_f32x4(cluster::map(src_q, uint32_t(s)));
        }
#pragma unroll
        for (int j = 0; j < kBatch; ++j) {
          const int s = s0 + j;
          if (s == 0) sum = v[j];
          else if (s < segs) detail::add_quad(sum, v[j]);
        }
      }
      accum(4 * q) = sum.x;
      accum(4 * q + 1) = sum.y;
      accum(4 * q + 2) = sum.z;
      accum(4 * q + 3) = sum.w;
    }
}

}  // namespace braid::hopper
