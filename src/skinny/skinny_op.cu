#include "braid/kernels/skinny/skinny_op.hpp"

#include <algorithm>
#include <cstdlib>
#include <stdexcept>

#include "braid/kernels/common/address_range.hpp"
#include "braid/kernels/skinny/skinny_chain.cuh"
#include "braid/runtime/chain.cuh"
#include "skinny_pick.hpp"

namespace braid::skinny {

using ChainKernelFn = void (*)(const SkinnyChainParams, const StageParams, const StageParams);

struct GemmKernels {
  template <class T, int MR, int S, bool WG>
  static KernelFn of() { return skinny_gemm_kernel<T, MR, S, WG>; }
};
struct ChainKernels {
  template <class T, int MR, int S, bool WG>
  static ChainKernelFn of() { return skinny_chain_kernel<T, MR, S, WG>; }
};

struct SkinnyGemmOp::Impl {
  hopper::GemmArgs args;
  SkinnyConfig config;
  SkinnyParams p;
  KernelFn kernel = nullptr;
  KernelFn lean = nullptr;  // the lean form for args.act (skinny_lean_forms.cu), or none
  int ctas = 0, per_sm = 1, cluster = 1;  // cluster: CTAs per thread-block cluster (the DSMEM reduction)
  size_t smem = 0;
  Grid grid{1, 1, 1};
  TileShape tile;
  float4* partials = nullptr;
  uint32_t* arrivals = nullptr;
  uint32_t* counters = nullptr;  // the dynamic tail's queue and column groups' counters
  void* w_packed = nullptr;  // SkinnyConfig::packed: the op's packed copy of W
  ~Impl() {
    cudaFree(partials);
    cudaFree(arrivals);
    cudaFree(counters);
    cudaFree(w_packed);
  }
};

SkinnyGemmOp::SkinnyGemmOp() = default;
SkinnyGemmOp::~SkinnyGemmOp() = default;
SkinnyGemmOp::SkinnyGemmOp(SkinnyGemmOp&&) noexcept = default;
SkinnyGemmOp& SkinnyGemmOp::operator=(SkinnyGemmOp&&) noexcept = default;

static bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }

std::string SkinnyGemmOp::can_implement(const hopper::GemmArgs& a, const SkinnyConfig& c) {
  using hopper::Activation;
  if (a.A == nullptr || a.B == nullptr || a.D == nullptr) return "A, B and D must be device pointers";
  if (a.act != Activation::None && a.act != Activation::GeLU && a.act != Activation::SwiGLU)
    return std::string("the skinny GEMM has no ") + hopper::activation_name(a.act) + " epilogue";
  if (a.M < 1 || a.M > kMaxRows) return "the skinny GEMM takes 1 to 64 rows (got M=" + std::to_string(a.M) + ")";
  if (a.N < 8 || a.N % 8 != 0) return "N must be a positive multiple of 8 (16-byte rows of W); got " + std::to_string(a.N);
  if (a.K < 8 || a.K % 8 != 0) return "K must be a positive multiple of 8 (16-byte rows of X); got " + std::to_string(a.K);
  if (a.act == Activation::SwiGLU && a.N % kTileCols != 0)
    return "SwiGLU needs N (gate + up columns) to be a multiple of 128; got " + std::to_string(a.N);
  if (a.n_out > 0 && a.n_out != (a.act == Activation::SwiGLU ? a.N / 2 : a.N))
    return "the skinny GEMM writes N (SwiGLU: N / 2) columns: no padded SwiGLU weight (n_out=" +
           std::to_string(a.n_out) + ", N=" + std::to_string(a.N) + ")";
  if (!aligned16(a.A) || !aligned16(a.B) || !aligned16(a.D)) return "X, W and Y must be 16-byte aligned";
  if (std::string why = check_declared_rows(a); !why.empty()) return why;
  if (c.stages != 4 && c.stages != 6 && c.stages != 8)
    return "stages must be 4, 6 or 8 (got " + std::to_string(c.stages) + ")";
  if (c.wgmma && c.stages == 8) return "the wgmma consumers (-wg) come with 4 or 6 stages";
  if (c.ctas_per_sm < 1 || c.ctas_per_sm > 2) return "ctas_per_sm must be 1 or 2";
  if (c.ctas < 0) return "ctas must be >= 0";
  if (c.dsmem && (!c.aligned || c.ctas != 0))
    return "the cluster (DSMEM) reduction needs the K-aligned split (a<CTAs per SM>s<stages>-dsm)";
  if (c.dyn_tail < 0 || c.dyn_tail > 90) return "dyn_tail is a percent of each tile's K-chunks: 0 (off) to 90";
  if (c.dyn_tail > 0 && c.dsmem) return "the dynamic tail (-dt) reduces through global memory: not with -dsm";
  if (c.dyn_tail > 0 && c.stages != 4) return "the dynamic tail (-dt) comes with 4 stages";
  return "";
}

