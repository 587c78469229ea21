#include <stdexcept>

#include "cutlass/sm90_gemm_config.hpp"

namespace braid::cutlass_sm90 {
namespace detail {

// CUTLASS's persistent data-parallel tile scheduler; built with CUTLASS_ENABLE_GDC_FOR_SM90 so that a
// PDL launch waits for its primary grid.
std::unique_ptr<Runner> make_data_parallel_runner() {
  return std::make_unique<RunnerOf<Config<cutlass::epilogue::thread::Identity>, Config<cutlass::epilogue::thread::GELU>>>();
}

}  // namespace detail

struct Gemm::Impl {
  std::unique_ptr<detail::Runner> runner;
  bool stream_k = false;
};

Gemm::Gemm() : impl_(new Impl) {}
Gemm::~Gemm() = default;

std::string Gemm::prepare(const GemmProblem& p) {
  impl_->stream_k = p.stream_k;
  impl_->runner = p.stream_k ? detail::make_stream_k_runner() : detail::make_data_parallel_runner();
  return impl_->runner->prepare(p);
}

void Gemm::run(cudaStream_t s, bool pdl) {
  if (!impl_->runner) throw std::logic_error("cutlass_sm90::Gemm::run before prepare");
  if (impl_->stream_k && pdl) throw std::invalid_argument("the CUTLASS Stream-K peer is built without PDL support");
  if (impl_->runner->run(s, pdl) != cutlass::Status::kSuccess) throw std::runtime_error("CUTLASS sm90 GEMM launch failed");
}

std::string Gemm::name() const {
  return impl_->stream_k ? "cutlass-sm90-ws-cooperative-streamk-128x128x64" : "cutlass-sm90-ws-cooperative-128x128x64";
}

}  // namespace braid::cutlass_sm90
