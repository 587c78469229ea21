// Benchmark harness: CUDA-event timing of graph replays (median of many, L2 evicted before each),
// the two ceilings measured on the same GPU in the same run (fp16 tensor-core GEMM through cuBLAS,
// device-to-device copy bandwidth), and the results CSV of ../shared/results-format.md.
#pragma once
#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdlib>
#include <cstdio>
#include <ctime>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "braid/bench/device_data.cuh"
#include "braid/runtime/chain.cuh"

namespace braid::bench {

#define BRAID_CUBLAS_CHECK(expr)                                                                     \
  do {                                                                                               \
    cublasStatus_t st_ = (expr);                                                                     \
    if (st_ != CUBLAS_STATUS_SUCCESS)                                                                \
      throw std::runtime_error(std::string("cuBLAS error ") + std::to_string(int(st_)) + ": " #expr); \
  } while (0)

// Evicts the L2 by reading `n` 16-byte words (n >> L2 size): the lines left behind are clean. (A
// memset leaves ~50 MB of dirty lines whose write-back then lands inside the next timed region:
// ~15 us on an H100, measured as the gap between per-tile traces and event timings.)
template <int = 0>
__global__ void l2_evict_read_kernel(const uint4* p, size_t n, uint32_t* sink) {
  uint32_t x = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    const uint4 v = __ldcg(p + i);
    x ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (x == 0x9e3779b9u) *sink = x;  // keeps the loads; (almost) never taken
}

class Timer {
 public:
  // flush_bytes: size of the eviction buffer, read before every timed repetition (0: no eviction).
  // BRAID_FLUSH=memset restores the old eviction by a memset (dirty lines; for comparisons); BRAID_FLUSH=none
  // times with nothing evicted (code and data warm in L2 from the repetition before: what the eviction costs,
  // for diagnosis -- never for a result against a peer).
  explicit Timer(cudaStream_t s, size_t flush_bytes = size_t(256) << 20) : s_(s), flush_bytes_(flush_bytes) {
    BRAID_CUDA_CHECK(cudaEventCreate(&a_));
    BRAID_CUDA_CHECK(cudaEventCreate(&b_));
    const char* mode = std::getenv("BRAID_FLUSH");
    flush_by_memset_ = mode != nullptr && std::string(mode) == "memset";
    if (mode != nullptr && std::string(mode) == "none") flush_bytes_ = 0;
    if (flush_bytes_) {
      BRAID_CUDA_CHECK(cudaMalloc(&flush_, flush_bytes_ + 64));
      BRAID_CUDA_CHECK(cudaMemset(flush_, 0x5a, flush_bytes_ + 64));
      BRAID_CUDA_CHECK(cudaDeviceSynchronize());
    }
  }
  ~Timer() {
    cudaEventDestroy(a_);
    cudaEventDestroy(b_);
    if (flush_) cudaFree(flush_);
  }
  // Enqueued after every eviction (before `before`), outside the timed region: e.g. touch_l2 of the
  // buffers a benchmark wants resident (what an evicted L2 costs, measured apart: --l2 in braid-bench-conv).
  void set_after_evict(std::function<void()> f) { after_evict_ = std::move(f); }
  // One eviction now (what median_us does before each repetition), then after_evict.
  void evict() {
    if (flush_) evict_l2(0);
    if (after_evict_) after_evict_();
  }

  // Median time in microseconds of `work` (enqueued on the stream), with warm-up, L2 flushed before each.
  // before: enqueued before each timed repetition, after the L2 eviction and outside the timed region
  // (e.g. another kernel, so that each repetition starts with other code in the SMs' instruction caches).
  double median_us(const std::function<void()>& work, int reps, int warmup = 5,
                   const std::function<void()>& before = {}) {
    for (int i = 0; i < warmup; ++i) work();
    BRAID_CUDA_CHECK(cudaStreamSynchronize(s_));
    std::vector<float> t;
    for (int i = 0; i < reps; ++i) {
      if (flush_) evict_l2(i);
      if (before) before();
      if (after_evict_) after_evict_();
      BRAID_CUDA_CHECK(cudaEventRecord(a_, s_));
      work();
      BRAID_CUDA_CHECK(cudaEventRecord(b_, s_));
      BRAID_CUDA_CHECK(cudaEventSynchronize(b_));
      float ms = 0;
      BRAID_CUDA_CHECK(cudaEventElapsedTime(&ms, a_, b_));
      t.push_back(ms * 1000.f);
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
  }

 private:
  void evict_l2(int i) {
    if (flush_by_memset_) {
      BRAID_CUDA_CHECK(cudaMemsetAsync(flush_, i & 0xff, flush_bytes_, s_));
      return;
    }
    l2_evict_read_kernel<<<1056, 256, 0, s_>>>(static_cast<const uint4*>(flush_), flush_bytes_ / 16,
                                               reinterpret_cast<uint32_t*>(static_cast<char*>(flush_) + flush_bytes_));
    BRAID_CUDA_CHECK(cudaGetLastError());
  }
  cudaStream_t s_;
  cudaEvent_t a_, b_;
  size_t flush_bytes_;
  void* flush_ = nullptr;
  bool flush_by_memset_ = false;
  std::function<void()> after_evict_;
};

// Reads `bytes` (a multiple of 16) at p through the L2, leaving it resident there (L2 permitting).
inline void touch_l2(const void* p, size_t bytes, cudaStream_t s) {
  static uint32_t* sink = nullptr;
  if (sink == nullptr) BRAID_CUDA_CHECK(cudaMalloc(&sink, 64));
  l2_evict_read_kernel<<<264, 256, 0, s>>>(static_cast<const uint4*>(p), bytes / 16, sink);
  BRAID_CUDA_CHECK(cudaGetLastError());
}

// A CUDA graph holding whatever `enqueue` puts on the stream.
class Graph {
 public:
  Graph(cudaStream_t s, const std::function<void(cudaStream_t)>& enqueue) : s_(s) {
    BRAID_CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    enqueue(s);
    BRAID_CUDA_CHECK(cudaStreamEndCapture(s, &g_));
    BRAID_CUDA_CHECK(cudaGraphInstantiate(&e_, g_, 0));
  }
  ~Graph() {
    cudaGraphExecDestroy(e_);
    cudaGraphDestroy(g_);
  }
  void launch() { BRAID_CUDA_CHECK(cudaGraphLaunch(e_, s_)); }

 private:
  cudaStream_t s_;
  cudaGraph_t g_;
  cudaGraphExec_t e_;
};

struct Ceilings {
  double tflops = 0;  // fp16 in, fp32 accumulate, cuBLAS, 8192^3
  double tbps = 0;    // device-to-device copy, bytes read + written
};

inline Ceilings measure_ceilings(cudaStream_t s) {
  Ceilings c;
  Timer timer(s, 0);
  {
    const int n = 8192;
    __half *A, *B, *C;
    BRAID_CUDA_CHECK(cudaMalloc(&A, size_t(n) * n * 2));
    BRAID_CUDA_CHECK(cudaMalloc(&B, size_t(n) * n * 2));
    BRAID_CUDA_CHECK(cudaMalloc(&C, size_t(n) * n * 2));
    // Random data: tensor cores run measurably faster on zeros.
    fill_random(A, size_t(n) * n, 1, 1.0f, s);
    fill_random(B, size_t(n) * n, 2, 1.0f, s);
    cublasHandle_t h;
    BRAID_CUBLAS_CHECK(cublasCreate(&h));
    BRAID_CUBLAS_CHECK(cublasSetStream(h, s));
    const float one = 1, zero = 0;
    auto gemm = [&] {
      BRAID_CUBLAS_CHECK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, A, CUDA_R_16F, n, B, CUDA_R_16F, n,
                                      &zero, C, CUDA_R_16F, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    };
    const double us = timer.median_us(gemm, 15, 3);
    c.tflops = 2.0 * n * double(n) * n / (us * 1e-6) / 1e12;
    cublasDestroy(h);
    cudaFree(A);
    cudaFree(B);
    cudaFree(C);
  }
  {
    const size_t bytes = size_t(1) << 30;
    void *a, *b;
    BRAID_CUDA_CHECK(cudaMalloc(&a, bytes));
    BRAID_CUDA_CHECK(cudaMalloc(&b, bytes));
    BRAID_CUDA_CHECK(cudaMemset(a, 1, bytes));
    const double us = timer.median_us([&] { BRAID_CUDA_CHECK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, s)); }, 15, 3);
    c.tbps = 2.0 * bytes / (us * 1e-6) / 1e12;
    cudaFree(a);
    cudaFree(b);
  }
  return c;
}

inline std::string gpu_name() {
  cudaDeviceProp p;
  BRAID_CUDA_CHECK(cudaGetDeviceProperties(&p, 0));
  return p.name;
}
inline std::string gpu_short_name() {
  std::string n = gpu_name();
  for (const char* k : {"H100", "H200", "A100", "B200", "L40"})
    if (n.find(k) != std::string::npos) {
      std::string s = k;
      for (auto& ch : s) ch = char(tolower(ch));
      return s;
    }
  return "gpu";
}
inline std::string today_iso() {
  char buf[16];
  std::time_t t = std::time(nullptr);
  std::strftime(buf, sizeof buf, "%Y-%m-%d", std::gmtime(&t));
  return buf;
}

struct ResultRow {
  std::string workload, shape, dtype, variant;
  double time_us = 0, floor_us = 0;
  bool pass = false;
};

inline void write_results_csv(const std::string& path, const std::string& commit, const std::vector<ResultRow>& rows) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (!f) throw std::runtime_error("cannot write " + path);
  std::fprintf(f, "gpu,date,commit,workload,shape,dtype,variant,time_us,floor_us,check\n");
  const std::string gpu = gpu_name(), date = today_iso();
  for (const auto& r : rows)
    std::fprintf(f, "%s,%s,%s,%s,%s,%s,%s,%.2f,%.2f,%s\n", gpu.c_str(), date.c_str(), commit.c_str(), r.workload.c_str(),
                 r.shape.c_str(), r.dtype.c_str(), r.variant.c_str(), r.time_us, r.floor_us, r.pass ? "pass" : "fail");
  std::fclose(f);
}

