// braid-bench-mlp: the transformer-MLP benchmark of issue 3 (one GPU of 8-way tensor parallelism).
//   GPT-3:  X[T,12288] @ W1[12288,6144] -> GeLU -> @ W2[6144,12288]
//   LLaMA:  X[T,8192]  @ W1[8192,2*2752] (gate|up) -> SwiGLU -> @ W2[2752,8192]
// Peers: cuBLASLt, best of its heuristic's algorithms per GEMM (timed), GeLU fused as the epilogue
// (LLaMA: a separate SwiGLU kernel), stream order under a CUDA graph. braid: its GEMM chain in stream
// order and tile-synchronized (GPT-3; the proof GEMM, not yet the Hopper kernel). Floor from the
// ceilings measured in the same run. Every variant's output is checked against an fp32 reference.
#include <cublasLt.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "braid/bench/harness.cuh"
#include "braid/workloads/gemm_chain.cuh"
#ifdef BRAID_HAVE_CUTLASS
#include "cutlass/sm90_gemm.hpp"
#endif

using namespace braid;

#ifndef BRAID_GIT_COMMIT
#define BRAID_GIT_COMMIT "unknown"
#endif

#define LT_CHECK(x) BRAID_CUBLAS_CHECK(x)

namespace {

__global__ void swiglu_kernel(const __half* in, __half* out, int T, int F) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < size_t(T) * F; i += size_t(gridDim.x) * blockDim.x) {
    const size_t r = i / F, c = i % F;
    const float g = __half2float(in[r * 2 * F + c]), u = __half2float(in[r * 2 * F + F + c]);
    out[i] = __float2half(g / (1.f + expf(-g)) * u);
  }
}

// Row-major Y[T,N] = epi(X[T,K] . W[K,N]) through cuBLASLt (column-major Y^T = W^T . X^T).
struct LtGemm {
  cublasLtMatmulDesc_t op{};
  cublasLtMatrixLayout_t a{}, b{}, c{};
  cublasLtMatmulAlgo_t algo{};
  void* ws;
  size_t ws_bytes;
  LtGemm(cublasLtHandle_t h, int T, int K, int N, bool gelu, void* workspace, size_t wsb, const __half* W,
         const __half* X, __half* Y, cudaStream_t s)
      : ws(workspace), ws_bytes(wsb) {
    LT_CHECK(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    if (gelu) {
      cublasLtEpilogue_t e = CUBLASLT_EPILOGUE_GELU;
      LT_CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_EPILOGUE, &e, sizeof(e)));
    }
    LT_CHECK(cublasLtMatrixLayoutCreate(&a, CUDA_R_16F, N, K, N));
    LT_CHECK(cublasLtMatrixLayoutCreate(&b, CUDA_R_16F, K, T, K));
    LT_CHECK(cublasLtMatrixLayoutCreate(&c, CUDA_R_16F, N, T, N));
    cublasLtMatmulPreference_t pref;
    LT_CHECK(cublasLtMatmulPreferenceCreate(&pref));
    LT_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_bytes, sizeof(ws_bytes)));
    cublasLtMatmulHeuristicResult_t res[8];
    int n = 0;
    LT_CHECK(cublasLtMatmulAlgoGetHeuristic(h, op, a, b, c, c, pref, 8, res, &n));
    cublasLtMatmulPreferenceDestroy(pref);
    if (n == 0) throw std::runtime_error("cuBLASLt found no algorithm");
    // Time each candidate, keep the fastest ("best algorithm").
    bench::Timer timer(s, 0);
    double best = 1e30;
    for (int i = 0; i < n; ++i) {
      const float one = 1, zero = 0;
      auto run = [&] {
        LT_CHECK(cublasLtMatmul(h, op, &one, W, a, X, b, &zero, Y, c, Y, c, &res[i].algo, ws, ws_bytes, s));
      };
      try {
        const double us = timer.median_us(run, 10, 2);
        if (us < best) { best = us; algo = res[i].algo; }
      } catch (const std::exception&) {
      }
    }
  }
  void run(cublasLtHandle_t h, const __half* W, const __half* X, __half* Y, cudaStream_t s) {
    const float one = 1, zero = 0;
    LT_CHECK(cublasLtMatmul(h, op, &one, W, a, X, b, &zero, Y, c, Y, c, &algo, ws, ws_bytes, s));
  }
};

