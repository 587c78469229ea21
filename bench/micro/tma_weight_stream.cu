// Microbenchmark: how fast can TMA stream a weight matrix W[K, N] (fp16, row-major) into shared memory,
// and which access pattern gets there? The question behind it (docs/skinny-gemm.md): braid's skinny
// GEMM streams GPT-3's W1 (151 MB) in 57-60 us (2.5-2.65 TB/s), cuBLAS's split-K kernel in ~52 us.
// Is the gap in the access pattern (2-D boxes of 256-byte row segments of a row-major W) or in the
// kernel around it (ring, start-up, tail)? No MMA here: only the loads, the skinny GEMM's ring, and a
// light read of each stage by every thread.
//
// Patterns of a unit (64 rows of W x 128 columns = 16 KB, the skinny GEMM's chunk):
//   box2     two 64x64 boxes, 128-byte swizzle (the skinny GEMM's loads)
//   box1     one 128-column x 64-row box, no swizzle (256-byte box rows)
//   panel    W packed as 64-column panels [N/64][K][64]: two 64x64 boxes of a 3-D map, 8 KB contiguous each
//   bulk     W packed unit by unit: one 16 KB cp.async.bulk of contiguous bytes (the ceiling)
// Work assignment over the CTAs (units are tiles of 128 columns x K-chunks of 64 rows):
//   aligned  tiles x S CTAs, CTA (t, s) streams K range s of tile t (the skinny GEMM's "a" configs)
//   streamk  units tile by tile, CTA j the contiguous range [jU/G, (j+1)U/G) ("p" configs)
//   kmajor   units chunk by chunk (whole rows of W first), CTA j a contiguous range
// Rings: "sync" = the skinny GEMM's (__syncthreads, then thread 0 refills the stage consumed last:
// STAGES-1 units in flight); "ws" = a producer warp refilling a stage as soon as its consumers
// release it (empty mbarriers: STAGES in flight).
// Timing: CUDA events around one launch, L2 evicted before each (braid's Timer), median of reps; the
// device-to-device copy bandwidth of the harness for reference. Not part of the library.
//   build: cmake target braid-micro-weight-stream;  run: braid-micro-weight-stream [reps] [all | ceiling | inflight | pair | phases [CONFIG...] | xrows | ksweep | op M CONFIG]
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "braid/bench/harness.cuh"
#include "braid/bench/launch_floor.cuh"
#include "braid/kernels/attention/mma_sm80.cuh"
#include "braid/kernels/common/tma_sm90.cuh"
#include "braid/kernels/skinny/skinny_gemm.cuh"
#include "braid/kernels/skinny/skinny_op.hpp"

namespace {

using namespace braid;

constexpr int kUnitBytes = 64 * 128 * 2;
constexpr int kThreads = 256;

enum Pattern { kBox2 = 0, kBox1 = 1, kPanel = 2, kBulk = 3 };
enum Assign { kAligned = 0, kStreamK = 1, kKMajor = 2 };
const char* pattern_name(int p) { return p == kBox2 ? "box2" : p == kBox1 ? "box1" : p == kPanel ? "panel" : "bulk"; }
const char* assign_name(int a) { return a == kAligned ? "aligned" : a == kStreamK ? "streamk" : "kmajor"; }

struct Params {
  CUtensorMap map;    // box2 / box1 / panel
  CUtensorMap x_map;  // X [8 rows, K], 64-column boxes (consumers that load X)
  const uint8_t* flat = nullptr;  // bulk
  int tiles = 0, cpt = 0, splits = 1;
  int pattern = kBox2, assign = kAligned;
  int x_rows = 8;         // rows of X per unit (the skinny GEMM's MR)
  int x_private = 0;      // 1: tile t reads its own copy of X (rows t * x_rows ..), not the one all tiles share
  uint32_t* sink = nullptr;
};

__device__ __forceinline__ void load_3d(uint32_t dst, const CUtensorMap* map, int c0, int c1, int c2, uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];" ::"r"(
          dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2),
      "r"(static_cast<uint32_t>(__cvta_generic_to_shared(bar)))
      : "memory");
}

// The CTA's units: [begin, end) of the assignment's order; unit index -> (tile, chunk).
struct Range {
  uint32_t begin, end;
};
__device__ __forceinline__ Range my_range(const Params& p) {
  const uint32_t G = gridDim.x, j = blockIdx.x;
  if (p.assign == kAligned) {
    const uint32_t t = j / p.splits, s = j % p.splits;
    const uint32_t b = t * p.cpt + s * p.cpt / p.splits, e = t * p.cpt + (s + 1) * p.cpt / p.splits;
    return {b, e};
  }
  const uint64_t U = uint64_t(p.tiles) * p.cpt;
  return {uint32_t(j * U / G), uint32_t((j + 1) * U / G)};
}
__device__ __forceinline__ void unit_coords(const Params& p, uint32_t u, int& t, int& k) {
  if (p.assign == kKMajor) {
    t = int(u % p.tiles);
    k = int(u / p.tiles);
  } else {
    t = int(u / p.cpt);
    k = int(u % p.cpt);
  }
}

__device__ __forceinline__ void issue(const Params& p, uint32_t u, uint32_t dst, uint64_t* bar, bool with_x) {
  int t, k;
  unit_coords(p, u, t, k);
  tma::arrive_expect_tx(bar, kUnitBytes + (with_x ? p.x_rows * 128 : 0));
  if (with_x) tma::load_2d(dst + kUnitBytes, &p.x_map, k * 64, p.x_private ? t * p.x_rows : 0, bar, tma::policy_evict_last());
  switch (p.pattern) {
    case kBox2:
      tma::load_2d(dst, &p.map, t * 128, k * 64, bar, tma::policy_evict_first());
      tma::load_2d(dst + kUnitBytes / 2, &p.map, t * 128 + 64, k * 64, bar, tma::policy_evict_first());
      break;
    case kBox1:
      tma::load_2d(dst, &p.map, t * 128, k * 64, bar, tma::policy_evict_first());
      break;
    case kPanel:
      load_3d(dst, &p.map, 0, k * 64, 2 * t, bar);
      load_3d(dst + kUnitBytes / 2, &p.map, 0, k * 64, 2 * t + 1, bar);
      break;
    default:
      tma::load_bulk(dst, p.flat + (size_t(t) * p.cpt + k) * kUnitBytes, kUnitBytes, bar);
  }
}

