// Private to src/cutlass: the CUTLASS 4.2 sm90 GEMM configurations behind cutlass_sm90::Gemm, and the
// runner interface that lets each scheduler live in its own translation unit (CUTLASS 4.2's Stream-K
// scheduler does not compile with CUTLASS_ENABLE_GDC_FOR_SM90, which the data-parallel peer needs for PDL).
#pragma once
#include <cuda_runtime.h>

#include <memory>
#include <string>
#include <type_traits>

#include "cute/tensor.hpp"
#include "cutlass/cutlass.h"
#include "cutlass/epilogue/collective/collective_builder.hpp"
#include "cutlass/epilogue/fusion/operations.hpp"
#include "cutlass/epilogue/thread/activation.h"
#include "cutlass/gemm/collective/collective_builder.hpp"
#include "cutlass/gemm/device/gemm_universal_adapter.h"
#include "cutlass/gemm/dispatch_policy.hpp"
#include "cutlass/gemm/kernel/gemm_universal.hpp"
#include "cutlass/sm90_gemm.hpp"
#include "cutlass/util/packed_stride.hpp"

namespace braid::cutlass_sm90::detail {


using namespace cute;
using Element = cutlass::half_t;
using Layout = cutlass::layout::RowMajor;  // A [M,K], B [K,N] (N-major), D [M,N]
constexpr int kAlign = 8;                   // 16-byte TMA accesses
using TileShape = Shape<_128, _128, _64>;
using ClusterShape = Shape<_1, _1, _1>;

// Scheduler: void (CUTLASS's persistent data-parallel tile scheduler) or cutlass::gemm::StreamKScheduler.
// Tile_, Cluster_, KernelSchedule, EpilogueSchedule: the kernel's shape (GemmKernelShape in
// sm90_gemm.hpp; cooperative 128x128 by default).
template <template <class> class Act, class Scheduler = void, class Tile_ = TileShape, class Cluster_ = ClusterShape,
          class KernelSchedule = cutlass::gemm::KernelTmaWarpSpecializedCooperative,
          class EpilogueSchedule = cutlass::epilogue::TmaWarpSpecializedCooperative>
struct Config {
  using TileShape = Tile_;
  using ClusterShape = Cluster_;
  using Fusion = cutlass::epilogue::fusion::LinCombEltAct<Act, Element, float, Element, float>;
  using Epilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,
      cutlass::epilogue::collective::EpilogueTileAuto, float, float, Element, Layout, kAlign, Element, Layout, kAlign,
      EpilogueSchedule, Fusion>::CollectiveOp;
  using Mainloop = typename cutlass::gemm::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, Element, Layout, kAlign, Element, Layout, kAlign, float,
      TileShape, ClusterShape,
      cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(sizeof(typename Epilogue::SharedStorage))>,
      KernelSchedule>::CollectiveOp;
  using Kernel = cutlass::gemm::kernel::GemmUniversal<Shape<int, int, int, int>, Mainloop, Epilogue, Scheduler>;
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

// One configuration's plain and GeLU kernels, prepared for one problem.
class Runner {
 public:
  virtual ~Runner() = default;
  virtual std::string prepare(const GemmProblem& p) = 0;
  virtual cutlass::Status run(cudaStream_t s, bool pdl) = 0;
};

// A configuration without a GeLU kernel (GeluC = NoGelu): the GEMM shapes compared with braid's
// tiles are instantiated plain only, to keep the build short.
struct NoGelu {
  struct Device {
    cutlass::Status run(cudaStream_t, void*, bool) { return cutlass::Status::kErrorNotSupported; }
  };
};

// The two device adapters of a configuration and their workspace.
template <class PlainC, class GeluC>
class RunnerOf final : public Runner {
 public:
  ~RunnerOf() override {
    if (workspace_) cudaFree(workspace_);
  }
  std::string prepare(const GemmProblem& p) override {
    gelu_ = p.gelu;
    if constexpr (std::is_same_v<GeluC, NoGelu>) {
      if (p.gelu) return "this CUTLASS kernel shape is built without a GeLU epilogue";
      return prepare_one<PlainC>(plain_dev_, p);
    } else {
      return p.gelu ? prepare_one<GeluC>(gelu_dev_, p) : prepare_one<PlainC>(plain_dev_, p);
    }
  }
  cutlass::Status run(cudaStream_t s, bool pdl) override {
    return gelu_ ? gelu_dev_.run(s, nullptr, pdl) : plain_dev_.run(s, nullptr, pdl);
  }

 private:
  template <class C, class D>
  std::string prepare_one(D& dev, const GemmProblem& p) {
    auto args = C::arguments(p);
    if (dev.can_implement(args) != cutlass::Status::kSuccess)
      return "CUTLASS sm90 GEMM cannot implement M=" + std::to_string(p.M) + " N=" + std::to_string(p.N) +
             " K=" + std::to_string(p.K) + " (K and N must be multiples of 8)";
    const size_t ws = D::get_workspace_size(args);
    if (ws > workspace_bytes_) {
      if (workspace_) cudaFree(workspace_);
      workspace_ = nullptr;
      if (cudaMalloc(&workspace_, ws) != cudaSuccess) return "cudaMalloc of the CUTLASS workspace failed";
      workspace_bytes_ = ws;
    }
    if (dev.initialize(args, workspace_) != cutlass::Status::kSuccess) return "CUTLASS initialize failed";
    return "";
  }
  typename PlainC::Device plain_dev_;
  typename GeluC::Device gelu_dev_;
  bool gelu_ = false;
  void* workspace_ = nullptr;
  size_t workspace_bytes_ = 0;
};

std::unique_ptr<Runner> make_data_parallel_runner();  // sm90_gemm.cu
std::unique_ptr<Runner> make_stream_k_runner();       // sm90_gemm_streamk.cu
std::unique_ptr<Runner> make_shape_runner(GemmKernelShape shape);  // sm90_gemm_shapes.cu (data-parallel, no PDL)
std::unique_ptr<Runner> make_transposed_runner(GemmKernelShape shape);  // sm90_gemm_transposed.cu (D^T = B^T A^T)

}  // namespace braid::cutlass_sm90::detail
