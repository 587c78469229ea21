// A CUDA driver function looked up through the runtime (cudaGetDriverEntryPointByVersion), so that braid needs no
// link against libcuda: the tensor-map encoder (kernels/common/tma_sm90.cuh) and the allocation query
// (kernels/common/address_range.hpp) both come through here.
#pragma once
#include <cuda_runtime.h>

namespace braid {

// The driver's `name` (its CUDA 12.0 ABI) as a pointer of type Fn, or nullptr when the driver does not offer it.
template <class Fn>
Fn driver_entry_point(const char* name) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult q;
  if (cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &q) != cudaSuccess ||
      q != cudaDriverEntryPointSuccess)
    return nullptr;
  return reinterpret_cast<Fn>(fn);
}

}  // namespace braid