// CONSUME: 0 = every thread reads 64 bytes of the stage; 1 = also an X box per unit (XR rows x 64
// columns, from L2) on the same barrier; 2 = X box + the skinny GEMM's consumer (ldmatrix + mma.sync
// of 8 warps x 16 columns, M = 8; box2 layout); 3 / 4 = X box + the skinny GEMM's own consumer at XR
// rows (skinny::detail::mma_chunk, mma.sync / wgmma); 5 = 3 with the skinny GEMM's own release of a stage
// (skinny::detail::release_stage: fence.proxy.async before the arrival; producer-warp ring only) -- what that fence
// costs a stream.
template <int STAGES, bool WS, int CONSUME = 0, int XR = 8>
__global__ void __launch_bounds__(kThreads + (WS ? 32 : 0), 1) stream_kernel(const __grid_constant__ Params p) {
  constexpr int kStageBytes = kUnitBytes + (CONSUME > 0 ? XR * 128 : 0);
  extern __shared__ __align__(1024) uint8_t smem_raw[];
  __shared__ __align__(8) uint64_t full[STAGES], empty[STAGES];
  uint8_t* smem = smem_raw + ((1024 - uint32_t(__cvta_generic_to_shared(smem_raw)) % 1024) % 1024);
  const uint32_t ring = uint32_t(__cvta_generic_to_shared(smem));
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      tma::init(&full[s], 1);
      tma::init(&empty[s], kThreads / 32);
    }
    tma::fence_init();
    if (p.pattern != kBulk) tma::prefetch_map(&p.map);
    if (CONSUME > 0) tma::prefetch_map(&p.x_map);
  }
  __syncthreads();
  const Range r = my_range(p);
  const int n = int(r.end - r.begin);
  uint32_t acc = 0;
  float facc[4] = {0.f, 0.f, 0.f, 0.f};
  float xacc[XR / 8][4] = {};
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  auto consume = [&](int i) {
    tma::wait(&full[i % STAGES], uint32_t(i / STAGES) & 1u);
    if constexpr (CONSUME < 2) {  // every thread reads 64 bytes of the stage
      const uint4* st = reinterpret_cast<const uint4*>(smem + (i % STAGES) * kStageBytes);
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        const uint4 v = st[threadIdx.x + q * kThreads];
        acc ^= v.x + v.y + v.z + v.w;
      }
    } else if constexpr (CONSUME >= 3) {  // the skinny GEMM's own consumer at XR rows: 3 mma.sync, 4 wgmma
      const uint32_t w_st = ring + uint32_t(i % STAGES) * kStageBytes;
      skinny::detail::mma_chunk<__half, XR, CONSUME == 4>(xacc, w_st, w_st + kUnitBytes, warp, lane);
    } else {  // the skinny GEMM's inner loop (skinny_gemm.cuh), M = 8
      namespace mma = braid::attention::mma;
      const uint32_t w_st = ring + uint32_t(i % STAGES) * kStageBytes, x_st = w_st + kUnitBytes;
#pragma unroll
      for (int kp = 0; kp < 2; ++kp) {
        uint32_t xb[4];
        const int m = lane & 7, c = 4 * kp + (lane >> 3);
        mma::ldsm_x4(x_st + m * 128 + ((c ^ (m & 7)) << 4), xb);
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int q = lane >> 3, r = 16 * (2 * kp + h) + (q >> 1) * 8 + (lane & 7), cc = 2 * warp + (q & 1);
          uint32_t a[4];
          mma::ldsm_x4_trans(w_st + (cc / 8) * (kUnitBytes / 2) + r * 128 + (((cc % 8) ^ (r & 7)) << 4), a);
          mma::Mma<__half>::run(facc, a, xb[2 * h], xb[2 * h + 1]);
        }
      }
    }
  };
  if constexpr (WS) {
    if (threadIdx.x >= kThreads) {  // the producer warp
      if (threadIdx.x == kThreads)
        for (int i = 0; i < n; ++i) {
          if (i >= STAGES) tma::wait(&empty[i % STAGES], uint32_t(i / STAGES - 1) & 1u);
          issue(p, r.begin + i, ring + (i % STAGES) * kStageBytes, &full[i % STAGES], CONSUME > 0);
        }
      return;
    }
    for (int i = 0; i < n; ++i) {
      consume(i);
      if constexpr (CONSUME == 5) {
        skinny::detail::release_stage<false>(&empty[i % STAGES], lane);
      } else {
        __syncwarp();
        if (threadIdx.x % 32 == 0) tma::arrive(&empty[i % STAGES]);
      }
    }
  } else {
    if (threadIdx.x == 0)
      for (int i = 0; i < min(STAGES - 1, n); ++i)
        issue(p, r.begin + i, ring + (i % STAGES) * kStageBytes, &full[i % STAGES], CONSUME > 0);
    for (int i = 0; i < n; ++i) {
      __syncthreads();  // stage i - 1 is consumed by every thread
      if (threadIdx.x == 0 && i + STAGES - 1 < n)
        issue(p, r.begin + i + STAGES - 1, ring + ((i + STAGES - 1) % STAGES) * kStageBytes,
              &full[(i + STAGES - 1) % STAGES], CONSUME > 0);
      consume(i);
    }
  }
  if (acc == 0x9e3779b9u || facc[0] + facc[1] + facc[2] + facc[3] + xacc[XR / 8 - 1][3] == 1234.5f) *p.sink = acc;
}

using Encode = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*, const cuuint64_t*,
                            const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave, CUtensorMapSwizzle,
                            CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
Encode encoder() {
  static const Encode e = [] {
    const Encode fn = driver_entry_point<Encode>("cuTensorMapEncodeTiled");
    if (fn == nullptr) {
      std::fprintf(stderr, "cuTensorMapEncodeTiled unavailable\n");
      std::exit(1);
    }
    return fn;
  }();
  return e;
}

