// Microbenchmark: how fast can one SM's TMA unit fill a conv mainloop's pipeline, with no MMA at all?
// The question behind it (docs/hopper-conv.md): braid's 128x64 conv k-step takes ~0.8 us per SM while
// the consumers wait on full barriers and L2/DRAM are mostly idle. Is the im2col TMA load the limit?
//
// One producer thread issues the k-steps' loads into the same pipeline stages (shared-memory layouts,
// stage count) as braid's fp16 128x64 convolution; one consumer thread waits for each stage and frees
// it at once. Persistent CTAs, one per SM, walk the conv's tiles (128 pixels x 64 filters) and each
// tile's 9*C/64 k-steps. A operand, three ways:
//   im2col  the conv's own TMA im2col view of X (ConvMainloop, the kernel's exact copy calls)
//   tiled   a materialized im2col matrix A[M, 9C] through a plain 2-D tiled TMA view (GemmMainloop):
//           the same bytes per k-step, as a GEMM would load them
//   box     X through a 4-D tiled view (C, W, H, N): a tile is a box of whole image rows (W x bh rows
//           x bn images, <= 128 pixels), each tap shifts the box by (r-1, s-1) and the TMA unit fills
//           the out-of-image rows/columns with zeros -- the padding without im2col mode
// B (the filter, K-major [K, 9C]) is the conv's TMA view in every mode. Modes load A and B, A only,
// or B only. Timing: CUDA events, median of reps. Not part of the library.
//   build: cmake target braid-micro-tma-loads;  run: braid-micro-tma-loads [CxHWxN ...]
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "braid/kernels/hopper/conv_traits.cuh"
#include "cutlass/arch/barrier.h"
#include "cutlass/cuda_host_adapter.hpp"

using namespace braid::hopper;
using Element = cutlass::half_t;
using ConvML = ConvMainloop<Element, 128, 64, false>;
using GemmML = GemmMainloop<Element, 128, 64, false, cutlass::layout::ColumnMajor>;
static_assert(std::is_same_v<typename ConvML::SmemLayoutA, typename GemmML::SmemLayoutA>, "same A stages");
static_assert(std::is_same_v<typename ConvML::SmemLayoutB, typename GemmML::SmemLayoutB>, "same B stages");
constexpr int kStages = cute::size<2>(typename ConvML::SmemLayoutA{});

