// Microbenchmark: do the bulk copies a PDL-launched kernel issues *before* griddepcontrol.wait land while its
// primary still runs? braid's optimization R under PDL (a skinny GEMM fills its ring with W, the decode attention
// loads cached keys, before the PDL wait) assumes so, yet in the decode chain's phase stamps the output GEMM takes
// its units after the wait at the pace of a DRAM stream, however many of them it issued before
// (bench/results/deep-ring-h200-20261129/). This answers it alone, without a GEMM:
//   primary:   one CTA per SM (256 threads, no shared memory but the largest carveout), launch_dependents at its start, then either spins for
//              `spin` us (DRAM idle) or streams `stream` MB per CTA with 16-byte loads (DRAM busy);
//   secondary: PDL-launched, one CTA per SM (256 threads), loads `stages` x 16 KB (its own slice of W) -- by bulk
//              copies (TMA) into shared memory, by cp.async (LDGSTS) into shared memory, or by ld.global into
//              registers -- then waits for them to land before griddepcontrol.wait ("land,wait") or after it.
// Per secondary CTA: entry, copies issued, first / last copy landed, wait returned; the primary's CTAs' ends. Printed
// as medians / maxima in us from the primary's first CTA start.
//   build: cmake target braid-micro-pdl-preload;  run: braid-micro-pdl-preload [reps]
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

constexpr int kMaxStages = 12;
constexpr uint32_t kUnit = 16384;
enum Slot { kEntry, kIssued, kFirst, kLast, kWaited, kSlots };

// stream_bytes > 0: read that many bytes of `src` (this CTA's slice) with 16-byte loads; else spin spin_ns.
__global__ void primary(uint64_t spin_ns, uint64_t stream_bytes, const uint4* src, uint64_t* t_start, uint64_t* t_end,
                        uint32_t* sink) {
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  const uint64_t t0 = now_ns();
  if (threadIdx.x == 0) t_start[blockIdx.x] = t0;
  if (stream_bytes > 0) {
    const uint4* p = src + blockIdx.x * (stream_bytes / 16);
    uint32_t acc = 0;
    for (uint64_t i = threadIdx.x; i < stream_bytes / 16; i += blockDim.x) {
      const uint4 v = __ldcs(p + i);
      acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == 0x9e3779b9u) *sink = acc;  // (keeps the loads; never taken in practice)
  } else {
    while (now_ns() - t0 < spin_ns) {
    }
  }
  __syncthreads();
  if (threadIdx.x == 0) t_end[blockIdx.x] = now_ns();
}

// `copiers` threads (thread index `t`) copy `bytes` from src to shared memory at base in 16-byte cp.asyncs.
__device__ __forceinline__ void cp_async_copy(uint32_t base, const uint8_t* src, uint32_t bytes, uint32_t t, uint32_t copiers) {
  for (uint32_t off = t * 16u; off < bytes; off += copiers * 16u)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(base + off), "l"(src + off) : "memory");
  asm volatile("cp.async.commit_group;" ::: "memory");
}