void encode(CUtensorMap& m, void* base, int rank, const cuuint64_t* dims, const cuuint64_t* strides, const cuuint32_t* box,
            CUtensorMapSwizzle sw) {
  const cuuint32_t estr[3] = {1, 1, 1};
  const CUresult r = encoder()(&m, CU_TENSOR_MAP_DATA_TYPE_UINT16, cuuint32_t(rank), base, dims, strides, box, estr,
                               CU_TENSOR_MAP_INTERLEAVE_NONE, sw, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                               CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) {
    std::fprintf(stderr, "cuTensorMapEncodeTiled failed (%d)\n", int(r));
    std::exit(1);
  }
}

template <int STAGES, bool WS, int CONSUME = 0, int XR = 8>
float run_one(bench::Timer& timer, cudaStream_t s, const Params& p, int ctas, int ctas_per_sm, int reps) {
  const size_t smem = size_t(STAGES) * (kUnitBytes + (CONSUME > 0 ? XR * 128 : 0)) + 1024;
  auto k = stream_kernel<STAGES, WS, CONSUME, XR>;
  BRAID_CUDA_CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  int fit = 0;
  BRAID_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fit, k, kThreads + (WS ? 32 : 0), smem));
  if (fit < ctas_per_sm) return -1.f;  // does not fit
  auto launch = [&] {
    k<<<ctas, kThreads + (WS ? 32 : 0), smem, s>>>(p);
    BRAID_CUDA_CHECK(cudaGetLastError());
  };
  return float(timer.median_us(launch, reps));
}

// "xrows": why the skinny GEMM slows down with more rows of X (LLaMA's W1: 35.6 us at M = 8, 43 at
// M = 32 with either consumer). The skinny GEMM's loads alone (W box2, K-aligned split, 4-stage
// __syncthreads ring or producer warp), with an X box of XR rows per unit that every tile shares (all
// CTAs at one K position read the same lines) or that each tile reads from its own copy; next to the
// real skinny GEMM at M = XR.
template <int XR>
void x_rows_arm(bench::Timer& timer, cudaStream_t s, Params p, int sms, int reps, const char* name, double w_bytes,
                void* X, int K) {
  for (int priv : {0, 1})
    for (int cps : {1, 2}) {
      CUtensorMap x_map;
      const cuuint64_t dims[2] = {cuuint64_t(K), cuuint64_t(priv ? p.tiles * XR : XR)}, strides[1] = {cuuint64_t(K) * 2};
      const cuuint32_t box[2] = {64, uint32_t(XR)};
      encode(x_map, X, 2, dims, strides, box, CU_TENSOR_MAP_SWIZZLE_128B);
      p.x_map = x_map;
      p.x_rows = XR;
      p.x_private = priv;
      p.assign = kAligned;
      p.splits = std::max(1, cps * sms / p.tiles);
      const int ctas = p.tiles * p.splits;
      for (int consume : {1, 3, 5, 4})
        for (bool ws : {false, true}) {
          if (consume > 1 && (priv || cps != 1)) continue;
          if (consume == 5 && !ws) continue;  // (the release with its fence: the producer-warp ring's)
          float us = -1;
          if (consume == 1) us = ws ? run_one<4, true, 1, XR>(timer, s, p, ctas, cps, reps) : run_one<4, false, 1, XR>(timer, s, p, ctas, cps, reps);
          if (consume == 3) us = ws ? run_one<4, true, 3, XR>(timer, s, p, ctas, cps, reps) : run_one<4, false, 3, XR>(timer, s, p, ctas, cps, reps);
          if (consume == 4) us = ws ? run_one<4, true, 4, XR>(timer, s, p, ctas, cps, reps) : run_one<4, false, 4, XR>(timer, s, p, ctas, cps, reps);
          if (consume == 5) us = run_one<4, true, 5, XR>(timer, s, p, ctas, cps, reps);
          if (us < 0) continue;
          std::printf("%-9s x%-3d %-7s %-4s %-10s cps %d %5d CTAs %8.1f us %6.2f TB/s of W\n", name, XR, priv ? "private" : "shared",
                      ws ? "ws" : "sync", consume == 1 ? "loads" : consume == 3 ? "+mma" : consume == 5 ? "+mma+fence" : "+wgmma", cps, ctas, us,
                      w_bytes / (us * 1e-6) / 1e12);
          std::fflush(stdout);
        }
    }
}

void x_rows_study(bench::Timer& timer, cudaStream_t s, int sms, int reps, uint32_t* sink) {
  struct Shape {
    const char* name;
    int K, N;
  };
  for (const Shape& sh : {Shape{"llama-W1", 8192, 5504}, Shape{"gpt3-W1", 12288, 6144}}) {
    const int tiles = (sh.N + 127) / 128, cpt = (sh.K + 63) / 64;
    const double w_bytes = double(sh.K) * sh.N * 2;
    void *W, *X, *Y;
    BRAID_CUDA_CHECK(cudaMalloc(&W, w_bytes));
    BRAID_CUDA_CHECK(cudaMalloc(&X, size_t(tiles) * 64 * sh.K * 2));  // (a private copy of 64 rows per tile)
    BRAID_CUDA_CHECK(cudaMalloc(&Y, size_t(64) * sh.N * 2));
    fill_random(static_cast<__half*>(W), size_t(sh.K) * sh.N, 7, 1.f, s);
    fill_random(static_cast<__half*>(X), size_t(tiles) * 64 * sh.K, 8, 1.f, s);
    Params p;
    p.tiles = tiles;
    p.cpt = cpt;
    p.pattern = kBox2;
    p.sink = sink;
    const cuuint64_t dims[2] = {cuuint64_t(sh.N), cuuint64_t(sh.K)}, strides[1] = {cuuint64_t(sh.N) * 2};
    const cuuint32_t box[2] = {64u, 64u};
    encode(p.map, W, 2, dims, strides, box, CU_TENSOR_MAP_SWIZZLE_128B);
    x_rows_arm<8>(timer, s, p, sms, reps, sh.name, w_bytes, X, sh.K);
    x_rows_arm<16>(timer, s, p, sms, reps, sh.name, w_bytes, X, sh.K);
    x_rows_arm<32>(timer, s, p, sms, reps, sh.name, w_bytes, X, sh.K);
    x_rows_arm<64>(timer, s, p, sms, reps, sh.name, w_bytes, X, sh.K);
    for (int M : {8, 16, 32, 64})
      for (const char* cfg : {"a1s4", "a1s4-wg", "a2s4", "a2s4-wg", "p1s4-wg"}) {
        skinny::SkinnyGemmOp g;
        const std::string why = g.prepare({hopper::DType::F16, X, W, Y, M, sh.N, sh.K, hopper::Activation::None},
                                          skinny::parse_skinny_config(cfg));
        if (!why.empty()) continue;
        const float us = float(timer.median_us([&] { g.run(s); }, reps));
        std::printf("%-9s M=%-3d skinny-%-8s %5d CTAs %8.1f us %6.2f TB/s of W\n", sh.name, M, cfg, g.ctas(), us,
                    w_bytes / (us * 1e-6) / 1e12);
        std::fflush(stdout);
      }
    cudaFree(W);
    cudaFree(X);
    cudaFree(Y);
  }
}

