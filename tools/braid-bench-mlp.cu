// braid-bench-mlp: the transformer-MLP benchmark of issue 3 (one GPU of 8-way tensor parallelism).
//   GPT-3:  X[T,12288] @ W1[12288,6144] -> GeLU -> @ W2[6144,12288]
//   LLaMA:  X[T,8192]  @ W1[8192,2*2752] (gate|up) -> SwiGLU -> @ W2[2752,8192]
// In one run on one GPU, for each model and T:
//   floor    max(FLOP/peak, bytes/bandwidth): peak = the best of cuBLAS's and cuBLASLt's algorithms on an
//            8192^3 GEMM, bandwidth = device-to-device copy, both measured here
//   peers    cuBLASLt best algorithm (GeLU epilogue; LLaMA: separate SwiGLU kernel) under a CUDA graph;
//            CUTLASS 4.2 sm90 warp-specialized persistent GEMMs: data-parallel in stream order and with
//            PDL alone, and Stream-K (fp16)
//   braid    its Hopper GEMM: per-GEMM tile/split-K configuration search, then the chain variants
//            (stream order, PDL alone, TileSync/RowSync x PDL/wait kernel, R off) picked by the
//            autotuner (fastest that passes its check; stream order unless something wins)
// Every variant is checked: fp32 reference on three rows (rel. error < 1e-2), and every braid chain
// variant bit-identical to braid's kernels in stream order. The simulator's predicted gain is printed
// next to the measured one, and so is the most of the floor that one or two launches timed this way can reach
// (empty-kernel graphs timed in the same run, launch_floor.cuh). CSV per ../shared/results-format.md; --trace-dir writes per-tile traces.
#include <cublasLt.h>
#include <cuda_bf16.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "braid/bench/cublaslt_gemm.cuh"
#include "braid/bench/half_bits.hpp"
#include "braid/bench/harness.cuh"
#include "braid/bench/launch_floor.cuh"
#include "braid/kernels/skinny/skinny_config.hpp"
#include "braid/tune/autotuner.hpp"
#include "sim/simulator.hpp"
#ifdef BRAID_HAVE_CUTLASS
#include "cutlass/sm90_gemm.hpp"
#endif
#ifdef BRAID_HAVE_HOPPER
#include "braid/workloads/mlp.cuh"
#include "braid/kernels/common/activation.cuh"
#endif

using namespace braid;

#ifndef BRAID_GIT_COMMIT
#define BRAID_GIT_COMMIT "unknown"
#endif

#define LT_CHECK(x) BRAID_CUBLAS_CHECK(x)

using bench::LtGemm;

namespace {

enum class DT { F16, BF16 };
cudaDataType_t lt_type(DT dt) { return dt == DT::F16 ? CUDA_R_16F : CUDA_R_16BF; }

template <class T>
__global__ void swiglu_kernel(const T* in, T* out, int Tn, int F) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < size_t(Tn) * F; i += size_t(gridDim.x) * blockDim.x) {
    const size_t r = i / F, c = i % F;
    const float g = float(in[r * 2 * F + c]), u = float(in[r * 2 * F + F + c]);
    out[i] = T(g / (1.f + expf(-g)) * u);
  }
}

__global__ void half_to_bf16_kernel(uint16_t* p, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    const float f = __half2float(__ushort_as_half(p[i]));
    p[i] = __bfloat16_as_ushort(__float2bfloat16_rn(f));
  }
}

void fill(void* p, size_t n, uint64_t seed, float scale, DT dt, cudaStream_t s) {
  fill_random(static_cast<__half*>(p), n, seed, scale, s);
  if (dt == DT::BF16) half_to_bf16_kernel<<<512, 256, 0, s>>>(static_cast<uint16_t*>(p), n);
  BRAID_CUDA_CHECK(cudaGetLastError());
}

float to_float(uint16_t b, DT dt) { return bench::half_bits_to_float(b, dt == DT::BF16); }
float round_to(float f, DT dt) { return bench::round_to_half(f, dt == DT::BF16); }

std::vector<uint16_t> dl(const void* p, size_t n) {
  std::vector<uint16_t> h(n);
  BRAID_CUDA_CHECK(cudaMemcpy(h.data(), p, n * 2, cudaMemcpyDeviceToHost));
  return h;
}

// fp32 reference of three output rows, from the (unpacked) inputs; activation rounded like the kernels.
struct Reference {
  const std::vector<float>&X, &W1, &W2;
  int H, F;
  bool llama;
  DT dt;
  std::vector<int> rows;
  std::vector<std::vector<double>> out;  // per row, [H]
  Reference(const std::vector<float>& x, const std::vector<float>& w1, const std::vector<float>& w2, int T, int H_,
            int F_, bool ll, DT d)
      : X(x), W1(w1), W2(w2), H(H_), F(F_), llama(ll), dt(d), rows{0, T / 2, T - 1} {
    const int F1 = llama ? 2 * F : F;
    for (int r : rows) {
      std::vector<double> h(F1, 0.0);
      for (int k = 0; k < H; ++k) {
        const double xv = X[size_t(r) * H + k];
        const float* w = &W1[size_t(k) * F1];
        for (int j = 0; j < F1; ++j) h[j] += xv * w[j];
      }
      std::vector<float> act(F);
      for (int j = 0; j < F; ++j)
        act[j] = llama ? round_to(float(h[j] / (1 + std::exp(-h[j])) * h[F + j]), dt)
                       : round_to(float(braid::act::gelu_reference(h[j])), dt);
      std::vector<double> y(H, 0.0);
      for (int k = 0; k < F; ++k) {
        const double a = act[k];
        const float* w = &W2[size_t(k) * H];
        for (int n = 0; n < H; ++n) y[n] += a * w[n];
      }
      out.push_back(std::move(y));
    }
  }
  double rel_error(const void* Ydev) const {
    double num = 0, den = 0;
    for (size_t i = 0; i < rows.size(); ++i) {
      std::vector<uint16_t> got(H);
      BRAID_CUDA_CHECK(cudaMemcpy(got.data(), static_cast<const uint16_t*>(Ydev) + size_t(rows[i]) * H, size_t(H) * 2,
                                  cudaMemcpyDeviceToHost));
      for (int n = 0; n < H; ++n) {
        const double g = to_float(got[n], dt);
        if (!std::isfinite(g)) return 1e30;
        num += (g - out[i][n]) * (g - out[i][n]);
        den += out[i][n] * out[i][n];
      }
    }
    return std::sqrt(num / den);
  }
};