static size_t smem_bytes(int mr, int stages, bool swiglu) {
  auto f = [&](auto mr_c) -> size_t {
    constexpr int MR = decltype(mr_c)::value;
    return stages == 8 ? SkinnySmem<MR, 8>::bytes(swiglu)
                       : stages == 6 ? SkinnySmem<MR, 6>::bytes(swiglu) : SkinnySmem<MR, 4>::bytes(swiglu);
  };
  switch (mr) {
    case 8: return f(std::integral_constant<int, 8>{});
    case 16: return f(std::integral_constant<int, 16>{});
    case 32: return f(std::integral_constant<int, 32>{});
    default: return f(std::integral_constant<int, 64>{});
  }
}

std::string SkinnyGemmOp::prepare(const hopper::GemmArgs& a_in, const SkinnyConfig& c, const void* w_packed) {
  if (w_packed != nullptr && !c.packed) return "w_packed is for a packed configuration (-pk)";
  if (w_packed != nullptr && !aligned16(w_packed)) return "w_packed must be 16-byte aligned";
  hopper::GemmArgs a = a_in;
  if (w_packed != nullptr && a.B == nullptr) a.B = w_packed;  // (W itself is not read; the tensor map needs an address)
  if (std::string why = can_implement(a, c); !why.empty()) return why;
  auto im = std::make_unique<Impl>();
  im->args = a;
  im->config = c;
  const int mr = a.M <= 8 ? 8 : a.M <= 16 ? 16 : a.M <= 32 ? 32 : 64;
  const bool swiglu = a.act == hopper::Activation::SwiGLU;
  SkinnyParams& p = im->p;
  p.X = a.A;
  p.W = a.B;
  p.Y = a.D;
  p.M = a.M;
  p.N = a.N;
  p.K = a.K;
  p.act = a.act;
  p.tiles = (a.N + kTileCols - 1) / kTileCols;
  p.chunks_per_tile = (a.K + kChunkK - 1) / kChunkK;
  const uint64_t units = uint64_t(p.tiles) * p.chunks_per_tile;
  im->kernel = c.dyn_tail > 0 ? dyn_skinny_kernel(a.dtype, mr, c.wgmma) : pick<GemmKernels>(a.dtype, mr, c.stages, c.wgmma);
  im->smem = smem_bytes(mr, c.stages, swiglu);
  // The limit is per kernel function, shared by every op of this instantiation: set it to the
  // largest this instantiation ever uses (with the SwiGLU hand-over), never lower it under a
  // prepared op.
  const size_t smem_max = smem_bytes(mr, c.stages, true);
  if (cudaFuncSetAttribute(im->kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem_max)) != cudaSuccess)
    return "cannot set the skinny GEMM's shared memory size (" + std::to_string(smem_max) + " bytes)";
  im->lean = c.dyn_tail > 0 ? dyn_lean_skinny_kernel(a.dtype, mr, c.wgmma, a.act)
                            : lean_skinny_kernel(a.dtype, mr, c.stages, c.wgmma, a.act);
  if (im->lean && cudaFuncSetAttribute(im->lean, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem_max)) != cudaSuccess)
    return "cannot set the skinny GEMM's (lean form) shared memory size (" + std::to_string(smem_max) + " bytes)";
  int dev = 0, sms = 0, fit = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess ||
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fit, im->kernel, kGemmThreads, im->smem) != cudaSuccess || fit < 1)
    return "the skinny GEMM does not fit on this GPU";
  im->per_sm = std::min(c.ctas_per_sm, fit);
  uint64_t want = c.ctas > 0 ? uint64_t(c.ctas) : uint64_t(im->per_sm) * sms;
  if (c.ctas == 0 && c.aligned)  // tiles x S CTAs: every CTA one tile's K range s (skinny_config.hpp)
    want = uint64_t(p.tiles) * std::clamp<uint64_t>(want / uint64_t(p.tiles), 1, uint64_t(p.chunks_per_tile));
  im->ctas = int(std::min<uint64_t>(want, units));
  if (c.dsmem) {  // one cluster per tile: its S CTAs, rank = K order (blockIdx.x = tile * S + split)
    const int S = im->ctas / p.tiles;
    if (S < 2 || S > 8)
      return "the cluster (DSMEM) reduction needs 2 to 8 CTAs per tile (this shape and config give " + std::to_string(S) +
             ")";
    cudaLaunchConfig_t lc = {};
    cudaLaunchAttribute attr;
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim = {unsigned(S), 1, 1};
    lc.gridDim = dim3(unsigned(im->ctas));
    lc.blockDim = dim3(kGemmThreads);
    lc.dynamicSmemBytes = im->smem;
    lc.attrs = &attr;
    lc.numAttrs = 1;
    int clusters = 0;
    if (cudaOccupancyMaxActiveClusters(&clusters, im->kernel, &lc) != cudaSuccess || clusters * S < im->ctas)
      return "the " + std::to_string(im->ctas / S) + " clusters of " + std::to_string(S) +
             " CTAs would not all be resident at once (" + std::to_string(clusters) + " fit)";
    im->cluster = S;
    p.cluster_reduce = 1;
  }
  if (c.ctas > 0 && uint64_t(c.ctas) > uint64_t(fit) * sms)
    return "ctas=" + std::to_string(c.ctas) + " is more than can be resident (" + std::to_string(fit * sms) + ")";
  if (auto why = tma::encode_2d(p.w_map, a.B, 2, uint64_t(a.N), uint64_t(a.K), uint64_t(a.N) * 2, 64, kChunkK); !why.empty())
    return "W: " + why;
  // X's map spans the rows that may be read (GemmArgs::a_rows), so the MR-row box stays in bounds where X is padded.
  if (auto why = tma::encode_2d(p.x_map, a.A, 2, uint64_t(a.K), uint64_t(a.a_rows_read()), uint64_t(a.K) * 2, 64,
                                uint32_t(mr));
      !why.empty())
    return "X: " + why;
  // The partial slots: 2 per CTA (its first and last tile), or with the dynamic tail per tile its static
  // contributors' and its items'.
  size_t slots = size_t(im->ctas) * 2;
  if (c.dyn_tail > 0) {
    // Items of kItemChunks chunks covering ~dyn_tail% of every tile's chunks (rounded to whole items), at least one
    // static chunk per tile; and a static unit for every CTA (fewer CTAs where the static units are fewer).
    const int cpt = p.chunks_per_tile;
    int dyn = (cpt * c.dyn_tail + 50) / 100;
    dyn = std::min(cpt - 1, (dyn + kItemChunks - 1) / kItemChunks * kItemChunks);
    const char* diag = std::getenv("BRAID_SKINNY_DT_DIAG");
    const bool no_items = diag != nullptr && (std::atoi(diag) & 8);  // diagnosis: the kernel over plain stream-K's ranges
    if (no_items) dyn = 0;
    if (dyn < 1 && !no_items)
      return "the dynamic tail (-dt) needs K-chunks to hand out: K=" + std::to_string(a.K) + " gives " +
             std::to_string(cpt) + " chunk(s) of 64 per tile";
    const uint64_t S = uint64_t(p.tiles) * uint64_t(cpt - dyn);
    im->ctas = int(std::min<uint64_t>(uint64_t(im->ctas), S));
    p.static_chunks = cpt - dyn;
    p.item_chunks = kItemChunks;
    p.items_per_tile = (dyn + kItemChunks - 1) / kItemChunks;  // (0 only in the diagnosis above)
    const uint64_t G = uint64_t(im->ctas), s = uint64_t(p.static_chunks);
    auto owner = [&](uint64_t v) { return ((v + 1) * G - 1) / S; };  // (skinny_gemm.cuh's detail::owner)
    uint64_t most = 1;
    for (uint64_t t = 0; t < uint64_t(p.tiles); ++t) most = std::max(most, owner(t * s + s - 1) - owner(t * s) + 1);
    p.slots_per_tile = int(most) + p.items_per_tile;
    if (diag != nullptr) p.dt_diag = std::atoi(diag);
    slots = size_t(p.tiles) * size_t(p.slots_per_tile);
  }
  const size_t counters = 2 + size_t(p.tiles) * kWarps;
  if (cudaMalloc(&im->partials, slots * kWarps * (mr / 8) * 32 * sizeof(float4)) != cudaSuccess ||
      cudaMalloc(&im->arrivals, size_t(p.tiles) * sizeof(uint32_t)) != cudaSuccess ||
      cudaMemset(im->arrivals, 0, size_t(p.tiles) * sizeof(uint32_t)) != cudaSuccess ||
      (c.dyn_tail > 0 && (cudaMalloc(&im->counters, counters * sizeof(uint32_t)) != cudaSuccess ||
                          cudaMemset(im->counters, 0, counters * sizeof(uint32_t)) != cudaSuccess)))
    return "cannot allocate the stream-K workspace";
  p.partials = im->partials;
  p.arrivals = im->arrivals;
  if (c.dyn_tail > 0) {
    p.queue = im->counters;
    p.group_arrivals = im->counters + 2;
  }
  if (c.packed && w_packed != nullptr) {
    p.w_packed = static_cast<const uint8_t*>(w_packed);
  } else if (c.packed) {  // (after the device's work so far: W may just have been written on any stream)
    if (cudaMalloc(&im->w_packed, packed_weight_bytes(a.K, a.N)) != cudaSuccess)
      return "cannot allocate the packed copy of W (" + std::to_string(packed_weight_bytes(a.K, a.N)) + " bytes)";
    if (cudaError_t e = cudaDeviceSynchronize(); e != cudaSuccess)
      return std::string("packing W: the device reported ") + cudaGetErrorString(e);
    if (auto why = pack_weights(a.B, a.K, a.N, im->w_packed, nullptr); !why.empty()) return why;
    if (cudaError_t e = cudaDeviceSynchronize(); e != cudaSuccess)
      return std::string("packing W: ") + cudaGetErrorString(e);
    p.w_packed = static_cast<const uint8_t*>(im->w_packed);
  }
  im->grid = Grid{uint32_t(p.tiles), 1, 1};
  im->tile = TileShape{uint32_t(a.M), uint32_t(swiglu ? kTileCols / 2 : kTileCols)};
  impl_ = std::move(im);
  return "";
}