// A study's Params for reading W[K, N] (a buffer of tiles x cpt units) in `pattern`, with the tensor map that pattern
// reads through (box2 / box1 / panel; bulk reads `flat`).
Params weight_params(int pattern, int K, int N, int tiles, int cpt, void* W, uint32_t* sink) {
  Params p;
  p.tiles = tiles;
  p.cpt = cpt;
  p.pattern = pattern;
  p.sink = sink;
  p.flat = static_cast<const uint8_t*>(W);
  if (pattern == kBox2 || pattern == kBox1) {
    const cuuint64_t dims[2] = {cuuint64_t(N), cuuint64_t(K)}, strides[1] = {cuuint64_t(N) * 2};
    const cuuint32_t box[2] = {pattern == kBox2 ? 64u : 128u, 64u};
    encode(p.map, W, 2, dims, strides, box, pattern == kBox2 ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_NONE);
  } else if (pattern == kPanel) {  // (the same buffer read as panels: the layout's bytes, not its values, matter)
    const cuuint64_t dims[3] = {64, cuuint64_t(cpt) * 64, cuuint64_t(tiles) * 2},
                     strides[2] = {128, cuuint64_t(cpt) * 64 * 128};
    const cuuint32_t box[3] = {64, 64, 1};
    encode(p.map, W, 3, dims, strides, box, CU_TENSOR_MAP_SWIZZLE_128B);
  }
  return p;
}

// Sets p's assignment and returns its CTA count at cps CTAs per SM (the K-aligned split: tiles x splits).
int assign_ctas(Params& p, int assign, int cps, int sms) {
  p.assign = assign;
  if (assign != kAligned) return cps * sms;
  p.splits = std::max(1, cps * sms / p.tiles);
  return p.tiles * p.splits;
}

// Reference: a device-to-device copy of the same bytes, timed as the kernels are (prefix: the study's tag).
void print_copy_reference(bench::Timer& timer, cudaStream_t s, const void* W, size_t bytes, int reps, const char* prefix,
                          const char* shape) {
  void* D;
  BRAID_CUDA_CHECK(cudaMalloc(&D, bytes));
  const float cu = float(timer.median_us([&] { BRAID_CUDA_CHECK(cudaMemcpyAsync(D, W, bytes, cudaMemcpyDeviceToDevice, s)); }, reps));
  std::printf("%s%-9s memcpy D2D %.1f us: %.2f TB/s read (%.2f read + written)\n", prefix, shape, cu, bytes / (cu * 1e-6) / 1e12,
              2 * bytes / (cu * 1e-6) / 1e12);
  cudaFree(D);
}

// "ceiling": what a plain read of W reaches on this GPU, by the LSU (ld.global.nc.v4, no shared memory) and by
// TMA rings deeper than the skinny GEMM's (up to 12 stages, 1 or 2 CTAs per SM). The question (H200): braid's
// skinny GEMM streams GPT-3's W1 at ~3.55 TB/s whatever its ring, cuBLAS's split-K kernel at 3.8-3.9 and a copy
// at 4.2 (read + write): is the limit the TMA path, the bytes in flight, or the access pattern?
// LSU arm: CTA j reads the contiguous slice [j * B / G, (j + 1) * B / G) of W, UNROLL 16-byte loads in flight
// per thread, each warp 512 contiguous bytes per load instruction.
template <int UNROLL>
__global__ void __launch_bounds__(512) ldg_read_kernel(const uint4* __restrict__ w, size_t n16, uint32_t* sink) {
  const size_t G = gridDim.x, j = blockIdx.x;
  const size_t b = j * n16 / G, e = (j + 1) * n16 / G;
  uint32_t acc = 0;
  for (size_t i = b + threadIdx.x; i < e; i += size_t(blockDim.x) * UNROLL) {
    uint4 v[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      const size_t q = i + size_t(u) * blockDim.x;
      if (q < e) asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
                              : "=r"(v[u].x), "=r"(v[u].y), "=r"(v[u].z), "=r"(v[u].w) : "l"(w + q));
      else v[u] = make_uint4(0, 0, 0, 0);
    }
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) acc ^= v[u].x + v[u].y + v[u].z + v[u].w;
  }
  if (acc == 0x9e3779b9u) *sink = acc;
}

