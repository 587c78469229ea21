#include <stdexcept>

#include "cutlass/sm90_gemm_config.hpp"

namespace braid::cutlass_sm90 {
namespace detail {

// CUTLASS's persistent data-parallel tile scheduler; built with CUTLASS_ENABLE_GDC_FOR_SM90 so that a
// PDL launch waits for its primary grid.
std::unique_ptr<Runner> make_data_parallel_runner() {
  return std::make_unique<RunnerOf<Config<cutlass::epilogue::thread::Identity>, Config<cutlass::epilogue::thread::GELU_taylor>>>();
}

}  // namespace detail

const char* kernel_shape_name(GemmKernelShape k) {
  switch (k) {
    case GemmKernelShape::Cooperative128x128: return "coop-128x128";
    case GemmKernelShape::Pingpong128x128: return "pp-128x128";
    case GemmKernelShape::Pingpong128x128Cluster2: return "pp-128x128-c2";
    case GemmKernelShape::Pingpong64x256: return "pp-64x256";
    case GemmKernelShape::Cooperative128x256: return "coop-128x256";
    case GemmKernelShape::Cooperative128x256Cluster2: return "coop-128x256-c2";
    case GemmKernelShape::Cooperative256x128Cluster2: return "coop-256x128-c2";
    case GemmKernelShape::Transposed192x192: return "t-192x192";
    case GemmKernelShape::Transposed192x192Cluster2: return "t-192x192-c2";
    case GemmKernelShape::Transposed320x64Cluster4: return "t-320x64-c4";
    case GemmKernelShape::Transposed192x128: return "t-192x128";
    case GemmKernelShape::Transposed256x128: return "t-256x128";
    case GemmKernelShape::Transposed128x256: return "t-128x256";
  }
  return "?";
}

bool parse_kernel_shape(const std::string& name, GemmKernelShape& k) {
  for (int i = 0; i < kKernelShapes; ++i)
    if (name == kernel_shape_name(GemmKernelShape(i))) {
      k = GemmKernelShape(i);
      return true;
    }
  return false;
}

struct Gemm::Impl {
  std::unique_ptr<detail::Runner> runner;
  bool stream_k = false;
  GemmKernelShape shape = GemmKernelShape::Cooperative128x128;
};

Gemm::Gemm() : impl_(new Impl) {}
Gemm::~Gemm() = default;

std::string Gemm::prepare(const GemmProblem& p) {
  impl_->stream_k = p.stream_k;
  impl_->shape = p.shape;
  if (p.shape != GemmKernelShape::Cooperative128x128) {
    if (p.stream_k) return std::string("CUTLASS kernel shape ") + kernel_shape_name(p.shape) + " is built data-parallel only";
    impl_->runner = detail::make_shape_runner(p.shape);
    return impl_->runner->prepare(p);
  }
  impl_->runner = p.stream_k ? detail::make_stream_k_runner() : detail::make_data_parallel_runner();
  return impl_->runner->prepare(p);
}

void Gemm::run(cudaStream_t s, bool pdl) {
  if (!impl_->runner) throw std::logic_error("cutlass_sm90::Gemm::run before prepare");
  if ((impl_->stream_k || impl_->shape != GemmKernelShape::Cooperative128x128) && pdl)
    throw std::invalid_argument("this CUTLASS peer is built without PDL support");
  if (impl_->runner->run(s, pdl) != cutlass::Status::kSuccess) throw std::runtime_error("CUTLASS sm90 GEMM launch failed");
}

std::string Gemm::name() const {
  if (impl_->shape != GemmKernelShape::Cooperative128x128) return std::string("cutlass-") + kernel_shape_name(impl_->shape);
  return impl_->stream_k ? "cutlass-sm90-ws-cooperative-streamk-128x128x64" : "cutlass-sm90-ws-cooperative-128x128x64";
}

}  // namespace braid::cutlass_sm90
