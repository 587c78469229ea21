// The stage: what a kernel needs to take part in a tile-synchronized chain.
//
//   __global__ void my_kernel(..., braid::StageParams sp) {
//     __shared__ braid::BlockSync bs;
//     braid::begin_block(sp, bs);                      // epoch, PDL trigger, "started" flag
//     braid::Tile t;
//     while (braid::next_tile(sp, bs, t)) {            // tile order (static or atomic ticket)
//       ... if (!braid::wait(sp, bs, input, producer_tile)) return;   // before loading produced data
//       ... compute, store the tile ...
//       braid::post(sp, bs, t);                        // after the tile's stores
//     }
//     braid::end_block(sp, bs);
//   }
//
// Semaphores count posts cumulatively over runs and are never reset: in run e (the epoch, 1-based),
// a semaphore is complete when it reaches value(tile) * e. They are 64-bit, so they never wrap.
// Each stage keeps its run count in device memory (StageState::run), advanced by the stage's last
// block, so the whole mechanism is safe under CUDA graph replay (nothing depends on host-side
// arguments that a replay would freeze). The stages of a chain are always launched together
// (braid::Chain), so producer and consumer run counts move in lockstep; a consumer checks this.
//
// The block-level calls (all threads, uniform control flow) use __syncthreads. Warp-specialized
// kernels use the *_elected variants from one lane and their own named barriers.
#pragma once
#include <cstdint>

#include "braid/core/fast_div.hpp"
#include "braid/core/sync_ptx.cuh"
#include "braid/core/types.hpp"
#include "braid/order/tile_order.hpp"
#include "braid/policy/policy.hpp"