void ceiling_study(bench::Timer& timer, cudaStream_t s, int sms, int reps, uint32_t* sink) {
  struct Shape {
    const char* name;
    int K, N;
  };
  const Shape shapes[] = {{"gpt3-W1", 12288, 6144}, {"llama-W1", 8192, 5504}, {"llama-W2", 2752, 8192}};
  for (const Shape& sh : shapes) {
    const int tiles = (sh.N + 127) / 128, cpt = (sh.K + 63) / 64;
    const size_t bytes = size_t(tiles) * cpt * kUnitBytes;
    const double w_bytes = double(sh.K) * sh.N * 2;
    void* W;
    BRAID_CUDA_CHECK(cudaMalloc(&W, bytes));
    fill_random(static_cast<__half*>(W), bytes / 2, 7, 1.f, s);
    for (int threads : {256, 512})
      for (int cps : {1, 2, 4, 8}) {
        if (threads * cps > 2048) continue;
        for (int unroll : {4, 8}) {
          const size_t n16 = size_t(w_bytes) / 16;
          auto launch = [&] {
            if (unroll == 4) ldg_read_kernel<4><<<cps * sms, threads, 0, s>>>(static_cast<const uint4*>(W), n16, sink);
            else ldg_read_kernel<8><<<cps * sms, threads, 0, s>>>(static_cast<const uint4*>(W), n16, sink);
            BRAID_CUDA_CHECK(cudaGetLastError());
          };
          const float us = float(timer.median_us(launch, reps));
          std::printf("ceiling %-9s ldg   threads %3d cps %d unroll %d %5d CTAs %8.1f us %6.2f TB/s\n", sh.name, threads, cps,
                      unroll, cps * sms, us, w_bytes / (us * 1e-6) / 1e12);
          std::fflush(stdout);
        }
      }
    for (int pattern : {int(kBox2), int(kBulk)}) {
      Params p = weight_params(pattern, sh.K, sh.N, tiles, cpt, W, sink);
      for (int assign : {int(kAligned), int(kStreamK)})
        for (int cps : {1, 2}) {
          const int ctas = assign_ctas(p, assign, cps, sms);
          for (int stages : {4, 8, 12}) {
            if (cps == 2 && stages > 6) continue;
            const float us = stages == 4 ? run_one<4, true>(timer, s, p, ctas, cps, reps)
                             : stages == 8 ? run_one<8, true>(timer, s, p, ctas, cps, reps)
                                           : run_one<12, true>(timer, s, p, ctas, cps, reps);
            if (us < 0) continue;
            std::printf("ceiling %-9s %-5s %-8s ws stages %2d cps %d %5d CTAs %8.1f us %6.2f TB/s\n", sh.name,
                        pattern_name(pattern), assign_name(assign), stages, cps, ctas, us, w_bytes / (us * 1e-6) / 1e12);
            std::fflush(stdout);
          }
        }
    }
    print_copy_reference(timer, s, W, bytes, reps, "ceiling ", sh.name);
    cudaFree(W);
  }
}

// "inflight": does a weight stream want fewer bytes in flight? (Session 58.) The Hopper GEMM's 64-row tiles stream GPT-3's
// W1 at T = 64 in 44 us with 48 CTAs of ~8 stages, where "ceiling" measured 39.2 us for 96 CTAs of 4 stages and 43.5 for
// 96 of 8. Box2, K-aligned split, producer-warp ring; splits 1-3 (CTAs = tiles x splits, one wave), stages 2-8, W alone
// and with a 64-row X box per unit from L2 (the Hopper GEMM's A: 8 KB beside 16 KB of W).
template <int XR>
float inflight_one(bench::Timer& timer, cudaStream_t s, const Params& p, int ctas, int stages, bool with_x, int reps) {
  switch (stages) {
    case 2: return with_x ? run_one<2, true, 1, XR>(timer, s, p, ctas, 1, reps) : run_one<2, true>(timer, s, p, ctas, 1, reps);
    case 3: return with_x ? run_one<3, true, 1, XR>(timer, s, p, ctas, 1, reps) : run_one<3, true>(timer, s, p, ctas, 1, reps);
    case 4: return with_x ? run_one<4, true, 1, XR>(timer, s, p, ctas, 1, reps) : run_one<4, true>(timer, s, p, ctas, 1, reps);
    case 5: return with_x ? run_one<5, true, 1, XR>(timer, s, p, ctas, 1, reps) : run_one<5, true>(timer, s, p, ctas, 1, reps);
    case 6: return with_x ? run_one<6, true, 1, XR>(timer, s, p, ctas, 1, reps) : run_one<6, true>(timer, s, p, ctas, 1, reps);
    default: return with_x ? run_one<8, true, 1, XR>(timer, s, p, ctas, 1, reps) : run_one<8, true>(timer, s, p, ctas, 1, reps);
  }
}

void inflight_study(bench::Timer& timer, cudaStream_t s, int sms, int reps, uint32_t* sink) {
  struct Shape {
    const char* name;
    int K, N;
  };
  const Shape shapes[] = {{"gpt3-W1", 12288, 6144}, {"gpt3-W2", 6144, 12288}, {"llama-W1", 8192, 5504}, {"llama-W2", 2752, 8192}};
  for (const Shape& sh : shapes) {
    const int tiles = (sh.N + 127) / 128, cpt = (sh.K + 63) / 64;
    const size_t bytes = size_t(tiles) * cpt * kUnitBytes;
    const double w_bytes = double(sh.K) * sh.N * 2;
    void *W, *X;
    BRAID_CUDA_CHECK(cudaMalloc(&W, bytes));
    BRAID_CUDA_CHECK(cudaMalloc(&X, size_t(64) * sh.K * 2));
    fill_random(static_cast<__half*>(W), bytes / 2, 7, 1.f, s);
    fill_random(static_cast<__half*>(X), size_t(64) * sh.K, 8, 1.f, s);
    Params p = weight_params(kBox2, sh.K, sh.N, tiles, cpt, W, sink);
    {
      const cuuint64_t dims[2] = {cuuint64_t(sh.K), 64}, strides[1] = {cuuint64_t(sh.K) * 2};
      const cuuint32_t box[2] = {64, 64};
      encode(p.x_map, X, 2, dims, strides, box, CU_TENSOR_MAP_SWIZZLE_128B);
    }
    p.x_rows = 64;
    p.assign = kAligned;
    for (int splits = 1; splits <= 3; ++splits) {
      if (tiles * splits > sms) continue;
      p.splits = splits;
      for (bool with_x : {false, true})
        for (int stages : {2, 3, 4, 5, 6, 8}) {
          const float us = inflight_one<64>(timer, s, p, tiles * splits, stages, with_x, reps);
          if (us < 0) continue;
          std::printf("inflight %-9s %-6s splits %d %4d CTAs stages %d (%4.1f MB in flight) %8.1f us %6.2f TB/s\n", sh.name,
                      with_x ? "W+X64" : "W", splits, tiles * splits, stages,
                      tiles * splits * stages * (kUnitBytes + (with_x ? 64 * 128 : 0)) / 1048576.0, us,
                      w_bytes / (us * 1e-6) / 1e12);
          std::fflush(stdout);
        }
    }
    cudaFree(W);
    cudaFree(X);
  }
}