static const SkinnyGemmOp::Impl& ready(const std::unique_ptr<SkinnyGemmOp::Impl>& i) {
  if (!i) throw std::logic_error("skinny::SkinnyGemmOp used before a successful prepare()");
  return *i;
}

const SkinnyGemmOp::Impl& SkinnyGemmOp::impl() const { return ready(impl_); }
Grid SkinnyGemmOp::grid() const { return ready(impl_).grid; }
TileShape SkinnyGemmOp::tile() const { return ready(impl_).tile; }
int SkinnyGemmOp::ctas() const { return ready(impl_).ctas; }
int SkinnyGemmOp::ctas_per_sm() const { return ready(impl_).per_sm; }
std::string SkinnyGemmOp::name() const { return ready(impl_).config.name(); }

// SkinnyConfig::late_trigger: a PDL primary triggers its dependents kTriggerLeadNs before its CTAs'
// streams end instead of at block start. Why: a dependent launched at block start is resident the whole
// time (a 1-CTA-per-SM primary leaves room for it), so its weights-first loads compete with the primary's
// stream, and its griddepcontrol.wait still returns only after the primary's reduction tail, while DRAM
// idles. Triggered late, its CTAs
// arrive (a PDL launch takes a few microseconds) and issue their first stages of weights during that
// tail. Measured on the H100 (LLaMA MLP, T = 1 and 8, PDL alone, skinny-a1s4 + skinny-a1s4-dsm, two
// rounds): trigger 4 units before the end 55.0-55.4 us, 8 units 53.7-54.4, 16 units 55.2-55.9, at block
// start 55.6-55.9 (bench/results/skinny-tail-h100-20261124/). A unit is 16 KB of W per CTA. Not the
// default: with 8 stages, or a Hopper GEMM as the dependent (which cannot share the SM, so its launch
// is no longer hidden), the same chains ran 2-6% slower; the MLP benchmark tries both.
constexpr double kTriggerLeadNs = 5500;
constexpr double kStreamBytesPerNs = 3000;  // (the H100's measured copy bandwidth: a unit's time at ctas CTAs)
// BRAID_SKINNY_TRIGGER_LEAD_NS (diagnostic): another lead, for measuring it on another GPU or shape.
static int trigger_lead_units(int ctas) {
  static const double lead_ns = [] {
    const char* e = std::getenv("BRAID_SKINNY_TRIGGER_LEAD_NS");
    return e != nullptr && std::atof(e) > 0 ? std::atof(e) : kTriggerLeadNs;
  }();
  const double unit_ns = double(ctas) * SkinnySmem<8, 4>::kWBytes / kStreamBytesPerNs;
  return std::max(1, int(lead_ns / unit_ns + 0.5));
}

