// Microbenchmark: can a short kernel warm L2 with bytes the next kernel reads? The decode chain leaves DRAM nearly
// idle while its attention runs (several microseconds), so the attention could prefetch the output GEMM's weights
// into L2. Session 55 tried it in the chain (AttentionArgs::l2_warm, 16 KB cp.async.bulk.prefetch.L2 pieces from the
// attention's CTAs): the chains were 1.5-4 us slower and the output GEMM's units came no sooner
// (bench/results/l2-warm-h200-20261129/). This asks the question alone:
//   warm:   `warm_ctas` CTAs of 256 threads, each its share of W (`mb` MB) by one method, then spins `hold` us:
//           none (W cold), bulk (cp.async.bulk.prefetch.L2, 16 KB pieces over warp 0's lanes), line
//           (prefetch.global.L2, one 128-byte line per thread and step), load (ld.global.cg of 16 bytes per thread,
//           the data discarded: a read that surely passes through L2);
//   reader: stream-ordered after it, one CTA per SM (256 threads), reads all of W -- by 16 KB bulk copies into a
//           4-stage shared-memory ring (as the skinny GEMM streams W) or by ld.global.cg.
// Per mode, medians over reps (L2 evicted before each rep by a 256 MB write): the warm kernel's span (its first CTA
// start to its last CTA end), the gap to the reader's first start, the reader's span and rate.
//   build: cmake target braid-micro-l2-warm;  run: braid-micro-l2-warm [reps] [mb,mb,...]
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "braid/kernels/common/tma_sm90.cuh"
#include "micro_common.cuh"

namespace {

using braid::micro::median;
using braid::micro::now_ns;

enum Warm { kNone, kBulk, kLine, kLoad, kWarmKinds };
const char* warm_name(int w) { return w == kNone ? "none" : w == kBulk ? "bulk" : w == kLine ? "line" : "load"; }

constexpr uint32_t kUnit = 16384;
constexpr int kStages = 4;

// This CTA's share [begin, end) of `bytes` (16-byte pieces).
__device__ __forceinline__ void share(uint64_t bytes, uint64_t& begin, uint64_t& end) {
  const uint64_t per = ((bytes / 16 + gridDim.x - 1) / gridDim.x) * 16;
  begin = min(bytes, uint64_t(blockIdx.x) * per);
  end = min(bytes, begin + per);
}

__global__ void warm_kernel(int kind, const uint8_t* w, uint64_t bytes, uint64_t hold_ns, uint64_t* t_start,
                            uint64_t* t_end, uint32_t* sink) {
  const uint64_t t0 = now_ns();
  uint64_t begin, end;
  share(bytes, begin, end);
  if (kind == kBulk && threadIdx.x < 32) {
    for (uint64_t off = begin + uint64_t(threadIdx.x) * kUnit; off < end; off += 32 * kUnit) {
      const uint32_t n = uint32_t(min(uint64_t(kUnit), end - off));
      asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(w + off), "r"(n) : "memory");
    }
  } else if (kind == kLine) {
    for (uint64_t off = begin + uint64_t(threadIdx.x) * 128; off < end; off += uint64_t(blockDim.x) * 128)
      asm volatile("prefetch.global.L2 [%0];" ::"l"(w + off));
  } else if (kind == kLoad) {
    uint32_t acc = 0;
    for (uint64_t off = begin + uint64_t(threadIdx.x) * 16; off < end; off += uint64_t(blockDim.x) * 16) {
      const uint4 v = __ldcg(reinterpret_cast<const uint4*>(w + off));
      acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == 0x9e3779b9u) *sink = acc;  // (keeps the loads)
  }
  while (now_ns() - t0 < hold_ns) {
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    t_start[blockIdx.x] = t0;
    t_end[blockIdx.x] = now_ns();
  }
}

