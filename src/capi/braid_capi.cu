// braid's C interface (include/braid/capi.h): a thin layer over workloads::ConvChain that turns
// exceptions into return codes and a per-thread message, so that C, ctypes and other FFIs can call it.
#include "braid/capi.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "braid/workloads/conv_chain.cuh"

struct braid_conv_chain {
  std::unique_ptr<braid::workloads::ConvChain> chain;
  std::string name;
};

namespace {

thread_local std::string g_last_error;

template <class F>
int guarded(F&& f) {
  try {
    f();
    g_last_error.clear();
    return 0;
  } catch (const std::exception& e) {
    g_last_error = e.what();
  } catch (...) {
    g_last_error = "unknown exception";
  }
  return -1;
}

}  // namespace

extern "C" {

const char* braid_last_error(void) { return g_last_error.c_str(); }

int braid_conv_chain_create(braid_conv_chain** out, int dtype, int N, int H, int W, int C, const void* X, int n,
                            const int* K, const void* const* Wt, const void* const* bias, void* const* Y,
                            const void* const* residual, const char* const* configs, const char* variant) {
  using namespace braid;
  return guarded([&] {
    BRAID_REQUIRE(out != nullptr, "braid_conv_chain_create: out is null");
    *out = nullptr;
    BRAID_REQUIRE(dtype == 0 || dtype == 1, "braid_conv_chain_create: dtype must be 0 (fp16) or 1 (bf16)");
    BRAID_REQUIRE(n >= 1 && K && Wt && bias && Y && configs && variant,
                  "braid_conv_chain_create: n >= 1 layers and the K, Wt, bias, Y, configs arrays and variant are required");
    workloads::ConvChainProblem p;
    p.dtype = dtype == 0 ? hopper::DType::F16 : hopper::DType::BF16;
    p.img = workloads::ConvImage{N, H, W, 3, 1};
    p.C = C;
    p.X = X;
    for (int i = 0; i < n; ++i) {
      workloads::ConvLayer l;
      l.K = K[i];
      l.Wt = Wt[i];
      l.bias = bias[i];
      l.Y = Y[i];
      l.residual = residual ? residual[i] : nullptr;
      BRAID_REQUIRE(configs[i] != nullptr, "braid_conv_chain_create: configs[" + std::to_string(i) + "] is null");
      const std::string why = hopper::parse_gemm_config(configs[i], l.cfg);
      BRAID_REQUIRE(why.empty(), "braid_conv_chain_create: layer " + std::to_string(i) + ": " + why);
      p.layers.push_back(l);
    }
    auto h = std::make_unique<braid_conv_chain>();
    const auto v = workloads::ConvChainVariant::parse(variant);
    h->chain = std::make_unique<workloads::ConvChain>(p, v);
    h->name = v.name() + ":";
    for (int i = 0; i < n; ++i) h->name += std::string(i ? "," : "") + h->chain->op(i).name();
    *out = h.release();
  });
}

int braid_conv_chain_bind(braid_conv_chain* c, const void* X, const void* const* residual) {
  return guarded([&] {
    BRAID_REQUIRE(c != nullptr, "braid_conv_chain_bind: null chain");
    std::vector<const void*> r(size_t(c->chain->layers()), nullptr);
    if (residual)
      for (size_t i = 0; i < r.size(); ++i) r[i] = residual[i];
    c->chain->bind(X, r);
  });
}

int braid_conv_chain_run(braid_conv_chain* c, void* stream) {
  return guarded([&] {
    BRAID_REQUIRE(c != nullptr, "braid_conv_chain_run: null chain");
    c->chain->run(static_cast<cudaStream_t>(stream));
  });
}

int braid_conv_chain_check(braid_conv_chain* c, void* stream) {
  return guarded([&] {
    BRAID_REQUIRE(c != nullptr, "braid_conv_chain_check: null chain");
    c->chain->check(static_cast<cudaStream_t>(stream));
  });
}

int braid_conv_chain_diagnose(braid_conv_chain* c, char* buf, size_t len) {
  return guarded([&] {
    BRAID_REQUIRE(c != nullptr && buf != nullptr && len > 0, "braid_conv_chain_diagnose: null chain or buffer");
    const std::string d = c->chain->chain().diagnose();
    const size_t n = std::min(d.size(), len - 1);
    std::memcpy(buf, d.data(), n);
    buf[n] = '\0';
  });
}

const char* braid_conv_chain_name(const braid_conv_chain* c) { return c ? c->name.c_str() : ""; }

void braid_conv_chain_destroy(braid_conv_chain* c) { delete c; }

}  // extern "C"