static void launch_late_trigger(const SkinnyGemmOp::Impl& i, const LaunchCtx& ctx) {
  // The lean form where the launch fits it (gemm_config.hpp, "The forms of braid's GEMM kernels").
  KernelFn kernel = i.kernel;
  if (i.lean && i.p.phase_ns == nullptr && hopper::launch_fits_lean_form(ctx.params)) {
    kernel = i.lean;
    hopper::note_lean_form_launch();
  }
  if (!i.config.late_trigger || !ctx.params.has(kPdlTrigger)) {
    launch_kernel_clustered(ctx, kernel, dim3(uint32_t(i.ctas)), dim3(kGemmThreads), i.smem, dim3(uint32_t(i.cluster), 1, 1),
                            i.p, ctx.params);
    return;
  }
  SkinnyParams p = i.p;
  p.pdl_trigger_units = trigger_lead_units(i.ctas);
  // BRAID_SKINNY_NO_REDUCE (diagnosis, wrong output): a GEMM that triggers a dependent skips its split-K reduction
  // (SkinnyParams::dt_diag bit 16; not the cluster reduction).
  static const bool no_reduce = std::getenv("BRAID_SKINNY_NO_REDUCE") != nullptr;
  if (no_reduce) p.dt_diag |= 16;
  StageParams late = ctx.params;
  late.flags &= ~kPdlTrigger;
  launch_kernel_clustered(LaunchCtx{ctx.stream, ctx.pdl, late}, kernel, dim3(uint32_t(i.ctas)), dim3(kGemmThreads), i.smem,
                          dim3(uint32_t(i.cluster), 1, 1), p, late);
}

