// braid::hopper::ConvOp: checks and the choice of the instantiation.
#include "braid/kernels/hopper/conv_op.hpp"

#include "braid/runtime/chain.cuh"

namespace braid::hopper {

std::unique_ptr<ConvKernelBase> make_conv_kernel_f16_128x64(bool segmented);
std::unique_ptr<ConvKernelBase> make_conv_kernel_f16_128x128(bool segmented);
std::unique_ptr<ConvKernelBase> make_conv_kernel_f16_64x64(bool segmented);
std::unique_ptr<ConvKernelBase> make_conv_kernel_f16_64x32(bool segmented);
std::unique_ptr<ConvKernelBase> make_conv_kernel_f16_64x128(bool segmented);
std::unique_ptr<ConvKernelBase> make_conv_kernel_f16_192x128(bool segmented);
std::unique_ptr<ConvKernelBase> make_conv_kernel_bf16_128x64(bool segmented);
std::unique_ptr<ConvKernelBase> make_conv_kernel_bf16_64x64(bool segmented);
std::unique_ptr<ConvKernelBase> make_conv_kernel_f16_128x64_staged(bool segmented);
std::unique_ptr<ConvKernelBase> make_conv_kernel_f16_128x64_mc2(bool segmented);
std::unique_ptr<ConvKernelBase> make_conv_kernel_f16_64x64_mc2(bool segmented);
std::unique_ptr<ConvKernelBase> make_conv_kernel_f16_64x128_mc2(bool segmented);
std::unique_ptr<ConvKernelBase> make_conv_kernel_f16_64x64_o2(bool segmented);
std::unique_ptr<ConvKernelBase> make_conv_kernel_f16_64x32_o2(bool segmented);

std::unique_ptr<ConvKernelBase> make_conv_kernel(DType dtype, int tile_m, int tile_n, bool staged, bool segmented,
                                                 int multicast, int ctas_per_sm) {
  if (ctas_per_sm != 1) {  // two CTAs per SM: fp16 64-row tiles, default stores, no multicast
    if (ctas_per_sm != 2 || multicast != 1 || dtype != DType::F16 || staged != stages_epilogue_by_default(tile_m, tile_n) ||
        tile_m != 64)
      return nullptr;
    if (tile_n == 64) return make_conv_kernel_f16_64x64_o2(segmented);
    if (tile_n == 32) return make_conv_kernel_f16_64x32_o2(segmented);
    return nullptr;
  }
  if (multicast != 1) {  // filters multicast to clusters of two: fp16, default stores, three tiles
    if (multicast != 2 || dtype != DType::F16 || staged != stages_epilogue_by_default(tile_m, tile_n)) return nullptr;
    if (tile_m == 128 && tile_n == 64) return make_conv_kernel_f16_128x64_mc2(segmented);
    if (tile_m == 64 && tile_n == 64) return make_conv_kernel_f16_64x64_mc2(segmented);
    if (tile_m == 64 && tile_n == 128) return make_conv_kernel_f16_64x128_mc2(segmented);
    return nullptr;
  }
  if (staged != stages_epilogue_by_default(tile_m, tile_n)) {  // the other store, where instantiated
    if (dtype == DType::F16 && tile_m == 128 && tile_n == 64 && staged) return make_conv_kernel_f16_128x64_staged(segmented);
    return nullptr;
  }
  if (dtype == DType::F16) {
    if (tile_m == 128 && tile_n == 64) return make_conv_kernel_f16_128x64(segmented);
    if (tile_m == 128 && tile_n == 128) return make_conv_kernel_f16_128x128(segmented);
    if (tile_m == 64 && tile_n == 64) return make_conv_kernel_f16_64x64(segmented);
    if (tile_m == 64 && tile_n == 32) return make_conv_kernel_f16_64x32(segmented);
    if (tile_m == 64 && tile_n == 128) return make_conv_kernel_f16_64x128(segmented);
    if (tile_m == 192 && tile_n == 128) return make_conv_kernel_f16_192x128(segmented);
  } else {
    if (tile_m == 128 && tile_n == 64) return make_conv_kernel_bf16_128x64(segmented);
    if (tile_m == 64 && tile_n == 64) return make_conv_kernel_bf16_64x64(segmented);
  }
  return nullptr;
}

std::string ConvOp::can_implement(const ConvArgs& a, const GemmConfig& c) {
  if (a.X == nullptr || a.Wt == nullptr || a.Y == nullptr || a.bias == nullptr)
    return "X, Wt, bias and Y must be device pointers";
  if (a.N < 1 || a.H < 1 || a.W < 1 || a.C < 1 || a.K < 1)
    return "N, H, W, C, K must be positive (got " + std::to_string(a.N) + ", " + std::to_string(a.H) + ", " +
           std::to_string(a.W) + ", " + std::to_string(a.C) + ", " + std::to_string(a.K) + ")";
  if (a.C % kTileK != 0)
    return "C must be a multiple of " + std::to_string(kTileK) + " (a k-tile is one filter tap's channel block); got C=" +
           std::to_string(a.C);
  if (a.K % 8 != 0) return "K (filters) must be a multiple of 8 (16-byte rows); got K=" + std::to_string(a.K);
  if (a.R < 1 || a.S < 1 || a.R > 15 || a.S > 15 || a.pad < 0 || 2 * a.pad != a.R - 1 || a.R != a.S)
    return "filters must be square, odd, at most 15, with same padding (pad = (R-1)/2); got R=" + std::to_string(a.R) +
           " S=" + std::to_string(a.S) + " pad=" + std::to_string(a.pad);
  if (int64_t(a.N) * a.H * a.W >= (int64_t(1) << 31)) return "N*H*W must fit in 31 bits";
  if (a.act != Activation::ReLU && a.act != Activation::None) return "the convolution's activation is ReLU or none";
  if (c.tile_n != 32 && c.tile_n != 64 && c.tile_n != 128)
    return "tile_n must be 32, 64 or 128 (got " + std::to_string(c.tile_n) + ")";
  if (c.tile_n == 32 && (c.tile_m != 64 || a.dtype != DType::F16))
    return "32-filter convolution tiles exist for fp16 with tile_m 64 only (got " + std::string(dtype_name(a.dtype)) +
           " tile_m " + std::to_string(c.tile_m) + ")";
  if (c.tile_m != 64 && c.tile_m != 128 && c.tile_m != 192)
    return "tile_m must be 64, 128 or 192 (got " + std::to_string(c.tile_m) + ")";
  if (c.tile_m == 192 && (c.tile_n != 128 || a.dtype != DType::F16))
    return "192-row convolution tiles exist for fp16 with tile_n 128 only (got " + std::string(dtype_name(a.dtype)) +
           " tile_n " + std::to_string(c.tile_n) + ")";
  if (c.multicast != 1 &&
      (c.multicast != 2 || a.dtype != DType::F16 || c.staged() != stages_epilogue_by_default(c.tile_m, c.tile_n) ||
       !((c.tile_m == 128 && c.tile_n == 64) || (c.tile_m == 64 && (c.tile_n == 64 || c.tile_n == 128)))))
    return "filters multicast to clusters of two (-mc2) exist for fp16 128x64, 64x64 and 64x128 tiles with their default "
           "stores (got " + std::string(dtype_name(a.dtype)) + " " + c.name() + ")";
  if (c.ctas_per_sm != 1 &&
      (c.ctas_per_sm != 2 || c.multicast != 1 || c.dsmem_reduce || a.dtype != DType::F16 ||
       c.staged() != stages_epilogue_by_default(c.tile_m, c.tile_n) || c.tile_m != 64 || (c.tile_n != 64 && c.tile_n != 32)))
    return "two CTAs per SM (-o2) exist for fp16 64x64 and 64x32 tiles with their default stores, without -mc2 or -dsm "
           "(got " + std::string(dtype_name(a.dtype)) + " " + c.name() + ")";
  return check_schedule(c, a.R * a.S * a.C / kTileK);
}

std::string ConvOp::kernel_function(const GemmConfig& c) { return c.kernel_function(); }

std::string ConvOp::prepare(const ConvArgs& a, const GemmConfig& c) {
  if (std::string why = can_implement(a, c); !why.empty()) return why;
  std::unique_ptr<ConvKernelBase> k =
      make_conv_kernel(a.dtype, c.tile_m, c.tile_n, c.staged(), c.splits > 1 || c.stream_k, c.multicast, c.ctas_per_sm);
  if (!k)
    return std::string("no ") + dtype_name(a.dtype) + " convolution kernel with a " + std::to_string(c.tile_m) + "x" +
           std::to_string(c.tile_n) + " tile and " + (c.staged() ? "staged" : "direct") + " epilogue stores" +
           (c.multicast > 1 ? " multicast to clusters of " + std::to_string(c.multicast) : "") +
           (c.ctas_per_sm > 1 ? ", " + std::to_string(c.ctas_per_sm) + " CTAs per SM" : "");
  ConvKernelBase* kernel = k.get();
  const Grid grid{ceil_div(uint32_t(a.K), uint32_t(c.tile_n)), ceil_div(uint32_t(a.pixels()), uint32_t(c.tile_m)), 1};
  try {  // what only the schedule can tell (clusters that fit, segments per round): refused with the reason
    build(std::move(k), grid, TileShape{uint32_t(c.tile_m), uint32_t(c.tile_n)}, uint32_t(a.R * a.S * a.C / kTileK), c,
          "hopper::ConvOp");
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  kernel->set_problem(a, schedule(), partials(), arrivals());
  args_ = a;
  return "";
}

std::string ConvOp::rebind(const void* X, const void* residual) {
  if (args_.Y == nullptr) return "rebind before prepare";
  if (X == nullptr) return "X must be a device pointer";
  args_.X = X;
  args_.residual = residual;
  static_cast<ConvKernelBase&>(kernel()).set_problem(args_, schedule(), partials(), arrivals());
  return "";
}

std::string ConvOp::name() const { return std::string("hopper-conv-") + dtype_name(args_.dtype) + "-" + config().name(); }

}  // namespace braid::hopper
