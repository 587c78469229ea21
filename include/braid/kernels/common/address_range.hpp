// Host-side check that a range of device memory lies inside one allocation, for operands whose extent the caller
// declares beyond the problem's shape (GemmArgs::a_rows: rows past M that the kernels' tensor maps may read). A wrong
// declaration would otherwise read past the allocation -- a fault, or other data silently feeding rows that are
// never stored -- so the ops refuse it while preparing. Memory the driver cannot place (not from cudaMalloc* or
// cuMem*) is left unchecked.
#pragma once
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "braid/core/driver_entry.hpp"

namespace braid {

// "" when [p, p + bytes) lies inside the allocation that holds p, or when the driver cannot say; otherwise why not.
inline std::string check_in_allocation(const void* p, uint64_t bytes, const std::string& what) {
  using GetRange = CUresult (*)(CUdeviceptr*, size_t*, CUdeviceptr);
  static const GetRange get = driver_entry_point<GetRange>("cuMemGetAddressRange");
  if (get == nullptr) return "";
  CUdeviceptr base = 0;
  size_t size = 0;
  if (get(&base, &size, CUdeviceptr(reinterpret_cast<uintptr_t>(p))) != CUDA_SUCCESS) return "";
  const uint64_t end = uint64_t(reinterpret_cast<uintptr_t>(p)) + bytes;
  if (end <= uint64_t(base) + size) return "";
  return what + " declares " + std::to_string(bytes) + " bytes from its pointer, past the end of its allocation (" +
         std::to_string(uint64_t(base) + size - uint64_t(reinterpret_cast<uintptr_t>(p))) + " bytes left)";
}

// The rows an op's A operand declares past M (GemmArgs::a_rows: what its tensor map will span, K 16-bit elements a
// row) must be the caller's to read. "" or why not; GemmOp and SkinnyGemmOp refuse the arguments otherwise.
template <class GemmArgsT>
std::string check_declared_rows(const GemmArgsT& a) {
  if (a.a_rows <= a.M) return "";
  return check_in_allocation(a.A, uint64_t(a.a_rows) * uint64_t(a.K) * 2,
                             "a_rows=" + std::to_string(a.a_rows) + " (A of K=" + std::to_string(a.K) + ")");
}

}  // namespace braid