void SkinnyGemmOp::launch(const LaunchCtx& ctx) const {
  const Impl& i = ready(impl_);
  const StageParams& sp = ctx.params;
  if (sp.grid != i.grid || sp.shape.rows != i.tile.rows || sp.shape.cols != i.tile.cols)
    throw std::invalid_argument("skinny::SkinnyGemmOp: the stage's grid/tile shape is not this op's");
  if (sp.has(kDynamicOrder)) throw std::invalid_argument("skinny::SkinnyGemmOp: tiles follow the stream-K order");
  if (sp.has(kSync) && sp.num_inputs > 1) throw std::invalid_argument("skinny::SkinnyGemmOp: only X may be produced");
  launch_late_trigger(i, ctx);
}

void SkinnyGemmOp::run(cudaStream_t s, bool pdl, bool trigger) const {
  const Impl& i = ready(impl_);
  StageParams sp;
  sp.grid = i.grid;
  sp.shape = i.tile;
  sp.flags = trigger ? kPdlTrigger : 0;
  launch_late_trigger(i, LaunchCtx{s, pdl, sp});
}


void SkinnyGemmOp::set_phases(unsigned long long* stamps) {
  if (!impl_) throw std::logic_error("skinny::SkinnyGemmOp::set_phases before a successful prepare()");
  impl_->p.phase_ns = stamps;
  // BRAID_SKINNY_PHASES=units (diagnostic): the first units one by one instead (SkinnyParams::phase_units).
  const char* e = std::getenv("BRAID_SKINNY_PHASES");
  impl_->p.phase_units = stamps != nullptr && e != nullptr && std::string(e) == "units" ? 1 : 0;
}

