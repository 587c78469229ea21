// braid-stress-conv: runs one tile-synchronized convolution chain many times and checks every run
// bit for bit against the same kernels in stream order -- the way to find a race that shows once in
// thousands of runs (a lost post, a stale read), and to show it gone.
//
//   braid-stress-conv [--C 64] [--hw 56] [--batch 16] [--depth 6] [--residual resnet|none]
//                     [--configs 128x64-rowmajor[,...]] [--variants conv2dtilesync-pdl,rowsync-pdl-dyn]
//                     [--runs 2000] [--seconds 0] [--timeout-ms 2000] [--poster-delay-ns 0] [--seed 1]
//
// The chain: `depth` 3x3 convolutions C -> C at hw x hw, batch N, bias + ReLU (NHWC fp16); with
// --residual resnet, every second conv adds its basic block's input (the chain input, then the
// previous block's output), as ResNet-38's stage chains do. --configs: one tile configuration for every
// layer, or one per layer. Each run draws a fresh random input (a stale read of the previous run's
// data cannot pass), runs stream order for the reference, poisons every output (NaN), runs the
// variant, checks it with bounded waits (Chain::check: a wait that gave up or a chain that stopped
// moving is reported with the chain's device state), and compares every layer's output bit for bit
// on the device. Progress every few seconds; the first failure stops the variant and says which
// run, which layer and how many elements differ. Exit status 0 only when every run of every variant
// passed. --poster-delay-ns injects a lagging poster warp (StageParams::fault_poster_delay_ns).
#include <cuda_fp16.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "braid/bench/device_data.cuh"
#include "braid/bench/harness.cuh"
#include "braid/bench/peers.hpp"
#ifdef BRAID_HAVE_HOPPER
#include "braid/workloads/conv_chain.cuh"
#endif

using namespace braid;

