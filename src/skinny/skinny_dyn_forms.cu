// The skinny GEMM with the dynamic tail (SkinnyConfig::dyn_tail, skinny_gemm.cuh's kDyn): its own instantiations,
// 4 stages only, so that the stream-K kernels keep their code and speed (with both sequences in one kernel body the
// stream-K kernels slowed too: a1s4-pk 49.2 against 43.9-45.2 us; bench/results/skinny-dyn-tail-h200-20261128/) --
// the general form (fp16 and bf16) and the lean forms (fp16), in a translation unit of their own that builds beside
// skinny_op.cu.
#include "braid/kernels/skinny/skinny_gemm.cuh"
#include "skinny_pick.hpp"

namespace braid::skinny {

template <int kForm>
struct DynGemmKernels {  // (any stage count -> the 4-stage instantiation: can_implement allows no other)
  template <class T, int MR, int S, bool WG>
  static KernelFn of() { return skinny_gemm_kernel<T, MR, 4, WG, kForm, true>; }
};

KernelFn dyn_skinny_kernel(hopper::DType dtype, int mr, bool wg) {
  return pick<DynGemmKernels<hopper::kFormGeneral>>(dtype, mr, 4, wg);
}

KernelFn dyn_lean_skinny_kernel(hopper::DType dtype, int mr, bool wg, hopper::Activation act) {
  using hopper::Activation;
  if (dtype != hopper::DType::F16) return nullptr;
  switch (act) {
    case Activation::None: return pick_rows<DynGemmKernels<hopper::lean_form(Activation::None)>, __half>(mr, 4, wg);
    case Activation::GeLU: return pick_rows<DynGemmKernels<hopper::lean_form(Activation::GeLU)>, __half>(mr, 4, wg);
    case Activation::SwiGLU: return pick_rows<DynGemmKernels<hopper::lean_form(Activation::SwiGLU)>, __half>(mr, 4, wg);
    default: return nullptr;
  }
}

}  // namespace braid::skinny
