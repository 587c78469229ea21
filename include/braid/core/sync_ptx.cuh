// Memory-ordering primitives for tile handoffs between concurrently running kernels (GPU scope).
//
// Producer, per finished tile: every thread's stores -> block barrier -> one thread does a release
// add (or release store) on the tile's semaphore. The barrier plus release cumulativity makes all
// the block's stores visible before the semaphore moves.
// Consumer: one thread spins with acquire loads, then a block barrier releases the other threads.
// Consumers must read produced data with ordinary (coherent) loads: never ld.global.nc / __ldg /
// `const __restrict__` on a produced buffer.
// TMA (async proxy): a producer that stores with cp.async.bulk must wait for the bulk group to
// COMPLETE (wait_group 0, not .read) before the barrier; fence_proxy_async_global() orders generic-
// proxy accesses against async-proxy ones (after an acquire and before a TMA load; after TMA stores
// completed and before a release).
#pragma once
#include <cstdint>

namespace braid::ptx {

__device__ __forceinline__ uint64_t ld_acquire(const uint64_t* p) {
  uint64_t v;
  asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ uint64_t ld_relaxed(const uint64_t* p) {
  uint64_t v;
  asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ void red_release_add(uint64_t* p, uint64_t v) {
  asm volatile("red.release.gpu.global.add.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
__device__ __forceinline__ void st_release(uint64_t* p, uint64_t v) {
  asm volatile("st.release.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
__device__ __forceinline__ void st_relaxed(uint64_t* p, uint64_t v) {
  asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
__device__ __forceinline__ uint32_t atom_add_acq_rel(uint32_t* p, uint32_t v) {
  uint32_t old;
  asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], %2;" : "=r"(old) : "l"(p), "r"(v) : "memory");
  return old;
}
__device__ __forceinline__ uint64_t atom_add_acq_rel(uint64_t* p, uint64_t v) {
  uint64_t old;
  asm volatile("atom.acq_rel.gpu.global.add.u64 %0, [%1], %2;" : "=l"(old) : "l"(p), "l"(v) : "memory");
  return old;
}
__device__ __forceinline__ uint32_t atom_add_relaxed(uint32_t* p, uint32_t v) {
  uint32_t old;
  asm volatile("atom.relaxed.gpu.global.add.u32 %0, [%1], %2;" : "=r"(old) : "l"(p), "r"(v) : "memory");
  return old;
}
// A hint: bring the 128-byte line holding p into L2 (no data returned, no fault semantics needed).
__device__ __forceinline__ void prefetch_l2(const void* p) { asm volatile("prefetch.global.L2 [%0];" ::"l"(p)); }

__device__ __forceinline__ void fence_acq_rel_gpu() { asm volatile("fence.acq_rel.gpu;" ::: "memory"); }

// Order generic-proxy global accesses with async-proxy (TMA) ones.
__device__ __forceinline__ void fence_proxy_async_global() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("fence.proxy.async.global;" ::: "memory");
#endif
}

__device__ __forceinline__ uint64_t clock_cycles() { return uint64_t(clock64()); }  // this SM's %clock64
__device__ __forceinline__ uint64_t globaltimer_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__device__ __forceinline__ uint32_t smid() {
  uint32_t s;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
  return s;
}

// Programmatic Dependent Launch (sm_90). launch_dependents: this block no longer holds back the
// next kernel in the stream (once every block has executed it or exited, the dependent grid may
// launch). wait_primary: wait for the whole preceding grid to complete and flush -- braid
// consumers do not call it before their loads (that would forfeit all overlap).
__device__ __forceinline__ void pdl_launch_dependents() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
__device__ __forceinline__ void pdl_wait_primary() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// Named barrier over `threads` threads (warp-specialized kernels: never __syncthreads inside a
// warp-role branch).
__device__ __forceinline__ void named_barrier_sync(uint32_t id, uint32_t threads) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}
// Arrive without waiting: the caller's earlier memory accesses are ordered before the accesses of
// the threads that wait on the barrier (bar.sync) after it completes.
__device__ __forceinline__ void named_barrier_arrive(uint32_t id, uint32_t threads) {
  asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

}  // namespace braid::ptx