// method 0 (3: see below): thread 0 issues `stages` bulk copies (TMA) of 16 KB; poll_first: wait for them (polling their mbarriers),
// then griddepcontrol.wait; else the other way round. A poll gives up after 2 ms (then kLast stays 0).
// method 1: every thread copies its 16-byte pieces with cp.async (LDGSTS, not the TMA), then cp.async.wait_all and
// a CTA barrier stand for "landed"; method 4: warp 0 alone copies by cp.async while the other warps wait at
// griddepcontrol.wait. method 2: every thread loads its pieces into registers (ld.global, up to 4
// stages), then uses them.
__global__ void __launch_bounds__(256) secondary(const uint8_t* w, int stages, int poll_first, int method, uint64_t* rec,
                                                 uint32_t* sink) {
  extern __shared__ __align__(128) uint8_t ring[];
  __shared__ __align__(8) uint64_t bar[kMaxStages];
  uint64_t* r = rec + blockIdx.x * kSlots;
  const bool t0 = threadIdx.x == 0;
  if (t0) r[kEntry] = now_ns();
  const uint8_t* src = w + uint64_t(blockIdx.x) * stages * kUnit;
  const uint32_t base = uint32_t(__cvta_generic_to_shared(ring));
  if (method == 0 || method == 3) {
    // method 3: the other threads hold at a barrier until thread 0 has seen its copies land (land,wait), so no
    // thread of the CTA executes griddepcontrol.wait before then -- does a waiting thread hold the CTA's TMA?
    if (!t0) {
      if (method == 3 && poll_first) asm volatile("barrier.sync 1, 256;" ::: "memory");
      asm volatile("griddepcontrol.wait;" ::: "memory");
      return;
    }
    for (int s = 0; s < stages; ++s) braid::tma::init(&bar[s], 1);
    braid::tma::fence_init();
    for (int s = 0; s < stages; ++s) {
      braid::tma::arrive_expect_tx(&bar[s], kUnit);
      braid::tma::load_bulk(base + s * kUnit, src + s * kUnit, kUnit, &bar[s]);
    }
    r[kIssued] = now_ns();
    auto poll = [&] {
      const uint64_t ts = now_ns();
      for (int s = 0; s < stages; ++s) {
        const uint32_t a = uint32_t(__cvta_generic_to_shared(&bar[s]));
        uint32_t done = 0;
        while (!done) {
          asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0; selp.u32 %0, 1, 0, p; }"
                       : "=r"(done) : "r"(a) : "memory");
          if (!done && now_ns() - ts > 2000000) return;
        }
        const uint64_t t = now_ns();
        if (s == 0) r[kFirst] = t;
        if (s == stages - 1) r[kLast] = t;
      }
    };
    if (poll_first) poll();
    if (method == 3 && poll_first) asm volatile("barrier.sync 1, 256;" ::: "memory");
    asm volatile("griddepcontrol.wait;" ::: "memory");
    r[kWaited] = now_ns();
    if (!poll_first) poll();
    return;
  }
  if (method == 4) {  // LDGSTS by warp 0 alone while the other warps sit in griddepcontrol.wait (the skinny GEMM's roles)
    if (threadIdx.x >= 32) {
      asm volatile("griddepcontrol.wait;" ::: "memory");
      return;
    }
    cp_async_copy(base, src, uint32_t(stages) * kUnit, threadIdx.x, 32);
    if (t0) r[kIssued] = now_ns();
    auto land4 = [&] {
      asm volatile("cp.async.wait_all;" ::: "memory");
      __syncwarp();
      if (t0) r[kFirst] = r[kLast] = now_ns();
    };
    if (poll_first) land4();
    asm volatile("griddepcontrol.wait;" ::: "memory");
    if (t0) r[kWaited] = now_ns();
    if (!poll_first) land4();
    return;
  }
  const int pieces = stages * int(kUnit / 16) / int(blockDim.x);  // 16-byte pieces per thread
  uint4 v[16];
  if (method == 1) {
    cp_async_copy(base, src, uint32_t(stages) * kUnit, threadIdx.x, blockDim.x);
  } else {
#pragma unroll
    for (int i = 0; i < 16; ++i)
      if (i < pieces) v[i] = __ldcs(reinterpret_cast<const uint4*>(src) + i * blockDim.x + threadIdx.x);
  }
  if (t0) r[kIssued] = now_ns();
  auto land = [&] {
    if (method == 1) {
      asm volatile("cp.async.wait_all;" ::: "memory");
    } else {
      uint32_t acc = 0;
#pragma unroll
      for (int i = 0; i < 16; ++i)
        if (i < pieces) acc ^= v[i].x ^ v[i].y ^ v[i].z ^ v[i].w;
      if (acc == 0x9e3779b9u) *sink = acc;
    }
    __syncthreads();
    if (t0) r[kFirst] = r[kLast] = now_ns();
  };
  if (poll_first) land();
  asm volatile("griddepcontrol.wait;" ::: "memory");
  if (t0) r[kWaited] = now_ns();
  if (!poll_first) land();
}

}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 5;
  int dev = 0, sms = 0;
  CHECK(cudaGetDevice(&dev));
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, dev));
  const uint64_t stream_max = 256ull << 10;  // per CTA
  // Each launch reads its own slices (W: reps x SMs x 12 x 16 KB, 130 MB at 5 reps; the primary's stream: 8 slices
  // of SMs x 256 KB), so nothing comes from L2 (60 MB); between modes a 256 MB read evicts it.
  uint8_t *w = nullptr, *src = nullptr;
  uint64_t *rec = nullptr, *t_start = nullptr, *t_end = nullptr;
  uint32_t* sink = nullptr;
  const size_t w_slice = size_t(sms) * kMaxStages * kUnit, src_slice = size_t(sms) * stream_max;
  uint8_t* evict = nullptr;
  CHECK(cudaMalloc(&w, w_slice * reps));
  CHECK(cudaMalloc(&src, src_slice * 8));
  CHECK(cudaMalloc(&evict, 256u << 20));
  CHECK(cudaMemset(w, 1, w_slice * reps));
  CHECK(cudaMemset(src, 2, src_slice * 8));
  CHECK(cudaMalloc(&rec, size_t(sms) * kSlots * 8));
  CHECK(cudaMalloc(&t_start, size_t(sms) * 8));
  CHECK(cudaMalloc(&t_end, size_t(sms) * 8));
  CHECK(cudaMalloc(&sink, 64));
  CHECK(cudaFuncSetAttribute(secondary, cudaFuncAttributeMaxDynamicSharedMemorySize, kMaxStages * kUnit));
  // The primary asks for the largest shared-memory carveout: an SM cannot change its L1 / shared split under a
  // resident CTA, so with the default carveout the secondary's CTAs (64-192 KB) would wait for the primary's to leave.
  CHECK(cudaFuncSetAttribute(primary, cudaFuncAttributePreferredSharedMemoryCarveout, 100));
  cudaStream_t s;
  CHECK(cudaStreamCreate(&s));
  std::setvbuf(stdout, nullptr, _IONBF, 0);
  std::printf("%s (%d SMs): secondary = PDL-launched, %u-byte bulk copies into shared memory before griddepcontrol.wait\n",
              prop.name, sms, kUnit);
  std::printf("us from the primary's first CTA start, median / max over CTAs (median over %d reps of each)\n", reps);
  std::printf("%-30s %-22s %11s %11s %11s %11s %11s %11s\n", "primary", "secondary", "prim. end", "sec. entry",
              "issued", "1st landed", "last landed", "waited");
  struct Mode {
    const char* name;
    uint64_t spin_ns, stream_bytes;
  };
  const Mode modes[] = {{"spin 20 us (DRAM idle)", 20000, 0}, {"stream 256 KB/CTA (DRAM busy)", 0, stream_max}};
  for (const Mode& m : modes)
    for (int method : {0, 3, 1, 4, 2})
    for (int stages : {4, 12})
      for (int poll_first : {1, 0}) {
        if (method == 2 && stages > 4) continue;  // (registers: 16 pieces per thread)
        if ((method == 3 || method == 4) && !poll_first) continue;
        std::vector<std::vector<double>> med_of(kSlots + 1), max_of(kSlots + 1);
        int lost = 0;
        for (int rep = 0; rep < reps; ++rep) {
          if (rep == 0) CHECK(cudaMemsetAsync(evict, rep, 256u << 20, s));
          CHECK(cudaMemsetAsync(rec, 0, size_t(sms) * kSlots * 8, s));
          primary<<<sms, 256, 0, s>>>(m.spin_ns, m.stream_bytes, reinterpret_cast<const uint4*>(src + src_slice * (rep % 8)),
                                      t_start, t_end, sink);
          cudaLaunchConfig_t cfg{};
          cfg.gridDim = dim3(sms);
          cfg.blockDim = dim3(256);
          cfg.dynamicSmemBytes = size_t(stages) * kUnit;
          cfg.stream = s;
          cudaLaunchAttribute at[1];
          at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
          at[0].val.programmaticStreamSerializationAllowed = 1;
          cfg.attrs = at;
          cfg.numAttrs = 1;
          CHECK(cudaLaunchKernelEx(&cfg, secondary, static_cast<const uint8_t*>(w + w_slice * rep), stages, poll_first, method,
                                   rec, sink));
          CHECK(cudaStreamSynchronize(s));
          std::vector<uint64_t> h(size_t(sms) * kSlots), ts(sms), te(sms);
          CHECK(cudaMemcpy(h.data(), rec, h.size() * 8, cudaMemcpyDeviceToHost));
          CHECK(cudaMemcpy(ts.data(), t_start, ts.size() * 8, cudaMemcpyDeviceToHost));
          CHECK(cudaMemcpy(te.data(), t_end, te.size() * 8, cudaMemcpyDeviceToHost));
          const uint64_t t0 = *std::min_element(ts.begin(), ts.end());
          std::vector<std::vector<double>> v(kSlots + 1);
          for (int c = 0; c < sms; ++c) {
            v[0].push_back(double(te[c] - t0) * 1e-3);
            for (int k = 0; k < kSlots; ++k) {
              const uint64_t x = h[size_t(c) * kSlots + k];
              if (x == 0) {
                if (k == kLast) ++lost;
                continue;
              }
              v[k + 1].push_back(double(int64_t(x - t0)) * 1e-3);
            }
          }
          for (int k = 0; k <= kSlots; ++k) {
            if (v[k].empty()) continue;
            med_of[k].push_back(median(v[k]));
            max_of[k].push_back(*std::max_element(v[k].begin(), v[k].end()));
          }
        }
        static const char* how[] = {"TMA", "LDGSTS", "LDG", "TMA-nowait", "LDGSTS-w0"};
        std::printf("%-30s %-22s", m.name,
                    (std::string(how[method]) + " " + std::to_string(stages) + (poll_first ? " land,wait" : " wait,land")).c_str());
        for (int k : {0, 1 + kEntry, 1 + kIssued, 1 + kFirst, 1 + kLast, 1 + kWaited})
          std::printf(" %5.1f/%5.1f", median(med_of[k]), median(max_of[k]));
        if (lost) std::printf("  (%d copies never landed before 2 ms)", lost);
        std::printf("\n");
      }
  return 0;
}