// A chain's per-tile trace (Chain::download_trace) as CSV, the timeline tool's input
// (bench/plot_timeline.py).
inline void write_trace_csv(const std::string& path, const std::vector<TraceRecord>& trace) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (!f) throw std::runtime_error("cannot write " + path);
  std::fprintf(f, "stage,tile_x,tile_y,smid,block,start_us,end_us,wait_us,mainloop_end_us,mainloop_mhz\n");
  for (const auto& r : trace)
    std::fprintf(f, "%d,%u,%u,%u,%u,%.3f,%.3f,%.3f,%.3f,%u\n", r.stage, r.tile.x, r.tile.y, r.smid, r.block, r.start_us,
                 r.end_us, r.wait_us, r.mainloop_end_us, r.mainloop_mhz);
  std::fclose(f);
}

// The per-tile trace of a traced workload's second run (the first warms it up): any workload with
// run(stream), check(stream) and chain() built with ChainOptions::trace (ConvChain, Mlp, AttentionBlock).
template <class Workload>
std::vector<TraceRecord> record_trace(Workload& w, cudaStream_t s) {
  w.run(s);
  w.check(s);
  w.chain().clear_trace(s);
  w.run(s);
  w.check(s);
  return w.chain().download_trace();
}

// One line per stage of a traced run: when its first tile started and its last ended (relative to
// the run's earliest start), when the first tile's waits were over (semaphores, or a PDL-launched
// CTA's wait for its primary grid), the median tile time (start -> posted) and median mainloop, and the gap
// between the previous stage's last end and this stage's first start (negative: they overlapped), and the
// median SM clock over the mainloops where recorded.
// Where a chain's time goes between two kernels (launch gaps, slower tiles, overlap) reads off it.
inline std::string trace_summary(const std::vector<TraceRecord>& trace) {
  std::map<int, std::vector<const TraceRecord*>> by_stage;
  for (const auto& r : trace) by_stage[r.stage].push_back(&r);
  std::string out;
  double prev_end = 0;
  bool first = true;
  for (auto& [stage, rows] : by_stage) {
    double t0 = 1e30, t1 = -1e30, w0 = 1e30;
    std::vector<double> dur, ml, mhz;
    for (const TraceRecord* r : rows) {
      if (r->mainloop_mhz > 0) mhz.push_back(r->mainloop_mhz);
      t0 = std::min(t0, r->start_us);
      w0 = std::min(w0, r->start_us + r->wait_us);
      t1 = std::max(t1, r->end_us);
      dur.push_back(r->end_us - r->start_us);
      if (r->mainloop_end_us >= 0) ml.push_back(r->mainloop_end_us - r->start_us);
    }
    auto median = [](std::vector<double>& v) {
      if (v.empty()) return -1.0;
      std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
      return v[v.size() / 2];
    };
    char line[256];
    std::snprintf(line, sizeof line, "stage %d: %zu tiles, %.1f -> %.1f us (first wait over %.1f), tile %.2f us (mainloop %.2f)",
                  stage, rows.size(), t0, t1, w0, median(dur), median(ml));
    out += line;
    if (!mhz.empty()) {
      std::snprintf(line, sizeof line, ", SM clock %.0f MHz", median(mhz));
      out += line;
    }
    if (!first) {
      std::snprintf(line, sizeof line, ", gap after stage %d's last tile %.1f us", stage - 1, t0 - prev_end);
      out += line;
    }
    out += "; ";
    prev_end = t1;
    first = false;
  }
  return out;
}

}  // namespace braid::bench
