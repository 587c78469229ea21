#include "braid/kernels/attention/attention_op.hpp"

#include <cmath>
#include <stdexcept>

#include "braid/kernels/attention/flash_kernel.cuh"
#include "braid/runtime/chain.cuh"

namespace braid::attention {

using KernelFn = void (*)(const FlashParams, const StageParams);

struct AttentionOp::Impl {
  AttentionArgs args;
  AttentionConfig config;
  FlashParams p;
  KernelFn kernel = nullptr;
  dim3 launch_grid;
  int threads = 0;
  size_t smem = 0;
  Grid grid{1, 1, 1};
  TileShape tile;
  float* workspace = nullptr;
  uint32_t* arrivals = nullptr;
  ~Impl() {
    cudaFree(workspace);
    cudaFree(arrivals);
  }
};

std::string parse_attention_config(const std::string& text, AttentionConfig& out) {
  AttentionConfig c;
  size_t pos = 0;
  if (text.size() < 2 || text[0] != 'w') return "an attention config starts with w<warps> (got '" + text + "')";
  try {
    c.warps = std::stoi(text.substr(1), &pos);
    pos += 1;
    if (pos < text.size()) {
      if (text.compare(pos, 2, "-s") != 0) return "expected -s<keys> after the warps in '" + text + "'";
      size_t q = 0;
      c.split_keys = std::stoi(text.substr(pos + 2), &q);
      if (pos + 2 + q != text.size()) return "trailing text in '" + text + "'";
    }
  } catch (const std::exception&) {
    return "cannot parse attention config '" + text + "' (e.g. w4, w1-s256)";
  }
  out = c;
  return "";
}

static int rows_per_cta(const AttentionConfig& c) { return 16 * c.warps; }

std::string AttentionOp::can_implement(const AttentionArgs& a, const AttentionConfig& c) {
  if (a.dtype != DType::F16 && a.dtype != DType::BF16) return "dtype must be fp16 or bf16";
  if (c.warps != 1 && c.warps != 4) return "warps must be 1 or 4 (got " + std::to_string(c.warps) + ")";
  if (c.split_keys < 0 || c.split_keys % kKeyBlock != 0)
    return "split_keys must be a non-negative multiple of " + std::to_string(kKeyBlock) + " (got " +
           std::to_string(c.split_keys) + ")";
  if (a.qkv == nullptr || a.out == nullptr) return "qkv and out must be device pointers";
  if (a.B < 1 || a.S_new < 1 || a.NH < 1 || a.S_cached < 0)
    return "B, S_new, NH must be positive and S_cached >= 0 (got B=" + std::to_string(a.B) + " S_new=" +
           std::to_string(a.S_new) + " NH=" + std::to_string(a.NH) + " S_cached=" + std::to_string(a.S_cached) + ")";
  const int bm = rows_per_cta(c);
  if (a.S_new > bm && a.S_new % bm != 0)
    return "S_new=" + std::to_string(a.S_new) + " must be at most " + std::to_string(bm) + " or a multiple of it " +
           "(a braid tile is a block of query rows of one batch)";
  if (a.S_cached > 0 || a.update_cache) {
    if (a.k_cache == nullptr || a.v_cache == nullptr) return "a KV cache is used (S_cached > 0 or update_cache) but k_cache/v_cache is null";
    if (a.S_cached + (a.update_cache ? a.S_new : 0) > a.S_max)
      return "the cache holds S_max=" + std::to_string(a.S_max) + " positions, fewer than S_cached + S_new";
  }
  if (a.S_cached + a.S_new >= (1 << 24)) return "positions must be below 2^24 (the dropout counter)";
  if (a.B * a.NH >= (1 << 16)) return "B * NH must be below 2^16 (the dropout counter)";
  if (!(a.dropout_p >= 0.f && a.dropout_p < 1.f)) return "dropout_p must be in [0, 1)";
  auto aligned = [](const void* q) { return (reinterpret_cast<uintptr_t>(q) & 15u) == 0; };
  if (!aligned(a.qkv) || !aligned(a.out) || !aligned(a.k_cache) || !aligned(a.v_cache))
    return "tensors must be 16-byte aligned";
  return "";
}

template <class T, int W>
static KernelFn kernel_for() {
  return flash_attention_kernel<T, W>;
}

std::string AttentionOp::prepare(const AttentionArgs& a, const AttentionConfig& c) {
  if (std::string why = can_implement(a, c); !why.empty()) return why;
  auto im = std::make_unique<Impl>();
  im->args = a;
  im->config = c;
  const int bm = rows_per_cta(c), D = kHeadDim;
  const int q_rows = a.S_new < bm ? a.S_new : bm;
  const int q_blocks = a.S_new / q_rows;
  const int keys = a.S_cached + a.S_new;
  const int split_keys = c.split_keys ? c.split_keys : ((keys + kKeyBlock - 1) / kKeyBlock) * kKeyBlock;
  const int splits = (keys + split_keys - 1) / split_keys;
  FlashParams& p = im->p;
  p.qkv = a.qkv;
  p.qkv_ld = uint32_t(3 * a.NH * D);
  p.k_cache = a.k_cache;
  p.v_cache = a.v_cache;
  p.cache_ld = uint32_t(a.NH * D);
  p.cache_bstride = uint64_t(a.S_max) * a.NH * D;
  p.o = a.out;
  p.o_ld = uint32_t(a.NH * D);
  p.B = a.B;
  p.S_new = a.S_new;
  p.S_cached = a.S_cached;
  p.NH = a.NH;
  p.q_rows = q_rows;
  p.q_blocks = q_blocks;
  p.splits = splits;
  p.split_keys = split_keys;
  const float scale = a.scale > 0 ? a.scale : 1.0f / std::sqrt(float(D));
  p.scale_log2 = scale * 1.4426950408889634f;
  p.drop_threshold = dropout_threshold(a.dropout_p);
  p.keep_scale = p.drop_threshold ? float(1.0 / (1.0 - double(a.dropout_p))) : 1.0f;
  p.seed = a.seed;
  p.causal = a.causal ? 1 : 0;
  p.write_cache = a.update_cache ? 1 : 0;
  im->grid = Grid{uint32_t(a.NH), uint32_t(a.B * q_blocks), 1};
  im->tile = TileShape{uint32_t(q_rows), uint32_t(D)};
  im->launch_grid = dim3(uint32_t(a.NH), uint32_t(a.B * q_blocks), uint32_t(splits));
  im->threads = 32 * c.warps;
  im->smem = size_t(bm) * kRowBytes + 4 * size_t(kKeyBlock) * kRowBytes;
  if (splits > 1) {
    const size_t tiles = size_t(a.NH) * a.B * q_blocks, rows = tiles * splits * q_rows;
    if (cudaMalloc(&im->workspace, rows * (D + 2) * sizeof(float)) != cudaSuccess ||
        cudaMalloc(&im->arrivals, tiles * sizeof(uint32_t)) != cudaSuccess ||
        cudaMemset(im->arrivals, 0, tiles * sizeof(uint32_t)) != cudaSuccess)
      return "cannot allocate the split workspace";
    p.part_o = im->workspace;
    p.part_ml = im->workspace + rows * D;
    p.arrivals = im->arrivals;
  }
  const bool bf = a.dtype == DType::BF16;
  im->kernel = c.warps == 4 ? (bf ? kernel_for<__nv_bfloat16, 4>() : kernel_for<__half, 4>())
                            : (bf ? kernel_for<__nv_bfloat16, 1>() : kernel_for<__half, 1>());
  if (cudaFuncSetAttribute(im->kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(im->smem)) != cudaSuccess)
    return "cannot set the kernel's shared memory size (" + std::to_string(im->smem) + " bytes)";
  impl_ = std::move(im);
  return "";
}

AttentionOp::AttentionOp() = default;
AttentionOp::~AttentionOp() = default;
AttentionOp::AttentionOp(AttentionOp&&) noexcept = default;
AttentionOp& AttentionOp::operator=(AttentionOp&&) noexcept = default;

static const AttentionOp::Impl& ready(const std::unique_ptr<AttentionOp::Impl>& i) {
  if (!i) throw std::logic_error("attention::AttentionOp used before a successful prepare()");
  return *i;
}

Grid AttentionOp::grid() const { return ready(impl_).grid; }
TileShape AttentionOp::tile() const { return ready(impl_).tile; }
int AttentionOp::ctas() const {
  const dim3 g = ready(impl_).launch_grid;
  return int(g.x * g.y * g.z);
}
int AttentionOp::splits() const { return ready(impl_).p.splits; }
const AttentionArgs& AttentionOp::args() const { return ready(impl_).args; }
const AttentionConfig& AttentionOp::config() const { return ready(impl_).config; }
std::string AttentionOp::name() const {
  return std::string("attention-") + hopper::dtype_name(ready(impl_).args.dtype) + "-" + ready(impl_).config.name();
}

void AttentionOp::launch(const LaunchCtx& ctx) const {
  const Impl& i = ready(impl_);
  const StageParams& sp = ctx.params;
  if (sp.grid != i.grid || sp.shape.rows != i.tile.rows || sp.shape.cols != i.tile.cols)
    throw std::invalid_argument("attention::AttentionOp: the stage's grid/tile shape (" + std::to_string(sp.grid.x) +
                                "x" + std::to_string(sp.grid.y) + " tiles of " + std::to_string(sp.shape.rows) + "x" +
                                std::to_string(sp.shape.cols) + ") is not this op's (" + std::to_string(i.grid.x) +
                                "x" + std::to_string(i.grid.y) + " of " + std::to_string(i.tile.rows) + "x" +
                                std::to_string(i.tile.cols) + ")");
  if (sp.has(kDynamicOrder)) throw std::invalid_argument("attention::AttentionOp: tiles follow the launch grid (no dynamic order)");
  if (sp.has(kSync) && sp.num_inputs != 1)
    throw std::invalid_argument("attention::AttentionOp: exactly one producer (the QKV stage) when synchronized");
  launch_kernel(ctx, i.kernel, i.launch_grid, dim3(uint32_t(i.threads)), i.smem, i.p, sp);
}

void AttentionOp::run(cudaStream_t s, bool pdl, bool trigger) const {
  const Impl& i = ready(impl_);
  StageParams sp;
  sp.grid = i.grid;
  sp.shape = i.tile;
  sp.flags = trigger ? kPdlTrigger : 0;
  launch_kernel(LaunchCtx{s, pdl, sp}, i.kernel, i.launch_grid, dim3(uint32_t(i.threads)), i.smem, i.p, sp);
}

}  // namespace braid::attention
