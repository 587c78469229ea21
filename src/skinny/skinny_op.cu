#include "braid/kernels/skinny/skinny_op.hpp"

#include <stdexcept>

#include "braid/kernels/skinny/skinny_gemm.cuh"
#include "braid/runtime/chain.cuh"

namespace braid::skinny {

using KernelFn = void (*)(const SkinnyParams, const StageParams);

struct SkinnyGemmOp::Impl {
  hopper::GemmArgs args;
  SkinnyParams p;
  KernelFn kernel = nullptr;
  dim3 launch_grid;
  size_t smem = 0;
  Grid grid{1, 1, 1};
  TileShape tile;
  float* partials = nullptr;
  uint32_t* arrivals = nullptr;
  ~Impl() {
    cudaFree(partials);
    cudaFree(arrivals);
  }
};

SkinnyGemmOp::SkinnyGemmOp() = default;
SkinnyGemmOp::~SkinnyGemmOp() = default;
SkinnyGemmOp::SkinnyGemmOp(SkinnyGemmOp&&) noexcept = default;
SkinnyGemmOp& SkinnyGemmOp::operator=(SkinnyGemmOp&&) noexcept = default;

std::string SkinnyGemmOp::can_implement(const hopper::GemmArgs& a, int splits) {
  if (a.A == nullptr || a.B == nullptr || a.D == nullptr) return "A, B and D must be device pointers";
  if (a.act != hopper::Activation::None) return "the skinny GEMM has no activation epilogue";
  if (a.M < 1 || a.M > kMaxRows) return "the skinny GEMM takes 1 to 8 rows (got M=" + std::to_string(a.M) + ")";
  if (a.N < 8 || a.N % 8 != 0) return "N must be a positive multiple of 8 (16-byte rows of W); got " + std::to_string(a.N);
  if (a.K < 1) return "K must be positive";
  if (splits < 1 || splits > a.K) return "splits must be in 1..K (got " + std::to_string(splits) + ")";
  if ((reinterpret_cast<uintptr_t>(a.B) & 15u) != 0) return "W must be 16-byte aligned";
  return "";
}

template <class T>
static KernelFn pick(int mr) {
  switch (mr) {
    case 1: return skinny_gemm_kernel<T, 1>;
    case 2: return skinny_gemm_kernel<T, 2>;
    case 4: return skinny_gemm_kernel<T, 4>;
    default: return skinny_gemm_kernel<T, 8>;
  }
}

std::string SkinnyGemmOp::prepare(const hopper::GemmArgs& a, int splits) {
  if (std::string why = can_implement(a, splits); !why.empty()) return why;
  auto im = std::make_unique<Impl>();
  im->args = a;
  const int mr = a.M <= 1 ? 1 : a.M <= 2 ? 2 : a.M <= 4 ? 4 : 8;
  const int col_tiles = (a.N + kTileCols - 1) / kTileCols;
  const int kps = (a.K + splits - 1) / splits;
  SkinnyParams& p = im->p;
  p.X = a.A;
  p.W = a.B;
  p.Y = a.D;
  p.M = a.M;
  p.N = a.N;
  p.K = a.K;
  p.splits = splits;
  p.k_per_split = kps;
  im->smem = std::max(size_t(mr) * kps, size_t(kWarps) * mr * kTileCols) * sizeof(float);
  if (im->smem > 200 * 1024) return "K per split too large for shared memory (" + std::to_string(kps) + "): raise splits";
  if (splits > 1) {
    if (cudaMalloc(&im->partials, size_t(col_tiles) * splits * mr * kTileCols * sizeof(float)) != cudaSuccess ||
        cudaMalloc(&im->arrivals, size_t(col_tiles) * sizeof(uint32_t)) != cudaSuccess ||
        cudaMemset(im->arrivals, 0, size_t(col_tiles) * sizeof(uint32_t)) != cudaSuccess)
      return "cannot allocate the split-K workspace";
    p.partials = im->partials;
    p.arrivals = im->arrivals;
  }
  im->kernel = a.dtype == hopper::DType::BF16 ? pick<__nv_bfloat16>(mr) : pick<__half>(mr);
  if (cudaFuncSetAttribute(im->kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(im->smem)) != cudaSuccess)
    return "cannot set the skinny GEMM's shared memory size";
  im->launch_grid = dim3(uint32_t(col_tiles), uint32_t(splits), 1);
  im->grid = Grid{uint32_t(col_tiles), 1, 1};
  im->tile = TileShape{uint32_t(a.M), uint32_t(kTileCols)};
  impl_ = std::move(im);
  return "";
}

static const SkinnyGemmOp::Impl& ready(const std::unique_ptr<SkinnyGemmOp::Impl>& i) {
  if (!i) throw std::logic_error("skinny::SkinnyGemmOp used before a successful prepare()");
  return *i;
}

Grid SkinnyGemmOp::grid() const { return ready(impl_).grid; }
TileShape SkinnyGemmOp::tile() const { return ready(impl_).tile; }
int SkinnyGemmOp::ctas() const {
  const dim3 g = ready(impl_).launch_grid;
  return int(g.x * g.y);
}
std::string SkinnyGemmOp::name() const { return "skinny-s" + std::to_string(ready(impl_).p.splits); }

void SkinnyGemmOp::launch(const LaunchCtx& ctx) const {
  const Impl& i = ready(impl_);
  const StageParams& sp = ctx.params;
  if (sp.grid != i.grid || sp.shape.rows != i.tile.rows || sp.shape.cols != i.tile.cols)
    throw std::invalid_argument("skinny::SkinnyGemmOp: the stage's grid/tile shape is not this op's");
  if (sp.has(kDynamicOrder)) throw std::invalid_argument("skinny::SkinnyGemmOp: tiles follow the launch grid");
  if (sp.has(kSync) && sp.num_inputs > 1) throw std::invalid_argument("skinny::SkinnyGemmOp: only X may be produced");
  launch_kernel(ctx, i.kernel, i.launch_grid, dim3(kThreads), i.smem, i.p, sp);
}

void SkinnyGemmOp::run(cudaStream_t s, bool pdl, bool trigger) const {
  const Impl& i = ready(impl_);
  StageParams sp;
  sp.grid = i.grid;
  sp.shape = i.tile;
  sp.flags = trigger ? kPdlTrigger : 0;
  launch_kernel(LaunchCtx{s, pdl, sp}, i.kernel, i.launch_grid, dim3(kThreads), i.smem, i.p, sp);
}

}  // namespace braid::skinny
