// braid::hopper::GemmOp: checks, workspace, and the launch of the right instantiation.
#include "braid/kernels/hopper/gemm_op.hpp"

#include <algorithm>
#include <stdexcept>

#include "braid/runtime/chain.cuh"

namespace braid::hopper {

std::unique_ptr<GemmKernelBase> make_gemm_kernel_f16_128();
std::unique_ptr<GemmKernelBase> make_gemm_kernel_f16_256();
std::unique_ptr<GemmKernelBase> make_gemm_kernel_bf16_128();
std::unique_ptr<GemmKernelBase> make_gemm_kernel_bf16_256();
std::unique_ptr<GemmKernelBase> make_gemm_kernel_f16_64x128();
std::unique_ptr<GemmKernelBase> make_gemm_kernel_f16_64x256();
std::unique_ptr<GemmKernelBase> make_gemm_kernel_bf16_64x128();
std::unique_ptr<GemmKernelBase> make_gemm_kernel_bf16_64x256();

std::unique_ptr<GemmKernelBase> make_gemm_kernel(DType dtype, int tile_m, int tile_n) {
  const bool f16 = dtype == DType::F16;
  if (tile_m == 128 && tile_n == 128) return f16 ? make_gemm_kernel_f16_128() : make_gemm_kernel_bf16_128();
  if (tile_m == 128 && tile_n == 256) return f16 ? make_gemm_kernel_f16_256() : make_gemm_kernel_bf16_256();
  if (tile_m == 64 && tile_n == 128) return f16 ? make_gemm_kernel_f16_64x128() : make_gemm_kernel_bf16_64x128();
  if (tile_m == 64 && tile_n == 256) return f16 ? make_gemm_kernel_f16_64x256() : make_gemm_kernel_bf16_64x256();
  return nullptr;
}

struct GemmOp::Impl {
  GemmArgs args;
  GemmConfig config;
  std::unique_ptr<GemmKernelBase> kernel;
  Grid grid{1, 1, 1};
  TileShape tile;
  int units = 0, ctas = 0;
  WorkSchedule sched;
  void* partials = nullptr;
  unsigned long long* arrivals = nullptr;
  StageState* standalone_state = nullptr;  // for run(): a stage of its own, never synchronized
  ~Impl() {
    for (void* p : {partials, static_cast<void*>(arrivals), static_cast<void*>(standalone_state)})
      if (p) cudaFree(p);
  }
};

GemmOp::GemmOp() = default;
GemmOp::~GemmOp() = default;
GemmOp::GemmOp(GemmOp&&) noexcept = default;
GemmOp& GemmOp::operator=(GemmOp&&) noexcept = default;

std::string GemmOp::can_implement(const GemmArgs& a, const GemmConfig& c) {
  if (a.A == nullptr || a.B == nullptr || a.D == nullptr) return "A, B and D must be device pointers";
  if (a.M < 1 || a.N < 1 || a.K < 1)
    return "M, N, K must be positive (got " + std::to_string(a.M) + ", " + std::to_string(a.N) + ", " +
           std::to_string(a.K) + ")";
  if (a.K % 8 != 0 || a.N % 8 != 0)
    return "K and N must be multiples of 8 (16-byte TMA rows); got K=" + std::to_string(a.K) +
           " N=" + std::to_string(a.N);
  if (c.tile_n != 128 && c.tile_n != 256) return "tile_n must be 128 or 256 (got " + std::to_string(c.tile_n) + ")";
  if (c.tile_m != 64 && c.tile_m != 128) return "tile_m must be 64 or 128 (got " + std::to_string(c.tile_m) + ")";
  if (a.act == Activation::SwiGLU && a.N % c.tile_n != 0)
    return "SwiGLU needs N (gate|up, packed) to be a multiple of tile_n=" + std::to_string(c.tile_n) + "; got N=" +
           std::to_string(a.N);
  const int k_tiles = (a.K + kTileK - 1) / kTileK;
  if (c.splits < 1 || c.splits > k_tiles)
    return "splits must be in [1, " + std::to_string(k_tiles) + "] for K=" + std::to_string(a.K) + " (got " +
           std::to_string(c.splits) + ")";
  if (c.ctas < 0) return "ctas must be >= 0";
  if (c.stream_k && c.splits > 1) return "stream-K and split-K exclude each other (got splits=" + std::to_string(c.splits) + ")";
  if (c.order == OrderKind::Table) return "a table order comes from the chain's plan, not from GemmConfig";
  return "";
}

std::string GemmOp::prepare(const GemmArgs& a, const GemmConfig& c) {
  if (std::string why = can_implement(a, c); !why.empty()) return why;
  auto impl = std::make_unique<Impl>();
  impl->args = a;
  impl->config = c;
  impl->kernel = make_gemm_kernel(a.dtype, c.tile_m, c.tile_n);
  if (!impl->kernel)
    return std::string("no ") + dtype_name(a.dtype) + " kernel with a " + std::to_string(c.tile_m) + "x" +
           std::to_string(c.tile_n) + " tile";
  const int n_out = a.act == Activation::SwiGLU ? a.N / 2 : a.N;
  const int tile_cols = a.act == Activation::SwiGLU ? c.tile_n / 2 : c.tile_n;
  impl->grid = Grid{ceil_div(uint32_t(n_out), uint32_t(tile_cols)), ceil_div(uint32_t(a.M), uint32_t(c.tile_m)), 1};
  impl->tile = TileShape{uint32_t(c.tile_m), uint32_t(tile_cols)};
  const size_t tiles = num_tiles(impl->grid);
  int dev = 0, sms = 0;
  BRAID_CUDA_CHECK(cudaGetDevice(&dev));
  BRAID_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  const uint32_t k_tiles = ceil_div(uint32_t(a.K), uint32_t(kTileK));
  const Decomposition kind =
      c.stream_k ? Decomposition::StreamK : c.splits > 1 ? Decomposition::SplitK : Decomposition::DataParallel;
  WorkSchedule sched = WorkSchedule::make(kind, uint32_t(tiles), k_tiles, uint32_t(c.ctas > 0 ? c.ctas : sms),
                                          uint32_t(c.splits));
  // Launch only the CTAs that get work; the schedule is rebuilt for that count (same units).
  sched = WorkSchedule::make(kind, uint32_t(tiles), k_tiles, sched.busy_ctas(), uint32_t(c.splits));
  impl->sched = sched;
  impl->ctas = int(sched.busy_ctas());
  impl->units = 0;
  for (uint32_t b = 0; b < sched.ctas; ++b) {
    WorkUnit w;
    for (auto cur = sched.begin(b); sched.next(cur, w);) ++impl->units;
  }
  if (const uint64_t slots = sched.workspace_slots(); slots > 0) {
    BRAID_CUDA_CHECK(cudaMalloc(&impl->partials, slots * size_t(c.tile_m) * c.tile_n * sizeof(float)));
    BRAID_CUDA_CHECK(cudaMalloc(&impl->arrivals, tiles * sizeof(unsigned long long)));
    BRAID_CUDA_CHECK(cudaMemset(impl->arrivals, 0, tiles * sizeof(unsigned long long)));
  }
  BRAID_CUDA_CHECK(cudaMalloc(&impl->standalone_state, sizeof(StageState)));
  BRAID_CUDA_CHECK(cudaMemset(impl->standalone_state, 0, sizeof(StageState)));
  impl->kernel->set_problem(a, impl->sched, impl->partials, impl->arrivals);
  impl_ = std::move(impl);
  return "";
}

static const GemmOp::Impl& ready(const std::unique_ptr<GemmOp::Impl>& p) {
  if (!p) throw std::logic_error("hopper::GemmOp used before a successful prepare()");
  return *p;
}

Grid GemmOp::grid() const { return ready(impl_).grid; }
TileShape GemmOp::tile() const { return ready(impl_).tile; }
int GemmOp::units() const { return ready(impl_).units; }
const WorkSchedule& GemmOp::schedule() const { return ready(impl_).sched; }
int GemmOp::ctas() const { return ready(impl_).ctas; }
const GemmArgs& GemmOp::args() const { return ready(impl_).args; }
const GemmConfig& GemmOp::config() const { return ready(impl_).config; }
std::string GemmOp::name() const {
  const Impl& i = ready(impl_);
  return std::string("hopper-") + dtype_name(i.args.dtype) + "-" + i.config.name();
}

void GemmOp::launch(const LaunchCtx& ctx) const {
  const Impl& i = ready(impl_);
  const StageParams& sp = ctx.params;
  if (sp.grid != i.grid || sp.shape.rows != i.tile.rows || sp.shape.cols != i.tile.cols)
    throw std::invalid_argument("hopper::GemmOp: the stage's grid/tile shape (" + std::to_string(sp.grid.x) + "x" +
                                std::to_string(sp.grid.y) + " tiles of " + std::to_string(sp.shape.rows) + "x" +
                                std::to_string(sp.shape.cols) + ") is not this GEMM's (" + std::to_string(i.grid.x) +
                                "x" + std::to_string(i.grid.y) + " of " + std::to_string(i.tile.rows) + "x" +
                                std::to_string(i.tile.cols) + ")");
  if (sp.has(kDynamicOrder))
    throw std::invalid_argument("hopper::GemmOp: persistent CTAs take tiles in the stage's static order; "
                                "dynamic (ticket) order is not supported -- use a generated order table");
  if (sp.has(kSync) && sp.num_inputs > 1)
    throw std::invalid_argument("hopper::GemmOp: only A may be produced by another stage (one input)");
  i.kernel->launch(ctx.stream, ctx.pdl, i.ctas, sp);
}

void GemmOp::run(cudaStream_t s, bool pdl, bool trigger) const {
  const Impl& i = ready(impl_);
  StageParams sp;
  sp.grid = i.grid;
  sp.shape = i.tile;
  sp.state = i.standalone_state;
  sp.order.kind = i.config.order;
  sp.flags = trigger ? kPdlTrigger : 0;
  i.kernel->launch(s, pdl, i.ctas, sp);
}

}  // namespace braid::hopper
