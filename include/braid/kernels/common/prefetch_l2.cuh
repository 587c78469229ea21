// L2 prefetches through the load/store path: prefetch.global.L2 per 128-byte line, spread over a
// CTA's threads. (The TMA forms -- cp.async.bulk.prefetch[.tensor] -- go through the SM's TMA unit,
// which the SM's own pipelines and a co-resident producer also issue their loads through: issued by
// the hundred before a wait they were measured slower than no prefetch at all, decode and conv
// chains alike, bench/results/prefetch-ab-*-17fde19.)
#pragma once
#include <cstdint>

namespace braid::prefetch {

constexpr int kLineBytes = 128;

__device__ __forceinline__ void l2_line(const void* p) {
  asm volatile("prefetch.global.L2 [%0];" ::"l"(reinterpret_cast<uint64_t>(p)));
}

// `rows` rows of `row_bytes` bytes, `stride` bytes apart, starting at `base`: each line once, thread
// `tid` of `nthreads` taking lines tid, tid + nthreads, ... (row_bytes rounded up to whole lines).
__device__ __forceinline__ void l2_rows(const void* base, uint64_t stride, int rows, int row_bytes, int tid, int nthreads) {
  const int lines_per_row = (row_bytes + kLineBytes - 1) / kLineBytes;
  for (int i = tid; i < rows * lines_per_row; i += nthreads)
    l2_line(static_cast<const char*>(base) + uint64_t(i / lines_per_row) * stride + (i % lines_per_row) * kLineBytes);
}

}  // namespace braid::prefetch