// fp32 reference of a few output rows (the check), from the fp16 inputs.
double rel_error_rows(const std::vector<__half>& X, const std::vector<__half>& W1, const std::vector<__half>& W2,
                      const std::vector<__half>& out, int T, int H, int F, bool llama) {
  const int F1 = llama ? 2 * F : F;
  double num = 0, den = 0;
  for (int r : {0, T / 2, T - 1}) {
    std::vector<float> h(F1), act(F);
    for (int j = 0; j < F1; ++j) {
      double acc = 0;
      for (int k = 0; k < H; ++k) acc += double(__half2float(X[size_t(r) * H + k])) * __half2float(W1[size_t(k) * F1 + j]);
      h[j] = float(acc);
    }
    for (int j = 0; j < F; ++j)
      act[j] = llama ? __half2float(__float2half(h[j] / (1 + std::exp(-h[j])) * h[F + j]))
                     : __half2float(__float2half(float(0.5 * h[j] * (1 + std::erf(h[j] / std::sqrt(2.0))))));
    for (int n = 0; n < H; ++n) {
      double acc = 0;
      for (int k = 0; k < F; ++k) acc += double(act[k]) * __half2float(W2[size_t(k) * H + n]);
      const double got = __half2float(out[size_t(r) * H + n]);
      if (std::isnan(got)) return 1e30;
      num += (got - acc) * (got - acc);
      den += acc * acc;
    }
  }
  return std::sqrt(num / den);
}

