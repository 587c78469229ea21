#include "braid/kernels/attention/attention_op.hpp"

#include <cmath>
#include <stdexcept>

#include "braid/kernels/attention/flash_decode_kernel.cuh"
#include "braid/kernels/attention/flash_kernel.cuh"
#include "braid/kernels/attention/flash_sm90_kernel.cuh"
#include "braid/kernels/attention/long_query_split.hpp"
#include "braid/kernels/attention/unfused_kernels.cuh"
#include "braid/kernels/hopper/gemm_op.hpp"
#include "braid/runtime/chain.cuh"

namespace braid::attention {

using KernelFn = void (*)(const FlashParams, const StageParams);
using Sm90KernelFn = void (*)(const FlashSm90Params, const StageParams);

struct AttentionOp::Impl {
  AttentionArgs args;
  AttentionConfig config;
  FlashParams p;
  KernelFn kernel = nullptr;
  KernelFn lean = nullptr;           // the decode kernel's lean form (launch_form)
  FlashSm90Params p90;               // config.hopper
  Sm90KernelFn kernel90 = nullptr;
  Sm90KernelFn lean90 = nullptr;     // its lean form
  dim3 launch_grid;
  int threads = 0;
  size_t smem = 0;
  Grid grid{1, 1, 1};
  TileShape tile;
  int cluster = 1;  // CTAs per thread-block cluster along z (the decode kernel and wg-c2 merge their splits in it)
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
  if (text.rfind("wg", 0) == 0 && text.size() > 3 && text.compare(text.size() - 3, 3, "-lt") == 0) {  // wg...-lt
    if (auto why = parse_attention_config(text.substr(0, text.size() - 3), c); !why.empty()) return why;
    c.late_trigger = true;
    out = c;
    return "";
  }
  if (text == "wg-s") {
    c.hopper = true;
    c.split_long = true;
    out = c;
    return "";
  }
  if (text == "wg" || text == "wg-r" || text == "wg-c2" || text == "wg-r-c2") {
    c.hopper = true;
    c.reverse = text.rfind("wg-r", 0) == 0;
    c.cluster = text.size() > 3 && text.compare(text.size() - 3, 3, "-c2") == 0 ? 2 : 0;
    out = c;
    return "";
  }
  if (text.size() < 2 || (text[0] != 'w' && text[0] != 'd'))
    return "an attention config starts with w<warps> or d<warps> (decode kernel), or is wg[-r][-c2][-lt] or wg-s[-lt] (got '" +
           text + "')";
  c.decode = text[0] == 'd';
  try {
    c.warps = std::stoi(text.substr(1), &pos);
    pos += 1;
    while (pos < text.size()) {
      if (text.compare(pos, 2, "-s") == 0) {
        size_t q = 0;
        c.split_keys = std::stoi(text.substr(pos + 2), &q);
        pos += 2 + q;
      } else if (text.compare(pos, 2, "-c") == 0 && c.decode) {
        size_t q = 0;
        c.cluster = std::stoi(text.substr(pos + 2), &q);
        pos += 2 + q;
      } else if (text.compare(pos, 2, "-r") == 0 && !c.decode) {
        c.reverse = true;
        pos += 2;
      } else {
        return "unknown option at offset " + std::to_string(pos) + " of '" + text + "' (known: -s<keys>, -r; decode: -s<keys>, -c<CTAs>)";
      }
    }
  } catch (const std::exception&) {
    return "cannot parse attention config '" + text + "' (e.g. w4, w1-s256, w4-r, d4-s256, d8-c8)";
  }
  out = c;
  return "";
}

static int rows_per_cta(const AttentionConfig& c) {
  return c.hopper ? sm90::kBlockM : c.decode ? kDecodeMaxRows : 16 * c.warps;
}

std::string AttentionOp::can_implement(const AttentionArgs& a, const AttentionConfig& c) {
  if (a.dtype != DType::F16 && a.dtype != DType::BF16) return "dtype must be fp16 or bf16";
  if (c.late_trigger && !c.hopper)
    return "the late PDL trigger (-lt) is the Hopper prompt kernel's option (wg...-lt); the other kernels trigger at their start";
  if (c.hopper) {
    if (a.S_cached != 0) return "the Hopper attention kernel (wg) reads no cached keys (S_cached must be 0): use w1/w4";
    if (a.S_new % sm90::kBlockM != 0)
      return "the Hopper attention kernel (wg) needs S_new to be a multiple of " + std::to_string(sm90::kBlockM) +
             " (got " + std::to_string(a.S_new) + "): use w4";
    if (c.split_keys != 0) return "the Hopper attention kernel (wg) splits keys only over a 2-CTA cluster (wg-c2)";
    if (c.cluster != 0 && c.cluster != 2) return "the Hopper attention kernel (wg) splits keys over 2 CTAs (wg-c2) or none";
    if (c.split_long && (c.cluster != 0 || c.reverse))
      return "wg-s orders and splits the query blocks itself: no -r or -c2 with it";
    if (c.split_long && !a.causal)
      return "wg-s splits the long query blocks of a causal prompt; without the causal mask every block is as long: use wg-c2";
  } else if (c.split_long) {
    return "only the Hopper attention kernel (wg-s) splits the long query blocks";
  } else if (c.decode) {
    if (c.warps != 4 && c.warps != 8) return "the decode kernel (d) runs 4 or 8 warps (got " + std::to_string(c.warps) + ")";
    if (a.S_new > kDecodeMaxRows)
      return "the decode kernel (d) takes at most " + std::to_string(kDecodeMaxRows) + " new tokens per sequence (got S_new=" +
             std::to_string(a.S_new) + "): use w4 or wg";
    if (c.reverse) return "the decode kernel (d) has one query block per sequence: nothing to reverse";
    if (c.cluster != 0 && (c.cluster < 2 || c.cluster > 16))
      return "a decode cluster has 2 to 16 CTAs (got " + std::to_string(c.cluster) + ")";
    if (c.cluster != 0 && c.split_keys != 0) return "the decode kernel takes -s<keys> or -c<CTAs>, not both";
  } else if (c.cluster != 0) {
    return "only the decode (d) and Hopper (wg) kernels split keys over a cluster";
  } else if (c.warps != 1 && c.warps != 4) {
    return "warps must be 1 or 4 (got " + std::to_string(c.warps) + ")";
  }
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

// The layout and softmax/dropout constants every attention kernel reads.
static void fill_layout(FlashParams& p, const AttentionArgs& a, int q_rows, int q_blocks) {
  const int D = kHeadDim;
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
  p.splits = 1;
  p.split_keys = ((a.S_cached + a.S_new + kKeyBlock - 1) / kKeyBlock) * kKeyBlock;
  const float scale = a.scale > 0 ? a.scale : 1.0f / std::sqrt(float(D));
  p.scale_log2 = scale * 1.4426950408889634f;
  p.drop_threshold = dropout_threshold(a.dropout_p);
  p.keep_scale = p.drop_threshold ? float(1.0 / (1.0 - double(a.dropout_p))) : 1.0f;
  p.seed = a.seed;
  p.causal = a.causal ? 1 : 0;
  p.write_cache = a.update_cache ? 1 : 0;
}

template <class T, int W>
static KernelFn kernel_for() {
  return flash_attention_kernel<T, W>;
}

// The decode kernel's instances: 4 or 8 warps; one query row per thread (plain decode) or up to 4.
// kLean: the lean form (launched without tile sync or traces; AttentionOp::launch).
template <class T, bool kLean = false>
static KernelFn decode_kernel_for(int warps, int q_rows) {
  if (warps == 8)
    return q_rows == 1 ? flash_decode_kernel<T, 8, 1, kLean> : flash_decode_kernel<T, 8, kDecodeMaxRows, kLean>;
  return q_rows == 1 ? flash_decode_kernel<T, 4, 1, kLean> : flash_decode_kernel<T, 4, kDecodeMaxRows, kLean>;
}
template <class T, bool kDropout>
static Sm90KernelFn sm90_kernel_for(bool lean) {
  return lean ? flash_attention_sm90_kernel<T, kDropout, true> : flash_attention_sm90_kernel<T, kDropout, false>;
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
  const int whole = ((keys + kKeyBlock - 1) / kKeyBlock) * kKeyBlock;
  const int per_cta = c.cluster ? (keys + c.cluster - 1) / c.cluster : 0;  // decode cluster: keys per CTA
  const int split_keys = c.split_keys ? c.split_keys : c.cluster ? ((per_cta + kKeyBlock - 1) / kKeyBlock) * kKeyBlock : whole;
  const int splits = (keys + split_keys - 1) / split_keys;
  // A split of one key block needs no second buffer: half the shared memory, twice the CTAs per SM.
  const int kv_buffers = split_keys <= kKeyBlock ? 1 : 2;
  if (!c.decode && size_t(2 * splits + 1) * q_rows * sizeof(float) > 2 * size_t(kv_buffers) * kKeyBlock * kRowBytes)
    return "too many key splits (" + std::to_string(splits) + ") for the merge's shared memory: raise split_keys";
  fill_layout(im->p, a, q_rows, q_blocks);
  FlashParams& p = im->p;
  if (c.hopper) {
    int dev = 0, major = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess)
      return "cannot query the device";
    if (major != 9) return "the Hopper attention kernel (wg) needs an sm_90 GPU";
    p.reverse_rows = c.reverse ? 1 : 0;
    im->p90.p = p;
    im->p90.phase_ns = a.phase_ns;
    im->p90.late_trigger = c.late_trigger ? 1 : 0;
    const uint64_t cols = uint64_t(3) * a.NH * D;
    if (auto why = tma::encode_2d(im->p90.qkv_map, a.qkv, 2, cols, uint64_t(a.B) * a.S_new, cols * 2, 64, sm90::kBlockM);
        !why.empty())
      return "the QKV tensor map: " + why;
    // wg-c2: every tile's key blocks halved between the two CTAs of a cluster (the causal tail's long
    // query blocks no longer set the kernel's time alone); rank 0 merges through DSMEM and posts.
    im->p90.p.cluster_merge = c.cluster == 2 ? 1 : 0;
    im->cluster = c.cluster == 2 ? 2 : 1;
    im->grid = Grid{uint32_t(a.NH), uint32_t(a.B * q_blocks), 1};
    im->tile = TileShape{uint32_t(q_rows), uint32_t(D)};
    im->launch_grid = dim3(uint32_t(a.NH), uint32_t(a.B * q_blocks), uint32_t(im->cluster));
    if (c.split_long) {
      int sms = 0;
      if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess) return "cannot query the device";
      const int from = long_query_split_from(q_blocks, a.NH, a.B, sms);
      if (from == 0)
        return "wg-s: nothing to split (" + std::to_string(q_blocks) + " query blocks per sequence, " +
               std::to_string(a.NH * a.B * q_blocks) + " tiles on " + std::to_string(sms) +
               " SMs: no split is modelled faster than none, long_query_split.hpp): use wg or wg-r";
      const size_t split_tiles = size_t(a.NH) * a.B * (q_blocks - from);
      const size_t part_floats = split_tiles * 2 * sm90::kSplitVals * 128;  // (even: the state words stay 8-byte aligned)
      if (cudaMalloc(&im->workspace, part_floats * sizeof(float) + split_tiles * sizeof(uint64_t)) != cudaSuccess)
        return "cannot allocate the split workspace";
      im->p90.split_from = from;
      im->p90.split_part = im->workspace;
      im->p90.split_state = reinterpret_cast<uint64_t*>(im->workspace + part_floats);
      if (cudaMemset(im->p90.split_state, 0, split_tiles * sizeof(uint64_t)) != cudaSuccess)
        return "cannot clear the split workspace";
      im->launch_grid.y = uint32_t(a.B * long_query_split_ctas(q_blocks, from));
    }
    im->threads = sm90::kThreads;
    im->smem = sm90::kSmemBytes;
    const bool drop = p.drop_threshold != 0;
    for (bool lean : {false, true}) {
      Sm90KernelFn& f = lean ? im->lean90 : im->kernel90;
      f = a.dtype == DType::BF16 ? (drop ? sm90_kernel_for<__nv_bfloat16, true>(lean) : sm90_kernel_for<__nv_bfloat16, false>(lean))
                                 : (drop ? sm90_kernel_for<__half, true>(lean) : sm90_kernel_for<__half, false>(lean));
      if (cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize, int(im->smem)) != cudaSuccess)
        return "cannot set the kernel's shared memory size (" + std::to_string(im->smem) + " bytes)";
    }
    impl_ = std::move(im);
    return "";
  }
  p.splits = splits;
  p.split_keys = split_keys;
  p.reverse_rows = c.reverse ? 1 : 0;
  p.kv_buffers = kv_buffers;
  p.cluster_merge = c.cluster && splits > 1 ? 1 : 0;  // (splits <= cluster: one cluster of `splits` CTAs per tile)
  static_assert(kDecodePhases == kPromptKernelPhases, "AttentionArgs::phase_ns: one stride for both kernels");
  p.phase_ns = c.decode ? a.phase_ns : nullptr;
  im->cluster = p.cluster_merge ? splits : 1;
  im->grid = Grid{uint32_t(a.NH), uint32_t(a.B * q_blocks), 1};
  im->tile = TileShape{uint32_t(q_rows), uint32_t(D)};
  im->launch_grid = dim3(uint32_t(a.NH), uint32_t(a.B * q_blocks), uint32_t(splits));
  im->threads = 32 * c.warps;
  im->smem = c.decode ? decode_smem_floats(c.warps, q_rows, splits, p.cluster_merge != 0) * sizeof(float)
                      : size_t(bm) * kRowBytes + 2 * size_t(kv_buffers) * kKeyBlock * kRowBytes;
  if (splits > 1 && !p.cluster_merge) {
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
  if (c.decode) {
    im->kernel = bf ? decode_kernel_for<__nv_bfloat16>(c.warps, q_rows) : decode_kernel_for<__half>(c.warps, q_rows);
    im->lean = bf ? decode_kernel_for<__nv_bfloat16, true>(c.warps, q_rows) : decode_kernel_for<__half, true>(c.warps, q_rows);
  } else
    im->kernel = c.warps == 4 ? (bf ? kernel_for<__nv_bfloat16, 4>() : kernel_for<__half, 4>())
                              : (bf ? kernel_for<__nv_bfloat16, 1>() : kernel_for<__half, 1>());
  // The limit is per kernel function, shared by every op of this instantiation: only ever raise it
  // (another prepared op may need more than this one).
  cudaFuncAttributes fa{};
  if (cudaFuncGetAttributes(&fa, im->kernel) != cudaSuccess ||
      (size_t(fa.maxDynamicSharedSizeBytes) < im->smem &&
       cudaFuncSetAttribute(im->kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(im->smem)) != cudaSuccess))
    return "cannot set the kernel's shared memory size (" + std::to_string(im->smem) + " bytes)";
  if (im->lean && cudaFuncSetAttribute(im->lean, cudaFuncAttributeMaxDynamicSharedMemorySize, int(im->smem)) != cudaSuccess)
    return "cannot set the kernel's (lean form) shared memory size (" + std::to_string(im->smem) + " bytes)";
  // Clusters of more than 8 CTAs (portable limit) are an opt-in on Hopper (up to 16).
  for (KernelFn f : {im->kernel, im->lean})
    if (f && im->cluster > 8 && cudaFuncSetAttribute(f, cudaFuncAttributeNonPortableClusterSizeAllowed, 1) != cudaSuccess)
      return "this GPU does not allow clusters of " + std::to_string(im->cluster) + " CTAs";
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

// The kernel in the form the launch fits (gemm_config.hpp, "The forms of braid's GEMM kernels"): the lean one
// without tile sync and traces.
static void launch_form(const AttentionOp::Impl& i, const LaunchCtx& ctx) {
  const bool lean = hopper::launch_fits_lean_form(ctx.params) &&
                    (i.kernel90 ? i.lean90 != nullptr : i.lean != nullptr && i.p.phase_ns == nullptr);
  if (lean) hopper::note_lean_form_launch();
  if (i.kernel90) {
    // -lt: the trigger moves from the block's start (begin_block) to the end of its key loop (the kernel).
    FlashSm90Params p90 = i.p90;
    StageParams sp = ctx.params;
    p90.late_trigger = i.p90.late_trigger && sp.has(kPdlTrigger) ? 1 : 0;
    if (p90.late_trigger) sp.flags &= ~uint32_t(kPdlTrigger);
    launch_kernel_clustered(ctx, lean ? i.lean90 : i.kernel90, i.launch_grid, dim3(uint32_t(i.threads)), i.smem,
                            dim3(1, 1, uint32_t(i.cluster)), p90, sp);
  } else {
    launch_kernel_clustered(ctx, lean ? i.lean : i.kernel, i.launch_grid, dim3(uint32_t(i.threads)), i.smem,
                            dim3(1, 1, uint32_t(i.cluster)), i.p, ctx.params);
  }
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
  launch_form(i, ctx);
}

void AttentionOp::run(cudaStream_t s, bool pdl, bool trigger) const {
  const Impl& i = ready(impl_);
  StageParams sp;
  sp.grid = i.grid;
  sp.shape = i.tile;
  sp.flags = trigger ? kPdlTrigger : 0;
  launch_form(i, LaunchCtx{s, pdl, sp});
}

// ---- the unfused chain ---------------------------------------------------------------------------

using UnfusedFn = void (*)(const UnfusedParams, const StageParams);

struct UnfusedAttention::Impl {
  AttentionArgs args;
  UnfusedParams u;
  UnfusedFn fn[3] = {};
  dim3 launch_grid[3];
  int threads[3] = {128, 256, 128};
  size_t smem[3] = {0, 0, 0};
  Grid grid[3];
  TileShape tile[3];
  void* buffers = nullptr;
  ~Impl() { cudaFree(buffers); }
};

UnfusedAttention::UnfusedAttention() = default;
UnfusedAttention::~UnfusedAttention() = default;
UnfusedAttention::UnfusedAttention(UnfusedAttention&&) noexcept = default;
UnfusedAttention& UnfusedAttention::operator=(UnfusedAttention&&) noexcept = default;

std::string UnfusedAttention::can_implement(const AttentionArgs& a) { return AttentionOp::can_implement(a, {4, 0}); }

std::string UnfusedAttention::prepare(const AttentionArgs& a) {
  if (std::string why = can_implement(a); !why.empty()) return why;
  auto im = std::make_unique<Impl>();
  im->args = a;
  const int q_rows = a.S_new < 64 ? a.S_new : 64, q_blocks = a.S_new / q_rows;
  fill_layout(im->u.a, a, q_rows, q_blocks);
  const int keys = a.S_cached + a.S_new;
  im->u.key_tiles = (keys + kKeyBlock - 1) / kKeyBlock;
  im->u.ldp = im->u.key_tiles * kKeyBlock;
  const size_t elems = size_t(a.B) * a.NH * a.S_new * im->u.ldp;
  if (cudaMalloc(&im->buffers, 2 * elems * 2) != cudaSuccess) return "cannot allocate P and R (" + std::to_string(4 * elems) + " bytes)";
  im->u.P = im->buffers;
  im->u.R = static_cast<char*>(im->buffers) + elems * 2;
  const uint32_t Y = uint32_t(a.B * q_blocks), KT = uint32_t(im->u.key_tiles), NH = uint32_t(a.NH);
  im->grid[kScores] = im->grid[kSoftmax] = Grid{KT, Y, NH};
  im->grid[kValues] = Grid{NH, Y, 1};
  im->tile[kScores] = im->tile[kSoftmax] = TileShape{uint32_t(q_rows), uint32_t(kKeyBlock)};
  im->tile[kValues] = TileShape{uint32_t(q_rows), uint32_t(kHeadDim)};
  im->launch_grid[kScores] = dim3(KT, Y, NH);
  im->launch_grid[kSoftmax] = dim3(Y, NH, 1);
  im->launch_grid[kValues] = dim3(NH, Y, 1);
  im->smem[kScores] = 2 * 64 * size_t(kRowBytes);
  im->smem[kValues] = 64 * 128 + 64 * size_t(kRowBytes);
  const bool bf = a.dtype == DType::BF16;
  im->fn[kScores] = bf ? attn_scores_kernel<__nv_bfloat16> : attn_scores_kernel<__half>;
  im->fn[kSoftmax] = bf ? attn_softmax_kernel<__nv_bfloat16> : attn_softmax_kernel<__half>;
  im->fn[kValues] = bf ? attn_values_kernel<__nv_bfloat16> : attn_values_kernel<__half>;
  for (int i = 0; i < 3; ++i)
    if (im->smem[i] > 48 * 1024 &&
        cudaFuncSetAttribute(im->fn[i], cudaFuncAttributeMaxDynamicSharedMemorySize, int(im->smem[i])) != cudaSuccess)
      return "cannot set the shared memory size of an unfused attention kernel";
  impl_ = std::move(im);
  return "";
}

static const UnfusedAttention::Impl& ready(const std::unique_ptr<UnfusedAttention::Impl>& i) {
  if (!i) throw std::logic_error("attention::UnfusedAttention used before a successful prepare()");
  return *i;
}

Grid UnfusedAttention::grid(Part part) const { return ready(impl_).grid[part]; }
TileShape UnfusedAttention::tile(Part part) const { return ready(impl_).tile[part]; }
int UnfusedAttention::ctas(Part part) const {
  const dim3 g = ready(impl_).launch_grid[part];
  return int(g.x * g.y * g.z);
}
int UnfusedAttention::key_tiles() const { return ready(impl_).u.key_tiles; }
const AttentionArgs& UnfusedAttention::args() const { return ready(impl_).args; }

void UnfusedAttention::launch(Part part, const LaunchCtx& ctx) const {
  const Impl& i = ready(impl_);
  const StageParams& sp = ctx.params;
  if (sp.grid != i.grid[part] || sp.shape.rows != i.tile[part].rows || sp.shape.cols != i.tile[part].cols)
    throw std::invalid_argument("attention::UnfusedAttention: stage " + std::to_string(int(part)) +
                                "'s grid/tile shape does not match the prepared problem");
  if (sp.has(kDynamicOrder)) throw std::invalid_argument("attention::UnfusedAttention: no dynamic order");
  const uint32_t want_inputs = part == kValues ? 2u : 1u;
  if (sp.has(kSync) && sp.num_inputs != want_inputs)
    throw std::invalid_argument("attention::UnfusedAttention: stage " + std::to_string(int(part)) + " needs " +
                                std::to_string(want_inputs) + " producer(s) when synchronized");
  launch_kernel(ctx, i.fn[part], i.launch_grid[part], dim3(uint32_t(i.threads[part])), i.smem[part], i.u, sp);
}

void UnfusedAttention::run(cudaStream_t s, bool pdl, bool trigger) const {
  const Impl& i = ready(impl_);
  for (int part = 0; part < 3; ++part) {
    StageParams sp;
    sp.grid = i.grid[part];
    sp.shape = i.tile[part];
    sp.flags = (part < 2 || trigger) ? kPdlTrigger : 0;
    launch_kernel(LaunchCtx{s, part > 0 || pdl, sp}, i.fn[part], i.launch_grid[part], dim3(uint32_t(i.threads[part])),
                  i.smem[part], i.u, sp);
  }
}

}  // namespace braid::attention
