// CUTLASS's sm90 kernels in other tile/cluster/schedule shapes than the MLP peer's cooperative
// 128x128 (GemmKernelShape): what CUTLASS's own collectives reach on a shape, next to braid's tiles
// (braid-gemm --cutlass-shapes). Plain epilogue, persistent data-parallel scheduler, no PDL.
#include <stdexcept>

#include "cutlass/sm90_gemm_config.hpp"

namespace braid::cutlass_sm90::detail {

namespace {
using Coop = cutlass::gemm::KernelTmaWarpSpecializedCooperative;
using CoopEpi = cutlass::epilogue::TmaWarpSpecializedCooperative;
using Pingpong = cutlass::gemm::KernelTmaWarpSpecializedPingpong;
using PingpongEpi = cutlass::epilogue::TmaWarpSpecialized;
using C1 = Shape<_1, _1, _1>;
using C2 = Shape<_2, _1, _1>;  // two CTAs along M share (multicast) the B tile

template <class Tile, class Cluster, class Kernel, class Epi>
std::unique_ptr<Runner> plain_runner() {
  return std::make_unique<RunnerOf<Config<cutlass::epilogue::thread::Identity, void, Tile, Cluster, Kernel, Epi>, NoGelu>>();
}
}  // namespace

std::unique_ptr<Runner> make_shape_runner(GemmKernelShape shape) {
  switch (shape) {
    case GemmKernelShape::Pingpong128x128: return plain_runner<Shape<_128, _128, _64>, C1, Pingpong, PingpongEpi>();
    case GemmKernelShape::Pingpong128x128Cluster2: return plain_runner<Shape<_128, _128, _64>, C2, Pingpong, PingpongEpi>();
    case GemmKernelShape::Pingpong64x256: return plain_runner<Shape<_64, _256, _64>, C1, Pingpong, PingpongEpi>();
    case GemmKernelShape::Cooperative128x256: return plain_runner<Shape<_128, _256, _64>, C1, Coop, CoopEpi>();
    case GemmKernelShape::Cooperative128x256Cluster2: return plain_runner<Shape<_128, _256, _64>, C2, Coop, CoopEpi>();
    case GemmKernelShape::Cooperative256x128Cluster2: return plain_runner<Shape<_256, _128, _64>, C2, Coop, CoopEpi>();
    case GemmKernelShape::Transposed192x192:
    case GemmKernelShape::Transposed192x192Cluster2:
    case GemmKernelShape::Transposed320x64Cluster4:
    case GemmKernelShape::Transposed192x128:
    case GemmKernelShape::Transposed256x128:
    case GemmKernelShape::Transposed128x256: return make_transposed_runner(shape);
    case GemmKernelShape::Cooperative128x128: break;
  }
  throw std::invalid_argument("make_shape_runner: the cooperative 128x128 kernel has its own runner");
}

}  // namespace braid::cutlass_sm90::detail
