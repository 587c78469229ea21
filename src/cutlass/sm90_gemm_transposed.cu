// CUTLASS's sm90 cooperative kernel on the transposed problem, D^T[N, M] = B^T[N, K] . A^T[K, M] (with
// braid's row-major A [M, K], B [K, N], D [M, N] these are column-major A', B' and D' of the same memory):
// the weights are the MMA's M operand (multiples of 64: wgmma's M), the tokens its N operand (multiples of
// 8), and the consumer warpgroups split the tokens. This is how cuBLASLt's nvjet kernels run the MLP and
// QKV shapes (bench/results/gemm-192x192-vs-cublas-ncu-h100-20261127/): 192 weight columns x 192 tokens
// over two warpgroups of 192 x 96, or 320 x 64 over two of 320 x 32 -- tilings braid's row-major
// orientation cannot express (two warpgroups cannot split 192 rows of wgmma's 64-row M; a tile is at most
// 256 columns of its N). A probe for braid-gemm --cutlass-shapes t-...: plain epilogue, data-parallel,
// persistent, no PDL.
#include <stdexcept>

#include "cutlass/sm90_gemm_config.hpp"

namespace braid::cutlass_sm90::detail {

namespace {

using Col = cutlass::layout::ColumnMajor;

// Tile_ = (weights, tokens, K); WgTokens: the tokens of each of the two consumer warpgroups (Tile_'s
// second extent / 2); Cluster_ = (along the weights, along the tokens, 1).
template <class Tile_, int WgTokens, class Cluster_>
struct TransposedConfig {
  using TileShape = Tile_;
  using ClusterShape = Cluster_;
  using Kernel_ = cutlass::gemm::KernelTmaWarpSpecializedCooperative;
  // The epilogue stores from the registers (no shared memory, no TMA): CUTLASS's TMA epilogues assume
  // that the cooperative warpgroups split M. In D' (column-major) a thread's pairs of adjacent tokens
  // are a row apart in memory, so the stores are 2-byte scattered ones -- a slow epilogue, once per tile
  // after a K = 6144-12288 mainloop (the probe is about the mainloop).
  using Epi_ = cutlass::epilogue::NoSmemWarpSpecialized;
  using Fusion = cutlass::epilogue::fusion::LinearCombination<Element, float, Element, float>;
  using Epilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,
      cutlass::epilogue::collective::EpilogueTileAuto, float, float, Element, Col, 1, Element, Col, 1, Epi_,
      Fusion>::CollectiveOp;
  using Builder = cutlass::gemm::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, Element, Col, kAlign, Element, Col, kAlign, float, TileShape,
      ClusterShape,
      cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(sizeof(typename Epilogue::SharedStorage))>,
      Kernel_>;
  // The builder lays two warpgroups along M; here they split N (the tokens): the wgmma atom of one
  // warpgroup's share, laid out 1 x 2, repeated over the tile's M by the collective.
  using WgShape = cute::Shape<cute::_64, cute::Int<WgTokens>, cute::_64>;
  using TiledMma = decltype(cute::make_tiled_mma(
      cute::GMMA::ss_op_selector<Element, Element, float, WgShape, Builder::GmmaMajorA, Builder::GmmaMajorB>(),
      cute::Layout<cute::Shape<cute::_1, cute::_2, cute::_1>>{}));
  using Mainloop = cutlass::gemm::collective::CollectiveMma<
      typename Builder::DispatchPolicy, TileShape, Element, cutlass::gemm::TagToStrideA_t<Col>, Element,
      cutlass::gemm::TagToStrideB_t<Col>, TiledMma, typename Builder::GmemTiledCopyA, typename Builder::SmemLayoutAtomA,
      void, cute::identity, typename Builder::GmemTiledCopyB, typename Builder::SmemLayoutAtomB, void, cute::identity>;
  using Kernel = cutlass::gemm::kernel::GemmUniversal<cute::Shape<int, int, int, int>, Mainloop, Epilogue, void>;
  using Device = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;

  static typename Device::Arguments arguments(const GemmProblem& p) {
    using K = typename Device::GemmKernel;
    // D'[N, M] = A'[N, K] . B'[K, M]: A' is B's memory, B' is A's, D' is D's.
    auto sA = cutlass::make_cute_packed_stride(typename K::StrideA{}, cute::make_shape(p.N, p.K, 1));
    auto sB = cutlass::make_cute_packed_stride(typename K::StrideB{}, cute::make_shape(p.M, p.K, 1));
    auto sC = cutlass::make_cute_packed_stride(typename K::StrideC{}, cute::make_shape(p.N, p.M, 1));
    auto sD = cutlass::make_cute_packed_stride(typename K::StrideD{}, cute::make_shape(p.N, p.M, 1));
    typename Device::Arguments args{cutlass::gemm::GemmUniversalMode::kGemm,
                                    {p.N, p.M, p.K, 1},
                                    {reinterpret_cast<const Element*>(p.B), sA, reinterpret_cast<const Element*>(p.A), sB},
                                    {{}, reinterpret_cast<const Element*>(p.D), sC, reinterpret_cast<Element*>(p.D), sD}};
    args.epilogue.thread.alpha = 1.0f;
    args.epilogue.thread.beta = 0.0f;
    return args;
  }
};

}  // namespace

std::unique_ptr<Runner> make_transposed_runner(GemmKernelShape shape) {
  using namespace cute;
  switch (shape) {
    case GemmKernelShape::Transposed192x192:
      return std::make_unique<RunnerOf<TransposedConfig<Shape<_192, _192, _64>, 96, Shape<_1, _1, _1>>, NoGelu>>();
    case GemmKernelShape::Transposed192x192Cluster2:
      return std::make_unique<RunnerOf<TransposedConfig<Shape<_192, _192, _64>, 96, Shape<_2, _1, _1>>, NoGelu>>();
    case GemmKernelShape::Transposed320x64Cluster4:
      return std::make_unique<RunnerOf<TransposedConfig<Shape<Int<320>, _64, _64>, 32, Shape<_1, _4, _1>>, NoGelu>>();
    case GemmKernelShape::Transposed192x128:
      return std::make_unique<RunnerOf<TransposedConfig<Shape<_192, _128, _64>, 64, Shape<_1, _1, _1>>, NoGelu>>();
    case GemmKernelShape::Transposed256x128:
      return std::make_unique<RunnerOf<TransposedConfig<Shape<_256, _128, _64>, 64, Shape<_1, _1, _1>>, NoGelu>>();
    case GemmKernelShape::Transposed128x256:
      return std::make_unique<RunnerOf<TransposedConfig<Shape<_128, _256, _64>, 128, Shape<_1, _1, _1>>, NoGelu>>();
    default: break;
  }
  throw std::invalid_argument("make_transposed_runner: not a transposed kernel shape");
}

}  // namespace braid::cutlass_sm90::detail