std::vector<float> to_floats(const std::vector<uint16_t>& v, DT dt) {
  std::vector<float> f(v.size());
  for (size_t i = 0; i < v.size(); ++i) f[i] = to_float(v[i], dt);
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> tokens = {1, 2, 4, 8, 16, 32, 64, 128, 256, 384, 512, 768, 1024, 1536, 2048};
  std::string csv, models = "gpt3,llama", trace_dir, tune_cache,
                   commit = std::getenv("BRAID_COMMIT") ? std::getenv("BRAID_COMMIT") : BRAID_GIT_COMMIT;
  int reps = 30;
  // --interleave R: after the tuning, the pick and cuBLASLt timed again in R alternating rounds (ABBA), so that the
  // ratio reported beside the pick's is taken between measurements made side by side rather than minutes apart.
  int interleave_rounds = 4;
  // --tune-rounds R: the tuner times every variant in R round-robin rounds of reps / R launches (tune::Options::rounds):
  // on an H200 the same chain ran 405-485 us within one call at GPT-3 T = 1024, so variants timed once each, minutes
  // apart, were compared across the GPU's own drift (bench/results/mlp-interleaved-h200-20261129-55b52a7/).
  int tune_rounds = 3;
  bool with_braid = true, show_configs = false, diag = false, cutlass_streamk = false, fused_timeline = false;
  DT dt = DT::F16;
  // The skinny (weight-streaming) GEMM's candidates for T <= 64: CTAs per SM (p) or CTAs (c), stages (s).
  // "-dsm": the K-aligned split reduced inside a cluster (where its clusters fit; prepare() says otherwise).
  // "-wg": the same with wgmma consumers (4 and 6 stages; SkinnyConfig::wgmma).
  std::vector<skinny::SkinnyConfig> skinny_configs = skinny::tuning_candidates();
  auto usage = [] {
    std::fprintf(stderr,
                 "usage: braid-bench-mlp [--models gpt3,llama] [--tokens 1,2,...] [--dtype fp16|bf16] [--reps N]\n"
                 "                       [--csv PATH] [--trace-dir DIR] [--tune-cache PATH] [--no-braid] [--show-configs]\n"
                 "                       [--diag] [--cutlass-streamk] [--skinny p2s4,p1s6,c48s8,...] [--fused-timeline]\n"
                 "                       [--interleave R (rounds of pick / cuBLASLt timed alternately; 0: off; 4)]\n"
                 "                       [--tune-rounds R (each variant timed in R round-robin rounds; 3)]\n");
  };
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) { std::fprintf(stderr, "error: %s needs a value\n", a.c_str()); std::exit(2); }
      return argv[++i];
    };
    if (a == "--csv") csv = next();
    else if (a == "--models") models = next();
    else if (a == "--reps") reps = std::atoi(next().c_str());
    else if (a == "--tune-rounds") {
      tune_rounds = std::atoi(next().c_str());
      if (tune_rounds < 1 || tune_rounds > 20) {
        std::fprintf(stderr, "error: --tune-rounds takes 1 to 20\n");
        return 2;
      }
    }
    else if (a == "--interleave") {
      interleave_rounds = std::atoi(next().c_str());
      if (interleave_rounds < 0 || interleave_rounds > 100) {
        std::fprintf(stderr, "error: --interleave takes 0 to 100 rounds\n");
        return 2;
      }
    }
    else if (a == "--no-braid") with_braid = false;
    else if (a == "--show-configs") show_configs = true;
    else if (a == "--diag") diag = true;
    else if (a == "--fused-timeline") fused_timeline = true;
    else if (a == "--cutlass-streamk") cutlass_streamk = true;
    else if (a == "--trace-dir") trace_dir = next();
    else if (a == "--skinny") {  // the skinny GEMM configurations to try for T <= 64
      skinny_configs.clear();
      std::string list = next();
      for (size_t at = 0; at <= list.size();) {
        const size_t comma = std::min(list.find(',', at), list.size());
        if (comma > at) skinny_configs.push_back(skinny::parse_skinny_config(list.substr(at, comma - at)));
        at = comma + 1;
      }
    }
    else if (a == "--tune-cache") tune_cache = next();
    else if (a == "--dtype") {
      const std::string d = next();
      if (d == "fp16") dt = DT::F16;
      else if (d == "bf16") dt = DT::BF16;
      else { std::fprintf(stderr, "error: --dtype must be fp16 or bf16 (got '%s')\n", d.c_str()); return 2; }
    } else if (a == "--tokens") {
      tokens.clear();
      std::string s = next();
      for (size_t p = 0; p < s.size();) {
        size_t q = s.find(',', p);
        tokens.push_back(std::atoi(s.substr(p, q - p).c_str()));
        if (tokens.back() <= 0) { std::fprintf(stderr, "error: bad token count in '%s'\n", s.c_str()); return 2; }
        p = q == std::string::npos ? s.size() : q + 1;
      }
    } else {
      usage();
      return 2;
    }
  }
  if (reps < 3) { std::fprintf(stderr, "error: --reps must be >= 3\n"); return 2; }
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    std::fprintf(stderr, "braid-bench-mlp: no CUDA device found\n");
    return 3;
  }
  const char* dts = dt == DT::F16 ? "fp16" : "bf16";
  try {
    cudaStream_t s;
    BRAID_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    int dev = 0, sms = 0;
    BRAID_CUDA_CHECK(cudaGetDevice(&dev));
    BRAID_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    cublasLtHandle_t lt;
    LT_CHECK(cublasLtCreate(&lt));
    const size_t ws_bytes = size_t(64) << 20;
    void* ws;
    BRAID_CUDA_CHECK(cudaMalloc(&ws, ws_bytes));
    // ---- ceilings: cuBLAS default algorithm and cuBLASLt's best on 8192^3 (the better is the peak)
    bench::Ceilings ceil = bench::measure_ceilings(s);
    {
      const int n = 8192;
      void *A, *B, *C;
      BRAID_CUDA_CHECK(cudaMalloc(&A, size_t(n) * n * 2));
      BRAID_CUDA_CHECK(cudaMalloc(&B, size_t(n) * n * 2));
      BRAID_CUDA_CHECK(cudaMalloc(&C, size_t(n) * n * 2));
      fill(A, size_t(n) * n, 1, 1.0f, dt, s);
      fill(B, size_t(n) * n, 2, 1.0f, dt, s);
      LtGemm g(lt, n, n, n, false, lt_type(dt), ws, ws_bytes, B, A, C, s);
      ceil.tflops = std::max(ceil.tflops, 2.0 * n * double(n) * n / (g.best_us * 1e-6) / 1e12);
      for (void* p : {A, B, C}) cudaFree(p);
    }
    std::printf("braid-bench-mlp on %s (%d SMs), commit %s, %s: peak %.0f TFLOP/s, copy %.2f TB/s\n",
                bench::gpu_name().c_str(), sms, commit.c_str(), dts, ceil.tflops, ceil.tbps);
    // What the timing itself charges one and two launches: floor / (floor + launch(1)) is the most of the floor any
    // implementation timed this way can reach (launch_floor.cuh).
    const bench::LaunchFloor launch_floor = bench::measure_launch_floor(s);
    std::printf("%s\n", launch_floor.describe().c_str());
    bench::Timer timer(s);
    std::vector<bench::ResultRow> rows;
    tune::Options topt;
    // (BRAID_MLP_TIME_UNCHECKED, a diagnosis, may pick a variant whose output is wrong: never into a cache)
    if (std::getenv("BRAID_MLP_TIME_UNCHECKED") != nullptr && !tune_cache.empty()) {
      std::fprintf(stderr, "braid-bench-mlp: BRAID_MLP_TIME_UNCHECKED times wrong outputs; it takes no --tune-cache\n");
      return 2;
    }
    topt.cache_path = tune_cache;
    topt.progress = nullptr;
    topt.rounds = tune_rounds;  // each variant timed in rounds, round-robin (drift in the GPU's speed cancels out)
    tune::Autotuner tuner(topt);
    const int reps_per_round = std::max(7, (reps + tune_rounds - 1) / tune_rounds);
    int failures = 0;
    for (const std::string model : {"gpt3", "llama"}) {
      if (models.find(model) == std::string::npos) continue;
      const bool llama = model == "llama";
      const int H = llama ? 8192 : 12288, F = llama ? 2752 : 6144, F1 = llama ? 2 * F : F;
      const int Tmax = *std::max_element(tokens.begin(), tokens.end());
      void *X, *W1, *W2, *Hbuf, *A, *Y, *Ybase;
      BRAID_CUDA_CHECK(cudaMalloc(&X, size_t(Tmax) * H * 2));
      BRAID_CUDA_CHECK(cudaMalloc(&W1, size_t(H) * F1 * 2));
      BRAID_CUDA_CHECK(cudaMalloc(&W2, size_t(F) * H * 2));
      BRAID_CUDA_CHECK(cudaMalloc(&Hbuf, size_t(Tmax) * F1 * 2));
      // Hid (braid's activation output, A here) with rows past T (workloads::padded_rows), so that GEMM 2's last row
      // tile reads in bounds (GemmArgs::a_rows; BRAID_MLP_HID_ROWS=exact declares T rows, for comparison). X, the
      // caller's input, is declared with its T rows only, as a user's tensor would be.
      const bool hid_padded = [] {
        const char* e = std::getenv("BRAID_MLP_HID_ROWS");
        return e == nullptr || std::string(e) != "exact";
      }();
      const int hid_alloc_rows = workloads::padded_rows(Tmax);
      BRAID_CUDA_CHECK(cudaMalloc(&A, size_t(hid_alloc_rows) * F * 2));
      BRAID_CUDA_CHECK(cudaMemset(A, 0, size_t(hid_alloc_rows) * F * 2));
      std::printf("  %s: GEMM 2 reads Hid with %s\n", model.c_str(),
                  hid_padded ? "its padded rows (workloads::padded_rows)" : "T rows (BRAID_MLP_HID_ROWS=exact)");
      BRAID_CUDA_CHECK(cudaMalloc(&Y, size_t(Tmax) * H * 2));
      BRAID_CUDA_CHECK(cudaMalloc(&Ybase, size_t(Tmax) * H * 2));
      fill(X, size_t(Tmax) * H, 101, 1.0f, dt, s);
      fill(W1, size_t(H) * F1, 102, 2.0f / std::sqrt(float(H)), dt, s);
      fill(W2, size_t(F) * H, 103, 2.0f / std::sqrt(float(F)), dt, s);
      const auto hX = to_floats(dl(X, size_t(Tmax) * H), dt), hW1 = to_floats(dl(W1, size_t(H) * F1), dt),
                 hW2 = to_floats(dl(W2, size_t(F) * H), dt);
#ifdef BRAID_HAVE_HOPPER
      // braid's SwiGLU GEMM reads W1 packed per tile width (gate and up columns of a tile side by side).
      // Where half the width does not divide F (LLaMA's F = 2752 in 96- or 192-wide tiles), the last block
      // is padded with zero columns (hopper::swiglu_packed_cols; GEMM 1 then runs with n_out = F).
      std::map<int, void*> W1packed;  // by tile width (the packing's block)
      if (llama)
        for (int tn : {hopper::kTransposedSwigluBlock, 64, 96, 128, 192, 256}) {  // (16: the transposed kernels' block)
          const auto raw = dl(W1, size_t(H) * F1);
          std::vector<uint16_t> packed(size_t(H) * hopper::swiglu_packed_cols(F, tn));
          hopper::pack_swiglu_columns(raw.data(), packed.data(), H, F, tn);
          BRAID_CUDA_CHECK(cudaMalloc(&W1packed[tn], packed.size() * 2));
          BRAID_CUDA_CHECK(cudaMemcpy(W1packed[tn], packed.data(), packed.size() * 2, cudaMemcpyHostToDevice));
        }
#endif
      for (int T : tokens) {
        const std::string wl = "mlp-" + model, shape = "T=" + std::to_string(T);
        const double flops = 2.0 * T * double(H) * F1 + 2.0 * T * double(F) * H;
        const double bytes = 2.0 * (double(H) * F1 + double(F) * H + 2.0 * T * H);
        const double floor_us = std::max(flops / (ceil.tflops * 1e12), bytes / (ceil.tbps * 1e12)) * 1e6;
        const Reference ref(hX, hW1, hW2, T, H, F, llama, dt);
        auto add_row = [&](const std::string& variant, double us, double err, bool extra_ok = true) {
          const bool pass = err < 1e-2 && extra_ok;
          if (!pass) ++failures;
          rows.push_back({wl, shape, dts, variant, us, floor_us, pass});
          std::printf("  %-6s T=%-5d %-58s %9.1f us  %5.2f of floor  err %.1e%s\n", model.c_str(), T, variant.c_str(),
                      us, floor_us / us, err, pass ? "" : "  CHECK FAILED");
          std::fflush(stdout);
        };
        // ---- peer: cuBLASLt (its graph kept for the interleaved rounds at the end of this T)
        double best_peer = 1e30;
        std::unique_ptr<LtGemm> lt1, lt2;
        std::unique_ptr<bench::Graph> peer_graph;
        double peer_err = 1;
        const std::string peer_name = llama ? "peer:cublaslt+swiglu-graph" : "peer:cublaslt-gelu-graph";
        {
          lt1 = std::make_unique<LtGemm>(lt, T, H, F1, !llama, lt_type(dt), ws, ws_bytes, W1, X, llama ? Hbuf : A, s);
          lt2 = std::make_unique<LtGemm>(lt, T, F, H, false, lt_type(dt), ws, ws_bytes, W2, A, Y, s);
          LtGemm &g1 = *lt1, &g2 = *lt2;
          auto peer = [&](cudaStream_t st) {
            g1.run(lt, W1, X, llama ? Hbuf : A, st);
            if (llama) {
              if (dt == DT::F16) swiglu_kernel<<<264, 256, 0, st>>>((const __half*)Hbuf, (__half*)A, T, F);
              else swiglu_kernel<<<264, 256, 0, st>>>((const __nv_bfloat16*)Hbuf, (__nv_bfloat16*)A, T, F);
            }
            g2.run(lt, W2, A, Y, st);
          };
          // The chain's algorithms: each GEMM's three fastest alone, every pair timed as the chain's graph. A GEMM's
          // fastest alone need not be the fastest beside the other, and a pick between near-equal algorithms by ten
          // repetitions alone moved cuBLASLt's chain by up to 4% between calls (bench/results/mlp-interleaved-h200-*).
          {
            const size_t n1 = std::min<size_t>(3, lt1->ranked.size()), n2 = std::min<size_t>(3, lt2->ranked.size());
            double best = 1e30;
            size_t b1 = 0, b2 = 0;
            for (size_t i = 0; i < n1 && n1 * n2 > 1; ++i)
              for (size_t j = 0; j < n2; ++j) {
                lt1->algo = lt1->ranked[i].second;
                lt2->algo = lt2->ranked[j].second;
                bench::Graph g(s, peer);
                const double us = timer.median_us([&] { g.launch(); }, std::max(5, reps / 2));
                if (us < best) best = us, b1 = i, b2 = j;
              }
            lt1->algo = lt1->ranked[b1].second;
            lt2->algo = lt2->ranked[b2].second;
            std::printf("  %-6s T=%-5d cuBLASLt: GEMM 1 algorithm %zu of %zu, GEMM 2 %zu of %zu by their times alone "
                        "(pairs of the three fastest timed as the chain)\n",
                        model.c_str(), T, b1 + 1, lt1->ranked.size(), b2 + 1, lt2->ranked.size());
          }
          BRAID_CUDA_CHECK(cudaMemsetAsync(Y, 0xff, size_t(T) * H * 2, s));
          peer(s);
          BRAID_CUDA_CHECK(cudaStreamSynchronize(s));
          const double err = peer_err = ref.rel_error(Y);
          peer_graph = std::make_unique<bench::Graph>(s, peer);
          const double us = timer.median_us([&] { peer_graph->launch(); }, reps);
          best_peer = std::min(best_peer, us);
          add_row(peer_name, us, err);
        }
#ifdef BRAID_HAVE_CUTLASS
        // ---- peer: CUTLASS 4.2 sm90 warp-specialized persistent GEMMs (fp16 only), stream order and
        // PDL alone (built with CUTLASS_ENABLE_GDC_FOR_SM90: waits for its primary before loading).
        if (dt == DT::F16)
          for (int variant = 0; variant < 3; ++variant) {  // data-parallel, + PDL, Stream-K (opt-in: it
            const bool pdl = variant == 1, sk = variant == 2;  // hung once on the H100, see bench/results)
            if (sk && !cutlass_streamk) continue;
            cutlass_sm90::Gemm c1, c2;
            std::string why =
                c1.prepare({(const __half*)X, (const __half*)W1, (__half*)(llama ? Hbuf : A), T, F1, H, !llama, sk});
            if (why.empty()) why = c2.prepare({(const __half*)A, (const __half*)W2, (__half*)Y, T, H, F, false, sk});
            if (!why.empty()) throw std::runtime_error(why);
            auto cpeer = [&](cudaStream_t st) {
              c1.run(st);
              if (llama) swiglu_kernel<<<264, 256, 0, st>>>((const __half*)Hbuf, (__half*)A, T, F);
              c2.run(st, pdl);
            };
            BRAID_CUDA_CHECK(cudaMemsetAsync(Y, 0xff, size_t(T) * H * 2, s));
            cpeer(s);
            BRAID_CUDA_CHECK(cudaStreamSynchronize(s));
            const double err = ref.rel_error(Y);
            bench::Graph gc(s, cpeer);
            const double us = timer.median_us([&] { gc.launch(); }, reps);
            best_peer = std::min(best_peer, us);
            add_row("peer:" + c1.name() + (pdl ? "-pdl-graph" : "-graph"), us, err);
          }
#endif
#ifdef BRAID_HAVE_HOPPER
        if (!with_braid) continue;
        using hopper::Activation;
        using hopper::GemmConfig;
        using workloads::Mlp;
        using workloads::MlpVariant;
        const hopper::DType hdt = dt == DT::F16 ? hopper::DType::F16 : hopper::DType::BF16;
        const Activation act1 = llama ? Activation::SwiGLU : Activation::GeLU;
        // (nullptr where W1 has no packing for the tile width: GemmOp refuses the configuration)
        auto w1_for = [&](const workloads::GemmChoice& c) -> const void* {
          if (!llama) return W1;
          const auto it = W1packed.find(c.swiglu_pack());
          return it == W1packed.end() ? nullptr : it->second;
        };
        // ---- braid step 1: each GEMM's tile width and split-K, timed alone in stream order
        auto search = [&](bool first) {
          std::vector<std::pair<double, workloads::GemmChoice>> found;
          const int Nout = first ? F : H, K = first ? H : F;
          auto try_config = [&](const workloads::GemmChoice& c) {
            workloads::GemmStage g;
            hopper::GemmArgs a = first ? hopper::GemmArgs{hdt, X, w1_for(c), A, T, workloads::mlp_w1_cols(act1, F, c), H, act1}
                                       : hopper::GemmArgs{hdt, A, W2, Y, T, H, F, Activation::None};
            if (first) a.n_out = F;
            if (!first && hid_padded) a.a_rows = workloads::padded_rows(T);
            if (!g.prepare(a, c).empty()) return;
            const double us = timer.median_us([&] { g.run(s); }, std::max(5, reps / 3), 2);
            found.push_back({us, c});
            if (show_configs)
              std::printf("      gemm%d %-28s %8.1f us (%d CTAs)\n", first ? 1 : 2, c.name().c_str(), us, g.ctas());
          };
          // The weight-streaming GEMM for few tokens.
          if (T <= skinny::kMaxRows)
            for (const skinny::SkinnyConfig& sc : skinny_configs) try_config(workloads::GemmChoice::skinny(sc));
          // Transposed kernels (fp16, whole tiles; GemmConfig::transposed): D^T = B^T A^T, the orientation
          // cuBLASLt runs these shapes in; tiles of 128-256 tokens.
          // (Not 128x320: where it makes one wave on these shapes -- GPT-3 W1 at T = 768, LLaMA W1 at 768, W2 at
          // 512 -- it ran 10-25% slower than the pick, bench/results/wide-transposed-h100-20261127/.)
          if (hdt == hopper::DType::F16 && T >= 256)
            for (auto [tm, tn] : {std::pair{192, 192}, {128, 192}, {128, 256}, {256, 128}})
              for (OrderKind ord : {OrderKind::ColumnMajor, OrderKind::RowMajor}) {
                if (ord == OrderKind::RowMajor && T <= tm) continue;
                GemmConfig c{tn, 1, 0, ord};
                c.tile_m = tm;
                c.transposed = true;
                try_config(c);
              }
          for (int tm : {192, 128, 64})
            for (int tn : {64, 96, 128, 192, 256}) {
              if (tm == 64 && T > 256) continue;  // 64-row tiles: for few tokens (more weight stages in flight)
              // 128x64 (fp16): one row block reads each weight column block once; few tokens only. 64x64 (fp16,
              // staged, T <= 128): twice 64x128's CTAs on a weight stream (under ~90 CTAs a stream is bound by each
              // CTA's intake, bench/results/inflight-h200-20261129/).
              if (tn == 64 && ((tm != 128 && tm != 64) || T > 256 || hdt != hopper::DType::F16)) continue;
              if (tm == 64 && tn == 64 && T > 128) continue;
              // 96 columns (fp16, direct stores): 192x96, 128 tiles on GPT-3's W1 at T=384 (192x128: 96); 64x96 at
              // T <= 64, twice 64x192's CTAs on GPT-3's W2 (picked there as GEMM 2 under PDL). (At T = 128-256 the
              // 96-column tiles stream 20-30% slower than 64x128 / 64x192 -- their weight tile is not whole 128-byte
              // swizzled rows -- and 128x96 was removed: bench/results/x96-tiles-h200-20261129/.)
              if (tn == 96 && (hdt != hopper::DType::F16 || tm == 128 || (tm == 64 && T > 64))) continue;
              // Tiles that fit the SM count (fp16): 192x192, 192x128, 128x192 (docs/hopper-gemm.md).
              // 64x192: 128 tiles at GPT-3 W2 T=128 and W1 T=256, the tiling cuBLASLt's kernels use there.
              if (tm == 192 && (tn == 256 || T <= 128)) continue;
              if (tm == 64 && tn == 192 && hdt != hopper::DType::F16) continue;
              const int cols = first && llama ? tn / 2 : tn;
              const int tiles = ((T + tm - 1) / tm) * ((Nout + cols - 1) / cols);
              for (OrderKind ord : {OrderKind::ColumnMajor, OrderKind::RowMajor}) {
                if (ord == OrderKind::RowMajor && T <= tm) continue;  // one row block: the same order
                // 128x128 tiles come with both epilogue stores (fp16): staged (whole-sector stores, one
                // pipeline stage fewer) wins when compute-bound, direct when streaming weights.
                const bool both_stores = tm == 128 && tn == 128 && hdt == hopper::DType::F16;
                // B multicast to clusters of two CTAs on adjacent row tiles (fp16, 128x128 / 128x256, default
                // store): pays only with at least two row tiles. (128x192, 64x192 and 64x128 have multicast
                // kernels too, measured slower than their own loads on every MLP shape at M = 128-384 and
                // left out of the search: gemm-shapes-64x192-mc2-h100-20261125-17258b2.log; on the H200 too,
                // x96-tiles-h200-20261129/mc2-h200.log.)
                auto try_multicast = [&](GemmConfig c) {
                  if (tm != 128 || tn == 192 || T <= tm || hdt != hopper::DType::F16 ||
                      c.store != hopper::EpilogueStore::Default)
                    return;
                  c.multicast = 2;
                  try_config(c);
                };
                // Wide tiles staged for the TMA-store epilogue (fp16, whole tiles: data-parallel only), and
                // 64-row tiles so (few tokens: a one-wave GEMM's epilogue is exposed).
                const bool staged_too = hdt == hopper::DType::F16 &&
                                        ((T > 128 && ((tm == 128 && tn == 256) || (tm == 192 && (tn == 192 || tn == 128)))) ||
                                         (tm == 64 && (tn == 64 || tn == 128 || tn == 192)) || (tm == 128 && tn == 64));
                if (staged_too) {
                  GemmConfig c{tn, 1, 0, ord};
                  c.tile_m = tm;
                  c.store = hopper::EpilogueStore::Staged;
                  try_config(c);
                  // ... and with fewer k-tiles in flight than their 6-13-stage rings hold (GemmConfig::inflight): a
                  // weight stream over ~90+ CTAs runs 5-10% faster with 4-5 stages of 16 KB of weights in flight than
                  // with 8 -- here 64 and 80 KB of weights a CTA (hopper::inflight_candidates).
                  if (tm == 64 && T <= 128)
                    for (int f : hopper::inflight_candidates(tn)) {
                      c.inflight = f;
                      try_config(c);
                    }
                }
                for (hopper::EpilogueStore store : {hopper::EpilogueStore::Default, hopper::EpilogueStore::Direct}) {
                  if (store == hopper::EpilogueStore::Direct && !both_stores) continue;
                  for (int sk : {1, 2, 3, 4}) {  // more splits only ran slower (bench/results/README.md)
                    if (sk > 1 && (ord == OrderKind::RowMajor || tiles * sk > 3 * sms || sk * 4 > K / 64)) continue;
                    GemmConfig c{tn, sk, 0, ord};
                    c.tile_m = tm;
                    c.store = store;
                    try_config(c);
                    try_multicast(c);
                    // Pingpong warpgroups with the staged TMA-store epilogue (fp16 128x128, whole tiles):
                    // one warpgroup's epilogue under the other's MMAs. (With direct stores, -pp ran
                    // 1.14-1.22x slower than cooperative on every MLP shape and is not tried,
                    // bench/results/gemm-pingpong-h100-20261123-16b7790.log; docs/hopper-gemm.md.)
                    if (sk == 1 && tm == 128 && tn == 128 && hdt == hopper::DType::F16 &&
                        store == hopper::EpilogueStore::Default) {
                      GemmConfig pp = c;
                      pp.pingpong = true;
                      pp.store = hopper::EpilogueStore::Staged;
                      try_config(pp);
                    }
                    c.reduce_scatter = true;  // every segment reduces a share of its tile
                    if (sk > 1) try_config(c);
                    if (sk == 2 && c.staged()) {  // the same, the partials exchanged in clusters of two CTAs
                      c.reduce_scatter = false;
                      c.dsmem_reduce = true;
                      try_config(c);
                    }
                  }
                  GemmConfig streamk{tn, 1, 0, ord};  // whole waves data-parallel, the tail wave shared by all SMs
                  streamk.stream_k = true;
                  streamk.tile_m = tm;
                  streamk.store = store;
                  if (tiles % sms != 0) {
                    try_config(streamk);
                    try_multicast(streamk);
                    // CTA groups walking one column block in step (-g<N>): stream-K's CTAs otherwise
                    // read the weights at unrelated k-steps, once per row block.
                    const int row_tiles = (T + tm - 1) / tm;
                    if (ord == OrderKind::ColumnMajor)
                      for (int g : {2, 3, 4, 8})
                        if (g <= row_tiles && (g != 3 || row_tiles == 3)) {
                          GemmConfig grouped = streamk;
                          grouped.group = g;
                          try_config(grouped);
                        }
                  }
                }
              }
            }
          std::sort(found.begin(), found.end(), [](auto& a, auto& b) { return a.first < b.first; });
          return found;
        };
        const auto c1 = search(true), c2 = search(false);
        std::printf("  %-6s T=%-5d gemm1 best %s %.1f us, gemm2 best %s %.1f us\n", model.c_str(), T,
                    c1[0].second.name().c_str(), c1[0].first, c2[0].second.name().c_str(), c2[0].first);
        // ---- braid step 2: chain variants with the best configurations
        const workloads::MlpProblem prob_base{hdt, act1, T, H, F, nullptr, W1, W2, A, Y};
        auto problem_for = [&](const MlpVariant& v) {
          workloads::MlpProblem p = prob_base;
          p.X = X;
          p.W1 = w1_for(v.g1);
          if (hid_padded) p.hid_rows = workloads::padded_rows(T);
          return p;
        };
        std::vector<MlpVariant> variants;
        auto add_variant = [&](MlpVariant::Sync sy, Ordering o, bool pdl_only, bool R, const workloads::GemmChoice& g1,
                               const workloads::GemmChoice& g2) {
          MlpVariant v;
          v.sync = sy;
          v.ordering = o;
          v.pdl_only = pdl_only;
          v.weights_first = R;
          v.g1 = g1;
          v.g2 = g2;
          for (const MlpVariant& x : variants)
            if (x.name() == v.name()) return;  // already tried
          variants.push_back(v);
        };
        const workloads::GemmChoice b1 = c1[0].second, b2 = c2[0].second;
        using Sy = MlpVariant::Sync;
        add_variant(Sy::TileSync, Ordering::StreamOrder, false, true, b1, b2);  // baseline
        add_variant(Sy::TileSync, Ordering::StreamOrder, true, true, b1, b2);
        // ... and GEMM 2 resident early without loading its weights early (its prologue and code fetch under GEMM 1's
        // tail, its weight stream not competing with GEMM 1's).
        add_variant(Sy::TileSync, Ordering::StreamOrder, true, false, b1, b2);
        add_variant(Sy::TileSync, Ordering::PDL, false, true, b1, b2);
        add_variant(Sy::RowSync, Ordering::PDL, false, true, b1, b2);
        // (reduce-scatter split-K needs every segment of a tile running: not under the wait kernel)
        if (!b1.hopper.segments_wait_for_peers() && !b2.hopper.segments_wait_for_peers())
          add_variant(Sy::TileSync, Ordering::WaitKernel, false, true, b1, b2);
        add_variant(Sy::TileSync, Ordering::PDL, false, false, b1, b2);
        if (c2.size() > 1) add_variant(Sy::TileSync, Ordering::PDL, false, true, b1, c2[1].second);
        if (c1.size() > 1) add_variant(Sy::TileSync, Ordering::PDL, false, true, c1[1].second, b2);
        // A configuration's time alone (the search above): its own entry, else its column-major twin's; -1 if untimed.
        auto alone_us = [](const std::vector<std::pair<double, workloads::GemmChoice>>& c, const workloads::GemmChoice& g) {
          workloads::GemmChoice cm = g;
          if (!cm.is_skinny) cm.hopper.order = OrderKind::ColumnMajor;
          for (const std::string& n : {g.name(), cm.name()})
            for (const auto& [us, x] : c)
              if (x.name() == n) return us;
          return -1.0;
        };
        // The simulator's view of a chain: its plan with each stage's tile time from that stage's measured time
        // alone (per wave of persistent CTAs) where known, else the plan's own (K-proportional) tile times.
        auto simulate_gain = [&](const Plan& base, const MlpVariant& v, double& t_stream, double& t_sync) {
          const double us[2] = {alone_us(c1, v.g1), alone_us(c2, v.g2)};
          const bool measured = us[0] > 0 && us[1] > 0;
          const Plan plan = measured ? sim::with_measured_stage_times(base, {us[0], us[1]}) : base;
          sim::SimConfig sc;
          sc.sms = uint32_t(sms);
          sc.record_trace = false;
          sc.ordering = Ordering::StreamOrder;
          t_stream = sim::simulate(plan, sc).makespan;
          sc.ordering = v.ordering;
          t_sync = sim::simulate(plan, sc).makespan;
          return measured;
        };
        // Tile sync can pay only where GEMM 1 completes whole rows of Hid before its end (a GEMM-2 tile reads a
        // row of Hid): several waves of GEMM-1 tiles taken row by row, and GEMM 2 taking its tiles row by row too,
        // by ticket (MlpVariant::dynamic), so that its CTAs resident on the SMs GEMM 1's last wave leaves idle take
        // every tile of the rows already done. The stage-alone search prefers column-major orders (weights shared
        // in L2), under which every row of Hid completes at GEMM 1's end. Which pairs of tilings leave a partial wave
        // worth filling is wave arithmetic -- the simulator's: for the row-major twins of each GEMM's four fastest
        // configurations, the plan is simulated with each stage's tile time taken from its measured time alone, and
        // the two pairs predicted fastest are timed (under RowSync by ticket and statically) where the prediction beats
        // the best pair found so far.
        if (!b1.is_skinny && !b2.is_skinny) {
          auto twin = [&](const workloads::GemmChoice& g) -> std::optional<workloads::GemmChoice> {
            if (g.is_skinny || g.hopper.stream_k || T <= g.hopper.tile_m) return std::nullopt;
            workloads::GemmChoice r = g;
            r.hopper.order = OrderKind::RowMajor;
            return r;
          };
          auto firsts = [&](const std::vector<std::pair<double, workloads::GemmChoice>>& c, bool consumer) {
            std::vector<workloads::GemmChoice> out;
            for (const auto& [us, g] : c) {
              const auto t = twin(g);
              if (!t || (consumer && !workloads::dynamic_dispatch_refusal(t->hopper).empty())) continue;
              bool dup = false;
              for (const auto& o : out) dup = dup || o.name() == t->name();
              if (!dup) out.push_back(*t);
              if (out.size() == 4) break;
            }
            return out;
          };
          struct Predicted {
            double stream_us, sync_us;
            MlpVariant v;
          };
          std::vector<Predicted> predicted;
          const double best_pair_us = c1[0].first + c2[0].first;
          for (const auto& t1 : firsts(c1, false))
            for (const auto& t2 : firsts(c2, true)) {
              MlpVariant v;
              v.sync = Sy::RowSync;
              v.ordering = Ordering::PDL;
              v.g1 = t1;
              v.g2 = t2;
              v.dynamic = true;
              try {
                Mlp m(problem_for(v), v);
                const Plan& plan = m.chain().plan();
                if (plan.stages[0].tiles() <= plan.stages[0].blocks()) continue;  // one wave: no row done early
                double t_stream = 0, t_sync = 0;
                if (!simulate_gain(plan, v, t_stream, t_sync)) continue;
                std::printf("  %-6s T=%-5d sim-search %-52s stream order %6.1f us, synchronized %6.1f us (%.3fx)\n",
                            model.c_str(), T, v.name().c_str(), t_stream, t_sync, t_stream / t_sync);
                // Timed only where it may beat the chain already found: at least 2% over its own stream order, and
                // 2% under the best pair's times alone (on the same scale: times alone, per wave). At 745336f the
                // simulator put these chains within 0.6-3.6% of their measured times
                // (bench/results/mlp-hopper-h200-20261129-745336f/README.md).
                if (t_stream / t_sync >= 1.02 && t_sync < 0.98 * best_pair_us) predicted.push_back({t_stream, t_sync, v});
              } catch (const std::exception& e) {
                std::printf("      (%s not simulated: %s)\n", v.name().c_str(), e.what());
              }
            }
          std::sort(predicted.begin(), predicted.end(),
                    [](const Predicted& a, const Predicted& b) { return a.sync_us < b.sync_us; });
          for (size_t i = 0; i < predicted.size() && i < 2; ++i) {
            const MlpVariant& v = predicted[i].v;
            variants.push_back(v);                                              // RowSync, GEMM 2 by ticket
            add_variant(Sy::RowSync, Ordering::PDL, false, true, v.g1, v.g2);   // RowSync, static
          }
        }
        // PDL alone with the runner-up configurations too: a GEMM's fastest configuration alone is not
        // always the fastest next to the other GEMM (LLaMA T=128 at bd0e2dc: gemm2 128x128-direct
        // 24.1 us alone vs 64x128 24.7, yet the chain 72.7 vs 60.3 us; GPT-3 T=64 at 34faa9f: gemm2
        // 64x256 58.0 us alone, 64x128 its runner-up, chains 128.0 vs 114.6 us). Each GEMM's four
        // fastest, every pair -- six at T <= 64, where the skinny configurations alone lie within about a
        // microsecond of each other, call-to-call noise, and the pair that won GPT-3 T = 1 in other calls
        // was fifth alone in one (bench/results/fused-chain-h200-20261128/, final-6611a6e).
        const size_t pair_ranks = T <= 64 ? 6 : 4;
        for (size_t i = 0; i < std::min(pair_ranks, c1.size()); ++i)
          for (size_t j = 0; j < std::min(pair_ranks, c2.size()); ++j)
            if (i + j > 0) add_variant(Sy::TileSync, Ordering::StreamOrder, true, true, c1[i].second, c2[j].second);
        // Both GEMMs on one kernel function (GemmConfig::kernel_function): a GEMM right after another
        // braid function runs 1.04-1.09x its own time (docs/hopper-gemm.md, the kernel-switch penalty),
        // which the GEMMs timed alone never pay. For each function both lists hold, its fastest pair,
        // where that pair's time alone is within kSameFunctionSlack of the fastest pair's (at most three).
        {
          constexpr double kSameFunctionSlack = 1.10;
          std::map<std::string, std::pair<size_t, size_t>> by_function;
          for (size_t i = 0; i < c1.size(); ++i)
            for (size_t j = 0; j < c2.size(); ++j) {
              if (c1[i].second.is_skinny || c2[j].second.is_skinny) continue;
              const std::string f = c1[i].second.hopper.kernel_function();
              if (f != c2[j].second.hopper.kernel_function()) continue;
              auto it = by_function.find(f);
              if (it == by_function.end() ||
                  c1[i].first + c2[j].first < c1[it->second.first].first + c2[it->second.second].first)
                by_function[f] = {i, j};
            }
          std::vector<std::pair<double, std::pair<size_t, size_t>>> same;
          for (const auto& [f, ij] : by_function) same.push_back({c1[ij.first].first + c2[ij.second].first, ij});
          std::sort(same.begin(), same.end());
          const double fastest = c1[0].first + c2[0].first;
          for (size_t n = 0; n < same.size() && n < 3 && same[n].first <= fastest * kSameFunctionSlack; ++n)
            add_variant(Sy::TileSync, Ordering::StreamOrder, true, true, c1[same[n].second.first].second,
                        c2[same[n].second.second].second);
        }
        // The fastest GEMMs alone need not make the fastest chain (a skinny GEMM next to a Hopper one
        // has run slower than the sum of their times): also both GEMMs of one kind.
        auto best_of_kind = [](const std::vector<std::pair<double, workloads::GemmChoice>>& c, bool skinny_kind) {
          for (const auto& x : c)
            if (x.second.is_skinny == skinny_kind) return std::optional<workloads::GemmChoice>(x.second);
          return std::optional<workloads::GemmChoice>();
        };
        for (bool kind : {false, true}) {
          const auto k1 = best_of_kind(c1, kind), k2 = best_of_kind(c2, kind);
          if (!k1 || !k2 || (k1->name() == b1.name() && k2->name() == b2.name())) continue;
          add_variant(Sy::TileSync, Ordering::StreamOrder, false, true, *k1, *k2);
          add_variant(Sy::TileSync, Ordering::StreamOrder, true, true, *k1, *k2);
        }
        // A skinny first GEMM under PDL alone also with the late trigger (SkinnyConfig::late_trigger): it
        // helps when the second GEMM's CTAs can share the SMs, and costs otherwise.
        for (size_t i = 0, n = variants.size(); i < n; ++i)
          if (variants[i].pdl_only && variants[i].g1.is_skinny && !variants[i].g1.skinny_config.late_trigger) {
            workloads::GemmChoice lt = variants[i].g1;
            lt.skinny_config.late_trigger = true;
            add_variant(variants[i].sync, variants[i].ordering, true, variants[i].weights_first, lt, variants[i].g2);
          }
        // Both skinny GEMMs as one launch (MlpVariant::fused, skinny::SkinnyChainOp): one ramp and one tail
        // instead of two. For each pair of skinny GEMMs tried above (one ring: GEMM 2 takes GEMM 1's stages
        // and MMA consumers).
        for (size_t i = 0, n = variants.size(); i < n; ++i)
          if (variants[i].g1.is_skinny && variants[i].g2.is_skinny) {
            MlpVariant f = variants[i];
            f.fused = true;
            f.ordering = Ordering::PDL;
            f.pdl_only = false;
            f.weights_first = true;
            f.sync = Sy::TileSync;
            f.g1.skinny_config.late_trigger = false;
            f.g2.skinny_config.stages = f.g1.skinny_config.stages;
            f.g2.skinny_config.wgmma = f.g1.skinny_config.wgmma;
            bool seen = false;
            for (const MlpVariant& x : variants) seen = seen || x.name() == f.name();
            if (!seen) variants.push_back(f);
          }
        // Baseline output: braid's kernels in stream order.
        std::vector<std::unique_ptr<Mlp>> mlps;
        for (size_t i = 0; i < variants.size();) {
          try {
            mlps.push_back(std::make_unique<Mlp>(problem_for(variants[i]), variants[i]));
            ++i;
          } catch (const std::exception& e) {  // a fused pair may not fit (every CTA resident at once)
            if (!variants[i].fused) throw;
            std::printf("      (%s not run: %s)\n", variants[i].name().c_str(), e.what());
            variants.erase(variants.begin() + long(i));
          }
        }
        BRAID_CUDA_CHECK(cudaMemsetAsync(Y, 0xff, size_t(T) * H * 2, s));
        mlps[0]->run(s);
        mlps[0]->check(s);
        BRAID_CUDA_CHECK(cudaMemcpyAsync(Ybase, Y, size_t(T) * H * 2, cudaMemcpyDeviceToDevice, s));
        const double base_err = ref.rel_error(Y);
        const std::vector<uint16_t> base = dl(Ybase, size_t(T) * H);
        // Bit-identity reference of each variant: braid's kernels with the same configurations, stream order.
        std::map<std::string, std::vector<uint16_t>> stream_out;
        stream_out[variants[0].g1.name() + "+" + variants[0].g2.name()] = base;
        auto reference_for = [&](const MlpVariant& v) -> const std::vector<uint16_t>& {
          const std::string k = v.g1.name() + "+" + v.g2.name();
          auto it = stream_out.find(k);
          if (it != stream_out.end()) return it->second;
          MlpVariant sv = v;
          sv.ordering = Ordering::StreamOrder;
          sv.pdl_only = false;
          sv.fused = false;
          sv.dynamic = false;
          Mlp sm(problem_for(sv), sv);
          BRAID_CUDA_CHECK(cudaMemsetAsync(Y, 0xff, size_t(T) * H * 2, s));
          sm.run(s);
          sm.check(s);
          return stream_out[k] = dl(Y, size_t(T) * H);
        };
        std::vector<tune::Candidate> cands;
        // BRAID_MLP_TIME_UNCHECKED (diagnosis, with BRAID_SKINNY_NO_REDUCE: wrong output on purpose): time the variants
        // whose output fails its check too (their rows still say CHECK FAILED).
        static const bool time_unchecked = std::getenv("BRAID_MLP_TIME_UNCHECKED") != nullptr;
        std::vector<double> errs(variants.size(), 0), times(variants.size(), -1);
        std::vector<bool> identical(variants.size(), false);
        for (size_t i = 0; i < variants.size(); ++i) {
          Mlp* m = mlps[i].get();
          tune::Candidate c;
          c.name = variants[i].name();
          c.check = [&, m, i] {
            const std::vector<uint16_t>& expect = reference_for(variants[i]);
            for (int rep = 0; rep < 3; ++rep) {  // a race shows as output that moves between runs
              BRAID_CUDA_CHECK(cudaMemsetAsync(Y, 0xff, size_t(T) * H * 2, s));
              BRAID_CUDA_CHECK(cudaMemsetAsync(A, 0xff, size_t(T) * F * 2, s));
              m->run(s);
              m->check(s);
              if (dl(Y, size_t(T) * H) != expect) {
                if (!time_unchecked) return false;
                errs[i] = ref.rel_error(Y);
                return true;
              }
            }
            errs[i] = ref.rel_error(Y);
            identical[i] = true;
            return errs[i] < 1e-2 || time_unchecked;
          };
          c.time_us = [&, m] {
            bench::Graph g(s, [&](cudaStream_t st) { m->run(st); });
            return timer.median_us([&] { g.launch(); }, reps_per_round);
          };
          cands.push_back(c);
        }
        const tune::Candidate baseline = cands[0];
        cands.erase(cands.begin());
        const std::string key = std::string(wl) + "/" + shape + "/" + dts + "/" + bench::gpu_name();
        const tune::Choice ch = tuner.tune(key, baseline, cands);
        for (const auto& [name, us] : ch.timings)  // the medians over the rounds (none when the choice was cached)
          for (size_t i = 0; i < variants.size(); ++i)
            if (variants[i].name() == name && us > 0) times[i] = us;
        errs[0] = base_err;
        for (size_t i = 0; i < variants.size(); ++i) {
          if (times[i] < 0) continue;  // cached choice: not re-timed
          add_row("braid:" + variants[i].name(), times[i], errs[i], i == 0 || identical[i]);
        }
        add_row("braid", ch.best_us, base_err, !time_unchecked);  // (unchecked timing: the pick may be a wrong output)
        // ---- the pick against cuBLASLt in alternating rounds (ABBA), the pick checked again: rows
        // "braid:interleaved-r<R>/<pick>" and "<peer>-interleaved-r<R>", each round's median (bench/mlp_table.py takes
        // the median of the rounds' ratios: each round's pair is timed side by side).
        if (interleave_rounds > 0 && peer_graph && !time_unchecked) {
          size_t j = variants.size();
          for (size_t i = 0; i < variants.size(); ++i)
            if (variants[i].name() == ch.best) j = i;
          if (j < variants.size()) {
            // (checked again here: a cached pick was not run above)
            BRAID_CUDA_CHECK(cudaMemsetAsync(Y, 0xff, size_t(T) * H * 2, s));
            mlps[j]->run(s);
            mlps[j]->check(s);
            BRAID_CUDA_CHECK(cudaStreamSynchronize(s));
            const double pick_err = ref.rel_error(Y);
            bench::Graph gb(s, [&](cudaStream_t st) { mlps[j]->run(st); });
            std::vector<double> tb, tp, ratio;
            for (int r = 0; r < interleave_rounds; ++r) {
              const bool braid_first = r % 2 == 1;  // A B, B A, A B, ...
              double b = 0, p = 0;
              for (int k = 0; k < 2; ++k) {
                if ((k == 0) == braid_first) b = timer.median_us([&] { gb.launch(); }, reps);
                else p = timer.median_us([&] { peer_graph->launch(); }, reps);
              }
              tb.push_back(b);
              tp.push_back(p);
              ratio.push_back(p / b);
            }
            auto median = [](std::vector<double> v) {
              std::sort(v.begin(), v.end());
              return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
            };
            std::string per_round;
            for (double r : ratio) per_round += " " + std::to_string(r).substr(0, 5);
            std::printf("  %-6s T=%-5d interleaved %d rounds: %s %.1f us, cuBLASLt %.1f us; braid / cuBLASLt per round%s; "
                        "median %.3fx\n",
                        model.c_str(), T, interleave_rounds, ch.best.c_str(), median(tb), median(tp), per_round.c_str(),
                        median(ratio));
            for (int r = 0; r < interleave_rounds; ++r) {
              add_row("braid:interleaved-r" + std::to_string(r + 1) + "/" + ch.best, tb[r], pick_err);
              add_row(peer_name + "-interleaved-r" + std::to_string(r + 1), tp[r], peer_err);
            }
          }
        }
        // ---- the simulator's predicted gain for the chosen (or the TileSync+PDL) chain
        size_t pick = 2;
        for (size_t i = 0; i < variants.size(); ++i)
          if (variants[i].name() == ch.best && variants[i].ordering != Ordering::StreamOrder) pick = i;
        {
          double t_stream = 0, t_sync = 0;
          simulate_gain(mlps[pick]->chain().plan(), variants[pick], t_stream, t_sync);
          const double measured = times[pick] > 0 && times[0] > 0 ? times[0] / times[pick] : 0;
          std::printf("  %-6s T=%-5d %s: simulated gain %.3fx, measured %.3fx; chosen %s (%.3fx over stream, "
                      "%.3fx over the best peer, %.2f of floor; reachable with one launch %.2f, with two %.2f)\n",
                      model.c_str(), T, variants[pick].name().c_str(), t_stream / t_sync, measured, ch.best.c_str(),
                      ch.speedup(), best_peer / ch.best_us, floor_us / ch.best_us,
                      floor_us / (floor_us + launch_floor.best(1)), floor_us / (floor_us + launch_floor.best(2)));
        }
        // ---- the simulator beside the measurement for every synchronized variant timed (issue 3: predicted and
        // measured gain side by side)
        for (size_t i = 0; i < variants.size(); ++i) {
          if (variants[i].ordering == Ordering::StreamOrder || variants[i].fused || times[i] <= 0 || times[0] <= 0) continue;
          double t_stream = 0, t_sync = 0;
          const bool measured_tiles = simulate_gain(mlps[i]->chain().plan(), variants[i], t_stream, t_sync);
          std::printf("  %-6s T=%-5d sim %-58s simulated gain over its stream order %.3fx%s; measured %.3fx over the stream-order baseline\n", model.c_str(),
                      T, variants[i].name().c_str(), t_stream / t_sync, measured_tiles ? "" : " (plan's tile times)",
                      times[0] / times[i]);
        }
        // ---- diagnostics: the cost of the waits alone. Stream order, but both stages synchronized
        // (GEMM 1 posts, GEMM 2 waits on semaphores that are already complete when it starts).
        if (diag)
          for (size_t vi : {size_t(2), size_t(3)}) {
            const MlpVariant v = variants[vi];
            MlpVariant so = v;
            so.ordering = Ordering::StreamOrder;
            so.dynamic = false;
            Mlp ms(problem_for(so), so);
            bench::Graph gs(s, [&](cudaStream_t st) { ms.run(st); });
            const double t_plain = timer.median_us([&] { gs.launch(); }, reps);
            // Which stage pays: both stages synchronized (GEMM 2's waits are satisfied on arrival), and
            // GEMM 1 alone synchronized (it posts; GEMM 2 runs its plain loop).
            double t_sync[2] = {0, 0};
            for (int which = 0; which < 2; ++which) {
              Mlp md(problem_for(v), v);
              // which == 0: both stages synchronized; 1: GEMM 1 posts, GEMM 2 runs its plain loop
              md.chain().set_params_hook([which](int stage, StageParams& sp) {
                if (which == 0 || stage == 0) sp.flags |= kSync;
                else sp.flags &= ~kSync;
              });
              md.chain().run(s, Ordering::StreamOrder);
              md.check(s);
              bench::Graph gd(s, [&](cudaStream_t st) { md.chain().run(st, Ordering::StreamOrder); });
              t_sync[which] = timer.median_us([&] { gd.launch(); }, reps);
            }
            std::printf("  diag %-40s stream order: plain %.1f us; %s waits satisfied %.1f us; GEMM 1 posting only %.1f us\n",
                        v.name().c_str(), t_plain, vi == 2 ? "TileSync" : "RowSync", t_sync[0], t_sync[1]);
          }
        // ---- where a fused chain's time goes: per-CTA stamps of one launch (skinny_chain.cuh's
        // ChainEvent), after a warm-up, as min / median / max over the CTAs relative to the first start.
        if (fused_timeline)
          for (size_t vi = 0; vi < variants.size(); ++vi) {
            if (!variants[vi].fused) continue;
            skinny::SkinnyChainOp& op = mlps[vi]->fused_op();
            const int n = op.ctas(), ne = skinny::kChainEvents;
            unsigned long long* d = nullptr;
            BRAID_CUDA_CHECK(cudaMalloc(&d, size_t(n) * ne * sizeof(unsigned long long)));
            BRAID_CUDA_CHECK(cudaMemset(d, 0, size_t(n) * ne * sizeof(unsigned long long)));
            for (int rep = 0; rep < 3; ++rep) mlps[vi]->run(s);
            op.set_timeline(d);
            mlps[vi]->run(s);
            mlps[vi]->check(s);
            op.set_timeline(nullptr);
            std::vector<unsigned long long> h(size_t(n) * ne);
            BRAID_CUDA_CHECK(cudaMemcpy(h.data(), d, h.size() * sizeof(h[0]), cudaMemcpyDeviceToHost));
            cudaFree(d);
            unsigned long long t0 = ~0ull;
            for (int c = 0; c < n; ++c) t0 = std::min(t0, h[size_t(c) * ne]);
            static const char* names[] = {"start", "phase0-mma", "phase0-end", "phase1-first-x", "phase1-first-data", "end"};
            std::printf("  fused-timeline %s (%d CTAs; us after the first CTA's start: min / median / max)\n",
                        variants[vi].name().c_str(), n);
            for (int e = 0; e < ne; ++e) {
              std::vector<double> v;
              for (int c = 0; c < n; ++c)
                if (h[size_t(c) * ne + e] != 0) v.push_back((double(h[size_t(c) * ne + e]) - double(t0)) / 1e3);
              if (v.empty()) continue;
              std::sort(v.begin(), v.end());
              std::printf("    %-18s %8.2f %8.2f %8.2f  (%zu CTAs)\n", names[e], v.front(), v[v.size() / 2], v.back(), v.size());
            }
          }
        // ---- traced runs (timeline tool): braid's kernels in stream order and the synchronized chain
        // Traced: stream order (variant 0), PDL alone with the same kernels (variant 1), and the pick.
        if (!trace_dir.empty())
          for (size_t vi : {size_t(0), size_t(1), pick}) {
            if (vi >= variants.size() || (vi == pick && pick <= 1)) continue;
            const MlpVariant& v = variants[vi];
            Mlp mt(problem_for(v), v, ChainOptions{true, v.weights_first, 10000, true});
            const auto trace = bench::record_trace(mt, s);
            const std::string path = trace_dir + "/trace-mlp-" + model + "-T" + std::to_string(T) + "-" +
                                     (vi == 0 ? "stream" : vi == 1 ? "pdl-only" : "pick") + ".csv";
            bench::write_trace_csv(path, trace);
            std::printf("  wrote %s (%s)\n    %s\n", path.c_str(), v.name().c_str(), bench::trace_summary(trace).c_str());
          }
#endif
      }
      for (void* p : {X, W1, W2, Hbuf, A, Y, Ybase}) cudaFree(p);
#ifdef BRAID_HAVE_HOPPER
      for (auto& packed : W1packed) cudaFree(packed.second);
#endif
    }
    if (!csv.empty()) {
      bench::write_results_csv(csv, commit, rows);
      std::printf("wrote %s\n", csv.c_str());
    }
    if (failures) {
      std::printf("CHECK FAILED: %d variant(s)\n", failures);
      return 1;
    }
    std::printf("checks: all variants passed (braid chains bit-identical to braid's stream order)\n");
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "braid-bench-mlp: %s\n", e.what());
    return 1;
  }
}