namespace braid {

constexpr int kMaxInputs = 4;

// Per-stage bookkeeping. Each field on its own 128-byte line: `blocks_done` and `tile_ticket` are
// written by every block, `started` and `run` are polled.
struct StageState {
  alignas(128) uint64_t run;          // completed synchronized launches of this stage
  alignas(128) uint64_t started;      // epoch of the latest synchronized launch whose block 0 started
  alignas(128) uint32_t blocks_done;  // blocks finished in the current launch
  alignas(128) uint32_t tile_ticket;  // next ticket of the dynamic tile order
};

// kErrSplitPeerTimeout (reduce-scatter split-K): ErrorRecord::input = the waiting segment,
// input_stage = the tile's segments, sem = the tile's position; expected/seen: its arrival counter.
enum ErrorCode : uint32_t {
  kErrNone = 0,
  kErrTimeout = 1,
  kErrEpochMismatch = 2,
  kErrWaitKernelTimeout = 3,
  kErrSplitPeerTimeout = 4,
  kErrBarrierStuck = 5  // barrier_wait.cuh: input = BarrierSite, input_stage = CTA, sem = slot, expected = parity
};

// Written once (first failure wins) by a bounded wait that gave up; read by the host.
struct ErrorRecord {
  uint32_t claimed;  // 0 until the first failure claims the record
  uint32_t code;
  uint32_t stage, input, input_stage, sem;
  Tile tile, producer_tile;
  uint64_t expected, seen, waited_ns;
  alignas(128) uint32_t abort;  // set after a failure: every other waiter bails out
};

// One record per tile when tracing is on (StageParams::trace): where and when the tile ran.
struct TileTrace {
  uint64_t start_ns;  // %globaltimer when the block took the tile
  uint64_t end_ns;    // when it posted the tile
  uint64_t wait_ns;   // time spent spinning in waits for this tile
  uint32_t smid;
  uint32_t block;     // linear block index
  uint64_t mainloop_end_ns;  // when its last MMA finished, before the epilogue (0: kernel does not record it)
  // The SM's clock over the tile's mainloop (%clock64 cycles / %globaltimer ns, MHz; 0: not recorded):
  // whether a tile's mainloop is slow per k-step or its SM runs slower (power cap) tells two causes apart.
  uint32_t mainloop_mhz;
  uint32_t pad_;
};

// MHz of an SM over an interval measured in %clock64 cycles and %globaltimer ns (0 when not measurable).
BRAID_HD uint32_t clock_mhz(uint64_t cycles, uint64_t ns) {
  return ns == 0 ? 0u : uint32_t(cycles * 1000ull / ns);
}

struct TileShape {
  uint32_t rows = 1, cols = 1;  // elements per tile (GEMM: tile_m x tile_n)
};

// A producer's tile shape with its divisors (fast_div.hpp): which producer tile holds an element row or
// column, what a consumer's waits compute (InputRef::shape). Built from a TileShape on the host.
struct IndexedShape : TileShape {
  FastDiv div_rows, div_cols;
  constexpr IndexedShape() : IndexedShape(TileShape{}) {}
  constexpr IndexedShape(TileShape s) : TileShape(s), div_rows(s.rows), div_cols(s.cols) {}  // NOLINT: implicit
  BRAID_HD uint32_t row_tile(uint32_t r) const { return div_rows.div(r); }
  BRAID_HD uint32_t col_tile(uint32_t c) const { return div_cols.div(c); }
};

// What a consumer needs to know about one of its producers.
struct InputRef {
  const uint64_t* sems = nullptr;
  const StageState* state = nullptr;
  IndexedGrid grid;  // (with its divisors: kernels delinearize the producer's tiles)
  IndexedPolicy policy = NoSync();  // (with its divisors: kernels compute the producer's semaphores)
  IndexedShape shape;  // the producer's tile (with its divisors: which tile holds a row or column)
  uint32_t stage_id = 0;
};

enum StageFlags : uint32_t {
  kSync = 1u << 0,          // posts and waits are active (off: plain stream-ordered kernel)
  kDynamicOrder = 1u << 1,  // tiles handed out by atomic ticket in dispatch order
  kNoAtomicAdd = 1u << 2,   // one tile per semaphore: post with a release store of the epoch
  kPdlTrigger = 1u << 3,    // trigger dependents at block start (Programmatic Dependent Launch)
  kMarkStarted = 1u << 4,   // block 0 publishes `started` (a wait kernel polls it)
  kWeightsFirst = 1u << 5,  // optimization R: load non-produced operands before waiting
};

struct StageParams {
  uint32_t stage_id = 0;
  uint32_t flags = 0;
  IndexedGrid grid;  // the stage's tile grid, with the divisors its tile order divides by
  TileShape shape;
  IndexedPolicy policy = NoSync();  // output policy (with the divisors of its semaphore math)
  TileOrder order;                // order.table is a device pointer
  uint64_t* sems = nullptr;       // output semaphores
  StageState* state = nullptr;
  ErrorRecord* err = nullptr;
  uint64_t timeout_ns = 0;  // 0: unbounded waits
  TileTrace* trace = nullptr;  // per tile (row-major linear index), nullptr: off
  uint32_t num_inputs = 0;
  // Fault injection (tests, braid-stress-conv; 0 = off): the poster warp of a warp-specialized kernel
  // sleeps this long before taking each finished tile, so the consumers run ahead of it -- the
  // interleaving that a slow gpu-scope release makes rare and a hand-off protocol must survive.
  uint32_t fault_poster_delay_ns = 0;
  InputRef inputs[kMaxInputs];

