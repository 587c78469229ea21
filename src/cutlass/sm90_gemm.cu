#include "cutlass/sm90_gemm.hpp"

#include <stdexcept>

#include "cute/tensor.hpp"
#include "cutlass/cutlass.h"
#include "cutlass/epilogue/collective/collective_builder.hpp"
#include "cutlass/epilogue/fusion/operations.hpp"
#include "cutlass/epilogue/thread/activation.h"
#include "cutlass/gemm/collective/collective_builder.hpp"
#include "cutlass/gemm/device/gemm_universal_adapter.h"
#include "cutlass/gemm/dispatch_policy.hpp"
#include "cutlass/gemm/kernel/gemm_universal.hpp"
#include "cutlass/util/packed_stride.hpp"

namespace braid::cutlass_sm90 {
namespace {

using namespace cute;
using Element = cutlass::half_t;
using Layout = cutlass::layout::RowMajor;  // A [M,K], B [K,N] (N-major), D [M,N]
constexpr int kAlign = 8;                   // 16-byte TMA accesses
using TileShape = Shape<_128, _128, _64>;
using ClusterShape = Shape<_1, _1, _1>;

template <template <class> class Act>
struct Config {
  using Fusion = cutlass::epilogue::fusion::LinCombEltAct<Act, Element, float, Element, float>;
  using Epilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,
      cutlass::epilogue::collective::EpilogueTileAuto, float, float, Element, Layout, kAlign, Element, Layout, kAlign,
      cutlass::epilogue::TmaWarpSpecializedCooperative, Fusion>::CollectiveOp;
  using Mainloop = typename cutlass::gemm::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, Element, Layout, kAlign, Element, Layout, kAlign, float,
      TileShape, ClusterShape,
      cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(sizeof(typename Epilogue::SharedStorage))>,
      cutlass::gemm::KernelTmaWarpSpecializedCooperative>::CollectiveOp;
  using Kernel = cutlass::gemm::kernel::GemmUniversal<Shape<int, int, int, int>, Mainloop, Epilogue>;
  using Device = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;

  static typename Device::Arguments arguments(const GemmProblem& p) {
    using K = typename Device::GemmKernel;
    auto sA = cutlass::make_cute_packed_stride(typename K::StrideA{}, make_shape(p.M, p.K, 1));
    auto sB = cutlass::make_cute_packed_stride(typename K::StrideB{}, make_shape(p.N, p.K, 1));
    auto sC = cutlass::make_cute_packed_stride(typename K::StrideC{}, make_shape(p.M, p.N, 1));
    auto sD = cutlass::make_cute_packed_stride(typename K::StrideD{}, make_shape(p.M, p.N, 1));
    typename Device::Arguments args{cutlass::gemm::GemmUniversalMode::kGemm,
                                    {p.M, p.N, p.K, 1},
                                    {reinterpret_cast<const Element*>(p.A), sA, reinterpret_cast<const Element*>(p.B), sB},
                                    {{}, reinterpret_cast<const Element*>(p.D), sC, reinterpret_cast<Element*>(p.D), sD}};
    args.epilogue.thread.alpha = 1.0f;
    args.epilogue.thread.beta = 0.0f;
    return args;
  }
};

using PlainGemm = Config<cutlass::epilogue::thread::Identity>;
using GeluGemm = Config<cutlass::epilogue::thread::GELU>;

}  // namespace

struct Gemm::Impl {
  typename PlainGemm::Device plain;
  typename GeluGemm::Device gelu;
  bool use_gelu = false;
  void* workspace = nullptr;
  size_t workspace_bytes = 0;
  ~Impl() {
    if (workspace) cudaFree(workspace);
  }
  template <class C, class D>
  std::string prepare(D& dev, const GemmProblem& p) {
    auto args = C::arguments(p);
    if (dev.can_implement(args) != cutlass::Status::kSuccess)
      return "CUTLASS sm90 GEMM cannot implement M=" + std::to_string(p.M) + " N=" + std::to_string(p.N) +
             " K=" + std::to_string(p.K) + " (K and N must be multiples of 8)";
    const size_t ws = D::get_workspace_size(args);
    if (ws > workspace_bytes) {
      if (workspace) cudaFree(workspace);
      if (cudaMalloc(&workspace, ws) != cudaSuccess) return "cudaMalloc of the CUTLASS workspace failed";
      workspace_bytes = ws;
    }
    if (dev.initialize(args, workspace) != cutlass::Status::kSuccess) return "CUTLASS initialize failed";
    return "";
  }
};

Gemm::Gemm() : impl_(new Impl) {}
Gemm::~Gemm() = default;

std::string Gemm::prepare(const GemmProblem& p) {
  impl_->use_gelu = p.gelu;
  return p.gelu ? impl_->prepare<GeluGemm>(impl_->gelu, p) : impl_->prepare<PlainGemm>(impl_->plain, p);
}

void Gemm::run(cudaStream_t s, bool pdl) {
  const cutlass::Status st = impl_->use_gelu ? impl_->gelu.run(s, nullptr, pdl) : impl_->plain.run(s, nullptr, pdl);
  if (st != cutlass::Status::kSuccess) throw std::runtime_error("CUTLASS sm90 GEMM launch failed");
}

const char* Gemm::name() { return "cutlass-sm90-ws-cooperative-128x128x64"; }

}  // namespace braid::cutlass_sm90