// ---- SkinnyChainOp ----------------------------------------------------------------------------------

struct SkinnyChainOp::Impl {
  SkinnyGemmOp g[2];  // own the tensor maps and the split-K workspaces
  SkinnyChainParams p;
  ChainKernelFn kernel = nullptr;
  int ctas = 0, per_sm = 1;
  size_t smem = 0;
  std::string name;
};

SkinnyChainOp::SkinnyChainOp() = default;
SkinnyChainOp::~SkinnyChainOp() = default;
SkinnyChainOp::SkinnyChainOp(SkinnyChainOp&&) noexcept = default;
SkinnyChainOp& SkinnyChainOp::operator=(SkinnyChainOp&&) noexcept = default;


std::string SkinnyChainOp::prepare(const hopper::GemmArgs& a1, const SkinnyConfig& c1, const hopper::GemmArgs& a2,
                                   const SkinnyConfig& c2) {
  if (a2.A != a1.D) return "the fused skinny chain: GEMM 2's X must be GEMM 1's output";
  if (a1.M != a2.M || a1.dtype != a2.dtype) return "the fused skinny chain: both GEMMs need the same rows and type";
  const int n_out1 = a1.out_cols();
  if (a2.K != n_out1) return "the fused skinny chain: GEMM 2's K must be GEMM 1's output width";
  if (c1.stages != c2.stages) return "the fused skinny chain: both GEMMs share one ring (equal stage counts)";
  if (c1.wgmma != c2.wgmma) return "the fused skinny chain: both GEMMs need the same MMA consumers (both -wg or neither)";
  if (c1.dyn_tail > 0 || c2.dyn_tail > 0) return "the fused skinny chain has no dynamic tail (-dt)";
  if (a2.act == hopper::Activation::SwiGLU) return "the fused skinny chain: GEMM 2 has no SwiGLU epilogue";
  auto im = std::make_unique<Impl>();
  const hopper::GemmArgs* args[2] = {&a1, &a2};
  const SkinnyConfig* cfg[2] = {&c1, &c2};
  for (int q = 0; q < 2; ++q) {
    if (auto why = im->g[q].prepare(*args[q], *cfg[q]); !why.empty()) return "GEMM " + std::to_string(q + 1) + ": " + why;
    im->p.g[q] = im->g[q].impl().p;
    im->p.g[q].cluster_reduce = 0;  // (the global reduction: the same bits)
    im->p.g[q].pdl_trigger_units = 0;
    im->p.ctas[q] = im->g[q].ctas();
  }
  const int mr = a1.M <= 8 ? 8 : a1.M <= 16 ? 16 : a1.M <= 32 ? 32 : 64;
  im->kernel = pick<ChainKernels>(a1.dtype, mr, c1.stages, c1.wgmma);
  im->smem = smem_bytes(mr, c1.stages, a1.act == hopper::Activation::SwiGLU);
  const size_t smem_max = smem_bytes(mr, c1.stages, true);
  if (cudaFuncSetAttribute(im->kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem_max)) != cudaSuccess)
    return "cannot set the fused skinny chain's shared memory size (" + std::to_string(smem_max) + " bytes)";
  int dev = 0, sms = 0, fit = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess ||
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fit, im->kernel, kChainThreads, im->smem) != cudaSuccess || fit < 1)
    return "the fused skinny chain does not fit on this GPU";
  im->ctas = std::max(im->p.ctas[0], im->p.ctas[1]);
  // Phase 1 waits for tiles of phase 0 that any CTA may hold: every CTA must be resident at once.
  if (im->ctas > fit * sms)
    return "the fused skinny chain's " + std::to_string(im->ctas) + " CTAs would not all be resident at once (" +
           std::to_string(fit * sms) + " fit)";
  im->per_sm = std::min(fit, (im->ctas + sms - 1) / sms);
  im->name = "fused:" + c1.name() + "+" + c2.name();
  impl_ = std::move(im);
  return "";
}