// bulk: thread 0 streams this CTA's share in 16 KB bulk copies through a 4-stage ring (every thread waits for each
// stage, then thread 0 refills it); else every thread reads its 16-byte pieces with ld.global.cg.
__global__ void reader_kernel(bool bulk, const uint8_t* w, uint64_t bytes, uint64_t* t_start, uint64_t* t_end,
                              uint32_t* sink) {
  extern __shared__ __align__(128) uint8_t ring[];
  __shared__ uint64_t full[kStages];
  const uint64_t t0 = now_ns();
  uint64_t begin, end;
  share(bytes, begin, end);
  uint32_t acc = 0;
  if (bulk) {
    const int units = int((end - begin + kUnit - 1) / kUnit);
    if (threadIdx.x == 0) {
      for (int s = 0; s < kStages; ++s) braid::tma::init(&full[s], 1);
      braid::tma::fence_init();
    }
    __syncthreads();
    const uint32_t base = uint32_t(__cvta_generic_to_shared(ring));
    auto issue = [&](int u) {
      const uint64_t off = begin + uint64_t(u) * kUnit;
      const uint32_t n = uint32_t(min(uint64_t(kUnit), end - off));
      braid::tma::arrive_expect_tx(&full[u % kStages], n);
      braid::tma::load_bulk(base + uint32_t(u % kStages) * kUnit, w + off, n, &full[u % kStages]);
    };
    if (threadIdx.x == 0)
      for (int u = 0; u < min(kStages, units); ++u) issue(u);
    for (int u = 0; u < units; ++u) {
      braid::tma::wait(&full[u % kStages], uint32_t(u / kStages) & 1u);
      acc ^= reinterpret_cast<const uint32_t*>(ring + (u % kStages) * kUnit)[threadIdx.x];
      __syncthreads();
      if (threadIdx.x == 0 && u + kStages < units) issue(u + kStages);
    }
  } else {
    for (uint64_t off = begin + uint64_t(threadIdx.x) * 16; off < end; off += uint64_t(blockDim.x) * 16) {
      const uint4 v = __ldcg(reinterpret_cast<const uint4*>(w + off));
      acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
  }
  if (acc == 0x9e3779b9u) *sink = acc;
  __syncthreads();
  if (threadIdx.x == 0) {
    t_start[blockIdx.x] = t0;
    t_end[blockIdx.x] = now_ns();
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 15;
  std::vector<double> mbs = {16.8, 37.7};
  if (argc > 2) {
    mbs.clear();
    for (std::string s = argv[2]; !s.empty();) {
      const size_t c = s.find(',');
      mbs.push_back(std::atof(s.substr(0, c).c_str()));
      s = c == std::string::npos ? "" : s.substr(c + 1);
    }
  }
  int dev = 0, sms = 0;
  CHECK(cudaGetDevice(&dev));
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, dev));
  std::printf("# %s, %d SMs, L2 %d MB; us, medians over %d reps (L2 evicted before each)\n", prop.name, sms,
              prop.l2CacheSize >> 20, reps);
  const size_t max_bytes = size_t(*std::max_element(mbs.begin(), mbs.end()) * 1e6) / 16 * 16 + kUnit;
  uint8_t *w = nullptr, *evict = nullptr;
  uint64_t* ts = nullptr;
  uint32_t* sink = nullptr;
  CHECK(cudaMalloc(&w, max_bytes));
  CHECK(cudaMemset(w, 1, max_bytes));
  CHECK(cudaMalloc(&evict, 256u << 20));
  CHECK(cudaMalloc(&ts, 4 * 1024 * sizeof(uint64_t)));
  CHECK(cudaMalloc(&sink, 4));
  const int ring_bytes = kStages * kUnit;
  CHECK(cudaFuncSetAttribute(reader_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, ring_bytes));
  cudaStream_t s;
  CHECK(cudaStreamCreate(&s));
  const int warm_ctas = 128;  // (the LLaMA decode attention's B = 1 grid: 8 heads x 16 key splits)
  std::vector<uint64_t> h(4 * 1024);
  std::printf("%-6s %-5s %-5s %4s | %-18s %6s | %-18s %7s\n", "MB", "warm", "read", "hold", "warm span", "gap",
              "reader span", "TB/s");
  for (double mb : mbs) {
    const uint64_t bytes = uint64_t(mb * 1e6) / 16 * 16;
    for (int read_bulk = 1; read_bulk >= 0; --read_bulk)
      for (int kind = 0; kind < kWarmKinds; ++kind)
        for (double hold_us : {0.0, 10.0}) {
          if (kind == kNone && hold_us > 0) continue;
          std::vector<double> wspan, gap, rspan;
          for (int rep = 0; rep < reps; ++rep) {
            CHECK(cudaMemsetAsync(evict, rep & 0xff, 256u << 20, s));
            warm_kernel<<<warm_ctas, 256, 0, s>>>(kind, w, bytes, uint64_t(hold_us * 1e3), ts, ts + 1024, sink);
            reader_kernel<<<sms, 256, ring_bytes, s>>>(read_bulk != 0, w, bytes, ts + 2048, ts + 3072, sink);
            CHECK(cudaGetLastError());
            CHECK(cudaMemcpyAsync(h.data(), ts, h.size() * sizeof(uint64_t), cudaMemcpyDeviceToHost, s));
            CHECK(cudaStreamSynchronize(s));
            const uint64_t w0 = *std::min_element(h.begin(), h.begin() + warm_ctas);
            const uint64_t w1 = *std::max_element(h.begin() + 1024, h.begin() + 1024 + warm_ctas);
            const uint64_t r0 = *std::min_element(h.begin() + 2048, h.begin() + 2048 + sms);
            const uint64_t r1 = *std::max_element(h.begin() + 3072, h.begin() + 3072 + sms);
            if (rep == 0) continue;  // (warm-up)
            wspan.push_back((w1 - w0) * 1e-3);
            gap.push_back((double(r0) - double(w1)) * 1e-3);
            rspan.push_back((r1 - r0) * 1e-3);
          }
          const double rs = median(rspan);
          std::printf("%-6.1f %-5s %-5s %4.0f | %18.2f %6.2f | %18.2f %7.2f\n", mb, warm_name(kind),
                      read_bulk ? "bulk" : "ldg", hold_us, median(wspan), median(gap), rs, bytes / (rs * 1e-6) / 1e12);
        }
  }
  return 0;
}
