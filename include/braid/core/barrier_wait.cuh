// Bounded waits on a CTA's own mbarriers. In braid's Hopper kernel: the consumers' wait for a unit's
// first pipeline stage, the unit ring (dynamic dispatch), the post hand-off and the multicast producer's exit -- not the
// producer's per-k-tile acquire, whose few instructions bound a convolution's mainloop (bounding it
// made conv pairs 1-16% slower: bench/results/bounded-waits-ab-h100-20261124/). Such a wait blocks only
// on the CTA's own warps and TMA loads, which wait at most one bounded semaphore wait
// (StageParams::timeout_ns) each: a wait that lasts much longer means a bug (a stage loaded twice or
// never, a lost arrival), and without a bound the chain hangs with nothing said.
//
// After `barrier_stuck_after_ns(sp)` the wait records where it is -- ErrorRecord kErrBarrierStuck:
// stage, CTA, which barrier, slot, phase parity, the unit's tile -- once, and keeps waiting. It does
// not give up: skipping a pipeline barrier would let TMA writes land in shared memory the CTA no
// longer owns (another kernel's CTA may have it). The host's bounded check (Chain::check,
// Chain::diagnose) reads the record while the kernel is still stuck, and says so.
// Unbounded when sp.timeout_ns == 0, like the semaphore waits. (cluster_exchange.cuh's wait_phase is
// the other kind: a wait on a peer CTA that gives up after the semaphore bound, like a semaphore wait.)
#pragma once
#include <cstdint>

#include "braid/core/stage.cuh"
#include "braid/core/sync_ptx.cuh"

namespace braid {

// Which barrier a kErrBarrierStuck record is about (ErrorRecord::input).
enum BarrierSite : uint32_t {
  kSitePipelineFull = 1,   // consumer: a pipeline stage whose loads have not arrived
  kSiteRingEmpty = 2,      // producer: a unit-ring slot the consumers have not read
  kSiteRingFull = 3,       // consumer: a unit-ring slot the producer has not published
  kSiteClusterTail = 4,    // producer: its cluster peer has not released the stages it multicast into
  kSitePostFull = 5,       // poster warp: the consumers have not handed over their next finished tile
};

inline const char* barrier_site_name(uint32_t site) {
  switch (site) {
    case kSitePipelineFull: return "pipeline full barrier (consumers wait for the stage's TMA loads)";
    case kSiteRingEmpty: return "unit-ring empty barrier (producer waits for the consumers to read the slot)";
    case kSiteRingFull: return "unit-ring full barrier (consumers wait for the producer to publish the slot)";
    case kSiteClusterTail: return "pipeline empty barrier at exit (producer waits for its cluster peer)";
    case kSitePostFull: return "post hand-off full barrier (poster warp waits for the consumers' finished tile)";
    default: return "unknown barrier";
  }
}

// Twice the semaphore bound: a pipeline wait may legitimately include one whole semaphore wait.
__host__ __device__ __forceinline__ uint64_t barrier_stuck_after_ns(uint64_t timeout_ns) { return 2 * timeout_ns; }

namespace detail {

// The slow path: inlined, a 32-bit clock in ~microseconds, the bound read from the kernel's
// parameters when needed. (An out-of-line call saved registers around it: bigger stack frames in
// every kernel. Either way the 192x192 split-K kernel, already spilling, spills more -- ptxas 788 ->
// ~1100 bytes of spill stores -- and runs 1-2% slower; the other instantiations are unchanged.)
template <class TryOnce>
__device__ __forceinline__ void barrier_wait_slow(TryOnce try_once, const StageParams& sp, uint32_t site,
                                                  uint32_t slot, uint32_t parity, Tile tile) {
  const uint32_t t0 = uint32_t(ptx::globaltimer_ns() >> 10);
  for (uint32_t iter = 1;; ++iter) {
    if (try_once()) return;  // (mbarrier.try_wait itself suspends the thread for a while)
    if ((iter & 63) == 0 && sp.timeout_ns != 0) {
      const uint32_t waited_us = uint32_t(ptx::globaltimer_ns() >> 10) - t0;
      if (uint64_t(waited_us) << 10 > barrier_stuck_after_ns(sp.timeout_ns)) {
        report(sp.err, kErrBarrierStuck, sp.stage_id, site, blockIdx.x, slot, tile, tile, parity, 0,
               uint64_t(waited_us) << 10);
        while (!try_once()) {
        }
        return;
      }
    }
  }
}

}  // namespace detail

// Waits until try_once() returns true (try_once: one mbarrier.try_wait, e.g. a pipeline's
// producer_try_acquire); bounded as above. One thread or many; no barrier.
template <class TryOnce>
__device__ __forceinline__ void bounded_barrier_wait(TryOnce try_once, const StageParams& sp, uint32_t site,
                                                     uint32_t slot, uint32_t parity, Tile tile) {
  if (try_once()) return;
  detail::barrier_wait_slow(try_once, sp, site, slot, parity, tile);
}

}  // namespace braid
