// braid::hopper::GemmOp: checks, workspace, and the launch of the right instantiation.
#include "braid/kernels/hopper/gemm_op.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "braid/kernels/common/address_range.hpp"
#include "braid/runtime/chain.cuh"

namespace braid::hopper {

namespace {
// Clusters of 4 by default: on an H100 they took the deep conv pairs' time down by a median 4% (up to 12%,
// 512x7 N=12 34.8 -> 30.5 us) and left the MLP chains within 1% (bench/results/placement-clusters-h100-20261126/).
constexpr int kDefaultPlacementCluster = 4;
int g_placement_cluster = -1;  // -1: not read from the environment yet
std::atomic<long> g_placement_launches{0};
}  // namespace
int placement_cluster_size() {
  if (g_placement_cluster < 0) {
    const char* e = std::getenv("BRAID_PLACEMENT_CLUSTER");
    const int v = e ? std::atoi(e) : kDefaultPlacementCluster;
    if (v == 1 || v == 2 || v == 4 || v == 8) {
      g_placement_cluster = v;
    } else {
      std::fprintf(stderr, "braid: BRAID_PLACEMENT_CLUSTER=%s is not 1, 2, 4 or 8; using %d\n", e, kDefaultPlacementCluster);
      g_placement_cluster = kDefaultPlacementCluster;
    }
  }
  return g_placement_cluster;
}
long placement_cluster_launches() { return g_placement_launches.load(); }
void note_placement_cluster_launch() { ++g_placement_launches; }
void set_placement_cluster(int size) {
  if (size != 1 && size != 2 && size != 4 && size != 8)
    throw std::invalid_argument("set_placement_cluster: clusters of 1, 2, 4 or 8 CTAs, not " + std::to_string(size));
  g_placement_cluster = size;
}

namespace {
int g_lean_forms = -1;  // -1: not read from the environment yet
std::atomic<long> g_lean_launches{0};
std::atomic<long> g_synced_launches{0};  // launches in a synced form
}  // namespace
bool lean_forms_enabled() {
  if (g_lean_forms < 0) {
    const char* e = std::getenv("BRAID_KERNEL_FORM");
    const std::string v = e ? e : "lean";
    if (v != "lean" && v != "general")
      std::fprintf(stderr, "braid: BRAID_KERNEL_FORM=%s is not lean or general; using lean\n", e);
    g_lean_forms = v == "general" ? 0 : 1;
  }
  return g_lean_forms == 1;
}
void set_lean_forms(bool on) { g_lean_forms = on ? 1 : 0; }
namespace {
int g_early_weights = -1;  // -1: not read from the environment yet
}  // namespace
bool early_weights_enabled() {
  if (g_early_weights < 0) {
    const char* e = std::getenv("BRAID_EARLY_WEIGHTS");
    g_early_weights = e != nullptr && std::string(e) == "0" ? 0 : 1;
  }
  return g_early_weights == 1;
}
void set_early_weights(bool on) { g_early_weights = on ? 1 : 0; }
long lean_form_launches() { return g_lean_launches.load(); }
void note_lean_form_launch() { ++g_lean_launches; }
long synced_form_launches() { return g_synced_launches.load(); }
void note_synced_form_launch() { ++g_synced_launches; }

std::unique_ptr<GemmKernelBase> make_gemm_kernel_f16_128(bool segmented);
std::unique_ptr<GemmKernelBase> make_gemm_kernel_f16_256(bool segmented);
std::unique_ptr<GemmKernelBase> make_gemm_kernel_bf16_128(bool segmented);
std::unique_ptr<GemmKernelBase> make_gemm_kernel_bf16_256(bool segmented);
std::unique_ptr<GemmKernelBase> make_gemm_kernel_f16_64x128(bool segmented);
std::unique_ptr<GemmKernelBase> make_gemm_kernel_f16_64x256(bool segmented);
std::unique_ptr<GemmKernelBase> make_gemm_kernel_bf16_64x128(bool segmented);
std::unique_ptr<GemmKernelBase> make_gemm_kernel_bf16_64x256(bool segmented);
std::unique_ptr<GemmKernelBase> make_gemm_kernel_f16_128_direct(bool segmented);
std::unique_ptr<GemmKernelBase> make_gemm_kernel_f16_128_mc2();
std::unique_ptr<GemmKernelBase> make_gemm_kernel_f16_256_mc2();
std::unique_ptr<GemmKernelBase> make_gemm_kernel_f16_128x192_mc2();
std::unique_ptr<GemmKernelBase> make_gemm_kernel_f16_64x192_mc2();
std::unique_ptr<GemmKernelBase> make_gemm_kernel_f16_64x128_mc2();
std::unique_ptr<GemmKernelBase> make_gemm_kernel_f16_128_pp();
std::unique_ptr<GemmKernelBase> make_gemm_kernel_bf16_128_pp();
std::unique_ptr<GemmKernelBase> make_gemm_kernel_f16_128_pp_staged();
std::unique_ptr<GemmKernelBase> make_gemm_kernel_f16_192x192(bool segmented);
std::unique_ptr<GemmKernelBase> make_gemm_kernel_f16_192x128(bool segmented);
std::unique_ptr<GemmKernelBase> make_gemm_kernel_f16_128x192(bool segmented);
std::unique_ptr<GemmKernelBase> make_gemm_kernel_f16_64x192(bool segmented);
std::unique_ptr<GemmKernelBase> make_gemm_kernel_f16_256_staged(bool segmented);  // whole tiles only
std::unique_ptr<GemmKernelBase> make_gemm_kernel_f16_192x192_staged(bool segmented);
std::unique_ptr<GemmKernelBase> make_gemm_kernel_f16_192x128_staged(bool segmented);
std::unique_ptr<GemmKernelBase> make_gemm_kernel_f16_64x128_staged(bool segmented);  // whole tiles only
std::unique_ptr<GemmKernelBase> make_gemm_kernel_f16_64x64_staged(bool segmented);  // whole tiles only
std::unique_ptr<GemmKernelBase> make_gemm_kernel_f16_64x192_staged(bool segmented);
std::unique_ptr<GemmKernelBase> make_gemm_kernel_f16_128x64(bool segmented);
std::unique_ptr<GemmKernelBase> make_gemm_kernel_f16_192x96(bool segmented);
std::unique_ptr<GemmKernelBase> make_gemm_kernel_f16_64x96(bool segmented);
std::unique_ptr<GemmKernelBase> make_gemm_kernel_f16_128x64_staged(bool segmented);  // whole tiles only
std::unique_ptr<GemmKernelBase> make_gemm_kernel_f16_192x192_t();  // transposed (whole tiles)
std::unique_ptr<GemmKernelBase> make_gemm_kernel_f16_128x192_t();
std::unique_ptr<GemmKernelBase> make_gemm_kernel_f16_128x256_t();
std::unique_ptr<GemmKernelBase> make_gemm_kernel_f16_256x128_t();
std::unique_ptr<GemmKernelBase> make_gemm_kernel_f16_128x320_t(int multicast);
std::unique_ptr<GemmKernelBase> make_gemm_kernel_f16_64x320_t(int multicast);

std::unique_ptr<GemmKernelBase> make_gemm_kernel(DType dtype, int tile_m, int tile_n, bool staged, int multicast,
                                                 bool pingpong, bool segmented, bool transposed) {
  const bool f16 = dtype == DType::F16;
  if (transposed) {
    if (!f16 || pingpong || segmented || staged || !is_transposed_tile(tile_m, tile_n, multicast)) return nullptr;
    if (tile_m == 192) return make_gemm_kernel_f16_192x192_t();
    if (tile_m == 256) return make_gemm_kernel_f16_256x128_t();
    if (tile_m == 64) return make_gemm_kernel_f16_64x320_t(multicast);
    return tile_n == 192 ? make_gemm_kernel_f16_128x192_t()
           : tile_n == 256 ? make_gemm_kernel_f16_128x256_t()
                           : make_gemm_kernel_f16_128x320_t(multicast);
  }
  if (pingpong) {
    if (multicast != 1 || tile_m != 128 || tile_n != 128 || segmented || (staged && !f16)) return nullptr;
    if (staged) return make_gemm_kernel_f16_128_pp_staged();
    return f16 ? make_gemm_kernel_f16_128_pp() : make_gemm_kernel_bf16_128_pp();
  }
  if (multicast != 1) {
    if (multicast != 2 || !f16 || staged != stages_epilogue_by_default(tile_m, tile_n)) return nullptr;
    if (tile_m == 128 && tile_n == 128) return make_gemm_kernel_f16_128_mc2();
    if (tile_m == 128 && tile_n == 256) return make_gemm_kernel_f16_256_mc2();
    // Built for the weight-streaming shapes (few row blocks), measured slower there (docs/hopper-gemm.md).
    if (tile_m == 128 && tile_n == 192) return make_gemm_kernel_f16_128x192_mc2();
    if (tile_m == 64 && tile_n == 192) return make_gemm_kernel_f16_64x192_mc2();
    if (tile_m == 64 && tile_n == 128) return make_gemm_kernel_f16_64x128_mc2();
    return nullptr;
  }
  if (staged != stages_epilogue_by_default(tile_m, tile_n)) {  // the other store, where instantiated
    if (f16 && tile_m == 128 && tile_n == 128 && !staged) return make_gemm_kernel_f16_128_direct(segmented);
    // Wide tiles staged for the TMA-store epilogue (data-parallel schedules only).
    if (f16 && staged && tile_m == 128 && tile_n == 256) return make_gemm_kernel_f16_256_staged(segmented);
    if (f16 && staged && tile_m == 192 && tile_n == 192) return make_gemm_kernel_f16_192x192_staged(segmented);
    if (f16 && staged && tile_m == 192 && tile_n == 128) return make_gemm_kernel_f16_192x128_staged(segmented);
    // 64-row tiles staged for the TMA store: few tokens, where a one-wave GEMM's epilogue is exposed.
    if (f16 && staged && tile_m == 64 && tile_n == 128) return make_gemm_kernel_f16_64x128_staged(segmented);
    if (f16 && staged && tile_m == 64 && tile_n == 64) return make_gemm_kernel_f16_64x64_staged(segmented);
    if (f16 && staged && tile_m == 64 && tile_n == 192) return make_gemm_kernel_f16_64x192_staged(segmented);
    if (f16 && staged && tile_m == 128 && tile_n == 64) return make_gemm_kernel_f16_128x64_staged(segmented);
    return nullptr;
  }
  if (tile_m == 128 && tile_n == 128) return f16 ? make_gemm_kernel_f16_128(segmented) : make_gemm_kernel_bf16_128(segmented);
  if (tile_m == 128 && tile_n == 256) return f16 ? make_gemm_kernel_f16_256(segmented) : make_gemm_kernel_bf16_256(segmented);
  if (tile_m == 64 && tile_n == 128) return f16 ? make_gemm_kernel_f16_64x128(segmented) : make_gemm_kernel_bf16_64x128(segmented);
  if (tile_m == 64 && tile_n == 256) return f16 ? make_gemm_kernel_f16_64x256(segmented) : make_gemm_kernel_bf16_64x256(segmented);
  // Tiles that fit the SM count on the MLP shapes (fp16 only so far).
  if (f16 && tile_m == 192 && tile_n == 192) return make_gemm_kernel_f16_192x192(segmented);
  if (f16 && tile_m == 192 && tile_n == 128) return make_gemm_kernel_f16_192x128(segmented);
  if (f16 && tile_m == 128 && tile_n == 192) return make_gemm_kernel_f16_128x192(segmented);
  if (f16 && tile_m == 64 && tile_n == 192) return make_gemm_kernel_f16_64x192(segmented);
  if (f16 && tile_m == 128 && tile_n == 64) return make_gemm_kernel_f16_128x64(segmented);
  if (f16 && tile_m == 192 && tile_n == 96) return make_gemm_kernel_f16_192x96(segmented);
  // 64x96: twice 64x192's CTAs on a weight stream with few tokens (instances/gemm_f16_64x96.cu).
  if (f16 && tile_m == 64 && tile_n == 96) return make_gemm_kernel_f16_64x96(segmented);
  return nullptr;
}

struct PersistentOp::Work {
  GemmConfig config;
  std::unique_ptr<KernelBase> kernel;
  const char* what = "";
  Grid grid{1, 1, 1};
  TileShape tile;
  int units = 0, ctas = 0;
  WorkSchedule sched;
  void* partials = nullptr;
  unsigned long long* arrivals = nullptr;
  StageState* standalone_state = nullptr;  // for run(): a stage of its own, never synchronized
  ~Work() {
    for (void* p : {partials, static_cast<void*>(arrivals), static_cast<void*>(standalone_state)})
      if (p) cudaFree(p);
  }
};

PersistentOp::PersistentOp() = default;
PersistentOp::~PersistentOp() = default;
PersistentOp::PersistentOp(PersistentOp&&) noexcept = default;
PersistentOp& PersistentOp::operator=(PersistentOp&&) noexcept = default;

std::string PersistentOp::check_schedule(const GemmConfig& c, int k_tiles) {
  if (c.splits < 1 || c.splits > k_tiles)
    return "splits must be in [1, " + std::to_string(k_tiles) + "] for " + std::to_string(k_tiles) +
           " k-tiles (got " + std::to_string(c.splits) + ")";
  if (c.ctas < 0) return "ctas must be >= 0";
  // (A consumer warpgroup releases k-tile i - 1's stage only once k-tile i's MMAs are issued: a cap of one k-tile would
  // wait for a release that waits for the load it holds back.)
  if (c.inflight < 0 || c.inflight == 1)
    return "the in-flight cap (-f<N>) must be at least 2 k-tiles (the consumers release a stage once the next one's MMAs "
           "are issued), or 0 for the ring's depth (got " + std::to_string(c.inflight) + ")";
  if (c.stream_k && c.splits > 1) return "stream-K and split-K exclude each other (got splits=" + std::to_string(c.splits) + ")";
  if (c.reduce_scatter && c.splits < 2)
    return "reduce-scatter (-rs) shares the reduction of a split tile among its segments: it needs split-K (-sk<N>, N >= 2)";
  if (c.reduce_scatter && c.ctas > 0 && c.ctas < c.splits)  // (more are rounded down to a multiple of splits)
    return "reduce-scatter runs a tile's " + std::to_string(c.splits) + " segments at the same time: it needs at least " +
           std::to_string(c.splits) + " CTAs (got -c" + std::to_string(c.ctas) + ")";
  if (c.dsmem_reduce && (c.splits < 2 || c.splits > 8 || c.stream_k))
    return "-dsm reduces a split tile's partials among the CTAs of a cluster: it needs split-K 2 to 8 (-sk2 .. -sk8), "
           "got " + c.name();
  if (c.order == OrderKind::Table) return "a table order comes from the chain's plan, not from GemmConfig";
  if (c.multicast != 1 && c.multicast != 2 && !(c.transposed && c.multicast == 4))
    return "-mc<N>: B is multicast to clusters of 2 CTAs, or 4 in the transposed kernels that have them (got " +
           std::to_string(c.multicast) + ")";
  if (c.pingpong && (c.splits > 1 || c.stream_k || c.multicast > 1))
    return "pingpong (-pp) warpgroups take whole tiles: data-parallel only, without split-K, stream-K or "
           "multicast (got " + c.name() + ")";
  if (c.group < 1 || c.group > 16)
    return "-g<N>: groups of 1 to 16 CTAs walk one column block in step (got " + std::to_string(c.group) + ")";
  if (c.group > 1 && (c.multicast > 1 || c.reduce_scatter || c.dsmem_reduce || c.pingpong))
    return "-g<N> groups vertically adjacent tiles on CTAs walking the same k-steps: not with -mc (its clusters are "
           "the groups), -rs/-dsm (a tile's segments co-scheduled instead) or -pp (got " + c.name() + ")";
  if (c.multicast > 1 && (c.reduce_scatter || c.dsmem_reduce))
    return "-mc2 runs a cluster's CTAs on adjacent tiles over the same k-steps; reduce-scatter (-rs, -dsm) needs "
           "the segments of one tile co-scheduled instead: pick one (" + c.name() + ")";
  return "";
}

void PersistentOp::build(std::unique_ptr<KernelBase> kernel, Grid grid, TileShape tile, uint32_t k_tiles,
                         const GemmConfig& c, const char* what) {
  auto w = std::make_unique<Work>();
  w->config = c;
  w->kernel = std::move(kernel);
  w->what = what;
  w->grid = grid;
  w->tile = tile;
  const size_t tiles = num_tiles(grid);
  int dev = 0, sms = 0;
  BRAID_CUDA_CHECK(cudaGetDevice(&dev));
  BRAID_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  const Decomposition kind =
      c.stream_k ? Decomposition::StreamK : c.splits > 1 ? Decomposition::SplitK : Decomposition::DataParallel;
  const uint32_t mc = uint32_t(c.multicast);
  int resident = sms * w->kernel->ctas_per_sm();  // persistent CTAs that fit at once
  if (mc > 1) {
    if (w->kernel->multicast() != int(mc))
      throw std::logic_error(std::string(what) + ": " + c.name() + ": the kernel does not multicast to clusters of " +
                             std::to_string(mc));
    const int clusters = w->kernel->max_active_clusters(int(mc));
    if (clusters < 1)
      throw std::invalid_argument(std::string(what) + ": " + c.name() + ": no cluster of " + std::to_string(mc) +
                                  " CTAs fits on this GPU");
    resident = std::min(sms, clusters * int(mc));
  } else if (c.dsmem_reduce) {
    const int clusters = w->kernel->max_active_clusters(c.splits);
    if (clusters < 1)
      throw std::invalid_argument(std::string(what) + ": " + c.name() + ": this kernel cannot run as clusters of " +
                                  std::to_string(c.splits) + " CTAs (no cluster exchange in its epilogue, or none fits)");
    resident = std::min(sms, clusters * c.splits);
  }
  const int requested = c.ctas > 0 ? (c.dsmem_reduce || mc > 1 ? std::min(c.ctas, resident) : c.ctas) : resident;
  // CTA groups (multicast clusters, or -g): the schedule deals groups of `g` vertically adjacent tiles
  // to groups of g consecutive CTAs.
  const uint32_t g = mc > 1 ? mc : uint32_t(c.group);
  const uint32_t groups = g > 1 ? grid.x * ceil_div(grid.y, g) * grid.z : uint32_t(tiles);
  const uint32_t sched_ctas = g > 1 ? std::max(1u, uint32_t(requested) / g) : uint32_t(requested);
  // (BRAID_STREAMK_ALL_CTAS=1, an experiment switch: the stream-K tail over every CTA allowed, without
  // the reduction cost model.)
  const char* all_ctas = std::getenv("BRAID_STREAMK_ALL_CTAS");
  const uint32_t reduce_cost = all_ctas && all_ctas[0] == '1' ? 0u : WorkSchedule::kReduceCostIters;
  WorkSchedule sched = WorkSchedule::make(kind, groups, k_tiles, sched_ctas, uint32_t(c.splits), 4, c.reduce_scatter,
                                          c.dsmem_reduce, g, reduce_cost);
  // Launch only the CTAs that get work; the schedule is rebuilt for that count (same units).
  sched = WorkSchedule::make(kind, groups, k_tiles, sched.busy_ctas(), uint32_t(c.splits), 4, c.reduce_scatter,
                             c.dsmem_reduce, g, reduce_cost);
  // Stream-K's first segments reduce when every CTA is resident at once (they wait for later CTAs);
  // BRAID_STREAMK_LAST_ARRIVAL=1 (an experiment switch) keeps the last-arrival reduction.
  const char* last_arrival = std::getenv("BRAID_STREAMK_LAST_ARRIVAL");
  if (sched.kind == Decomposition::StreamK && sched.max_segs > 1 && int(sched.launch_ctas()) <= resident &&
      !(last_arrival && last_arrival[0] == '1'))
    sched.owner_reduces = 1;
  if (!sched.segments_co_scheduled())
    throw std::invalid_argument(std::string(what) + ": " + c.name() + ": reduce-scatter needs a tile's " +
                                std::to_string(c.splits) + " segments in one round of units: " +
                                std::to_string(sched.ctas) + " CTAs for " + std::to_string(uint64_t(tiles) * c.splits) +
                                " units (use at least as many CTAs as units, or a multiple of the split count)");
  // -dsm clusters larger than two, and pairs without the staged epilogue's buffer, keep each segment's
  // partials in its pipeline buffers: every CTA runs exactly one unit (cluster_exchange.cuh).
  if (c.dsmem_reduce && (c.splits > 2 || !w->kernel->cluster_pairs_in_rounds()) &&
      uint64_t(tiles) * c.splits > sched.ctas)
    throw std::invalid_argument(std::string(what) + ": " + c.name() + ": -dsm with split " + std::to_string(c.splits) +
                                (c.splits > 2 ? "" : " without the staged epilogue") + " runs each of a tile's segments "
                                "on its own CTA, once: " + std::to_string(tiles) + " tiles x " + std::to_string(c.splits) +
                                " segments need " + std::to_string(uint64_t(tiles) * c.splits) + " CTAs, " +
                                std::to_string(sched.ctas) + " fit as clusters of " + std::to_string(c.splits));
  if (!w->kernel->segmented() && sched.kind != Decomposition::DataParallel)
    throw std::logic_error(std::string(what) + ": " + c.name() + ": a whole-tile kernel was chosen for a segmented schedule");
  sched.inflight = uint32_t(c.inflight);
  w->sched = sched;
  w->ctas = int(sched.launch_ctas());
  w->units = 0;
  for (uint32_t b = 0; b < sched.ctas; ++b) {
    WorkUnit u;
    for (auto cur = sched.begin(b); sched.next(cur, u);) w->units += int(g);
  }
  if (const uint64_t slots = sched.workspace_slots(); slots > 0)
    BRAID_CUDA_CHECK(cudaMalloc(&w->partials, slots * size_t(c.tile_m) * c.tile_n * sizeof(float)));
  if (sched.max_segs > 1) {  // arrivals: split tiles' reductions, and (reduce-scatter) their completion
    const size_t counters = size_t(sched.tiles) * sched.group;  // by position (groups: of group members)
    BRAID_CUDA_CHECK(cudaMalloc(&w->arrivals, counters * sizeof(unsigned long long)));
    BRAID_CUDA_CHECK(cudaMemset(w->arrivals, 0, counters * sizeof(unsigned long long)));
  }
  BRAID_CUDA_CHECK(cudaMalloc(&w->standalone_state, sizeof(StageState)));
  BRAID_CUDA_CHECK(cudaMemset(w->standalone_state, 0, sizeof(StageState)));
  work_ = std::move(w);
}

static const PersistentOp::Work& ready(const std::unique_ptr<PersistentOp::Work>& p) {
  if (!p) throw std::logic_error("hopper op used before a successful prepare()");
  return *p;
}

Grid PersistentOp::grid() const { return ready(work_).grid; }
TileShape PersistentOp::tile() const { return ready(work_).tile; }
int PersistentOp::units() const { return ready(work_).units; }
const WorkSchedule& PersistentOp::schedule() const { return ready(work_).sched; }
int PersistentOp::ctas() const { return ready(work_).ctas; }
size_t PersistentOp::smem_bytes() const { return ready(work_).kernel->smem_bytes(); }
const GemmConfig& PersistentOp::config() const { return ready(work_).config; }
void* PersistentOp::partials() const { return ready(work_).partials; }
unsigned long long* PersistentOp::arrivals() const { return ready(work_).arrivals; }
KernelBase& PersistentOp::kernel() const { return *ready(work_).kernel; }

void PersistentOp::launch(const LaunchCtx& ctx) const {
  const Work& i = ready(work_);
  const StageParams& sp = ctx.params;
  const std::string what = i.what;
  if (sp.grid != i.grid || sp.shape.rows != i.tile.rows || sp.shape.cols != i.tile.cols)
    throw std::invalid_argument(what + ": the stage's grid/tile shape (" + std::to_string(sp.grid.x) + "x" +
                                std::to_string(sp.grid.y) + " tiles of " + std::to_string(sp.shape.rows) + "x" +
                                std::to_string(sp.shape.cols) + ") is not this op's (" + std::to_string(i.grid.x) +
                                "x" + std::to_string(i.grid.y) + " of " + std::to_string(i.tile.rows) + "x" +
                                std::to_string(i.tile.cols) + ")");
  if ((sp.has(kDynamicOrder) || sp.has(kMarkStarted)) && i.sched.reduce_scatter)
    throw std::invalid_argument(what + ": reduce-scatter split-K (" + i.config.name() +
                                ") waits for a tile's other segments, which only static dispatch under stream "
                                "order or PDL keeps running at the same time -- use the default reduction, static "
                                "order, and PDL or stream ordering");
  if (i.sched.group > 1 && (sp.has(kDynamicOrder) || sp.order.kind == OrderKind::Table))
    throw std::invalid_argument(what + ": " + i.config.name() + " runs groups of " + std::to_string(i.sched.group) +
                                " CTAs on vertically adjacent tiles: it needs static dispatch and a row- or "
                                "column-major order (got " + (sp.has(kDynamicOrder) ? "dynamic dispatch" : "a table order") +
                                ")");
  if (sp.has(kDynamicOrder) && i.config.pingpong)
    throw std::invalid_argument(what + ": " + i.config.name() + ": pingpong warpgroups take alternate units of a "
                                "static schedule -- dynamic (ticket) dispatch is not supported with -pp");
  if (sp.has(kDynamicOrder) && i.sched.kind == Decomposition::StreamK)
    throw std::invalid_argument(what + ": dynamic (ticket) dispatch hands out whole units; stream-K's tail "
                                "segments are bound to their CTAs -- use data-parallel or split-K");
  if (sp.has(kSync) && sp.num_inputs > 1)
    throw std::invalid_argument(what + ": only A may be produced by another stage (one input)");
  i.kernel->launch(ctx.stream, ctx.pdl, i.ctas, sp);
}

void PersistentOp::run(cudaStream_t s, bool pdl, bool trigger) const {
  const Work& i = ready(work_);
  StageParams sp;
  sp.grid = i.grid;
  sp.shape = i.tile;
  sp.state = i.standalone_state;
  sp.order.kind = i.config.order;
  sp.flags = trigger ? kPdlTrigger : 0;
  i.kernel->launch(s, pdl, i.ctas, sp);
}

int PersistentOp::max_units_per_cta() const {
  const Work& i = ready(work_);
  int most = 0;
  for (uint32_t b = 0; b < i.sched.ctas; ++b) {
    int n = 0;
    WorkUnit u;
    for (auto cur = i.sched.begin(b); i.sched.next(cur, u);) ++n;
    most = std::max(most, n);
  }
  return most;
}

void PersistentOp::run_unit_trace(cudaStream_t s, UnitTrace* records) const {
  const Work& i = ready(work_);
  const uint32_t stride = uint32_t(max_units_per_cta());
  BRAID_CUDA_CHECK(cudaMemsetAsync(records, 0, size_t(i.ctas) * stride * sizeof(UnitTrace), s));
  if (!i.kernel->set_unit_trace(records, stride))
    throw std::invalid_argument(std::string(i.what) + ": this kernel does not record per-unit traces");
  try {
    run(s);
  } catch (...) {
    i.kernel->set_unit_trace(nullptr, 0);
    throw;
  }
  i.kernel->set_unit_trace(nullptr, 0);
}

std::vector<UnitTrace> PersistentOp::trace_units(cudaStream_t s, const std::function<void()>& before) const {
  const size_t n = size_t(ctas()) * size_t(max_units_per_cta());
  UnitTrace* records = nullptr;
  BRAID_CUDA_CHECK(cudaMalloc(&records, n * sizeof(UnitTrace)));
  std::vector<UnitTrace> h(n);
  try {
    if (before) before();
    run_unit_trace(s, records);
    BRAID_CUDA_CHECK(cudaMemcpyAsync(h.data(), records, n * sizeof(UnitTrace), cudaMemcpyDeviceToHost, s));
    BRAID_CUDA_CHECK(cudaStreamSynchronize(s));
  } catch (...) {
    cudaFree(records);
    throw;
  }
  BRAID_CUDA_CHECK(cudaFree(records));
  return h;
}

std::string GemmOp::can_implement(const GemmArgs& a, const GemmConfig& c) {
  if (a.A == nullptr || a.B == nullptr || a.D == nullptr) return "A, B and D must be device pointers";
  if (a.M < 1 || a.N < 1 || a.K < 1)
    return "M, N, K must be positive (got " + std::to_string(a.M) + ", " + std::to_string(a.N) + ", " +
           std::to_string(a.K) + ")";
  if (a.K % 8 != 0 || a.N % 8 != 0)
    return "K and N must be multiples of 8 (16-byte TMA rows); got K=" + std::to_string(a.K) +
           " N=" + std::to_string(a.N);
  if (a.act == Activation::ReLU) return "ReLU is the convolutions' epilogue (ConvOp)";
  if (std::string why = check_declared_rows(a); !why.empty()) return why;
  if (c.ctas_per_sm != 1) return "two CTAs per SM (-o2) exist for convolutions only (got " + c.name() + ")";
  if (c.transposed) {
    if (!is_transposed_tile(c.tile_m, c.tile_n, c.multicast))
      return std::string("transposed tiles are ") + transposed_tile_list() + " (got " + c.name() + ")";
    if (a.dtype != DType::F16) return "transposed kernels are fp16 only (got " + c.name() + ")";
    if (c.splits > 1 || c.stream_k || c.pingpong || c.reduce_scatter || c.dsmem_reduce ||
        c.store != EpilogueStore::Default)
      return "transposed kernels run whole tiles with their own staged epilogue: no split-K, stream-K, "
             "pingpong or store option (got " + c.name() + ")";
  } else if (c.tile_n != 64 && c.tile_n != 96 && c.tile_n != 128 && c.tile_n != 192 && c.tile_n != 256) {
    return "tile_n must be 64, 96, 128, 192 or 256 (got " + std::to_string(c.tile_n) + ")";
  } else if (c.tile_m != 64 && c.tile_m != 128 && c.tile_m != 192) {
    return "tile_m must be 64, 128 or 192 (got " + std::to_string(c.tile_m) + ")";
  }
  const int block = c.swiglu_block();  // the packing block of a SwiGLU weight
  if (a.act == Activation::SwiGLU && a.N % block != 0)
    return "SwiGLU needs N (gate|up, packed) to be a multiple of the packing block " + std::to_string(block) +
           (c.transposed ? " (transposed kernels: kTransposedSwigluBlock)" : " (tile_n)") + "; got N=" + std::to_string(a.N);
  if (a.n_out > 0 && a.act != Activation::SwiGLU && a.n_out != a.N)
    return "n_out (" + std::to_string(a.n_out) + ") differs from N (" + std::to_string(a.N) +
           ") only for a padded SwiGLU weight";
  if (a.n_out > 0 && a.act == Activation::SwiGLU && a.N != swiglu_packed_cols(a.n_out, block))
    return "SwiGLU with n_out=" + std::to_string(a.n_out) + " reads B packed in blocks of " + std::to_string(block) +
           " as " + std::to_string(swiglu_packed_cols(a.n_out, block)) + " columns (swiglu_packed_cols); got N=" +
           std::to_string(a.N);
  return check_schedule(c, (a.K + kTileK - 1) / kTileK);
}

std::string GemmOp::prepare(const GemmArgs& a, const GemmConfig& c) {
  if (std::string why = can_implement(a, c); !why.empty()) return why;
  // (row-major multicast instantiations carry the fixup whatever the schedule: asked for as segmented;
  // transposed ones run whole tiles)
  const bool segmented = c.splits > 1 || c.stream_k || (c.multicast > 1 && !c.transposed);
  std::unique_ptr<GemmKernelBase> k =
      make_gemm_kernel(a.dtype, c.tile_m, c.tile_n, c.staged(), c.multicast, c.pingpong, segmented && !c.pingpong,
                       c.transposed);
  if (!k)
    return std::string("no ") + dtype_name(a.dtype) + " kernel with a " + std::to_string(c.tile_m) + "x" +
           std::to_string(c.tile_n) + " tile and " + (c.staged() ? "staged" : "direct") + " epilogue stores" +
           (c.multicast > 1 ? " multicasting B to clusters of " + std::to_string(c.multicast) : "") +
           (c.pingpong ? " in pingpong warpgroups (128x128 only)" : "") + (c.transposed ? ", transposed" : "");
  GemmKernelBase* kernel = k.get();
  const int n_out = a.out_cols();
  const int tile_cols = a.act == Activation::SwiGLU ? c.tile_n / 2 : c.tile_n;
  const Grid grid{ceil_div(uint32_t(n_out), uint32_t(tile_cols)), ceil_div(uint32_t(a.M), uint32_t(c.tile_m)), 1};
  try {  // what only the schedule can tell (clusters that fit, segments per round): refused with the reason
    build(std::move(k), grid, TileShape{uint32_t(c.tile_m), uint32_t(tile_cols)},
          ceil_div(uint32_t(a.K), uint32_t(kTileK)), c, "hopper::GemmOp");
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  kernel->set_problem(a, schedule(), partials(), arrivals());
  args_ = a;
  return "";
}

std::string GemmOp::name() const { return std::string("hopper-") + dtype_name(args_.dtype) + "-" + config().name(); }

}  // namespace braid::hopper
