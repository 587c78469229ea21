// Minimal sm_90 TMA + mbarrier primitives for braid's own (non-CUTLASS) kernels: a 2D tensor map
// built on the host through the driver entry point (no libcuda link), tile loads into shared memory
// completing on an mbarrier's transaction count, and the parity wait.
//
// Host:   CUtensorMap m; if (auto why = tma::encode_2d(m, ptr, dtype_bytes, cols, rows, row_bytes,
//                                                      box_cols, box_rows); !why.empty()) ...
// Device: tma::arrive_expect_tx(bar, bytes); tma::load_2d(dst, &m, col, row, bar); ... tma::wait(bar, phase);
// Tensor maps use the 128-byte swizzle: box rows are 128 bytes, and the 16-byte chunk c of row r lands
// at chunk (c ^ (r % 8)) -- so the destination must be 1024-byte aligned.
#pragma once
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "braid/core/driver_entry.hpp"

namespace braid::tma {

#if defined(__CUDACC__)
__device__ __forceinline__ void init(uint64_t* bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(static_cast<uint32_t>(__cvta_generic_to_shared(bar))),
               "r"(count)
               : "memory");
}
// After init, before any other thread or the TMA engine uses the barriers.
__device__ __forceinline__ void fence_init() { asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory"); }

__device__ __forceinline__ void arrive_expect_tx(uint64_t* bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(
                   static_cast<uint32_t>(__cvta_generic_to_shared(bar))),
               "r"(bytes)
               : "memory");
}

// A plain arrival (consumers releasing a buffer to the producer).
__device__ __forceinline__ void arrive(uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(static_cast<uint32_t>(__cvta_generic_to_shared(bar)))
               : "memory");
}

__device__ __forceinline__ void wait(uint64_t* bar, uint32_t phase) {
  const uint32_t a = static_cast<uint32_t>(__cvta_generic_to_shared(bar));
  uint32_t done = 0;
  while (!done)
    asm volatile(
        "{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
        : "=r"(done)
        : "r"(a), "r"(phase)
        : "memory");
}

// Box (col, row) of the tensor map -> shared memory at dst (1024-byte aligned), counted on bar.
// cache_hint: an L2 policy from createpolicy (evict_first for data read once).
__device__ __forceinline__ void load_2d(uint32_t dst, const CUtensorMap* map, int col, int row, uint64_t* bar,
                                        uint64_t cache_hint) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1, {%2, %3}], "
      "[%4], %5;" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(col), "r"(row),
      "r"(static_cast<uint32_t>(__cvta_generic_to_shared(bar))), "l"(cache_hint)
      : "memory");
}
// `bytes` contiguous bytes at src (16-byte aligned, a multiple of 16) -> shared memory at dst, counted on bar: a
// bulk copy without a tensor map (no swizzle: the bytes land as they are); optionally with an L2 policy.
__device__ __forceinline__ void load_bulk(uint32_t dst, const void* src, uint32_t bytes, uint64_t* bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(dst),
               "l"(reinterpret_cast<uint64_t>(src)), "r"(bytes),
               "r"(static_cast<uint32_t>(__cvta_generic_to_shared(bar)))
               : "memory");
}
__device__ __forceinline__ void load_bulk(uint32_t dst, const void* src, uint32_t bytes, uint64_t* bar,
                                          uint64_t cache_hint) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1], %2, [%3], %4;" ::"r"(
          dst),
      "l"(reinterpret_cast<uint64_t>(src)), "r"(bytes), "r"(static_cast<uint32_t>(__cvta_generic_to_shared(bar))),
      "l"(cache_hint)
      : "memory");
}
// Shared memory (1024-byte aligned, the 128-byte swizzle) -> box (col, row) of the tensor map, in the
// thread's bulk group; the box's parts outside the tensor are not written.
__device__ __forceinline__ void store_2d(const CUtensorMap* map, uint32_t src, int col, int row) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];" ::"l"(
                   reinterpret_cast<uint64_t>(map)),
               "r"(col), "r"(row), "r"(src)
               : "memory");
}
__device__ __forceinline__ void store_commit() { asm volatile("cp.async.bulk.commit_group;" ::: "memory"); }
// The thread's bulk stores have read their shared memory (it may be rewritten).
__device__ __forceinline__ void store_wait_read() { asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory"); }
// All but the thread's kPending most recent bulk store groups have read their shared memory.
template <int kPending>
__device__ __forceinline__ void store_wait_read_but() {
  asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(kPending) : "memory");
}
// The thread's bulk stores are complete (their writes performed).
__device__ __forceinline__ void store_wait_all() { asm volatile("cp.async.bulk.wait_group 0;" ::: "memory"); }
// Generic-proxy writes to shared memory, then async-proxy reads of them (TMA stores).
__device__ __forceinline__ void fence_proxy_async_smem() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }

__device__ __forceinline__ uint64_t policy_evict_first() {
  uint64_t p;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(p));
  return p;
}
__device__ __forceinline__ uint64_t policy_evict_last() {
  uint64_t p;
  asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(p));
  return p;
}
__device__ __forceinline__ void prefetch_map(const CUtensorMap* map) {
  asm volatile("prefetch.tensormap [%0];" ::"l"(reinterpret_cast<uint64_t>(map)) : "memory");
}
#endif

// A row-major 2D tensor (rows x cols elements of elem_bytes, rows row_bytes apart) as a tensor map with
// box_cols x box_rows boxes (box_cols * elem_bytes == 128: the 128-byte swizzle), zero fill outside.
// Returns "" or why not.
inline std::string encode_2d(CUtensorMap& map, const void* base, int elem_bytes, uint64_t cols, uint64_t rows,
                             uint64_t row_bytes, uint32_t box_cols, uint32_t box_rows) {
  using Encode = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                              const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                              CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
  static const Encode encode = driver_entry_point<Encode>("cuTensorMapEncodeTiled");
  if (encode == nullptr) return "cuTensorMapEncodeTiled is not available from the driver";
  if (elem_bytes != 2) return "tensor maps: 16-bit elements only";
  if (box_cols * elem_bytes != 128) return "tensor maps: boxes of 128-byte rows only";
  if ((reinterpret_cast<uintptr_t>(base) & 15u) != 0 || row_bytes % 16 != 0) return "tensor maps need 16-byte alignment";
  const cuuint64_t dims[2] = {cols, rows};
  const cuuint64_t strides[1] = {row_bytes};
  const cuuint32_t box[2] = {box_cols, box_rows};
  const cuuint32_t estr[2] = {1, 1};
  const CUresult r = encode(&map, CU_TENSOR_MAP_DATA_TYPE_UINT16, 2, const_cast<void*>(base), dims, strides, box, estr,
                            CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                            CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  return r == CUDA_SUCCESS ? "" : "cuTensorMapEncodeTiled failed (" + std::to_string(int(r)) + ")";
}

}  // namespace braid::tma
