// Host-side conversions between float and the raw 16-bit patterns of fp16 / bf16 tensors, for the
// references and checks of the benchmarks and GPU tests (outputs come back as uint16_t).
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <cstring>

namespace braid::bench {

inline float half_bits_to_float(uint16_t bits, bool bf16) {
  if (!bf16) {
    __half h;
    std::memcpy(&h, &bits, 2);
    return __half2float(h);
  }
  const uint32_t u = uint32_t(bits) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

inline uint16_t float_to_half_bits(float f, bool bf16) {
  uint16_t bits;
  if (!bf16) {
    const __half h = __float2half_rn(f);
    std::memcpy(&bits, &h, 2);
  } else {
    const __nv_bfloat16 b = __float2bfloat16_rn(f);
    std::memcpy(&bits, &b, 2);
  }
  return bits;
}

// f rounded to the element type (what a kernel storing f as fp16 / bf16 produces).
inline float round_to_half(float f, bool bf16) { return half_bits_to_float(float_to_half_bits(f, bf16), bf16); }

}  // namespace braid::bench
