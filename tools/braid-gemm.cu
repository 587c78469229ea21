// braid-gemm: one GEMM, D[M,N] = act(A[M,K] . B[K,N]), through braid's Hopper kernel in the given
// tile configurations and through cuBLASLt (best algorithm), each checked against an fp32 reference
// of two rows and timed (CUDA events, median, L2 flushed). For sweeping configurations quickly and
// for profilers (ncu --launch-skip/--launch-count on one configuration).
//
//   braid-gemm --m 1,64,1024 --n 12288 --k 6144 [--act none|gelu] [--dtype fp16|bf16]
//              [--configs 128x128,128x128-streamk,128x256-sk2 | all] [--reps N] [--no-cublas]
//              [--unit-trace PREFIX]   (per braid configuration, one run recording every work unit:
//                                       a summary line, and PREFIX-M<M>-<config>.csv; with --before
//                                       also one right after each other GEMM, ...-after-<other>.csv)
//              [--before self|cublaslt|CONFIG,...]  (each braid configuration is also timed with another
//                                       GEMM run before every repetition, on buffers of its own, after the
//                                       L2 eviction and outside the timed region: "self" = the same
//                                       configuration, so the same kernel function; a CONFIG = another
//                                       braid function; cublaslt = cuBLASLt's kernel. Shows what a kernel
//                                       switch costs, as in a chain, which plain repetitions never pay.)
#include <cuda_bf16.h>

#include <cmath>
#include <functional>
#include <memory>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "braid/bench/code_footprint.cuh"
#include "braid/bench/cublaslt_gemm.cuh"
#include "braid/bench/half_bits.hpp"
#include "braid/bench/peers.hpp"
#include "braid/bench/harness.cuh"
#include "braid/bench/unit_trace.hpp"
#ifdef BRAID_HAVE_HOPPER
#include "braid/kernels/hopper/gemm_op.hpp"
#include "braid/kernels/common/activation.cuh"
#endif
#ifdef BRAID_HAVE_CUTLASS
#include "cutlass/sm90_gemm.hpp"
#endif

using namespace braid;

int main(int argc, char** argv) {
  std::vector<int> ms = {1};
  int N = 12288, K = 6144, reps = 20;
  std::string act = "none", dtype = "fp16", configs = "all", unit_trace, before;
  bool cublas = true, cutlass_streamk = false;
#ifdef BRAID_HAVE_CUTLASS
  std::vector<cutlass_sm90::GemmKernelShape> cutlass_shapes;  // CUTLASS kernels beyond the cooperative 128x128
#endif
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "error: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--m") {
      ms.clear();
      for (const auto& t : bench::split_list(next())) ms.push_back(std::atoi(t.c_str()));
    } else if (a == "--n") N = std::atoi(next().c_str());
    else if (a == "--k") K = std::atoi(next().c_str());
    else if (a == "--act") act = next();
    else if (a == "--dtype") dtype = next();
    else if (a == "--configs") configs = next();
    else if (a == "--reps") reps = std::atoi(next().c_str());
    else if (a == "--no-cublas") cublas = false;
    else if (a == "--unit-trace") unit_trace = next();
    else if (a == "--before") before = next();
    else if (a == "--cutlass-streamk") cutlass_streamk = true;
#ifdef BRAID_HAVE_CUTLASS
    else if (a == "--cutlass-shapes") {
      for (const auto& t : bench::split_list(next())) {
        cutlass_sm90::GemmKernelShape k;
        if (!cutlass_sm90::parse_kernel_shape(t, k)) {
          std::string known;
          for (int i = 1; i < cutlass_sm90::kKernelShapes; ++i)  // (0: the default peer, always timed)
            known += std::string(i > 1 ? ", " : "") + cutlass_sm90::kernel_shape_name(cutlass_sm90::GemmKernelShape(i));
          std::fprintf(stderr, "error: unknown CUTLASS kernel shape '%s' (%s)\n", t.c_str(), known.c_str());
          return 2;
        }
        cutlass_shapes.push_back(k);
      }
    }