  BRAID_HD bool has(uint32_t f) const { return (flags & f) != 0; }
};

// Per-block shared state.
struct BlockSync {
  uint64_t epoch;
  uint64_t t_start, wait_ns;  // tracing
  uint32_t tile_index;
  uint32_t ok;
  uint32_t last_sem[kMaxInputs];  // last semaphore waited on per input (skips repeated waits)
};

namespace detail {

__device__ __forceinline__ uint32_t block_linear() {
  return blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
}
__device__ __forceinline__ uint32_t grid_blocks() { return gridDim.x * gridDim.y * gridDim.z; }
__device__ __forceinline__ bool is_thread0() { return threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0; }

__device__ __forceinline__ void report(ErrorRecord* err, uint32_t code, uint32_t stage, uint32_t input,
                                       uint32_t input_stage, uint32_t sem, Tile tile, Tile ptile,
                                       uint64_t expected, uint64_t seen, uint64_t waited) {
  if (err == nullptr) return;
  if (atomicCAS(&err->claimed, 0u, 1u) == 0u) {
    err->code = code;
    err->stage = stage;
    err->input = input;
    err->input_stage = input_stage;
    err->sem = sem;
    err->tile = tile;
    err->producer_tile = ptile;
    err->expected = expected;
    err->seen = seen;
    err->waited_ns = waited;
    __threadfence();
  }
  atomicExch(&err->abort, 1u);
}

__device__ __forceinline__ bool aborted(const ErrorRecord* err) {
  return err != nullptr && *reinterpret_cast<const volatile uint32_t*>(&err->abort) != 0;
}

// Spin until *sem >= target. Bounded when timeout_ns > 0. Returns false on timeout or abort.
// Polls with relaxed loads and acquires once at the end: on sm_90 every ld.acquire.gpu also
// invalidates the whole L1 of the SM (CCTL.IVALL in SASS), which would strip the L1 from the
// producer blocks that share the SM with a spinning consumer.
__device__ __forceinline__ bool spin_until(const uint64_t* sem, uint64_t target, uint64_t timeout_ns,
                                           const ErrorRecord* err, uint64_t& seen, uint64_t& waited) {
  seen = ptx::ld_acquire(sem);
  if (seen >= target) return true;
  const uint64_t t0 = ptx::globaltimer_ns();
  uint32_t backoff = 32, iter = 0;
  while (true) {
    __nanosleep(backoff);
    if (backoff < 256) backoff <<= 1;
    seen = ptx::ld_relaxed(sem);
    if (seen >= target) {
      ptx::fence_acq_rel_gpu();  // the relaxed read that saw the post + this fence = acquire
      waited = ptx::globaltimer_ns() - t0;
      return true;
    }
    if ((++iter & 15) == 0) {
      waited = ptx::globaltimer_ns() - t0;
      if (aborted(err)) return false;
      if (timeout_ns && waited > timeout_ns) return false;
    }
  }
}

// Sleep about `ns` nanoseconds (fault injection; one thread or a whole warp).
__device__ __forceinline__ void sleep_ns(uint64_t ns) {
  const uint64_t t0 = ptx::globaltimer_ns();
  while (ptx::globaltimer_ns() - t0 < ns) __nanosleep(1000);
}

}  // namespace detail

// ---- elected-lane API (any single thread; no barriers) -----------------------------------------

__device__ __forceinline__ uint64_t read_epoch(const StageParams& sp) { return sp.state->run + 1; }

// Wait until producer tile `pt` of input `in` has posted in this epoch. On failure records the
// error (stage, tile, semaphore, expected, seen) and returns false. `consumer_tile` is for the report.
__device__ __forceinline__ bool wait_elected(const StageParams& sp, uint64_t epoch, uint32_t in, Tile pt,
                                             Tile consumer_tile, uint64_t* wait_ns_out = nullptr) {
  const InputRef& ir = sp.inputs[in];
  if (!sp.has(kSync) || ir.sems == nullptr || !ir.policy.enabled()) return true;
  const uint32_t s = ir.policy.sem(pt, ir.grid);
  const uint64_t target = uint64_t(ir.policy.value(pt, ir.grid)) * epoch;
  uint64_t seen = 0, waited = 0;
  if (detail::spin_until(ir.sems + s, target, sp.timeout_ns, sp.err, seen, waited)) {
    if (wait_ns_out) *wait_ns_out += waited;
    return true;
  }
  if (!detail::aborted(sp.err) || sp.timeout_ns)
    detail::report(sp.err, kErrTimeout, sp.stage_id, in, ir.stage_id, s, consumer_tile, pt, target, seen, waited);
  return false;
}

// Publish tile t. The caller guarantees every store of the tile happened-before this call
// (barrier over the storing threads; TMA stores completed with wait_group 0 + proxy fence).
__device__ __forceinline__ void post_elected(const StageParams& sp, uint64_t epoch, Tile t) {
  if (!sp.has(kSync) || sp.sems == nullptr || !sp.policy.enabled()) return;
  uint64_t* sem = sp.sems + sp.policy.sem(t, sp.grid);
  if (sp.has(kNoAtomicAdd)) ptx::st_release(sem, epoch);  // value(t) == 1: count == epoch
  else ptx::red_release_add(sem, 1);
}

// ---- block-level API (all threads of the block, uniform control flow) ----------------------------

__device__ __forceinline__ void begin_block(const StageParams& sp, BlockSync& bs) {
  if (sp.has(kPdlTrigger)) ptx::pdl_launch_dependents();
  if (detail::is_thread0()) {
    // Unsynchronized launches never post, wait or advance the run count: no epoch to read (a global
    // load every thread of the block would wait for, through the barrier below).
    const uint64_t epoch = sp.has(kSync) || sp.has(kMarkStarted) ? read_epoch(sp) : 0;
    bs.epoch = epoch;
    bs.ok = 1;
    bs.tile_index = 0xffffffffu;
    for (int i = 0; i < kMaxInputs; ++i) bs.last_sem[i] = 0xffffffffu;
    if (detail::block_linear() == 0) {
      // `started` also tells the host's hang detection (Chain::wait_bounded) that a synchronized launch is
      // under way, even one stuck before it posted anything (relaxed: nothing to order but itself).
      if (sp.has(kMarkStarted)) ptx::st_release(&sp.state->started, epoch);
      else if (sp.has(kSync)) ptx::st_relaxed(&sp.state->started, epoch);
      // Lockstep check: a producer is either still in this epoch (run == epoch-1) or done (== epoch).
      if (sp.has(kSync))
        for (uint32_t i = 0; i < sp.num_inputs; ++i) {
          const uint64_t r = ptx::ld_relaxed(&sp.inputs[i].state->run);
          if (r + 1 != epoch && r != epoch) {
            detail::report(sp.err, kErrEpochMismatch, sp.stage_id, i, sp.inputs[i].stage_id, 0, Tile{}, Tile{},
                           epoch, r, 0);
            bs.ok = 0;
          }
        }
    }
  }
  __syncthreads();
}

// begin_block for a kernel form that is only ever launched unsynchronized (no kSync, no kMarkStarted,
// no dynamic order: hopper_gemm_kernel's lean forms): the PDL trigger and the barrier, nothing that
// reads or writes the stage's state.
__device__ __forceinline__ void begin_block_unsynchronized(const StageParams& sp) {
  if (sp.has(kPdlTrigger)) ptx::pdl_launch_dependents();
  __syncthreads();
}

// Next tile of this block; false when the stage has no tiles left (or after a failure).
__device__ __forceinline__ bool next_tile(const StageParams& sp, BlockSync& bs, Tile& t) {
  __syncthreads();  // everyone is done with the previous tile index
  if (detail::is_thread0()) {
    if (!bs.ok) bs.tile_index = 0xffffffffu;
    else if (sp.has(kDynamicOrder)) bs.tile_index = ptx::atom_add_relaxed(&sp.state->tile_ticket, 1);
    else bs.tile_index = bs.tile_index == 0xffffffffu ? detail::block_linear() : bs.tile_index + detail::grid_blocks();
  }
  __syncthreads();
  const uint32_t i = bs.tile_index;
  if (i >= num_tiles(sp.grid)) return false;
  t = sp.order.at(i, sp.grid);
  if (sp.trace != nullptr && detail::is_thread0()) {
    bs.t_start = ptx::globaltimer_ns();
    bs.wait_ns = 0;
  }
  return true;
}

// Wait for producer tile `pt` of input `in`. Repeated waits on the same semaphore are skipped.
__device__ __forceinline__ bool wait(const StageParams& sp, BlockSync& bs, uint32_t in, Tile pt, Tile consumer_tile) {
  if (!sp.has(kSync)) return true;
  const InputRef& ir = sp.inputs[in];
  if (ir.sems == nullptr || !ir.policy.enabled()) return true;
  const uint32_t s = ir.policy.sem(pt, ir.grid);
  if (bs.last_sem[in] == s) return bs.ok;  // uniform: every thread reads the same shared value
  __syncthreads();
  if (detail::is_thread0()) {
    if (bs.ok && !wait_elected(sp, bs.epoch, in, pt, consumer_tile, &bs.wait_ns)) bs.ok = 0;
    bs.last_sem[in] = s;
  }
  __syncthreads();
  return bs.ok;
}

// Wait for every producer tile of input `in` that intersects the element rectangle
// rows [r0, r1] x cols [c0, c1] (inclusive), using the producer's tile shape.
__device__ __forceinline__ bool wait_rect(const StageParams& sp, BlockSync& bs, uint32_t in, uint32_t r0,
                                          uint32_t r1, uint32_t c0, uint32_t c1, Tile consumer_tile, uint32_t z = 0) {
  if (!sp.has(kSync)) return true;
  const InputRef& ir = sp.inputs[in];
  const uint32_t y0 = ir.shape.row_tile(r0), y1 = ir.shape.row_tile(r1);
  const uint32_t x0 = ir.shape.col_tile(c0), x1 = ir.shape.col_tile(c1);
  for (uint32_t y = y0; y <= y1; ++y)
    for (uint32_t x = x0; x <= x1; ++x)
      if (!wait(sp, bs, in, Tile{x, y, z}, consumer_tile)) return false;
  return true;
}

// For consumers that sweep a produced operand along its columns (the K loop of a GEMM reading the
// producer's output as A): remembers up to which column the rows of the current tile are known
// ready, so a k-step inside an already-waited range costs one comparison. After waiting on a producer
// tile, every tile of its semaphore group is complete: with a contiguous group (stride 1, e.g.
// RowSync) the ready range extends to the end of the group, so RowSync waits once per row.
struct ColumnWaiter {
  uint32_t ready_until = 0;  // columns [0, ready_until) are ready for the current rows
  __device__ __forceinline__ void reset() { ready_until = 0; }
  __device__ __forceinline__ bool wait(const StageParams& sp, BlockSync& bs, uint32_t in, uint32_t r0, uint32_t r1,
                                       uint32_t c0, uint32_t c1, Tile consumer_tile) {
    if (c1 < ready_until || !sp.has(kSync)) return true;
    const InputRef& ir = sp.inputs[in];
    // Wait from ready_until (not c0): a caller that skips columns still never gets a gap marked ready.
    (void)c0;
    if (!wait_rect(sp, bs, in, r0, r1, ready_until, c1, consumer_tile)) return false;
    ready_until = ready_end(ir, c1);
    return true;
  }
  // First column not known ready after waiting for every producer tile up to column c1.
  static __device__ __forceinline__ uint32_t ready_end(const InputRef& ir, uint32_t c1) {
    uint32_t x_end = ir.shape.col_tile(c1) + 1;  // producer column-tiles known complete: [.., x_end)
    if (ir.policy.enabled() && ir.policy.dim[0].stride == 1) x_end = ir.policy.group_end_x(x_end - 1, ir.grid.x);
    return x_end * ir.shape.cols;
  }
};

// ColumnWaiter for the producer warp of a warp-specialized kernel (all 32 lanes call it with the same
// arguments; one lane then issues the TMA loads). Before blocking, the warp probes ahead: lane i reads
// the semaphore of the i-th producer tile still to come (up to c_last, the end of the work unit's K
// range) with a relaxed load -- 32 loads in flight at once, lanes reading one semaphore (RowSync)
// coalesce into one request -- and the ready range extends over the longest complete prefix. One L2
// round trip thus clears up to 32 semaphores; a serial acquire per producer tile would starve the TMA
// pipeline (measured: ~1 us per gpu-scope load on an H100). `acquired` is set when the range grew:
// every lane has then executed an acquire fence and the warp has synchronized, so the caller only
// fences the async proxy (fence.proxy.async) before its next TMA load.
//
// Whole-stage fast path (stage_done, called by the kernel at the start of each work unit): the warp
// reads the producer stage's run counter with an acquire load. The producer's last block stores it (release)
// after an acq_rel chain over every block's completion, so run == epoch means every producer tile of
// this run is complete and visible: the CTA then never probes or fences again in this launch. Late
// consumer CTAs -- most of them whenever the producer finishes first -- pay one load per launch and run
// the kernel's plain load loop, instead of a probe and an acquire fence (a MEMBAR in the warp that
// issues the TMA loads) per unit and a check per k-tile,
// which cost 5-13% of the consumer GEMM with every wait already satisfied (measured, braid-bench-mlp
// --diag, H100).
struct ColumnWaiterWarp {
  uint32_t ready_until = 0;
  bool producer_done = false;  // the producer stage finished this run: everything is ready
  // A work unit that reads columns from `first_col` on (a K split) has nothing to wait for before it.
  __device__ __forceinline__ void reset(uint32_t first_col = 0) {
    ready_until = producer_done ? 0xffffffffu : first_col;
  }
  // Whole warp: has the producer stage of input `in` completed this run? (acquire by lane 0). Once
  // true it stays true for the launch. The caller fences the async proxy before its next TMA load.
  __device__ __forceinline__ bool stage_done(const StageParams& sp, uint64_t epoch, uint32_t in) {
    if (producer_done) return true;
    const InputRef& ir = sp.inputs[in];
    if (ir.state == nullptr) return false;
    uint64_t run = 0;
    if (threadIdx.x % 32 == 0) run = ptx::ld_acquire(&ir.state->run);
    run = __shfl_sync(0xffffffffu, run, 0);
    if (run < epoch) return false;
    __syncwarp();  // lane 0's acquire orders the warp's (and, through it, the TMA's) later reads
    producer_done = true;
    ready_until = 0xffffffffu;
    return true;
  }
  __device__ __forceinline__ bool wait(const StageParams& sp, uint64_t epoch, uint32_t in, uint32_t r0, uint32_t r1,
                                       uint32_t c1, uint32_t c_last, Tile consumer_tile, uint64_t* wait_ns,
                                       bool& acquired) {
    if (c1 < ready_until || !sp.has(kSync)) return true;
    const InputRef& ir = sp.inputs[in];
    if (ir.sems == nullptr || !ir.policy.enabled()) return true;
    const uint32_t lane = threadIdx.x % 32;
    const uint32_t y0 = ir.shape.row_tile(r0), ny = ir.shape.row_tile(r1) - y0 + 1;
    const uint32_t x_last = ir.shape.col_tile(c_last);
    while (c1 >= ready_until) {
      const uint32_t x0 = ir.shape.col_tile(ready_until);
      if (ny > 32u) {  // taller than a warp: one column of tiles at a time, lane 0 waits
        bool ok = true;
        if (lane == 0)
          for (uint32_t y = y0; y < y0 + ny && ok; ++y) ok = wait_elected(sp, epoch, in, Tile{x0, y, 0}, consumer_tile, wait_ns);
        if (!__shfl_sync(0xffffffffu, ok, 0)) return false;
        ptx::fence_acq_rel_gpu();
        __syncwarp();
        ready_until = ColumnWaiter::ready_end(ir, (x0 + 1) * ir.shape.cols - 1);
        acquired = true;
        continue;
      }
      const uint32_t cols_probed = 32u / ny;
      const Tile pt{x0 + lane / ny, y0 + lane % ny, 0};
      const bool mine = lane < cols_probed * ny && pt.x <= x_last;
      bool ready = true;
      if (mine) ready = ptx::ld_relaxed(ir.sems + ir.policy.sem(pt, ir.grid)) >= uint64_t(ir.policy.value(pt, ir.grid)) * epoch;
      const uint32_t missing = __ballot_sync(0xffffffffu, mine && !ready);
      const uint32_t probed = __ballot_sync(0xffffffffu, mine);
      const uint32_t first_missing = missing ? uint32_t(__ffs(missing) - 1) : uint32_t(__popc(probed));
      const uint32_t done_cols = first_missing / ny;  // columns whose tiles (all rows) are complete
      if (done_cols > 0) {
        ptx::fence_acq_rel_gpu();  // the relaxed reads that saw the posts + this fence = acquire
        __syncwarp();
        ready_until = ColumnWaiter::ready_end(ir, (x0 + done_cols) * ir.shape.cols - 1);
        acquired = true;
        continue;
      }
      // Nothing complete at the front: lane 0 blocks (bounded) on the first missing tile, then probe again.
      bool ok = true;
      if (lane == 0) {
        const Tile mt{x0 + first_missing / ny, y0 + first_missing % ny, 0};
        ok = wait_elected(sp, epoch, in, mt, consumer_tile, wait_ns);
      }
      if (!__shfl_sync(0xffffffffu, ok, 0)) return false;
    }
    return true;
  }
};

__device__ __forceinline__ void post(const StageParams& sp, BlockSync& bs, Tile t) {
  __syncthreads();  // every thread's stores of tile t are done
  if (detail::is_thread0() && bs.ok) {
    post_elected(sp, bs.epoch, t);
    if (sp.trace != nullptr) {
      TileTrace& r = sp.trace[linear(t, sp.grid)];
      r.start_ns = bs.t_start;
      r.end_ns = ptx::globaltimer_ns();
      r.wait_ns = bs.wait_ns;
      r.smid = ptx::smid();
      r.block = detail::block_linear();
    }
  }
}

// The block's part of end_block from one thread, for a kernel that finishes a stage while some of its
// warps still run (skinny_chain.cuh: one launch, two stages): the caller has first synchronized every
// thread that stored or posted for the stage (the acq_rel atomic then releases their writes).
__device__ __forceinline__ void end_block_elected(const StageParams& sp, uint64_t epoch) {
  if (!sp.has(kSync) && !sp.has(kDynamicOrder)) return;
  const uint32_t prev = ptx::atom_add_acq_rel(&sp.state->blocks_done, 1);
  if (prev == detail::grid_blocks() - 1) {
    sp.state->blocks_done = 0;
    sp.state->tile_ticket = 0;
    if (sp.has(kSync)) ptx::st_release(&sp.state->run, epoch);
  }
}

// Last block of the launch resets the per-launch counters and advances the run count.
__device__ __forceinline__ void end_block(const StageParams& sp, BlockSync& bs) {
  // Nothing to count in an unsynchronized launch with a static order (no run to advance, no ticket
  // to reset): skip the barrier and the gpu-scope atomic, a measurable part of a short kernel.
  if (!sp.has(kSync) && !sp.has(kDynamicOrder)) return;
  __syncthreads();
  if (detail::is_thread0()) end_block_elected(sp, bs.epoch);
}

// One-thread kernel (the paper's stage ordering): holds back the consumer stream until the
// producer's block 0 has started in the consumer's epoch. (A template only so that the header can
// be included from several translation units.)
template <int = 0>
__global__ void wait_kernel(const StageState* producer, const StageState* consumer, ErrorRecord* err,
                            uint64_t timeout_ns, uint32_t stage_id, uint32_t producer_id) {
  const uint64_t epoch = consumer->run + 1;
  uint64_t seen = 0, waited = 0;
  if (!detail::spin_until(&producer->started, epoch, timeout_ns, err, seen, waited))
    detail::report(err, kErrWaitKernelTimeout, stage_id, 0, producer_id, 0, Tile{}, Tile{}, epoch, seen, waited);
}

}  // namespace braid