std::vector<__half> dl(const __half* p, size_t n) {
  std::vector<__half> h(n);
  BRAID_CUDA_CHECK(cudaMemcpy(h.data(), p, n * 2, cudaMemcpyDeviceToHost));
  return h;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> tokens = {1, 2, 4, 8, 16, 32, 64, 128, 256, 384, 512, 768, 1024, 1536, 2048};
  std::string csv, models = "gpt3,llama", commit = std::getenv("BRAID_COMMIT") ? std::getenv("BRAID_COMMIT") : BRAID_GIT_COMMIT;
  int reps = 30;
  bool with_braid = true;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) { std::fprintf(stderr, "error: %s needs a value\n", a.c_str()); std::exit(2); }
      return argv[++i];
    };
    if (a == "--csv") csv = next();
    else if (a == "--models") models = next();
    else if (a == "--reps") reps = std::atoi(next().c_str());
    else if (a == "--no-braid") with_braid = false;
    else if (a == "--tokens") {
      tokens.clear();
      std::string s = next();
      for (size_t p = 0; p < s.size();) {
        size_t q = s.find(',', p);
        tokens.push_back(std::atoi(s.substr(p, q - p).c_str()));
        if (tokens.back() <= 0) { std::fprintf(stderr, "error: bad token count in '%s'\n", s.c_str()); return 2; }
        p = q == std::string::npos ? s.size() : q + 1;
      }
    } else {
      std::fprintf(stderr, "usage: braid-bench-mlp [--models gpt3,llama] [--tokens 1,2,...] [--reps N] [--csv PATH] [--no-braid]\n");
      return 2;
    }
  }
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    std::fprintf(stderr, "braid-bench-mlp: no CUDA device found\n");
    return 3;
  }
  try {
    cudaStream_t s;
    BRAID_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    const bench::Ceilings ceil = bench::measure_ceilings(s);
    std::printf("braid-bench-mlp on %s, commit %s: ceilings %.0f TFLOP/s, %.2f TB/s\n", bench::gpu_name().c_str(),
                commit.c_str(), ceil.tflops, ceil.tbps);
    cublasLtHandle_t lt;
    LT_CHECK(cublasLtCreate(&lt));
    const size_t ws_bytes = size_t(64) << 20;
    void* ws;
    BRAID_CUDA_CHECK(cudaMalloc(&ws, ws_bytes));
    bench::Timer timer(s);
    std::vector<bench::ResultRow> rows;
    std::printf("%-6s %6s %9s %12s %8s %12s %12s\n", "model", "T", "floor_us", "cublaslt_us", "/floor", "braid_us", "braid/lt");
    for (const std::string model : {"gpt3", "llama"}) {
      if (models.find(model) == std::string::npos) continue;
      const bool llama = model == "llama";
      const int H = llama ? 8192 : 12288, F = llama ? 2752 : 6144, F1 = llama ? 2 * F : F;
      const int Tmax = *std::max_element(tokens.begin(), tokens.end());
      __half *X, *W1, *W2, *Hbuf, *A, *Y;
      BRAID_CUDA_CHECK(cudaMalloc(&X, size_t(Tmax) * H * 2));
      BRAID_CUDA_CHECK(cudaMalloc(&W1, size_t(H) * F1 * 2));
      BRAID_CUDA_CHECK(cudaMalloc(&W2, size_t(F) * H * 2));
      BRAID_CUDA_CHECK(cudaMalloc(&Hbuf, size_t(Tmax) * F1 * 2));
      BRAID_CUDA_CHECK(cudaMalloc(&A, size_t(Tmax) * F * 2));
      BRAID_CUDA_CHECK(cudaMalloc(&Y, size_t(Tmax) * H * 2));
      fill_random(X, size_t(Tmax) * H, 101, 1.0f, s);
      fill_random(W1, size_t(H) * F1, 102, 2.0f / std::sqrt(float(H)), s);
      fill_random(W2, size_t(F) * H, 103, 2.0f / std::sqrt(float(F)), s);
      const auto hX = dl(X, size_t(Tmax) * H), hW1 = dl(W1, size_t(H) * F1), hW2 = dl(W2, size_t(F) * H);
      for (int T : tokens) {
        const std::string wl = "mlp-" + model, shape = "T=" + std::to_string(T);
        const double flops = 2.0 * T * double(H) * F1 + 2.0 * T * double(F) * H;
        const double bytes = 2.0 * (double(H) * F1 + double(F) * H + 2.0 * T * H);
        const double floor_us = std::max(flops / (ceil.tflops * 1e12), bytes / (ceil.tbps * 1e12)) * 1e6;
        // ---- peer: cuBLASLt
        LtGemm g1(lt, T, H, F1, !llama, ws, ws_bytes, W1, X, llama ? Hbuf : A, s);
        LtGemm g2(lt, T, F, H, false, ws, ws_bytes, W2, A, Y, s);
        auto peer = [&](cudaStream_t st) {
          g1.run(lt, W1, X, llama ? Hbuf : A, st);
          if (llama) swiglu_kernel<<<264, 256, 0, st>>>(Hbuf, A, T, F);
          g2.run(lt, W2, A, Y, st);
        };
        BRAID_CUDA_CHECK(cudaMemsetAsync(Y, 0xff, size_t(T) * H * 2, s));
        peer(s);
        BRAID_CUDA_CHECK(cudaStreamSynchronize(s));
        const double err = rel_error_rows(hX, hW1, hW2, dl(Y, size_t(T) * H), T, H, F, llama);
        bench::Graph gp(s, peer);
        const double lt_us = timer.median_us([&] { gp.launch(); }, reps);
        rows.push_back({wl, shape, "fp16", llama ? "peer:cublaslt+swiglu-graph" : "peer:cublaslt-gelu-graph", lt_us,
                        floor_us, err < 1e-2});
#ifdef BRAID_HAVE_CUTLASS
        // ---- peer: CUTLASS 4.2 sm90 warp-specialized persistent GEMMs (TMA + wgmma), GeLU fused, in
        // stream order and with PDL alone (no tile sync): built with CUTLASS_ENABLE_GDC_FOR_SM90, the
        // kernel waits for its whole primary grid (griddepcontrol.wait) before its loads, so only its
        // prologue overlaps the previous kernel's tail.
        for (bool pdl : {false, true}) {
          cutlass_sm90::Gemm c1, c2;
          std::string why = c1.prepare({X, W1, llama ? Hbuf : A, T, F1, H, !llama});
          if (why.empty()) why = c2.prepare({A, W2, Y, T, H, F, false});
          if (!why.empty()) throw std::runtime_error(why);
          auto cpeer = [&](cudaStream_t st) {
            c1.run(st);
            if (llama) swiglu_kernel<<<264, 256, 0, st>>>(Hbuf, A, T, F);
            c2.run(st, pdl);
          };
          BRAID_CUDA_CHECK(cudaMemsetAsync(Y, 0xff, size_t(T) * H * 2, s));
          cpeer(s);
          BRAID_CUDA_CHECK(cudaStreamSynchronize(s));
          const double cerr = rel_error_rows(hX, hW1, hW2, dl(Y, size_t(T) * H), T, H, F, llama);
          bench::Graph gc(s, cpeer);
          const double c_us = timer.median_us([&] { gc.launch(); }, reps);
          rows.push_back({wl, shape, "fp16",
                          std::string("peer:") + cutlass_sm90::Gemm::name() + (pdl ? "-pdl-graph" : "-graph"), c_us,
                          floor_us, cerr < 1e-2});
          std::printf("       cutlass sm90 ws%s: %.1f us (%.2f of floor, rel err %.1e)\n", pdl ? " + PDL" : "", c_us,
                      floor_us / c_us, cerr);
        }
#endif
        // ---- braid: the proof GEMM chain (GPT-3 only: it has a GeLU epilogue, no SwiGLU yet)
        double braid_us = 0;
        if (with_braid && !llama) {
          for (auto [name, pol, ord] : {std::tuple{"stream", TileSync(), Ordering::StreamOrder},
                                        std::tuple{"rowsync-pdl", RowSync(), Ordering::PDL},
                                        std::tuple{"tilesync-pdl", TileSync(), Ordering::PDL}}) {
            workloads::GemmChainConfig c;
            c.stages = {workloads::GemmStageDesc{"gemm1", T, F, H, -1, -1, pol},
                        workloads::GemmStageDesc{"gemm2", T, H, F, 0, -1, pol}};
            c.epilogues = {kernels::Epilogue::GeLU, kernels::Epilogue::None};
            workloads::GemmChain g(c);
            // same inputs as the peer
            BRAID_CUDA_CHECK(cudaMemcpyAsync(const_cast<__half*>(g.input_A(0)), X, size_t(T) * H * 2, cudaMemcpyDeviceToDevice, s));
            BRAID_CUDA_CHECK(cudaMemcpyAsync(const_cast<__half*>(g.weights(0)), W1, size_t(H) * F * 2, cudaMemcpyDeviceToDevice, s));
            BRAID_CUDA_CHECK(cudaMemcpyAsync(const_cast<__half*>(g.weights(1)), W2, size_t(F) * H * 2, cudaMemcpyDeviceToDevice, s));
            g.poison(s);
            g.run(s, ord);
            g.chain().check(s);
            const double e = rel_error_rows(hX, hW1, hW2, g.download(1), T, H, F, false);
            bench::Graph gg(s, [&](cudaStream_t st) { g.run(st, ord); });
            const double us = timer.median_us([&] { gg.launch(); }, std::max(5, reps / 3));
            rows.push_back({wl, shape, "fp16", std::string("braid:simple-") + name, us, floor_us, e < 1e-2});
            if (!braid_us || us < braid_us) braid_us = us;
          }
        }
        std::printf("%-6s %6d %9.1f %12.1f %8.2f %12.1f %12.2f\n", model.c_str(), T, floor_us, lt_us, floor_us / lt_us,
                    braid_us, braid_us ? braid_us / lt_us : 0.0);
        std::fflush(stdout);
      }
      for (void* p : {(void*)X, (void*)W1, (void*)W2, (void*)Hbuf, (void*)A, (void*)Y}) cudaFree(p);
    }
    if (!csv.empty()) {
      bench::write_results_csv(csv, commit, rows);
      std::printf("wrote %s\n", csv.c_str());
    }
    for (const auto& r : rows)
      if (!r.pass) { std::printf("CHECK FAILED: %s %s %s\n", r.workload.c_str(), r.shape.c_str(), r.variant.c_str()); return 1; }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "braid-bench-mlp: %s\n", e.what());
    return 1;
  }
}
