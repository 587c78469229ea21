// braid::Chain: runs a validated Plan's stages on a GPU with tile-level synchronization.
//
//   braid::Plan plan = ...;                       // stages + dependencies (validated here)
//   braid::Chain chain(plan, shapes);             // allocates semaphores, state, order tables
//   chain.set_launcher(i, [&](const braid::LaunchCtx& c) {
//     braid::launch_kernel(c, my_kernel, grid, block, smem, args..., c.params);
//   });
//   chain.run(stream, braid::Ordering::PDL);       // enqueue one run (graph-capturable)
//   chain.check(stream);                           // sync; throws SyncError on a stuck wait
//
// The stages of a chain must always be launched together through run(): their run counters move
// in lockstep (see stage.cuh). After a SyncError the chain resets its state and can be run again --
// except after one that says the chain is stuck (its kernels still running): the process must exit.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "braid/core/barrier_wait.cuh"
#include "braid/core/error.hpp"
#include "braid/core/stage.cuh"
#include "braid/plan/plan.hpp"

#define BRAID_CUDA_CHECK(expr)                                                                      \
  do {                                                                                              \
    cudaError_t braid_err_ = (expr);                                                                \
    if (braid_err_ != cudaSuccess)                                                                  \
      throw std::runtime_error(std::string("CUDA error: ") + cudaGetErrorString(braid_err_) + " at " + \
                               __FILE__ + ":" + std::to_string(__LINE__) + ": " #expr);             \
  } while (0)

namespace braid {

struct LaunchCtx {
  cudaStream_t stream = nullptr;
  bool pdl = false;  // launch as a programmatic dependent of the previous kernel in the stream
  StageParams params;
};

// cudaLaunchKernelEx with the PDL attribute when the context asks for it, and thread-block clusters
// of `cluster` CTAs when that is more than one CTA (the grid must be whole clusters).
template <class... KArgs, class... Args>
void launch_kernel_clustered(const LaunchCtx& ctx, void (*kernel)(KArgs...), dim3 grid, dim3 block, size_t smem,
                             dim3 cluster, Args&&... args) {
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = grid;
  cfg.blockDim = block;
  cfg.dynamicSmemBytes = smem;
  cfg.stream = ctx.stream;
  cudaLaunchAttribute attr[2];
  unsigned n = 0;
  if (ctx.pdl) {
    attr[n].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[n++].val.programmaticStreamSerializationAllowed = 1;
  }
  if (cluster.x * cluster.y * cluster.z > 1) {
    attr[n].id = cudaLaunchAttributeClusterDimension;
    attr[n++].val.clusterDim = {cluster.x, cluster.y, cluster.z};
  }
  cfg.attrs = n ? attr : nullptr;
  cfg.numAttrs = n;
  BRAID_CUDA_CHECK(cudaLaunchKernelEx(&cfg, kernel, std::forward<Args>(args)...));
}

template <class... KArgs, class... Args>
void launch_kernel(const LaunchCtx& ctx, void (*kernel)(KArgs...), dim3 grid, dim3 block, size_t smem,
                   Args&&... args) {
  launch_kernel_clustered(ctx, kernel, grid, block, smem, dim3(1, 1, 1), std::forward<Args>(args)...);
}

struct ChainOptions {
  bool no_atomic_add = true;   // use release stores where every semaphore has one tile
  bool weights_first = true;   // optimization R (kernels that support it)
  double timeout_ms = 10000;   // bounded waits; 0 = unbounded
  bool trace = false;          // record a TileTrace per tile (timeline tool)
};

// A traced tile, on the host.
struct TraceRecord {
  int stage;
  Tile tile;
  uint32_t smid, block;
  double start_us, end_us, wait_us;  // relative to the earliest start of the run
  double mainloop_end_us;            // when the tile's mainloop ended (relative, like start_us); -1: not recorded
  uint32_t mainloop_mhz = 0;         // the SM's clock over the mainloop (TileTrace); 0: not recorded
};

class Chain {
 public:
  using Launcher = std::function<void(const LaunchCtx&)>;

  Chain(const Plan& plan, std::vector<TileShape> shapes, ChainOptions opt = {}) : plan_(plan), opt_(opt) {
    plan_.validate();
    BRAID_REQUIRE(shapes.size() == plan_.stages.size(), "chain '" + plan_.name + "': " +
                                                            std::to_string(shapes.size()) + " tile shapes for " +
                                                            std::to_string(plan_.stages.size()) + " stages");
    shapes_ = std::move(shapes);
    consumed_.assign(plan_.stages.size(), false);
    for (size_t i = 0; i < plan_.stages.size(); ++i) {
      inputs_.push_back(plan_.producers_of(int(i)));
      for (int j : inputs_.back()) consumed_[j] = true;
      BRAID_REQUIRE(inputs_.back().size() <= size_t(kMaxInputs),
                    "stage '" + plan_.stages[i].name + "' has more than " + std::to_string(kMaxInputs) + " producers");
      BRAID_REQUIRE(shapes_[i].rows > 0 && shapes_[i].cols > 0,
                    "stage '" + plan_.stages[i].name + "' has a zero tile shape");
    }
    launchers_.resize(plan_.stages.size());
    allocate();
  }
  ~Chain() { release(); }
  Chain(const Chain&) = delete;
  Chain& operator=(const Chain&) = delete;

  const Plan& plan() const { return plan_; }
  const ChainOptions& options() const { return opt_; }
  int num_stages() const { return int(plan_.stages.size()); }
  // The producers of stage i, in the order of StageParams::inputs.
  const std::vector<int>& inputs(int i) const { return inputs_[i]; }
  void set_launcher(int stage, Launcher f) { launchers_.at(stage) = std::move(f); }
  void set_timeout_ms(double ms) { opt_.timeout_ms = ms; }
  // Edits every StageParams just before launch (fault injection in tests, instrumentation).
  void set_params_hook(std::function<void(int, StageParams&)> f) { hook_ = std::move(f); }

  // pdl_stream (with StreamOrder): the launch run_pdl_only makes -- every stage but the first
  // PDL-launched, every stage but the last triggering its dependents at block start.
  StageParams params(int i, Ordering o, bool pdl_stream = false) const {
    const StageSpec& s = plan_.stages[i];
    StageParams p;
    p.stage_id = uint32_t(i);
    p.grid = s.grid;
    p.shape = shapes_[i];
    p.policy = s.policy;
    p.order = s.order;
    p.order.table = d_tables_[i];
    // A stage that no stage waits on publishes nothing: each post is a gpu-scope release that stalls
    // the posting warp (and its warpgroup's next MMA) until the tile's stores are visible.
    p.sems = consumed_[i] ? d_sems_[i] : nullptr;
    p.state = d_states_ + i;
    p.err = d_err_;
    p.timeout_ns = uint64_t(opt_.timeout_ms * 1e6);
    p.trace = d_trace_.empty() ? nullptr : d_trace_[i];
    uint32_t f = 0;
    if (o != Ordering::StreamOrder) f |= kSync;
    if (s.dynamic_order) f |= kDynamicOrder;
    if (opt_.no_atomic_add && s.policy.one_tile_per_sem(s.grid)) f |= kNoAtomicAdd;
    if (o == Ordering::PDL) f |= kPdlTrigger;
    if (o == Ordering::WaitKernel) f |= kMarkStarted;
    if (opt_.weights_first) f |= kWeightsFirst;
    if (pdl_stream && o == Ordering::StreamOrder && i + 1 < num_stages()) f |= kPdlTrigger;
    p.flags = f;
    p.num_inputs = uint32_t(inputs_[i].size());
    for (size_t k = 0; k < inputs_[i].size(); ++k) {
      const int j = inputs_[i][k];
      InputRef& r = p.inputs[k];
      r.sems = d_sems_[j];
      r.state = d_states_ + j;
      r.grid = plan_.stages[j].grid;
      r.policy = plan_.stages[j].policy;
      r.shape = shapes_[j];
      r.stage_id = uint32_t(j);
    }
    if (hook_) hook_(i, p);
    return p;
  }

  // Enqueue one run of every stage. Graph-capturable.
  void run(cudaStream_t stream, Ordering o) {
    for (int i = 0; i < num_stages(); ++i)
      BRAID_REQUIRE(bool(launchers_[i]), "stage '" + plan_.stages[i].name + "' has no launcher");
    if (o == Ordering::StreamOrder || o == Ordering::PDL) {
      for (int i = 0; i < num_stages(); ++i) launchers_[i](LaunchCtx{stream, o == Ordering::PDL && i > 0, params(i, o)});
    } else {
      ensure_streams();
      BRAID_CUDA_CHECK(cudaEventRecord(fork_, stream));
      for (int i = 0; i < num_stages(); ++i) BRAID_CUDA_CHECK(cudaStreamWaitEvent(side_[i], fork_, 0));
      for (int i = 0; i < num_stages(); ++i) {
        if (o == Ordering::WaitKernel && i > 0) {
          wait_kernel<<<1, 1, 0, side_[i]>>>(d_states_ + (i - 1), d_states_ + i, d_err_,
                                             uint64_t(opt_.timeout_ms * 1e6), uint32_t(i), uint32_t(i - 1));
          BRAID_CUDA_CHECK(cudaGetLastError());
        }
        launchers_[i](LaunchCtx{side_[i], false, params(i, o)});
      }
      for (int i = 0; i < num_stages(); ++i) {
        BRAID_CUDA_CHECK(cudaEventRecord(join_[i], side_[i]));
        BRAID_CUDA_CHECK(cudaStreamWaitEvent(stream, join_[i], 0));
      }
    }
    BRAID_CUDA_CHECK(cudaGetLastError());
  }

  // Stream order, PDL-launched: each stage waits for its whole primary grid (griddepcontrol.wait), but
  // its CTAs become resident and run their prologues (weights first into shared memory, where the
  // kernel does) while the primary runs. No tile sync. Graph-capturable; traced like run().
  void run_pdl_only(cudaStream_t stream) {
    for (int i = 0; i < num_stages(); ++i)
      BRAID_REQUIRE(bool(launchers_[i]), "stage '" + plan_.stages[i].name + "' has no launcher");
    for (int i = 0; i < num_stages(); ++i)
      launchers_[i](LaunchCtx{stream, i > 0, params(i, Ordering::StreamOrder, /*pdl_stream=*/true)});
    BRAID_CUDA_CHECK(cudaGetLastError());
  }

  // Synchronize and turn a device-side failure into a SyncError (then reset the state). With
  // bounded waits (timeout_ms > 0) the synchronization is bounded too (wait_bounded).
  void check(cudaStream_t stream) {
    wait_bounded(stream);
    ErrorRecord e;
    BRAID_CUDA_CHECK(cudaMemcpy(&e, d_err_, sizeof(e), cudaMemcpyDeviceToHost));
    if (!e.claimed) return;
    const std::string msg = describe_error(e);
    reset(0);
    throw SyncError(msg);
  }

  // Waits for `stream` to finish. Unbounded when timeout_ms == 0; otherwise gives up with a SyncError
  // that says where the chain stands (diagnose) when a barrier wait reported itself stuck
  // (barrier_wait.cuh), or when the chain is part-way through a run and its device state has not moved
  // for 3 x timeout_ms -- longer than one bounded semaphore wait plus one bounded barrier wait, the
  // most a healthy chain waits without anything moving. (A stream busy with other work while the
  // chain sits between runs is not a hang.) The chain's kernels are then still running: its memory
  // is left allocated, and the process has to exit.
  void wait_bounded(cudaStream_t stream) {
    if (opt_.timeout_ms <= 0) {
      BRAID_CUDA_CHECK(cudaStreamSynchronize(stream));
      return;
    }
    using clock = std::chrono::steady_clock;
    using ms = std::chrono::duration<double, std::milli>;
    const ms quiet(3 * opt_.timeout_ms);
    const ms probe_every = std::min(ms(quiet.count() / 8), ms(1000));
    auto t_probe = clock::now(), t_moved = t_probe;
    std::vector<char> last;
    for (int sleep_us = 10;; sleep_us = std::min(2 * sleep_us, 1000)) {
      const cudaError_t q = cudaStreamQuery(stream);
      if (q == cudaSuccess) return;
      if (q != cudaErrorNotReady) BRAID_CUDA_CHECK(q);
      std::this_thread::sleep_for(std::chrono::microseconds(sleep_us));
      const auto now = clock::now();
      if (now - t_probe < probe_every) continue;
      t_probe = now;
      const std::vector<char> snap = snapshot();
      if (snap != last) {
        last = snap;
        t_moved = now;
      }
      const ErrorRecord& e = *record_in(snap, d_err_);
      const bool barrier_stuck = e.claimed && e.code == kErrBarrierStuck;
      if (barrier_stuck || (now - t_moved > quiet && mid_run(snap))) {
        stuck_ = true;
        std::ostringstream o;
        o << "braid: chain '" << plan_.name << "' is stuck: its stream has not finished, and "
          << (barrier_stuck ? "a barrier wait reported itself stuck"
                            : "nothing in the chain moved for " + std::to_string(int(quiet.count())) + " ms")
          << ". Device state now:\n"
          << describe_snapshot(snap)
          << "\nIts kernels are still running: nothing can free their memory or wait for the device now; "
             "the process has to exit.";
        throw SyncError(o.str());
      }
    }
  }

  // Where the chain stands on the device right now, read on the chain's own non-blocking stream:
  // works while a kernel of the chain is still running, or stuck. One line per stage (completed runs,
  // blocks finished and tickets taken in the current launch, tiles posted in the current run), then
  // the error record if one was claimed.
  std::string diagnose() { return describe_snapshot(snapshot()); }
  bool stuck() const { return stuck_; }

  // Zero the semaphores and counters (as if the chain had completed `initial_run` runs: semaphores
  // hold value * initial_run, so tests can start near any counter boundary).
  void reset(uint64_t initial_run = 0) {
    std::vector<char> img(bytes_, 0);
    for (int i = 0; i < num_stages(); ++i) {
      auto* st = reinterpret_cast<StageState*>(img.data() + (reinterpret_cast<char*>(d_states_ + i) - base_));
      st->run = initial_run;
      st->started = initial_run;
      const StageSpec& s = plan_.stages[i];
      auto* tab = reinterpret_cast<uint32_t*>(img.data() + (reinterpret_cast<char*>(d_tables_[i]) - base_));
      for (uint32_t t = 0; t < s.tiles(); ++t) tab[t] = s.order.kind == OrderKind::Table ? s.order_table[t] : t;
      if (!d_sems_[i]) continue;
      auto* sems = reinterpret_cast<uint64_t*>(img.data() + (reinterpret_cast<char*>(d_sems_[i]) - base_));
      for (uint32_t t = 0; t < s.tiles(); ++t) {
        Tile tile = delinear(t, s.grid);
        sems[s.policy.sem(tile, s.grid)] = uint64_t(s.policy.value(tile, s.grid)) * initial_run;
      }
    }
    BRAID_CUDA_CHECK(cudaMemcpy(base_, img.data(), bytes_, cudaMemcpyHostToDevice));
  }

  // Stage i's trace records (ChainOptions::trace; null otherwise), for kernels launched outside
  // Chain::run that should still be traced (PDL alone).

  // The trace of the latest run (ChainOptions::trace), sorted by start time.
  std::vector<TraceRecord> download_trace() const {
    std::vector<TraceRecord> out;
    if (d_trace_.empty()) return out;
    uint64_t t0 = ~uint64_t(0);
    std::vector<std::vector<TileTrace>> raw(num_stages());
    for (int i = 0; i < num_stages(); ++i) {
      raw[i].resize(plan_.stages[i].tiles());
      BRAID_CUDA_CHECK(cudaMemcpy(raw[i].data(), d_trace_[i], raw[i].size() * sizeof(TileTrace), cudaMemcpyDeviceToHost));
      for (auto& r : raw[i]) if (r.end_ns) t0 = std::min(t0, r.start_ns);
    }
    for (int i = 0; i < num_stages(); ++i)
      for (uint32_t k = 0; k < raw[i].size(); ++k) {
        const TileTrace& r = raw[i][k];
        if (!r.end_ns) continue;
        out.push_back(TraceRecord{i, delinear(k, plan_.stages[i].grid), r.smid, r.block, (r.start_ns - t0) / 1e3,
                                  (r.end_ns - t0) / 1e3, r.wait_ns / 1e3,
                                  r.mainloop_end_ns ? (r.mainloop_end_ns - t0) / 1e3 : -1.0, r.mainloop_mhz});
      }
    std::sort(out.begin(), out.end(), [](const TraceRecord& a, const TraceRecord& b) { return a.start_us < b.start_us; });
    return out;
  }
  void clear_trace(cudaStream_t s) {
    for (int i = 0; i < num_stages(); ++i)
      BRAID_CUDA_CHECK(cudaMemsetAsync(d_trace_[i], 0, plan_.stages[i].tiles() * sizeof(TileTrace), s));
  }

  std::string describe_error(const ErrorRecord& e) const {
    auto nm = [&](uint32_t i) { return i < plan_.stages.size() ? plan_.stages[i].name : std::string("?"); };
    auto tl = [](Tile t) {
      return "(" + std::to_string(t.x) + "," + std::to_string(t.y) + "," + std::to_string(t.z) + ")";
    };
    std::ostringstream o;
    o << "braid: chain '" << plan_.name << "': ";
    switch (e.code) {
      case kErrTimeout:
        o << "stage '" << nm(e.stage) << "' tile " << tl(e.tile) << " gave up after " << e.waited_ns / 1e6
          << " ms waiting on input " << e.input << " (stage '" << nm(e.input_stage) << "') tile "
          << tl(e.producer_tile) << ": semaphore " << e.sem << " expected >= " << e.expected << ", saw " << e.seen;
        break;
      case kErrEpochMismatch:
        o << "stage '" << nm(e.stage) << "' is in run " << e.expected << " but its producer '" << nm(e.input_stage)
          << "' has completed " << e.seen << " runs: stages of a chain must be launched together (Chain::run)";
        break;
      case kErrWaitKernelTimeout:
        o << "the wait kernel of stage '" << nm(e.stage) << "' gave up after " << e.waited_ns / 1e6
          << " ms waiting for stage '" << nm(e.input_stage) << "' to start run " << e.expected << " (saw "
          << e.seen << ")";
        break;
      case kErrBarrierStuck:
        o << "stage '" << nm(e.stage) << "' CTA " << e.input_stage << " has waited " << e.waited_ns / 1e6
          << " ms (more than twice the semaphore bound) on its " << barrier_site_name(e.input) << ", slot "
          << e.sem << ", phase parity " << e.expected;
        if (e.tile.x || e.tile.y || e.tile.z) o << ", unit tile " << tl(e.tile);
        break;
      case kErrSplitPeerTimeout:
        o << "stage '" << nm(e.stage) << "' tile " << tl(e.tile) << " (split-K segment " << e.input << " of "
          << e.input_stage << ", tile position " << e.sem << ") gave up after " << e.waited_ns / 1e6
          << " ms waiting for the tile's other segments: arrival counter expected >= " << e.expected << ", saw "
          << e.seen << " (reduce-scatter needs a tile's segments running at the same time)";
        break;
      default: o << "unknown error code " << e.code;
    }
    return o.str();
  }

 private:
  // A copy of the chain's device region (states, error record, semaphores, order tables).
  std::vector<char> snapshot() {
    BRAID_CUDA_CHECK(cudaMemcpyAsync(h_snap_, base_, bytes_, cudaMemcpyDeviceToHost, probe_));
    BRAID_CUDA_CHECK(cudaStreamSynchronize(probe_));
    return std::vector<char>(h_snap_, h_snap_ + bytes_);
  }
  template <class T>
  const T* record_in(const std::vector<char>& snap, const T* dev) const {
    return reinterpret_cast<const T*>(snap.data() + (reinterpret_cast<const char*>(dev) - base_));
  }
  // Tiles of stage i posted in its current run (run + 1), from a snapshot; -1: the stage posts nothing.
  long posted_in_run(const std::vector<char>& snap, int i) const {
    if (!d_sems_[i]) return -1;
    const StageSpec& s = plan_.stages[i];
    const uint64_t epoch = record_in(snap, d_states_ + i)->run + 1;
    const uint64_t* sems = record_in(snap, d_sems_[i]);
    long n = 0;
    for (uint32_t t = 0; t < s.tiles(); ++t) {
      const Tile tile = delinear(t, s.grid);
      n += sems[s.policy.sem(tile, s.grid)] >= uint64_t(s.policy.value(tile, s.grid)) * epoch;
    }
    return n;
  }
  // Part-way through a run: some stage has started a launch it has not completed, finished blocks or
  // taken tickets in its current launch, posted tiles of its next run, or is a run ahead of another
  // stage. (`started` catches a launch stuck before anything else moved: its CTAs deadlocked at their
  // first tiles, bench/results/stress-conv-h100-20261124/.)
  bool mid_run(const std::vector<char>& snap) const {
    for (int i = 0; i < num_stages(); ++i) {
      const StageState& st = *record_in(snap, d_states_ + i);
      if (st.started > st.run || st.blocks_done || st.tile_ticket || posted_in_run(snap, i) > 0) return true;
      if (st.run != record_in(snap, d_states_)->run) return true;
    }
    return false;
  }
  std::string describe_snapshot(const std::vector<char>& snap) const {
    std::ostringstream o;
    for (int i = 0; i < num_stages(); ++i) {
      const StageState& st = *record_in(snap, d_states_ + i);
      const StageSpec& s = plan_.stages[i];
      o << "  stage " << i << " '" << s.name << "': " << st.run << " runs completed"
        << (st.started > st.run ? " (run " + std::to_string(st.started) + " started)" : std::string()) << "; current launch: "
        << st.blocks_done << " blocks finished, " << st.tile_ticket << " tickets taken";
      const long posted = posted_in_run(snap, i);
      if (posted >= 0) o << "; " << posted << " of " << s.tiles() << " tiles posted in run " << st.run + 1;
      o << "\n";
    }
    const ErrorRecord& e = *record_in(snap, d_err_);
    if (e.claimed) o << "  " << describe_error(e);
    else o << "  no wait has reported a failure";
    return o.str();
  }

  void allocate() {
    auto align = [](size_t x) { return (x + 127) & ~size_t(127); };
    const int n = num_stages();
    size_t off_states = 0, off = align(sizeof(StageState) * n);
    const size_t off_err = off;
    off += align(sizeof(ErrorRecord));
    std::vector<size_t> off_sems(n), off_tab(n);
    for (int i = 0; i < n; ++i) {
      const StageSpec& s = plan_.stages[i];
      off_sems[i] = off;
      off += align(sizeof(uint64_t) * (s.policy.enabled() ? s.policy.num_sems(s.grid) : 1));
      off_tab[i] = off;
      off += align(sizeof(uint32_t) * s.tiles());
    }
    bytes_ = off;
    BRAID_CUDA_CHECK(cudaMalloc(&base_, bytes_));
    // For snapshots (wait_bounded, diagnose): allocated now, not when the chain may be stuck.
    BRAID_CUDA_CHECK(cudaMallocHost(&h_snap_, bytes_));
    BRAID_CUDA_CHECK(cudaStreamCreateWithFlags(&probe_, cudaStreamNonBlocking));
    if (opt_.trace)
      for (int i = 0; i < n; ++i) {
        void* p = nullptr;
        BRAID_CUDA_CHECK(cudaMalloc(&p, plan_.stages[i].tiles() * sizeof(TileTrace)));
        BRAID_CUDA_CHECK(cudaMemset(p, 0, plan_.stages[i].tiles() * sizeof(TileTrace)));
        d_trace_.push_back(static_cast<TileTrace*>(p));
      }
    d_states_ = reinterpret_cast<StageState*>(base_ + off_states);
    d_err_ = reinterpret_cast<ErrorRecord*>(base_ + off_err);
    for (int i = 0; i < n; ++i) {
      d_sems_.push_back(plan_.stages[i].policy.enabled() ? reinterpret_cast<uint64_t*>(base_ + off_sems[i]) : nullptr);
      d_tables_.push_back(reinterpret_cast<uint32_t*>(base_ + off_tab[i]));
    }
    reset(0);
  }
  void ensure_streams() {
    if (!side_.empty()) return;
    BRAID_CUDA_CHECK(cudaEventCreateWithFlags(&fork_, cudaEventDisableTiming));
    for (int i = 0; i < num_stages(); ++i) {
      cudaStream_t s;
      cudaEvent_t e;
      BRAID_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
      BRAID_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
      side_.push_back(s);
      join_.push_back(e);
    }
  }
  void release() {
    if (stuck_) return;  // its kernels may still use all of it (and freeing would wait for them)
    if (probe_) cudaStreamDestroy(probe_);
    if (h_snap_) cudaFreeHost(h_snap_);
    for (auto s : side_) cudaStreamDestroy(s);
    for (auto e : join_) cudaEventDestroy(e);
    if (fork_) cudaEventDestroy(fork_);
    if (base_) cudaFree(base_);
    for (auto p : d_trace_) cudaFree(p);
  }

  Plan plan_;
  ChainOptions opt_;
  std::vector<TileShape> shapes_;
  std::vector<std::vector<int>> inputs_;
  std::vector<bool> consumed_;  // some stage waits on this stage's tiles
  std::vector<Launcher> launchers_;
  std::function<void(int, StageParams&)> hook_;
  char* base_ = nullptr;
  size_t bytes_ = 0;
  StageState* d_states_ = nullptr;
  ErrorRecord* d_err_ = nullptr;
  std::vector<uint64_t*> d_sems_;
  std::vector<uint32_t*> d_tables_;
  std::vector<TileTrace*> d_trace_;
  std::vector<cudaStream_t> side_;
  std::vector<cudaEvent_t> join_;
  cudaEvent_t fork_ = nullptr;
  cudaStream_t probe_ = nullptr;  // snapshots
  char* h_snap_ = nullptr;        // pinned, bytes_
  bool stuck_ = false;
};

}  // namespace braid