// "pair": an MLP's two weight matrices read back to back, with no arithmetic, in one CUDA graph timed as the benchmarks
// time a chain -- what the weight bytes alone cost a two-kernel MLP at few tokens (README, issue 3). Each matrix's
// stream is first timed alone (as its own graph) over patterns x assignments x stages; the best of each then runs as
// a pair in stream order and with the second launched as a programmatic dependent (PDL: its launch overlaps the
// first's end; the reads are independent, so it does not wait). Also the empty-kernel graphs of launch_floor.cuh.
template <int STAGES>
void launch_stream(cudaStream_t st, const Params& p, int ctas, bool pdl) {
  const size_t smem = size_t(STAGES) * kUnitBytes + 1024;
  auto k = stream_kernel<STAGES, true>;
  BRAID_CUDA_CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  launch_kernel(LaunchCtx{st, pdl, {}}, k, dim3(unsigned(ctas)), dim3(kThreads + 32), smem, p);
}
struct StreamChoice {
  Params p;
  int ctas = 0, stages = 4;
  float us = 1e30f;
  std::string name;
  void launch(cudaStream_t st, bool pdl) const {
    if (stages == 4) launch_stream<4>(st, p, ctas, pdl);
    else if (stages == 8) launch_stream<8>(st, p, ctas, pdl);
    else launch_stream<12>(st, p, ctas, pdl);
  }
};

void pair_study(bench::Timer& timer, cudaStream_t s, int sms, int reps, uint32_t* sink) {
  struct Shape {
    const char* name;
    int K, N;
  };
  struct Mlp {
    const char* name;
    Shape w1, w2;
  };
  std::printf("pair %s\n", bench::measure_launch_floor(s).describe().c_str());
  for (const Mlp& m : {Mlp{"llama", {"W1", 8192, 5504}, {"W2", 2752, 8192}}, Mlp{"gpt3", {"W1", 12288, 6144}, {"W2", 6144, 12288}}}) {
    StreamChoice best[2];
    std::vector<void*> bufs;
    double total_bytes = 0;
    for (int w = 0; w < 2; ++w) {
      const Shape& sh = w == 0 ? m.w1 : m.w2;
      const int tiles = (sh.N + 127) / 128, cpt = (sh.K + 63) / 64;
      const size_t bytes = size_t(tiles) * cpt * kUnitBytes;
      total_bytes += double(sh.K) * sh.N * 2;
      void* W;
      BRAID_CUDA_CHECK(cudaMalloc(&W, bytes));
      bufs.push_back(W);
      fill_random(static_cast<__half*>(W), bytes / 2, 7 + w, 1.f, s);
      for (int pattern : {int(kBox2), int(kBulk)})
        for (int assign : {int(kAligned), int(kStreamK)})
          for (int stages : {4, 8, 12}) {
            StreamChoice c;
            c.p = weight_params(pattern, sh.K, sh.N, tiles, cpt, W, sink);
            c.ctas = assign_ctas(c.p, assign, 1, sms);
            c.stages = stages;
            bench::Graph g(s, [&](cudaStream_t st) { c.launch(st, false); });
            c.us = float(timer.median_us([&] { g.launch(); }, reps));
            c.name = std::string(pattern_name(pattern)) + " " + assign_name(assign) + " stages " + std::to_string(stages) +
                     " " + std::to_string(c.ctas) + " CTAs";
            std::printf("pair %-5s %s alone  %-32s %7.1f us %6.2f TB/s\n", m.name, sh.name, c.name.c_str(), c.us,
                        double(sh.K) * sh.N * 2 / (c.us * 1e-6) / 1e12);
            std::fflush(stdout);
            if (c.us < best[w].us) best[w] = c;
          }
    }
    for (bool pdl : {false, true}) {
      bench::Graph g(s, [&](cudaStream_t st) {
        best[0].launch(st, false);
        best[1].launch(st, pdl);
      });
      const float us = float(timer.median_us([&] { g.launch(); }, reps));
      std::printf("pair %-5s W1 then W2 %-4s (%s | %s): %.1f us (alone %.1f + %.1f), %.2f TB/s of weights\n", m.name,
                  pdl ? "PDL" : "", best[0].name.c_str(), best[1].name.c_str(), us, best[0].us, best[1].us,
                  total_bytes / (us * 1e-6) / 1e12);
      std::fflush(stdout);
    }
    for (void* b : bufs) cudaFree(b);
  }
}

