// The skinny GEMM's packed weights (skinny_pack.hpp): one thread per 16-byte slot of the packed copy.
#include <algorithm>
#include <string>

#include "braid/kernels/skinny/skinny_op.hpp"
#include "braid/kernels/skinny/skinny_pack.hpp"

namespace braid::skinny {

__global__ void pack_weights_kernel(const uint4* __restrict__ W, int K, int N, uint4* __restrict__ out, uint64_t slots) {
  for (uint64_t q = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; q < slots; q += uint64_t(gridDim.x) * blockDim.x) {
    int k = 0, n = 0;
    out[q] = packed_slot_source(q, K, N, k, n) ? W[(size_t(k) * N + n) / 8] : make_uint4(0, 0, 0, 0);
  }
}

std::string pack_weights(const void* W, int K, int N, void* out, cudaStream_t s) {
  if (W == nullptr || out == nullptr) return "pack_weights: W and out must be device pointers";
  if (K < 8 || K % 8 != 0 || N < 8 || N % 8 != 0)
    return "pack_weights: K and N must be positive multiples of 8 (got K=" + std::to_string(K) + ", N=" + std::to_string(N) + ")";
  if ((reinterpret_cast<uintptr_t>(W) | reinterpret_cast<uintptr_t>(out)) % 16 != 0)
    return "pack_weights: W and out must be 16-byte aligned";
  const uint64_t slots = packed_weight_bytes(K, N) / 16;
  const unsigned blocks = unsigned(std::min<uint64_t>((slots + 255) / 256, 8192));
  pack_weights_kernel<<<blocks, 256, 0, s>>>(static_cast<const uint4*>(W), K, N, static_cast<uint4*>(out), slots);
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess)
    return std::string("pack_weights: launch failed: ") + cudaGetErrorString(e);
  return "";
}

}  // namespace braid::skinny