#endif
    else {
      std::fprintf(stderr,
                   "usage: braid-gemm --m M1,M2 --n N --k K [--act none|gelu] [--dtype fp16|bf16] "
                   "[--configs NAME,... | all | none] [--reps N] [--no-cublas]\n"
                   "                  [--cutlass-streamk]   (also CUTLASS's Stream-K kernel: it hung on the H100 at\n"
                   "                                         M=256 N=12288 K=6144, CUTLASS 4.2; see bench/results)\n"
                   "                  [--cutlass-shapes pp-128x128,coop-128x256-c2,...]  (CUTLASS's kernels in other\n"
                   "                                         tile/cluster/schedule shapes, plain epilogue only)\n"
                   "                  [--unit-trace PREFIX]  (per braid configuration, one run recording each work\n"
                   "                                         unit: a summary line and PREFIX-M<M>-<config>.csv; with\n"
                   "                                         --before also right after each other GEMM)\n"
                   "                  [--before self|cublaslt|icache|tiny|CONFIG,...]  (also time each configuration with that GEMM\n"
                   "                                         run before each repetition, on other buffers: the cost\n"
                   "                                         of a kernel switch; icache and tiny also before cuBLASLt)\n");
      return 2;
    }
  }
  for (int m : ms)
    if (m < 1) { std::fprintf(stderr, "error: --m values must be positive\n"); return 2; }
  if (N < 8 || K < 8 || N % 8 || K % 8) { std::fprintf(stderr, "error: N and K must be positive multiples of 8\n"); return 2; }
  if (act != "none" && act != "gelu") { std::fprintf(stderr, "error: --act must be none or gelu\n"); return 2; }
  if (dtype != "fp16" && dtype != "bf16") { std::fprintf(stderr, "error: --dtype must be fp16 or bf16\n"); return 2; }
  if (reps < 3) { std::fprintf(stderr, "error: --reps must be >= 3\n"); return 2; }
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    std::fprintf(stderr, "braid-gemm: no CUDA device found\n");
    return 3;
  }
#ifndef BRAID_HAVE_HOPPER
  std::fprintf(stderr, "braid-gemm: built without CUTLASS (run scripts/setup.sh)\n");
  return 3;