#define CK(x)                                                                                          \
  do {                                                                                                 \
    cudaError_t e_ = (x);                                                                              \
    if (e_ != cudaSuccess) {                                                                           \
      std::fprintf(stderr, "CUDA error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__);   \
      std::exit(1);                                                                                    \
    }                                                                                                  \
  } while (0)

enum AKind { kIm2col = 0, kTiled = 1, kBox = 2 };

struct Geometry {
  int M, N, KK;                            // the GEMM view: pixels, filters, 9C
  int tiles_m, tiles_n, k_tiles, cblocks;  // cblocks = C / 64
  int W, H, bh, bn, tiles_per_image_col;   // box: tile = bh rows of bn images (bn > 1 only when bh = H)
  uint32_t a_bytes, b_bytes;               // per k-step
  int repeat;                              // each CTA walks its units this many times
};

struct Smem {
  typename ConvML::TensorStorage tensors;
  alignas(8) uint64_t full[kStages];
  alignas(8) uint64_t empty[kStages];
};

template <int kKind, bool kLoadA, bool kLoadB>
__global__ void __launch_bounds__(64, 1)
    probe(const __grid_constant__ typename ConvML::Params conv, const __grid_constant__ typename GemmML::Params gemm,
          const __grid_constant__ CUtensorMap box, Geometry g,
          Conv2dProblem problem) {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using namespace cute;
  using Bar = cutlass::arch::ClusterTransactionBarrier;
  extern __shared__ __align__(1024) char smem_raw[];
  Smem& s = *reinterpret_cast<Smem*>(smem_raw);
  if (threadIdx.x == 0) {
    for (int i = 0; i < kStages; ++i) {
      Bar::init(&s.full[i], 1);
      cutlass::arch::ClusterBarrier::init(&s.empty[i], 1);
    }
    cutlass::arch::fence_barrier_init();
  }
  __syncthreads();
  const int units = g.tiles_m * g.tiles_n;
  if (threadIdx.x == 0) {
    cute::prefetch_tma_descriptor(conv.tma_load_a.get_tma_descriptor());
    cute::prefetch_tma_descriptor(conv.tma_load_b.get_tma_descriptor());
    ConvML conv_ml;
    auto conv_t = conv_ml.load_init(problem, conv);
    Tensor gA_conv = get<0>(conv_t);
    Tensor gB = get<1>(conv_t);
    GemmML gemm_ml;
    auto gemm_t = gemm_ml.load_init(make_shape(g.M, g.N, g.KK, 1), gemm);
    Tensor gA_gemm = get<0>(gemm_t)(_, _, _, _, 0);
    Tensor sA = make_tensor(make_smem_ptr(s.tensors.smem_A.data()), typename ConvML::SmemLayoutA{});
    Tensor sB = make_tensor(make_smem_ptr(s.tensors.smem_B.data()), typename ConvML::SmemLayoutB{});
    auto tma_ac = conv.tma_load_a.get_slice(0);
    auto tma_ag = gemm.tma_load_a.get_slice(0);
    auto tma_b = conv.tma_load_b.get_slice(0);
    Tensor tAsA_c = tma_ac.partition_D(sA);
    Tensor tAsA_g = tma_ag.partition_D(sA);
    Tensor tBsB = tma_b.partition_D(sB);
    const uint32_t tx = (kLoadA ? g.a_bytes : 0) + (kLoadB ? g.b_bytes : 0);
    int stage = 0;
    uint32_t phase = 0;
    for (int v = blockIdx.x; v < units * g.repeat; v += gridDim.x) {
      const int u = v % units;
      const int y = u % g.tiles_m, x = u / g.tiles_m;
      Tensor tAgA_c = tma_ac.partition_S(gA_conv(_, _, y, _));
      Tensor tAgA_g = tma_ag.partition_S(gA_gemm(_, _, y, _));
      Tensor tBgB = tma_b.partition_S(gB(_, _, x, _));
      // box: this tile's image rows
      const int col = y % g.tiles_per_image_col, img = y / g.tiles_per_image_col;
      const int h0 = col * g.bh, n0 = img * g.bn;
      for (int k = 0; k < g.k_tiles; ++k) {
        cutlass::arch::ClusterBarrier::wait(&s.empty[stage], phase ^ 1);
        Bar::arrive_and_expect_tx(&s.full[stage], tx);
        uint64_t& bar = s.full[stage];
        if constexpr (kLoadB) copy(conv.tma_load_b.with(bar, 0), tBgB(_, _, _, k), tBsB(_, _, _, stage));
        if constexpr (kLoadA) {
          if constexpr (kKind == kIm2col) {
            copy(conv.tma_load_a.with(bar, 0), tAgA_c(_, _, _, k), tAsA_c(_, _, _, stage));
          } else if constexpr (kKind == kTiled) {
            copy(gemm.tma_load_a.with(bar, 0), tAgA_g(_, _, _, k), tAsA_g(_, _, _, stage));
          } else {
            const int cb = k % g.cblocks, tap = k / g.cblocks;
            const int r = tap / 3, sx = tap % 3;
            const uint32_t dst = cute::cast_smem_ptr_to_uint(&sA(0, 0, stage));
            const uint32_t mbar = cute::cast_smem_ptr_to_uint(&bar);
            asm volatile(
                "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                " [%0], [%1, {%3, %4, %5, %6}], [%2];" ::"r"(dst),
                "l"(reinterpret_cast<uint64_t>(&box)), "r"(mbar), "r"(cb * 64), "r"(sx - 1), "r"(h0 + r - 1),
                "r"(n0)
                : "memory");
          }
        }
        if (++stage == kStages) { stage = 0; phase ^= 1; }
      }
    }
  } else if (threadIdx.x == 32) {
    int stage = 0;
    uint32_t phase = 0;
    const int all = units * g.repeat;
    const int my_units = all > int(blockIdx.x) ? (all - 1 - int(blockIdx.x)) / int(gridDim.x) + 1 : 0;
    for (int i = 0; i < my_units * g.k_tiles; ++i) {
      Bar::wait(&s.full[stage], phase);
      cutlass::arch::ClusterBarrier::arrive(&s.empty[stage]);
      if (++stage == kStages) { stage = 0; phase ^= 1; }
    }
  }
#endif
}


// The mainloop as braid's conv kernel runs it: CUTLASS's TMA pipeline, one producer warp, two consumer
// warpgroups running the collective's wgmma loop (kMma) or only waiting for and freeing each stage;
// no epilogue, no scheduler. The accumulators reach memory only if they hold an impossible value.
template <int kTileN, bool kMma>
__global__ void __launch_bounds__(384, 1)
    mainloop_probe(const __grid_constant__ typename ConvMainloop<Element, 128, kTileN, false>::Params conv, Geometry g, Conv2dProblem problem,
                   float* sink, unsigned long long* stamps) {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using namespace cute;
  using ConvML = ConvMainloop<Element, 128, kTileN, false>;
  using Pipeline = typename ConvML::MainloopPipeline;
  using PipelineState = typename ConvML::PipelineState;
  struct Storage {
    typename ConvML::TensorStorage tensors;
    alignas(16) typename ConvML::PipelineStorage pipeline;
  };
  extern __shared__ __align__(1024) char smem_raw[];
  Storage& s = *reinterpret_cast<Storage*>(smem_raw);
  const int wg = threadIdx.x / 128, warp = (threadIdx.x / 32) % 4, lane = threadIdx.x % 32;
  if (threadIdx.x == 0) {
    cute::prefetch_tma_descriptor(conv.tma_load_a.get_tma_descriptor());
    cute::prefetch_tma_descriptor(conv.tma_load_b.get_tma_descriptor());
  }
  typename Pipeline::Params pp;
  if (wg == 0 && warp == 0) pp.role = Pipeline::ThreadCategory::Producer;
  if (wg > 0) pp.role = Pipeline::ThreadCategory::Consumer;
  pp.is_leader = (threadIdx.x % 128) == 0;
  pp.num_consumers = 256;
  pp.transaction_bytes = conv.tma_transaction_bytes;
  Pipeline pipeline(s.pipeline, pp, Shape<_1, _1, _1>{});
  __syncthreads();
  const int units = g.tiles_m * g.tiles_n, all = units * g.repeat;
  ConvML ml;
  if (wg == 0) {
    if (warp == 0 && lane == 0) {
      auto t = ml.load_init(problem, conv);
      Tensor gA = get<0>(t);
      Tensor gB = get<1>(t);
      Tensor sA = make_tensor(make_smem_ptr(s.tensors.smem_A.data()), typename ConvML::SmemLayoutA{});
      Tensor sB = make_tensor(make_smem_ptr(s.tensors.smem_B.data()), typename ConvML::SmemLayoutB{});
      auto ta = conv.tma_load_a.get_slice(0);
      auto tb = conv.tma_load_b.get_slice(0);
      Tensor tAsA = ta.partition_D(sA);
      Tensor tBsB = tb.partition_D(sB);
      PipelineState write = cutlass::make_producer_start_state<Pipeline>();
      for (int v = blockIdx.x; v < all; v += gridDim.x) {
        const int u = v % units;
        Tensor tAgA = ta.partition_S(gA(_, _, u % g.tiles_m, _));
        Tensor tBgB = tb.partition_S(gB(_, _, u / g.tiles_m, _));
        for (int k = 0; k < g.k_tiles; ++k) {
          pipeline.producer_acquire(write);
          auto* bar = pipeline.producer_get_barrier(write);
          copy(conv.tma_load_b.with(*bar, 0), tBgB(_, _, _, k), tBsB(_, _, _, write.index()));
          copy(conv.tma_load_a.with(*bar, 0), tAgA(_, _, _, k), tAsA(_, _, _, write.index()));
          ++write;
        }
      }
    }
  } else {
    const int t = threadIdx.x - 128;
    const unsigned long long t0 = t == 0 ? braid::ptx::globaltimer_ns() : 0;
    typename ConvML::TiledMma tiled_mma;
    PipelineState read;
    float keep = 0.f;
    for (int v = blockIdx.x; v < all; v += gridDim.x) {
      Tensor accum = partition_fragment_C(tiled_mma, make_shape(Int<128>{}, Int<kTileN>{}));
      if constexpr (kMma) {
        ml.mma(pipeline, read, accum, g.k_tiles, t, s.tensors, conv);
        ml.mma_tail(pipeline, read, g.k_tiles);
        read.advance(g.k_tiles);
        keep += accum(0);
      } else {
        for (int k = 0; k < g.k_tiles; ++k) {
          pipeline.consumer_wait(read);
          pipeline.consumer_release(read);
          ++read;
        }
      }
    }
    if (keep == 1234.5f) sink[threadIdx.x] = keep;
    if (t == 0 && stamps != nullptr) {  // this CTA's consumer start and end (globaltimer, ns)
      stamps[2 * blockIdx.x] = t0;
      stamps[2 * blockIdx.x + 1] = braid::ptx::globaltimer_ns();
    }
  }
#endif
}

// Random halves in [-1, 1) (a hash of the index): tensor-core power, hence clocks, depends on the data.
__global__ void fill_random(Element* p, size_t n, uint32_t seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    uint32_t h = uint32_t(i) * 0x9E3779B1u ^ seed;
    h ^= h >> 15;
    h *= 0x85EBCA77u;
    h ^= h >> 13;
    p[i] = Element(float(h & 0xFFFF) / 32768.f - 1.f);
  }
}

__global__ void empty_kernel(int* p) {
  if (p != nullptr && threadIdx.x == 1024) *p = 0;
}

namespace {

struct Case {
  int C, HW, N;
};

Case parse_case(const std::string& t) {
  Case c{};
  if (std::sscanf(t.c_str(), "%dx%dx%d", &c.C, &c.HW, &c.N) != 3 || c.C % 64 != 0 || c.HW <= 0 || c.N <= 0 ||
      c.HW > 128) {
    std::fprintf(stderr, "cases are CxHWxN with C a multiple of 64 and HW <= 128, e.g. 512x7x24; got %s\n", t.c_str());
    std::exit(2);
  }
  return c;
}

float median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<Case> cases;
  for (int i = 1; i < argc; ++i) cases.push_back(parse_case(argv[i]));
  if (cases.empty()) cases = {{64, 56, 32}, {128, 28, 16}, {256, 14, 16}, {512, 7, 24}, {512, 7, 8}};
  int dev = 0, sms = 0, clock_khz = 0;
  CK(cudaGetDevice(&dev));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  CK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, dev));
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, dev));
  std::printf("# %s, %d SMs; fp16 128x64 conv pipeline: %d stages of A 16 KiB + B 8 KiB; loads only, no MMA\n",
              prop.name, sms, kStages);
  std::printf("# t1/t4: the CTAs walk their units once / four times; steady = (t4 - t1) per k-step of the busiest CTA;\n"
              "# fixed = t1 - its k-steps at the steady rate; B/ns per SM in the steady state; useful = pixels / tile rows\n");
  std::printf("%-12s %-8s %-8s %6s %6s %8s %8s %10s %8s %10s %7s\n", "case", "A", "loads", "units", "ksteps", "t1_us",
              "t4_us", "steady_ns", "fixed_us", "B/ns/SM", "useful");
  float* sink;
  CK(cudaMalloc(&sink, 384 * sizeof(float)));
  {  // what the event pair and a launch cost with no work at all
    std::vector<float> ts;
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    for (int rep = 0; rep < 23; ++rep) {
      CK(cudaEventRecord(e0));
      empty_kernel<<<sms, 384>>>(nullptr);
      CK(cudaEventRecord(e1));
      CK(cudaEventSynchronize(e1));
      float ms = 0;
      CK(cudaEventElapsedTime(&ms, e0, e1));
      if (rep >= 3) ts.push_back(ms * 1e3f);
    }
    std::printf("# an empty kernel of %d CTAs, timed the same way: %.2f us\n", sms, median(ts));
  }
  const int smem = int(sizeof(Smem));
  for (const Case& cs : cases) {
    const int C = cs.C, H = cs.HW, W = cs.HW, N = cs.N, K = C;  // C -> C channels, like the pairs
    const int M = N * H * W, KK = 9 * C;
    Element *x, *wt, *a;
    CK(cudaMalloc(&x, size_t(M) * C * 2));
    CK(cudaMalloc(&wt, size_t(K) * KK * 2));
    CK(cudaMalloc(&a, size_t(M) * KK * 2));
    const bool ones = std::getenv("TMA_LOADS_ONES") != nullptr;  // all 1.0 instead of random data
    if (ones) {
      CK(cudaMemset(x, 0x3c, size_t(M) * C * 2));  // 0x3c3c: fp16 1.0
      CK(cudaMemset(wt, 0x3c, size_t(K) * KK * 2));
      CK(cudaMemset(a, 0x3c, size_t(M) * KK * 2));
    } else {
      fill_random<<<1024, 256>>>(x, size_t(M) * C, 1);
      fill_random<<<1024, 256>>>(wt, size_t(K) * KK, 2);
      fill_random<<<1024, 256>>>(a, size_t(M) * KK, 3);
      CK(cudaDeviceSynchronize());
    }
    const Conv2dProblem problem(cutlass::conv::Mode::kCrossCorrelation, {N, H, W, C}, {K, 3, 3, C}, {1, 1}, {1, 1},
                                {1, 1}, {1, 1}, 1);
    typename ConvML::Params conv = ConvML::to_underlying_arguments(problem, x, wt);
    typename GemmML::Arguments ga{};
    ga.ptr_A = a;
    ga.ptr_B = wt;
    ga.dA = cutlass::make_cute_packed_stride(typename GemmML::StrideA{}, cute::make_shape(M, KK, 1));
    ga.dB = cutlass::make_cute_packed_stride(typename GemmML::StrideB{}, cute::make_shape(K, KK, 1));
    // box geometry: bh rows of bn images per tile, <= 128 pixels
    Geometry g{};
    g.M = M;
    g.N = K;
    g.KK = KK;
    g.cblocks = C / 64;
    g.k_tiles = 9 * C / 64;
    g.tiles_n = (K + 63) / 64;
    g.W = W;
    g.H = H;
    if (H * W <= 128) {
      g.bh = H;
      g.bn = 128 / (H * W);
    } else {
      const int per = 128 / W, cols = (H + per - 1) / per;
      g.bh = (H + cols - 1) / cols;
      g.bn = 1;
    }
    g.tiles_per_image_col = (H + g.bh - 1) / g.bh;
    g.b_bytes = 64 * 64 * 2;
    CUtensorMap box{};
    {
      const cuuint64_t dims[4] = {cuuint64_t(C), cuuint64_t(W), cuuint64_t(H), cuuint64_t(N)};
      const cuuint64_t strides[3] = {cuuint64_t(C) * 2, cuuint64_t(W) * C * 2, cuuint64_t(H) * W * C * 2};
      const cuuint32_t boxdim[4] = {64, cuuint32_t(W), cuuint32_t(g.bh), cuuint32_t(g.bn)};
      const cuuint32_t estr[4] = {1, 1, 1, 1};
      CUresult r = CUTLASS_CUDA_DRIVER_WRAPPER_CALL(cuTensorMapEncodeTiled)(
          &box, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 4, x, dims, strides, boxdim, estr, CU_TENSOR_MAP_INTERLEAVE_NONE,
          CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
      if (r != CUDA_SUCCESS) {
        std::fprintf(stderr, "cuTensorMapEncodeTiled failed (%d) for the box view\n", int(r));
        return 1;
      }
    }
    struct Variant {
      const char* a;
      const char* loads;
      void (*kernel)(const typename ConvML::Params, const typename GemmML::Params, const CUtensorMap, Geometry,
                     Conv2dProblem);
      int kind;
      bool la, lb;
    };
    const Variant variants[] = {
        {"im2col", "A+B", probe<kIm2col, true, true>, kIm2col, true, true},
        {"tiled", "A+B", probe<kTiled, true, true>, kTiled, true, true},
        {"box", "A+B", probe<kBox, true, true>, kBox, true, true},
        {"im2col", "A", probe<kIm2col, true, false>, kIm2col, true, false},
        {"tiled", "A", probe<kTiled, true, false>, kTiled, true, false},
        {"box", "A", probe<kBox, true, false>, kBox, true, false},
        {"-", "B", probe<kIm2col, false, true>, kIm2col, false, true},
    };
    char label[32];
    std::snprintf(label, sizeof label, "%dx%dx%d", C, H, N);
    // One launch shape, timed walking its units once and four times: the difference is the steady
    // state per k-step, the rest the launch's fixed cost (launch, descriptor fetch, pipeline fill).
    auto time_us = [&](auto&& launch) {
      cudaEvent_t e0, e1;
      static char* scratch = nullptr;  // TMA_LOADS_FLUSH: 128 MiB written before each launch (L2 cold, as the benchmarks run)
      const bool flush = std::getenv("TMA_LOADS_FLUSH") != nullptr;
      if (flush && scratch == nullptr) CK(cudaMalloc(&scratch, 128u << 20));
      CK(cudaEventCreate(&e0));
      CK(cudaEventCreate(&e1));
      std::vector<float> ts;
      for (int rep = 0; rep < 23; ++rep) {
        if (flush) CK(cudaMemsetAsync(scratch, rep, 128u << 20));
        CK(cudaEventRecord(e0));
        launch();
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        CK(cudaGetLastError());
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        if (rep >= 3) ts.push_back(ms * 1e3f);
      }
      CK(cudaEventDestroy(e0));
      CK(cudaEventDestroy(e1));
      return median(ts);
    };
    auto report = [&](const char* a_kind, const char* loads, const Geometry& gv, int units, int grid, bool la,
                      bool lb, auto&& launch_with) {
      Geometry g1 = gv, g4 = gv;
      g1.repeat = 1;
      g4.repeat = 4;
      const float t1 = time_us([&] { launch_with(g1); });
      const float t4 = time_us([&] { launch_with(g4); });
      const double ksteps_per_cta = double((units + grid - 1) / grid) * gv.k_tiles;  // the busiest CTA, once
      const double steady_ns = (t4 - t1) * 1e3 / (3 * ksteps_per_cta);
      const double fixed_us = t1 - steady_ns * ksteps_per_cta * 1e-3;
      const double step_bytes = (la ? gv.a_bytes : 0) + (lb ? gv.b_bytes : 0);
      std::printf("%-12s %-8s %-8s %6d %6d %8.2f %8.2f %10.1f %8.2f %10.1f %7.2f\n", label, a_kind, loads, units,
                  gv.k_tiles, t1, t4, steady_ns, fixed_us, step_bytes / steady_ns, double(M) / (gv.tiles_m * 128.0));
    };
    for (const Variant& v : variants) {
      Geometry gv = g;
      if (v.kind == kBox) {
        gv.tiles_m = N / g.bn * g.tiles_per_image_col + (N % g.bn ? g.tiles_per_image_col : 0);
        gv.a_bytes = uint32_t(64 * W * g.bh * g.bn * 2);
      } else {
        gv.tiles_m = (M + 127) / 128;
        gv.a_bytes = 128 * 64 * 2;
      }
      const typename GemmML::Params gemm = GemmML::to_underlying_arguments(cute::make_shape(M, K, KK, 1), ga, nullptr);
      CK(cudaFuncSetAttribute(v.kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
      const int units = gv.tiles_m * gv.tiles_n;
      const int grid = std::min(units, sms);
      report(v.a, v.loads, gv, units, grid, v.la, v.lb,
             [&](const Geometry& gr) { v.kernel<<<grid, 64, smem>>>(conv, gemm, box, gr, problem); });
    }
    // the real pipeline and wgmma loop, 128x64 and 128x128 tiles
    auto mainloop_rows = [&](auto tile_n) {
      constexpr int kTileN = decltype(tile_n)::value;
      using ML = ConvMainloop<Element, 128, kTileN, false>;
      const typename ML::Params mp = ML::to_underlying_arguments(problem, x, wt);
      Geometry gv = g;
      gv.tiles_m = (M + 127) / 128;
      gv.tiles_n = (K + kTileN - 1) / kTileN;
      gv.a_bytes = 128 * 64 * 2;
      gv.b_bytes = kTileN * 64 * 2;
      const int units = gv.tiles_m * gv.tiles_n, grid = std::min(units, sms);
      const int smem2 = int(sizeof(typename ML::TensorStorage) + sizeof(typename ML::PipelineStorage) + 64);
      CK(cudaFuncSetAttribute(mainloop_probe<kTileN, true>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem2));
      CK(cudaFuncSetAttribute(mainloop_probe<kTileN, false>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem2));
      const char* kind = kTileN == 64 ? "im2col" : "im2c-128";
      report(kind, "pipe", gv, units, grid, true, true,
             [&](const Geometry& gr) { mainloop_probe<kTileN, false><<<grid, 384, smem2>>>(mp, gr, problem, sink, nullptr); });
      report(kind, "pipe+mma", gv, units, grid, true, true,
             [&](const Geometry& gr) { mainloop_probe<kTileN, true><<<grid, 384, smem2>>>(mp, gr, problem, sink, nullptr); });
      {  // one more launch with stamps: when the CTAs' consumers start and end, relative to the first
        Geometry g1 = gv;
        g1.repeat = 1;
        unsigned long long* st;
        CK(cudaMalloc(&st, 2 * sizeof(unsigned long long) * grid));
        if (std::getenv("TMA_LOADS_FLUSH") != nullptr) {
          char* scratch;
          CK(cudaMalloc(&scratch, 128u << 20));
          CK(cudaMemset(scratch, 1, 128u << 20));
          CK(cudaFree(scratch));
        }
        mainloop_probe<kTileN, true><<<grid, 384, smem2>>>(mp, g1, problem, sink, st);
        CK(cudaDeviceSynchronize());
        std::vector<unsigned long long> h(2 * grid);
        CK(cudaMemcpy(h.data(), st, h.size() * 8, cudaMemcpyDeviceToHost));
        CK(cudaFree(st));
        unsigned long long lo = ~0ull, hi = 0;
        std::vector<float> starts, durs;
        for (int b = 0; b < grid; ++b) lo = std::min(lo, h[2 * b]);
        for (int b = 0; b < grid; ++b) {
          hi = std::max(hi, h[2 * b + 1]);
          starts.push_back(float(h[2 * b] - lo) * 1e-3f);
          durs.push_back(float(h[2 * b + 1] - h[2 * b]) * 1e-3f);
        }
        std::printf("%-12s %-8s stamps: consumers start within %.2f us (median %.2f), run %.2f us median (max %.2f), "
                    "first start to last end %.2f us\n",
                    label, kind, *std::max_element(starts.begin(), starts.end()), median(starts), median(durs),
                    *std::max_element(durs.begin(), durs.end()), float(hi - lo) * 1e-3f);
      }
    };
    mainloop_rows(std::integral_constant<int, 64>{});
    mainloop_rows(std::integral_constant<int, 128>{});
    CK(cudaFree(x));
    CK(cudaFree(wt));
    CK(cudaFree(a));
  }
  return 0;
}
