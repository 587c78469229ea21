// A later stage's read-only input pulled into L2 by an earlier stage that leaves DRAM idle
// (cp.async.bulk.prefetch.L2, sm_90). Why: a decode attention block is three kernels of which the middle
// one, attention over a short KV cache, is latency-bound -- DRAM idles for its 8-27 µs while the output
// projection's weights (17-38 MB), the next stage's whole input, wait in DRAM. The attention kernel's CTAs,
// once their QKV inputs are complete, each ask L2 for a share of those weights; the output GEMM then
// streams them from L2 instead of DRAM. A hint: nothing waits for it and nothing reads what it fetched but
// the later stage's own loads (which find the lines in L2, or go to DRAM as before), so results cannot
// change; only read-only data (weights) may be named, never a stage's output.
#pragma once
#include <cstdint>

namespace braid::l2 {

struct Prefetch {
  const void* ptr = nullptr;  // 16-byte aligned
  uint64_t bytes = 0;         // 0: nothing to prefetch; rounded down to whole 16-byte pieces
};

// `bytes` (a multiple of 16) from the 16-byte aligned global address `p` into L2, asynchronously.
__device__ __forceinline__ void prefetch_bulk(const void* p, uint32_t bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(p), "r"(bytes) : "memory");
#endif
}

// Block `block` of `blocks` issues its contiguous share of `pf` (whole 16-byte pieces) in requests of at
// most kPiece bytes; one thread per block calls it.
__device__ __forceinline__ void prefetch_share(const Prefetch& pf, uint32_t block, uint32_t blocks) {
  constexpr uint64_t kPiece = 64 * 1024;
  const uint64_t pieces16 = pf.bytes / 16;
  if (pieces16 == 0 || blocks == 0) return;
  const uint64_t per = (pieces16 + blocks - 1) / blocks;
  const uint64_t begin = uint64_t(block) * per * 16, end = min(begin + per * 16, pieces16 * 16);
  const char* base = static_cast<const char*>(pf.ptr);
  for (uint64_t at = begin; at < end; at += kPiece)
    prefetch_bulk(base + at, uint32_t(min(kPiece, end - at)));
}

}  // namespace braid::l2
