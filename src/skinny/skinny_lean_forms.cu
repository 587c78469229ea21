// The skinny GEMM's lean forms (gemm_config.hpp, "The forms of braid's GEMM kernels"): one per activation, fp16
// only, in a translation unit of their own so that they build beside skinny_op.cu.
#include "braid/kernels/skinny/skinny_gemm.cuh"
#include "skinny_pick.hpp"

namespace braid::skinny {

template <hopper::Activation kAct>
struct LeanGemmKernels {
  template <class T, int MR, int S, bool WG>
  static KernelFn of() { return skinny_gemm_kernel<T, MR, S, WG, hopper::lean_form(kAct)>; }
};

KernelFn lean_skinny_kernel(hopper::DType dtype, int mr, int stages, bool wg, hopper::Activation act) {
  using hopper::Activation;
  if (dtype != hopper::DType::F16) return nullptr;
  switch (act) {
    case Activation::None: return pick_rows<LeanGemmKernels<Activation::None>, __half>(mr, stages, wg);
    case Activation::GeLU: return pick_rows<LeanGemmKernels<Activation::GeLU>, __half>(mr, stages, wg);
    case Activation::SwiGLU: return pick_rows<LeanGemmKernels<Activation::SwiGLU>, __half>(mr, stages, wg);
    default: return nullptr;
  }
}

}  // namespace braid::skinny
