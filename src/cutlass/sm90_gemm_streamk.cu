// CUTLASS's Stream-K tile scheduler (a peer in the benchmarks). Its own translation unit: CUTLASS 4.2's
// Stream-K scheduler does not compile with CUTLASS_ENABLE_GDC_FOR_SM90, so this peer has no PDL.
#include "cutlass/sm90_gemm_config.hpp"

namespace braid::cutlass_sm90::detail {

std::unique_ptr<Runner> make_stream_k_runner() {
  return std::make_unique<RunnerOf<Config<cutlass::epilogue::thread::Identity, cutlass::gemm::StreamKScheduler>,
                                   Config<cutlass::epilogue::thread::GELU_taylor, cutlass::gemm::StreamKScheduler>>>();
}

}  // namespace braid::cutlass_sm90::detail