// "phases CONFIG...": where a skinny GEMM's time goes beyond its stream. Per shape (M = 1, no activation) and
// configuration: the event-timed median of the GEMM alone, then one more launch after an L2 eviction with the
// kernel's per-CTA phase stamps (SkinnyGemmOp::set_phases), each stamp's min / median / max over the CTAs in us
// from the first CTA's entry. The question: the kernel takes ~2.5-3 us longer than the same loads, ring and MMAs
// in stream_kernel (the `+x+mma` rows), a constant per launch (docs/skinny-gemm.md).
void phases_study(bench::Timer& timer, cudaStream_t s, int reps, const std::vector<std::string>& configs) {
  struct Shape {
    const char* name;
    int K, N;
  };
  constexpr int kP = skinny::kSkinnyPhases, kS = skinny::kSkinnyPhaseSlots;
  // BRAID_PHASES_DUMP=1: also one line per CTA -- its SM and its stamps (µs from the first entry).
  const bool dump = std::getenv("BRAID_PHASES_DUMP") != nullptr && std::atoi(std::getenv("BRAID_PHASES_DUMP")) != 0;
  static const char* names[kP] = {"entry", "W issued", "waited", "unit0 in", "unit3 in", "last in", "last MMA", "end"};
  for (const Shape& sh : {Shape{"gpt3-W1", 12288, 6144}, Shape{"llama-W1", 8192, 5504}, Shape{"llama-W2", 2752, 8192}}) {
    void *W, *X, *Y;
    BRAID_CUDA_CHECK(cudaMalloc(&W, size_t(sh.K) * sh.N * 2));
    BRAID_CUDA_CHECK(cudaMalloc(&X, size_t(8) * sh.K * 2));
    BRAID_CUDA_CHECK(cudaMalloc(&Y, size_t(8) * sh.N * 2));
    fill_random(static_cast<__half*>(W), size_t(sh.K) * sh.N, 7, 1.f, s);
    fill_random(static_cast<__half*>(X), size_t(8) * sh.K, 8, 1.f, s);
    for (const std::string& cfg : configs) {
      skinny::SkinnyGemmOp g;
      const std::string why =
          g.prepare({hopper::DType::F16, X, W, Y, 1, sh.N, sh.K, hopper::Activation::None}, skinny::parse_skinny_config(cfg));
      if (!why.empty()) {
        std::printf("phases %-9s skinny-%s: %s\n", sh.name, cfg.c_str(), why.c_str());
        continue;
      }
      const float us = float(timer.median_us([&] { g.run(s); }, reps));
      const size_t n = size_t(g.ctas()) * kS;
      unsigned long long* d = nullptr;
      BRAID_CUDA_CHECK(cudaMalloc(&d, n * sizeof(unsigned long long)));
      BRAID_CUDA_CHECK(cudaMemset(d, 0, n * sizeof(unsigned long long)));
      g.set_phases(d);
      timer.evict();
      g.run(s);
      BRAID_CUDA_CHECK(cudaStreamSynchronize(s));
      std::vector<unsigned long long> h(n);
      BRAID_CUDA_CHECK(cudaMemcpy(h.data(), d, n * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
      cudaFree(d);
      unsigned long long t0 = ~0ull;
      for (int c = 0; c < g.ctas(); ++c) t0 = std::min(t0, h[size_t(c) * kS]);
      std::printf("phases %-9s skinny-%-12s %4d CTAs %7.1f us (events);", sh.name, cfg.c_str(), g.ctas(), us);
      for (int k = 0; k < kP; ++k) {
        std::vector<double> v;
        for (int c = 0; c < g.ctas(); ++c)
          if (h[size_t(c) * kS + k] != 0) v.push_back(double(h[size_t(c) * kS + k] - t0) * 1e-3);
        if (v.empty()) continue;
        std::sort(v.begin(), v.end());
        std::printf(" %s %.1f/%.1f/%.1f", names[k], v.front(), v[v.size() / 2], v.back());
      }
      std::printf("\n");
      for (int c = 0; dump && c < g.ctas(); ++c) {
        const unsigned long long* r = h.data() + size_t(c) * kS;
        std::printf("cta %s skinny-%s %d sm %llu", sh.name, cfg.c_str(), c, r[kP]);
        for (int k = 0; k < kP; ++k) std::printf(" %.2f", r[k] != 0 ? double(r[k] - t0) * 1e-3 : -1.0);
        std::printf("\n");
      }
      std::fflush(stdout);
    }
    cudaFree(W);
    cudaFree(X);
    cudaFree(Y);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 15;
  const bool all_patterns = argc > 2 && std::string(argv[2]) == "all";
  cudaStream_t s;
  BRAID_CUDA_CHECK(cudaStreamCreate(&s));
  cudaDeviceProp prop;
  BRAID_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  const int sms = prop.multiProcessorCount;
  const bench::Ceilings c = bench::measure_ceilings(s);
  std::printf("# %s: %d SMs, copy bandwidth %.2f TB/s (read + write); reps %d, L2 evicted before each\n", prop.name, sms,
              c.tbps, reps);
  struct Shape {
    const char* name;
    int K, N;
  };
  const Shape shapes[] = {{"gpt3-W1", 12288, 6144}, {"llama-W1", 8192, 5504}, {"llama-W2", 2752, 8192}};
  uint32_t* sink;
  BRAID_CUDA_CHECK(cudaMalloc(&sink, 4));
  bench::Timer timer(s);
  if (argc > 4 && std::string(argv[2]) == "op") {  // one skinny GEMM on LLaMA's W1, `reps` launches (for ncu)
    const int M = std::atoi(argv[3]), K = 8192, N = 5504;
    void *W, *X, *Y;
    BRAID_CUDA_CHECK(cudaMalloc(&W, size_t(K) * N * 2));
    BRAID_CUDA_CHECK(cudaMalloc(&X, size_t(64) * K * 2));
    BRAID_CUDA_CHECK(cudaMalloc(&Y, size_t(64) * N * 2));
    fill_random(static_cast<__half*>(W), size_t(K) * N, 7, 1.f, s);
    fill_random(static_cast<__half*>(X), size_t(64) * K, 8, 1.f, s);
    skinny::SkinnyGemmOp g;
    const std::string why =
        g.prepare({hopper::DType::F16, X, W, Y, M, N, K, hopper::Activation::None}, skinny::parse_skinny_config(argv[4]));
    if (!why.empty()) {
      std::fprintf(stderr, "%s\n", why.c_str());
      return 1;
    }
    for (int r = 0; r < reps; ++r) g.run(s);
    BRAID_CUDA_CHECK(cudaStreamSynchronize(s));
    std::printf("llama-W1 M=%d skinny-%s: %d launches\n", M, argv[4], reps);
    return 0;
  }
  if (argc > 2 && std::string(argv[2]) == "ksweep") {  // the skinny GEMM's time vs K and M (N = 5504): per
    // chunk or per launch? (A cost that grows with K is in the streaming loop; a constant one in the tail.)
    const int N = 5504, Kmax = 16384;
    void *W, *X, *Y;
    BRAID_CUDA_CHECK(cudaMalloc(&W, size_t(Kmax) * N * 2));
    BRAID_CUDA_CHECK(cudaMalloc(&X, size_t(64) * Kmax * 2));
    BRAID_CUDA_CHECK(cudaMalloc(&Y, size_t(64) * N * 2));
    fill_random(static_cast<__half*>(W), size_t(Kmax) * N, 7, 1.f, s);
    fill_random(static_cast<__half*>(X), size_t(64) * Kmax, 8, 1.f, s);
    for (const char* cfg : {"a1s4-wg", "a1s4", "a1s4-dsm-wg", "c43s4-wg", "c86s4-wg"})
      for (int K : {2048, 4096, 8192, 16384})
        for (int M : {8, 16, 32, 64}) {
          skinny::SkinnyGemmOp g;
          const std::string why =
              g.prepare({hopper::DType::F16, X, W, Y, M, N, K, hopper::Activation::None}, skinny::parse_skinny_config(cfg));
          if (!why.empty()) continue;
          const float us = float(timer.median_us([&] { g.run(s); }, reps));
          std::printf("ksweep skinny-%-9s N=%d K=%-6d M=%-3d %4d CTAs %8.1f us %6.2f TB/s of W\n", cfg, N, K, M, g.ctas(), us,
                      double(K) * N * 2 / (us * 1e-6) / 1e12);
          std::fflush(stdout);
        }
    return 0;
  }
  if (argc > 2 && std::string(argv[2]) == "phases") {
    std::vector<std::string> configs(argv + 3, argv + argc);
    if (configs.empty()) configs = {"a1s4", "a1s4-dsm", "a2s4", "p1s4"};
    phases_study(timer, s, reps, configs);
    return 0;
  }
  if (argc > 2 && std::string(argv[2]) == "ceiling") {
    ceiling_study(timer, s, sms, reps, sink);
    return 0;
  }
  if (argc > 2 && std::string(argv[2]) == "pair") {
    pair_study(timer, s, sms, reps, sink);
    return 0;
  }
  if (argc > 2 && std::string(argv[2]) == "inflight") {
    inflight_study(timer, s, sms, reps, sink);
    return 0;
  }
  if (argc > 2 && std::string(argv[2]) == "xrows") {
    x_rows_study(timer, s, sms, reps, sink);
    return 0;
  }
  std::printf("%-9s %-6s %-8s %-4s %6s %4s %7s %9s %7s\n", "shape", "pattern", "assign", "ring", "stages", "cps", "ctas",
              "us", "TB/s");
  for (const Shape& sh : shapes) {
    const int tiles = (sh.N + 127) / 128, cpt = (sh.K + 63) / 64;
    const size_t bytes = size_t(tiles) * cpt * kUnitBytes;  // (N, K multiples of 128 / 64 here but llama-W1)
    void* W;
    BRAID_CUDA_CHECK(cudaMalloc(&W, bytes));
    fill_random(static_cast<__half*>(W), bytes / 2, 7, 1.f, s);
    const double w_bytes = double(sh.K) * sh.N * 2;
    void *X, *Y;  // 8 rows of X (for the consumers that load it and the skinny GEMM), its output
    BRAID_CUDA_CHECK(cudaMalloc(&X, size_t(8) * sh.K * 2));
    BRAID_CUDA_CHECK(cudaMalloc(&Y, size_t(8) * sh.N * 2));
    fill_random(static_cast<__half*>(X), size_t(8) * sh.K, 8, 1.f, s);
    CUtensorMap x_map;
    {
      const cuuint64_t dims[2] = {cuuint64_t(sh.K), 8}, strides[1] = {cuuint64_t(sh.K) * 2};
      const cuuint32_t box[2] = {64, 8};
      encode(x_map, X, 2, dims, strides, box, CU_TENSOR_MAP_SWIZZLE_128B);
    }
    for (int pattern = 0; pattern < (all_patterns ? 4 : 1); ++pattern) {
      Params p = weight_params(pattern, sh.K, sh.N, tiles, cpt, W, sink);
      p.x_map = x_map;
      for (int assign = 0; assign < (all_patterns ? 3 : 1); ++assign) {
        if (pattern == kBulk && assign == kKMajor) continue;
        for (int cps : {1, 2}) {
          const int ctas = assign_ctas(p, assign, cps, sms);
          const struct {
            int stages;
            bool ws;
          } rings[] = {{4, false}, {6, false}, {4, true}, {6, true}};
          for (const auto& rg : rings) {
            float us = -1;
            if (rg.ws)
              us = rg.stages == 4 ? run_one<4, true>(timer, s, p, ctas, cps, reps) : run_one<6, true>(timer, s, p, ctas, cps, reps);
            else
              us = rg.stages == 4 ? run_one<4, false>(timer, s, p, ctas, cps, reps) : run_one<6, false>(timer, s, p, ctas, cps, reps);
            if (us < 0) continue;
            std::printf("%-9s %-6s %-8s %-4s %6d %4d %7d %9.1f %7.2f\n", sh.name, pattern_name(pattern), assign_name(assign),
                        rg.ws ? "ws" : "sync", rg.stages, cps, ctas, us, w_bytes / (us * 1e-6) / 1e12);
            std::fflush(stdout);
          }
          if (pattern == kBox2 && assign == kAligned)  // + X loads, + the skinny GEMM's MMA (4 stages)
            for (int consume = 1; consume <= 2; ++consume)
              for (bool ws : {false, true}) {
                float us = consume == 1 ? (ws ? run_one<4, true, 1>(timer, s, p, ctas, cps, reps) : run_one<4, false, 1>(timer, s, p, ctas, cps, reps))
                                        : (ws ? run_one<4, true, 2>(timer, s, p, ctas, cps, reps) : run_one<4, false, 2>(timer, s, p, ctas, cps, reps));
                if (us < 0) continue;
                std::printf("%-9s %-6s %-8s %-4s %6d %4d %7d %9.1f %7.2f\n", sh.name, consume == 1 ? "box2+x" : "+x+mma",
                            assign_name(assign), ws ? "ws" : "sync", 4, cps, ctas, us, w_bytes / (us * 1e-6) / 1e12);
                std::fflush(stdout);
              }
        }
      }
    }
    // braid's skinny GEMM on the same W (M = 8, no activation), as braid-bench-mlp launches it alone.
    for (const char* cfg : {"a1s4", "a2s4", "p1s4", "a1s4-dsm"}) {
      skinny::SkinnyGemmOp g;
      const std::string why = g.prepare({hopper::DType::F16, X, W, Y, 8, sh.N, sh.K, hopper::Activation::None},
                                        skinny::parse_skinny_config(cfg));
      if (!why.empty()) {
        std::printf("%-9s skinny-%s: %s\n", sh.name, cfg, why.c_str());
        continue;
      }
      const float us = float(timer.median_us([&] { g.run(s); }, reps));
      std::printf("%-9s %-6s %-8s %-4s %6d %4d %7d %9.1f %7.2f\n", sh.name, "skinny", cfg, "sync", 4, g.ctas_per_sm(),
                  g.ctas(), us, w_bytes / (us * 1e-6) / 1e12);
    }
    cudaFree(X);
    cudaFree(Y);
    print_copy_reference(timer, s, W, bytes, reps, "", sh.name);
    cudaFree(W);
  }
  return 0;
}