#else
  const bool bf16 = dtype == "bf16";
  const bool gelu = act == "gelu";
  try {
    cudaStream_t s;
    BRAID_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    int sms = 0;
    BRAID_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    const int Mmax = *std::max_element(ms.begin(), ms.end());
    std::mt19937 rng(20261122);
    std::normal_distribution<float> nd(0.f, 1.f);
    std::vector<uint16_t> hA(size_t(Mmax) * K), hB(size_t(K) * N);
    for (auto& v : hA) v = bench::float_to_half_bits(nd(rng), bf16);
    for (auto& v : hB) v = bench::float_to_half_bits(nd(rng) / std::sqrt(float(K)), bf16);
    void *A, *B, *D, *ws;
    BRAID_CUDA_CHECK(cudaMalloc(&A, hA.size() * 2));
    BRAID_CUDA_CHECK(cudaMalloc(&B, hB.size() * 2));
    BRAID_CUDA_CHECK(cudaMalloc(&D, size_t(Mmax) * N * 2));
    const size_t ws_bytes = size_t(64) << 20;
    BRAID_CUDA_CHECK(cudaMalloc(&ws, ws_bytes));
    BRAID_CUDA_CHECK(cudaMemcpy(A, hA.data(), hA.size() * 2, cudaMemcpyHostToDevice));
    BRAID_CUDA_CHECK(cudaMemcpy(B, hB.data(), hB.size() * 2, cudaMemcpyHostToDevice));
    // (--before: the other GEMM's own buffers, so it leaves none of this one's data in the L2)
    void *A2 = nullptr, *B2 = nullptr, *D2 = nullptr;
    if (!before.empty()) {
      BRAID_CUDA_CHECK(cudaMalloc(&A2, hA.size() * 2));
      BRAID_CUDA_CHECK(cudaMalloc(&B2, hB.size() * 2));
      BRAID_CUDA_CHECK(cudaMalloc(&D2, size_t(Mmax) * N * 2));
      BRAID_CUDA_CHECK(cudaMemcpy(A2, hA.data(), hA.size() * 2, cudaMemcpyHostToDevice));
      BRAID_CUDA_CHECK(cudaMemcpy(B2, hB.data(), hB.size() * 2, cudaMemcpyHostToDevice));
    }
    cublasLtHandle_t lt;
    BRAID_CUBLAS_CHECK(cublasLtCreate(&lt));
    bench::Timer timer(s);
    const hopper::DType hdt = bf16 ? hopper::DType::BF16 : hopper::DType::F16;
    int failures = 0;
    std::printf("braid-gemm on %s (%d SMs): N=%d K=%d %s %s\n", bench::gpu_name().c_str(), sms, N, K, dtype.c_str(),
                act.c_str());
    // --unit-trace: one more run of g recording every work unit, right after the L2 eviction and
    // `before` (the other GEMM of --before, or nothing): where the time of each CTA goes.
    int trace_m = 0;
    auto trace_after = [&](const hopper::GemmOp& g, const std::string& name, const std::string& suffix,
                           const std::function<void()>& before) {
      const std::vector<hopper::UnitTrace> h = g.trace_units(s, [&] {
        timer.evict();
        before();
      });
      const std::string path = unit_trace + "-M" + std::to_string(trace_m) + "-" + name + suffix + ".csv";
      if (!bench::write_unit_trace_csv(path, h)) std::fprintf(stderr, "warning: cannot write %s\n", path.c_str());
      std::printf("  M=%-5d %-30s trace%s: %s\n", trace_m, name.c_str(), suffix.c_str(),
                  bench::describe(bench::summarize_unit_trace(h)).c_str());
    };
    for (int M : ms) {
      trace_m = M;
      // fp32 reference of rows 0 and M-1.
      const std::vector<int> rows = M > 1 ? std::vector<int>{0, M - 1} : std::vector<int>{0};
      std::vector<std::vector<double>> ref;
      for (int r : rows) {
        std::vector<double> acc(N, 0.0);
        for (int k = 0; k < K; ++k) {
          const double a = bench::half_bits_to_float(hA[size_t(r) * K + k], bf16);
          for (int n = 0; n < N; ++n) acc[n] += a * bench::half_bits_to_float(hB[size_t(k) * N + n], bf16);
        }
        if (gelu)
          for (auto& v : acc) v = braid::act::gelu_reference(v);
        ref.push_back(acc);
      }
      auto error = [&]() {
        double num = 0, den = 0;
        std::vector<uint16_t> got(N);
        for (size_t i = 0; i < rows.size(); ++i) {
          BRAID_CUDA_CHECK(cudaMemcpy(got.data(), static_cast<uint16_t*>(D) + size_t(rows[i]) * N, size_t(N) * 2,
                                      cudaMemcpyDeviceToHost));
          for (int n = 0; n < N; ++n) {
            const double g = bench::half_bits_to_float(got[n], bf16);
            if (!std::isfinite(g)) return 1e30;
            num += (g - ref[i][n]) * (g - ref[i][n]);
            den += ref[i][n] * ref[i][n];
          }
        }
        return std::sqrt(num / den);
      };
      const double bytes = 2.0 * (double(M) * K + double(K) * N + double(M) * N);
      const double flops = 2.0 * M * double(K) * N;
      auto report = [&](const std::string& name, double us, double err, const std::string& extra) {
        const bool ok = err < 1e-2;
        if (!ok) ++failures;
        std::printf("  M=%-5d %-30s %9.1f us %7.2f TB/s %6.0f TFLOP/s  err %.1e%s %s\n", M, name.c_str(), us,
                    bytes / us * 1e-6, flops / us * 1e-6, err, ok ? "" : "  CHECK FAILED", extra.c_str());
        std::fflush(stdout);
      };
      // --before's footprint kernels (code_footprint.cuh: what the switch penalty is); empty for other names.
      auto footprint = [&](const std::string& other) -> std::function<void()> {
        if (other != "icache" && other != "tiny") return {};
        return [&, large = other == "icache"] {
          bench::launch_footprint(large, sms, static_cast<uint32_t*>(ws), s);
          BRAID_CUDA_CHECK(cudaGetLastError());
        };
      };
      // `run` timed with `run_other` before each repetition (after the L2 eviction), checked first on a
      // poisoned output; reported against its plain time.
      auto time_after = [&](const std::string& label, const std::function<void()>& run,
                            const std::function<void()>& run_other, double plain_us) {
        BRAID_CUDA_CHECK(cudaMemsetAsync(D, 0xff, size_t(M) * N * 2, s));
        run_other();
        run();
        BRAID_CUDA_CHECK(cudaStreamSynchronize(s));
        const double err_after = error();
        const double us_after = timer.median_us(run, reps, 5, run_other);
        report(label, us_after, err_after, "(" + std::to_string(us_after / plain_us).substr(0, 5) + "x of plain)");
      };
      if (cublas) {
        bench::LtGemm g(lt, M, K, N, gelu, bf16 ? CUDA_R_16BF : CUDA_R_16F, ws, ws_bytes, B, A, D, s);
        BRAID_CUDA_CHECK(cudaMemsetAsync(D, 0xff, size_t(M) * N * 2, s));
        g.run(lt, B, A, D, s);
        BRAID_CUDA_CHECK(cudaStreamSynchronize(s));
        const double err = error();
        const double us = timer.median_us([&] { g.run(lt, B, A, D, s); }, reps);
        report("cublaslt-best", us, err, "(" + std::to_string(g.algos_tried) + " algorithms)");
        // The peer after the footprint kernels too: whether cuBLASLt's kernel pays a switch as well.
        for (const std::string& other : bench::split_list(before))
          if (const auto run_other = footprint(other))
            time_after("cublaslt-best after " + other, [&] { g.run(lt, B, A, D, s); }, run_other, us);
      }
#ifdef BRAID_HAVE_CUTLASS
      if (cublas && !bf16) {  // CUTLASS's own sm90 kernel (same collective mainloop as braid's, 128x128x64)
        std::vector<std::pair<bool, cutlass_sm90::GemmKernelShape>> kernels = {
            {false, cutlass_sm90::GemmKernelShape::Cooperative128x128}};
        if (cutlass_streamk) kernels.push_back({true, cutlass_sm90::GemmKernelShape::Cooperative128x128});
        for (auto k : cutlass_shapes) kernels.push_back({false, k});
        for (auto [sk, shape] : kernels) {
          cutlass_sm90::Gemm g;
          const std::string why = g.prepare({static_cast<const __half*>(A), static_cast<const __half*>(B),
                                             static_cast<__half*>(D), M, N, K, gelu, sk, shape});
          if (!why.empty()) {
            if (shape != cutlass_sm90::GemmKernelShape::Cooperative128x128)
              std::printf("  M=%-5d cutlass-%-22s skipped: %s\n", M, cutlass_sm90::kernel_shape_name(shape), why.c_str());
            continue;
          }
          BRAID_CUDA_CHECK(cudaMemsetAsync(D, 0xff, size_t(M) * N * 2, s));
          g.run(s);
          BRAID_CUDA_CHECK(cudaStreamSynchronize(s));
          const double err = error();
          const double us = timer.median_us([&] { g.run(s); }, reps);
          report(g.name(), us, err, "");
        }
      }
#endif
      std::vector<std::string> names;
      if (configs == "all") {
        for (int tm : {128, 64})
          for (int tn : {128, 256})
            for (const char* suffix : {"", "-rowmajor", "-streamk", "-streamk-rowmajor", "-sk2", "-sk3"})
              names.push_back(std::to_string(tm) + "x" + std::to_string(tn) + suffix);
        if (!bf16)  // the 128x128 tile's other epilogue store (EpilogueStore)
          for (const char* name : {"128x128-direct", "128x128-direct-rowmajor", "128x128-direct-streamk"}) names.push_back(name);
        if (!bf16)  // B multicast to clusters of two (GemmConfig::multicast)
          for (const char* name : {"128x128-mc2", "128x256-mc2", "128x128-mc2-streamk", "128x256-mc2-streamk",
                                   "128x128-mc2-rowmajor", "128x256-mc2-rowmajor"})
            names.push_back(name);
        for (const char* name : {"128x128-pp", "128x128-pp-rowmajor"})  // pingpong warpgroups
          names.push_back(name);
      } else if (configs != "none") {
        names = bench::split_list(configs);
      }
      for (const std::string& name : names) {
        hopper::GemmConfig c;
        if (const std::string why = hopper::parse_gemm_config(name, c); !why.empty()) {
          std::fprintf(stderr, "error: %s\n", why.c_str());
          return 2;
        }
        hopper::GemmOp g;
        const std::string why = g.prepare({hdt, A, B, D, M, N, K, gelu ? hopper::Activation::GeLU : hopper::Activation::None}, c);
        if (!why.empty()) {
          std::printf("  M=%-5d %-30s skipped: %s\n", M, name.c_str(), why.c_str());
          continue;
        }
        BRAID_CUDA_CHECK(cudaMemsetAsync(D, 0xff, size_t(M) * N * 2, s));
        g.run(s);
        BRAID_CUDA_CHECK(cudaStreamSynchronize(s));
        const double err = error();
        const double us = timer.median_us([&] { g.run(s); }, reps);
        report(name, us, err, "(" + std::to_string(g.units()) + " units on " + std::to_string(g.ctas()) + " CTAs)");
        // The same, with another GEMM (own buffers) between the L2 eviction and each timed repetition.
        for (const std::string& other : bench::split_list(before)) {
          std::function<void()> run_other = footprint(other);  // (icache, tiny)
          hopper::GemmOp go;
          std::unique_ptr<bench::LtGemm> lto;
          if (!run_other && other == "cublaslt") {
            lto = std::make_unique<bench::LtGemm>(lt, M, K, N, gelu, bf16 ? CUDA_R_16BF : CUDA_R_16F, ws, ws_bytes, B2, A2,
                                                  D2, s);
            run_other = [&] { lto->run(lt, B2, A2, D2, s); };
          } else if (!run_other) {
            hopper::GemmConfig oc;
            if (const std::string why = hopper::parse_gemm_config(other == "self" ? name : other, oc); !why.empty()) {
              std::fprintf(stderr, "error: --before: %s\n", why.c_str());
              return 2;
            }
            if (const std::string why = go.prepare(
                    {hdt, A2, B2, D2, M, N, K, gelu ? hopper::Activation::GeLU : hopper::Activation::None}, oc);
                !why.empty()) {
              std::printf("  M=%-5d %-30s after %s: skipped (%s)\n", M, name.c_str(), other.c_str(), why.c_str());
              continue;
            }
            run_other = [&] { go.run(s); };
          }
          time_after(name + " after " + other, [&] { g.run(s); }, run_other, us);
          // The traced run right after the other GEMM: which phase of the units the switch lengthens.
          if (!unit_trace.empty()) trace_after(g, name, "-after-" + other, run_other);
        }
        if (!unit_trace.empty()) trace_after(g, name, "", [] {});
      }
    }
    if (failures) {
      std::printf("CHECK FAILED: %d\n", failures);
      return 1;
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "braid-gemm: %s\n", e.what());
    return 1;
  }
#endif
}