int main(int argc, char** argv) {
#ifndef BRAID_HAVE_HOPPER
  (void)argc;
  (void)argv;
  std::fprintf(stderr, "braid-stress-conv: built without the Hopper kernels (CUTLASS)\n");
  return 2;
#else
  int C = 64, HW = 56, N = 16, depth = 6;
  std::string residual = "resnet", configs_arg = "128x64-rowmajor", variants_arg = "conv2dtilesync-pdl,rowsync-pdl-dyn";
  long runs = 2000;
  double seconds = 0, timeout_ms = 2000;
  uint32_t poster_delay_ns = 0;
  uint64_t seed = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
      return argv[++i];
    };
    try {
      if (a == "--C") C = std::stoi(next());
      else if (a == "--hw") HW = std::stoi(next());
      else if (a == "--batch") N = std::stoi(next());
      else if (a == "--depth") depth = std::stoi(next());
      else if (a == "--residual") residual = next();
      else if (a == "--configs") configs_arg = next();
      else if (a == "--variants") variants_arg = next();
      else if (a == "--runs") runs = std::stol(next());
      else if (a == "--seconds") seconds = std::stod(next());
      else if (a == "--timeout-ms") timeout_ms = std::stod(next());
      else if (a == "--poster-delay-ns") poster_delay_ns = uint32_t(std::stoul(next()));
      else if (a == "--seed") seed = std::stoull(next());
      else {
        std::fprintf(stderr, "usage: see the header of tools/braid-stress-conv.cu%s\n",
                     a == "--help" ? "" : (" (unknown option " + a + ")").c_str());
        return a == "--help" ? 0 : 2;
      }
    } catch (const std::exception& e) {
      std::fprintf(stderr, "braid-stress-conv: %s: %s\n", a.c_str(), e.what());
      return 2;
    }
  }
  if (C <= 0 || HW <= 0 || N <= 0 || depth <= 0 || runs <= 0 || timeout_ms <= 0 ||
      (residual != "resnet" && residual != "none")) {
    std::fprintf(stderr, "braid-stress-conv: --C, --hw, --batch, --depth, --runs and --timeout-ms must be positive; "
                         "--residual resnet or none\n");
    return 2;
  }
  std::vector<hopper::GemmConfig> cfgs;
  if (const std::string why = bench::parse_config_list(configs_arg, cfgs); !why.empty()) {
    std::fprintf(stderr, "braid-stress-conv: --configs: %s\n", why.c_str());
    return 2;
  }
  if (cfgs.size() != 1 && cfgs.size() != size_t(depth)) {
    std::fprintf(stderr, "braid-stress-conv: --configs wants one configuration or one per layer (%d)\n", depth);
    return 2;
  }
  std::vector<workloads::ConvChainVariant> variants;
  for (const std::string& name : bench::split_list(variants_arg)) {
    try {
      variants.push_back(workloads::ConvChainVariant::parse(name));
    } catch (const std::exception& e) {
      std::fprintf(stderr, "braid-stress-conv: --variants: %s\n", e.what());
      return 2;
    }
  }

  cudaStream_t s;
  BRAID_CUDA_CHECK(cudaStreamCreate(&s));
  const size_t act = size_t(N) * HW * HW * C, wts = size_t(C) * 9 * C;
  __half* X;
  BRAID_CUDA_CHECK(cudaMalloc(&X, act * 2));
  std::vector<__half*> Wt(depth), B(depth), Y(depth), Ref(depth);
  for (int l = 0; l < depth; ++l) {
    BRAID_CUDA_CHECK(cudaMalloc(&Wt[l], wts * 2));
    BRAID_CUDA_CHECK(cudaMalloc(&B[l], C * 2));
    BRAID_CUDA_CHECK(cudaMalloc(&Y[l], act * 2));
    BRAID_CUDA_CHECK(cudaMalloc(&Ref[l], act * 2));
    fill_random(Wt[l], wts, seed * 1000 + 2 * l, 1.0f / std::sqrt(9.0f * C), s);
    fill_random(B[l], C, seed * 1000 + 2 * l + 1, 0.1f, s);
  }
  unsigned long long* d_count;
  BRAID_CUDA_CHECK(cudaMalloc(&d_count, sizeof(unsigned long long) * depth));

  auto problem = [&](const std::vector<__half*>& outs) {
    workloads::ConvChainProblem p{hopper::DType::F16, {N, HW, HW}, C, X, {}};
    for (int l = 0; l < depth; ++l) {
      workloads::ConvLayer L{C, Wt[l], B[l], outs[l], cfgs[cfgs.size() == 1 ? 0 : size_t(l)], nullptr};
      if (residual == "resnet" && l % 2 == 1) L.residual = l == 1 ? static_cast<const void*>(X) : outs[l - 2];
      p.layers.push_back(L);
    }
    return p;
  };
  ChainOptions opt;
  opt.timeout_ms = timeout_ms;
  std::unique_ptr<workloads::ConvChain> ref;
  try {
    ref = std::make_unique<workloads::ConvChain>(problem(Ref), workloads::ConvChainVariant::parse("stream"), opt);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "braid-stress-conv: %s\n", e.what());
    return 2;
  }
  std::printf("%s: %d convs %dx%dx%d -> %d, batch %d, residual %s, configs %s; %ld runs per variant%s, waits bounded at "
              "%.0f ms%s\n",
              bench::gpu_name().c_str(), depth, HW, HW, C, C, N, residual.c_str(), configs_arg.c_str(), runs,
              seconds > 0 ? (" (or " + std::to_string(int(seconds)) + " s)").c_str() : "", timeout_ms,
              poster_delay_ns ? (", poster delayed " + std::to_string(poster_delay_ns) + " ns per tile").c_str() : "");
  std::fflush(stdout);

  bool all_pass = true;
  for (const auto& v : variants) {
    std::unique_ptr<workloads::ConvChain> chain;
    try {
      chain = std::make_unique<workloads::ConvChain>(problem(Y), v, opt);
    } catch (const std::exception& e) {
      std::printf("%s: refused: %s\n", v.name().c_str(), e.what());
      all_pass = false;
      continue;
    }
    if (poster_delay_ns) chain->chain().set_params_hook([&](int, StageParams& sp) { sp.fault_poster_delay_ns = poster_delay_ns; });
    using clock = std::chrono::steady_clock;
    const auto t0 = clock::now();
    auto t_report = t0;
    long done = 0;
    std::string failure;
    for (long r = 0; r < runs && failure.empty(); ++r) {
      const double elapsed = std::chrono::duration<double>(clock::now() - t0).count();
      if (seconds > 0 && elapsed > seconds) break;
      fill_random(X, act, seed * 7919 + uint64_t(r) + 1, 1.0f, s);  // a fresh input every run
      ref->run(s);
      for (int l = 0; l < depth; ++l) BRAID_CUDA_CHECK(cudaMemsetAsync(Y[l], 0xff, act * 2, s));  // NaN poison
      try {
        chain->run(s);
        chain->check(s);
      } catch (const SyncError& e) {
        failure = "run " + std::to_string(r) + ": " + e.what();
        if (chain->chain().stuck()) {
          std::printf("%s: FAILED, %s\n", v.name().c_str(), failure.c_str());
          std::printf("the chain's kernels are still running: exiting\n");
          std::fflush(stdout);
          std::_Exit(1);
        }
        break;
      }
      BRAID_CUDA_CHECK(cudaMemsetAsync(d_count, 0, sizeof(unsigned long long) * depth, s));
      for (int l = 0; l < depth; ++l) count_bit_mismatch_kernel<<<264, 256, 0, s>>>(Y[l], Ref[l], act, d_count + l);
      std::vector<unsigned long long> diff(depth);
      BRAID_CUDA_CHECK(cudaMemcpyAsync(diff.data(), d_count, sizeof(unsigned long long) * depth, cudaMemcpyDeviceToHost, s));
      BRAID_CUDA_CHECK(cudaStreamSynchronize(s));
      for (int l = 0; l < depth && failure.empty(); ++l)
        if (diff[l])
          failure = "run " + std::to_string(r) + ": layer " + std::to_string(l + 1) + " differs from stream order in " +
                    std::to_string(diff[l]) + " of " + std::to_string(act) + " elements";
      ++done;
      const auto now = clock::now();
      if (std::chrono::duration<double>(now - t_report).count() > 5) {
        t_report = now;
        std::printf("  %s: %ld runs passed (%.0f s)\n", v.name().c_str(), done, std::chrono::duration<double>(now - t0).count());
        std::fflush(stdout);
      }
    }
    const double el = std::chrono::duration<double>(clock::now() - t0).count();
    if (failure.empty()) std::printf("%s: %ld runs, all bit-identical to stream order (%.1f s)\n", v.name().c_str(), done, el);
    else std::printf("%s: FAILED after %ld passing runs: %s\n", v.name().c_str(), done, failure.c_str());
    std::fflush(stdout);
    all_pass &= failure.empty();
  }
  std::printf(all_pass ? "stress: all variants passed\n" : "stress: FAILURES\n");
  return all_pass ? 0 : 1;
#endif
}