static const SkinnyChainOp::Impl& ready(const std::unique_ptr<SkinnyChainOp::Impl>& i) {
  if (!i) throw std::logic_error("skinny::SkinnyChainOp used before a successful prepare()");
  return *i;
}

int SkinnyChainOp::ctas() const { return ready(impl_).ctas; }
int SkinnyChainOp::ctas_per_sm() const { return ready(impl_).per_sm; }
std::string SkinnyChainOp::name() const { return ready(impl_).name; }
void SkinnyChainOp::set_timeline(unsigned long long* stamps) {
  static_assert(kChainEvents == 6, "skinny_op.hpp documents 6 stamps per CTA");
  if (!impl_) throw std::logic_error("skinny::SkinnyChainOp used before a successful prepare()");
  impl_->p.timeline = stamps;
}

void SkinnyChainOp::launch(const LaunchCtx& ctx0, const StageParams& sp1) const {
  const Impl& i = ready(impl_);
  const StageParams& sp0 = ctx0.params;
  for (int q = 0; q < 2; ++q) {
    const StageParams& sp = q == 0 ? sp0 : sp1;
    const Grid g = i.g[q].grid();
    const TileShape t = i.g[q].tile();
    if (sp.grid != g || sp.shape.rows != t.rows || sp.shape.cols != t.cols)
      throw std::invalid_argument("skinny::SkinnyChainOp: stage " + std::to_string(q) + "'s grid/tile shape is not GEMM " +
                                  std::to_string(q + 1) + "'s");
    if (sp.has(kDynamicOrder)) throw std::invalid_argument("skinny::SkinnyChainOp: tiles follow the stream-K order");
  }
  if (!sp0.has(kSync) || !sp1.has(kSync))
    throw std::invalid_argument("skinny::SkinnyChainOp: both stages need synchronization on (one launch has no stream order)");
  if (sp1.num_inputs != 1 || sp1.inputs[0].stage_id != sp0.stage_id)
    throw std::invalid_argument("skinny::SkinnyChainOp: stage 1's one input must be stage 0");
  if (sp0.num_inputs > 1) throw std::invalid_argument("skinny::SkinnyChainOp: only GEMM 1's X may be produced");
  launch_kernel(ctx0, i.kernel, dim3(uint32_t(i.ctas)), dim3(kChainThreads), i.smem, i.p, sp0, sp1);
}

}  // namespace braid::skinny
