// Microbenchmark: how fast can a GPU stream a weight matrix W[K, N] (row-major, fp16) when each CTA
// reads a column strip of it row by row -- the access pattern of a GEMM whose output tile is
// `strip` columns wide -- as a function of the strip width and the number of CTAs, and when the CTAs
// split K ("fronts": CTAs at different K at once) instead of N. Plain 16-byte loads, many in flight.
// Used to decide how braid's skinny (small-T) GEMM should cut the weights. Not part of the library.
//   nvcc -O3 -arch=sm_90 -o weight_stream weight_stream.cu && ./weight_stream
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#define CK(x)                                                                      \
  do {                                                                             \
    cudaError_t e = (x);                                                           \
    if (e != cudaSuccess) { std::printf("CUDA error %s at %d\n", cudaGetErrorString(e), __LINE__); return 1; } \
  } while (0)

// Each CTA owns units u = blockIdx.x, +gridDim.x, ...; unit u = (strip s, k-band b): columns
// [s*strip, (s+1)*strip) bytes of rows [b*band, (b+1)*band). Threads read 16 B each, a row chunk at a time.
__global__ void stream_kernel(const uint4* __restrict__ w, size_t row_bytes, int rows, int strip_bytes, int strips,
                              int bands, int band_major, unsigned long long* sink) {
  const int vec_per_row = strip_bytes / 16;
  const int rows_per_step = blockDim.x / vec_per_row;  // rows loaded per step by the CTA
  const int band_rows = rows / bands;
  uint4 acc = make_uint4(0, 0, 0, 0);
  const int units = strips * bands;
  for (int u = blockIdx.x; u < units; u += gridDim.x) {
    const int s = band_major ? u % strips : u / bands;
    const int b = band_major ? u / strips : u % bands;
    const int r0 = b * band_rows;
    const int my_row = threadIdx.x / vec_per_row, my_vec = threadIdx.x % vec_per_row;
    if (my_row >= rows_per_step) continue;
    const char* base = reinterpret_cast<const char*>(w) + size_t(s) * strip_bytes + size_t(my_vec) * 16;
#pragma unroll 8
    for (int r = my_row; r < band_rows; r += rows_per_step) {
      const uint4 v = __ldcs(reinterpret_cast<const uint4*>(base + size_t(r0 + r) * row_bytes));
      acc.x ^= v.x; acc.y ^= v.y; acc.z ^= v.z; acc.w ^= v.w;
    }
  }
  if ((acc.x ^ acc.y ^ acc.z ^ acc.w) == 0x12345678u) atomicAdd(sink, 1ull);
}

int main() {
  const int K = 6144, N = 12288;  // GPT-3 W2: 151 MB
  const size_t row_bytes = size_t(N) * 2, bytes = row_bytes * K;
  void* w;
  unsigned long long* sink;
  CK(cudaMalloc(&w, bytes));
  CK(cudaMalloc(&sink, 8));
  CK(cudaMemset(w, 1, bytes));
  void* flush;
  CK(cudaMalloc(&flush, size_t(256) << 20));
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  auto time = [&](int strip, int ctas, int bands, int band_major, int threads) -> double {
    const int strips = int(row_bytes / strip);
    std::vector<float> t;
    for (int i = 0; i < 12; ++i) {
      cudaMemsetAsync(flush, i, size_t(256) << 20);
      cudaEventRecord(a);
      stream_kernel<<<ctas, threads>>>((const uint4*)w, row_bytes, K, strip, strips, bands, band_major, sink);
      cudaEventRecord(b);
      cudaEventSynchronize(b);
      float ms;
      cudaEventElapsedTime(&ms, a, b);
      t.push_back(ms);
    }
    std::sort(t.begin(), t.end());
    return bytes / (t[6] * 1e-3) / 1e12;
  };
  std::printf("W[%d,%d] fp16 (%.0f MB): TB/s (median of 12, L2 flushed)\n", K, N, bytes / 1e6);
  std::printf("%-10s %-6s %-6s %-11s %s\n", "strip(B)", "ctas", "bands", "order", "TB/s (256 thr / 512 thr)");
  for (int strip : {128, 256, 512, 1024, 2048})
    for (int ctas : {48, 96, 132, 264, 528})
      for (int bands : {1, 2, 4, 11})
        for (int bm : {0, 1}) {
          const int strips = int(row_bytes / strip);
          if (bands == 1 && bm) continue;
          if (strips * bands < ctas) continue;
          if (ctas != 132 && ctas != 264 && bands > 1) continue;
          std::printf("%-10d %-6d %-6d %-11s %.2f / %.2f\n", strip, ctas, bands, bm ? "band-major" : "strip-major",
                      time(strip, ctas, bands, bm, 256), time(strip, ctas, bands, bm, 512));
        }
  CK(cudaGetLastError());
  return 0;
}
