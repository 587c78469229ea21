// Thread-block cluster primitives (sm_90): the CTA's rank, shared::cluster addresses of another CTA's
// shared memory, loads from it and stores to it, and the cluster-wide barrier (whole, or its two halves).
// Used by the split-K exchange of the Hopper GEMM (hopper/cluster_exchange.cuh), the skinny GEMM's cluster
// reduction and the decode attention kernel's split merge.
#pragma once
#include <cstdint>

namespace braid::cluster {

__device__ __forceinline__ uint32_t rank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}
__device__ __forceinline__ uint32_t size() {
  uint32_t n;
  asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(n));
  return n;
}
__device__ __forceinline__ uint32_t smem_addr(const void* p) { return uint32_t(__cvta_generic_to_shared(p)); }
// The shared::cluster address of `local` (a shared::cta address) in CTA `cta` of the cluster.
__device__ __forceinline__ uint32_t map(uint32_t local, uint32_t cta) {
  uint32_t r;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(local), "r"(cta));
  return r;
}
// Every thread of every CTA of the cluster (release/acquire at cluster scope).
__device__ __forceinline__ void sync() {
  asm volatile("barrier.cluster.arrive.release;\n\tbarrier.cluster.wait.acquire;" ::: "memory");
}
// The barrier's two halves, for a CTA with work between them: a relaxed arrival (orders nothing; says "this CTA has
// started", the decode attention's pushed merge) and the wait.
__device__ __forceinline__ void arrive_relaxed() { asm volatile("barrier.cluster.arrive.relaxed;" ::: "memory"); }
__device__ __forceinline__ void wait() { asm volatile("barrier.cluster.wait;" ::: "memory"); }
// A store into another CTA's shared memory (the loads' counterpart).
__device__ __forceinline__ void st_f32x2(uint32_t cluster_addr, float2 v) {
  asm volatile("st.shared::cluster.v2.f32 [%0], {%1, %2};" ::"r"(cluster_addr), "f"(v.x), "f"(v.y) : "memory");
}
__device__ __forceinline__ float ld_f32(uint32_t cluster_addr) {
  float v;
  asm volatile("ld.shared::cluster.f32 %0, [%1];" : "=f"(v) : "r"(cluster_addr) : "memory");
  return v;
}
__device__ __forceinline__ float2 ld_f32x2(uint32_t cluster_addr) {
  float2 v;
  asm volatile("ld.shared::cluster.v2.f32 {%0, %1}, [%2];" : "=f"(v.x), "=f"(v.y) : "r"(cluster_addr) : "memory");
  return v;
}

__device__ __forceinline__ float4 ld_f32x4(uint32_t cluster_addr) {
  float4 v;
  asm volatile("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
               : "r"(cluster_addr)
               : "memory");
  return v;
}

}  // namespace braid::cluster
