// The skinny kernels' instantiations (private to src/skinny): each family -- the lone GEMM in its general
// and lean forms (skinny_lean_forms.cu), the fused chain -- is instantiated per element type, rows (MR),
// ring stages and MMA consumers; `pick` maps a configuration to its instantiation.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "braid/kernels/hopper/gemm_config.hpp"
#include "braid/kernels/skinny/skinny_op.hpp"

namespace braid::skinny {

struct SkinnyParams;
using KernelFn = void (*)(const SkinnyParams, const StageParams);

// The wgmma consumers come with 4 or 6 stages (can_implement): 8 was never faster.
template <class Family, class T, int MR>
auto pick_stages(int stages, bool wg) {
  if (wg) return stages == 6 ? Family::template of<T, MR, 6, true>() : Family::template of<T, MR, 4, true>();
  return stages == 8   ? Family::template of<T, MR, 8, false>()
         : stages == 6 ? Family::template of<T, MR, 6, false>()
                       : Family::template of<T, MR, 4, false>();
}
template <class Family, class T>
auto pick_rows(int mr, int stages, bool wg) {
  switch (mr) {
    case 8: return pick_stages<Family, T, 8>(stages, wg);
    case 16: return pick_stages<Family, T, 16>(stages, wg);
    case 32: return pick_stages<Family, T, 32>(stages, wg);
    default: return pick_stages<Family, T, 64>(stages, wg);
  }
}
template <class Family>
auto pick(hopper::DType dtype, int mr, int stages, bool wg) {
  return dtype == hopper::DType::BF16 ? pick_rows<Family, __nv_bfloat16>(mr, stages, wg)
                                      : pick_rows<Family, __half>(mr, stages, wg);
}

// The lean form of the lone GEMM for `act` (None, GeLU or SwiGLU) of the configuration; nullptr where none is
// instantiated (bf16: the general form runs).
KernelFn lean_skinny_kernel(hopper::DType dtype, int mr, int stages, bool wg, hopper::Activation act);

// The dynamic tail's kernels (SkinnyConfig::dyn_tail; skinny_dyn_forms.cu, 4 stages): the general form, and the lean
// form for `act` (fp16; nullptr otherwise).
KernelFn dyn_skinny_kernel(hopper::DType dtype, int mr, bool wg);
KernelFn dyn_lean_skinny_kernel(hopper::DType dtype, int mr, bool wg, hopper::Activation act);

}  // namespace braid::skinny
