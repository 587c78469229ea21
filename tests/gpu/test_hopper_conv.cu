// GPU tests of braid's Hopper implicit-GEMM convolution and of the Conv2D chains built on it:
//  - ConvOp against an fp64-accumulated host reference: fp16 and bf16, every tile shape, ragged pixel
//    and filter counts, non-square images, split-K and stream-K, bias + ReLU and no activation;
//  - the synchronized two-conv chain (Conv2DTileSync / RowSync x PDL / wait kernel, split-K, stream-K,
//    64-row tiles, R off, few CTAs) is bit-identical to the same kernels in stream order, run after run
//    with the outputs poisoned in between, and matches the host reference;
//  - a producer that never posts makes the consumer conv's bounded wait fail with a SyncError.
// Skips without a GPU, and without an sm_90 GPU.
#include <gtest/gtest.h>

#include <cstring>
#include <deque>
#include <set>
#include <string>
#include <vector>

#include "braid/kernels/hopper/conv_op.hpp"
#include "braid/workloads/conv_chain.cuh"
#include "hopper_test_util.cuh"

#ifdef BRAID_HAVE_HOPPER

using namespace braid;
using namespace braid::hopper;
using namespace braid::hopper::testing;
using braid::workloads::ConvChain;
using braid::workloads::ConvChainProblem;
using braid::workloads::ConvChainVariant;

namespace {

// Y = act(bias + conv3x3(X, Wt) (+ residual)), same padding, NHWC / KRSC, accumulated in double;
// returns fp32.
std::vector<float> conv_reference(const std::vector<float>& x, const Buf& wt, const Buf& bias, int N, int H, int W,
                                  int C, int K, bool relu, DType dt, const Buf* residual = nullptr) {
  std::vector<float> w(wt.h.size());
  for (size_t i = 0; i < w.size(); ++i) w[i] = to_float(wt.h[i], dt);
  std::vector<float> y(size_t(N) * H * W * K);
  for (int n = 0; n < N; ++n)
    for (int h = 0; h < H; ++h)
      for (int xw = 0; xw < W; ++xw)
        for (int k = 0; k < K; ++k) {
          const size_t o = ((size_t(n) * H + h) * W + xw) * K + k;
          double s = to_float(bias.h[k], dt) + (residual ? to_float(residual->h[o], dt) : 0.f);
          for (int r = 0; r < 3; ++r)
            for (int q = 0; q < 3; ++q) {
              const int ih = h + r - 1, iw = xw + q - 1;
              if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
              const float* px = &x[((size_t(n) * H + ih) * W + iw) * C];
              const float* pw = &w[((size_t(k) * 3 + r) * 3 + q) * C];
              for (int c = 0; c < C; ++c) s += double(px[c]) * pw[c];
            }
          y[o] = relu && s < 0 ? 0.f : float(s);
        }
  return y;
}

std::vector<float> to_floats(const Buf& b, DType dt) {
  std::vector<float> v(b.h.size());
  for (size_t i = 0; i < v.size(); ++i) v[i] = to_float(b.h[i], dt);
  return v;
}

struct ConvCase {
  DType dt;
  int tile_m, tile_n;
  int N, H, W, C, K;
  int splits = 1;
  bool stream_k = false;
  int ctas = 0;
  bool relu = true;
  EpilogueStore store = EpilogueStore::Default;
  int multicast = 1;
  int ctas_per_sm = 1;
};

}  // namespace

TEST_F(HopperTest, ConvMatchesReference) {
  std::mt19937 rng(21);
  const std::vector<ConvCase> cases = {
      {DType::F16, 64, 64, 1, 7, 7, 64, 64},                 // 49 pixels: one ragged row tile
      {DType::F16, 128, 64, 2, 14, 14, 128, 64, 3},          // split-K
      {DType::F16, 128, 128, 1, 20, 20, 64, 192},            // ragged filter tiles
      {DType::F16, 64, 128, 3, 9, 11, 128, 128, 1, true, 7},  // non-square, stream-K
      {DType::F16, 128, 64, 1, 10, 10, 64, 64, 1, false, 0, false},  // no activation
      {DType::BF16, 128, 64, 2, 8, 8, 192, 64},
      {DType::BF16, 64, 64, 1, 14, 14, 64, 128, 2},
      // 128x64 with the staged epilogue: ragged pixels, split-K, stream-K
      {DType::F16, 128, 64, 1, 9, 13, 64, 128, 1, false, 0, true, EpilogueStore::Staged},
      {DType::F16, 128, 64, 2, 14, 14, 128, 64, 3, false, 0, true, EpilogueStore::Staged},
      {DType::F16, 128, 64, 1, 10, 10, 64, 192, 1, true, 7, false, EpilogueStore::Staged},
      // 192x128 (three consumer warpgroups): ragged pixels (392 = 2 x 192 + 8) and filters, split-K, stream-K
      {DType::F16, 192, 128, 2, 14, 14, 128, 192},
      {DType::F16, 192, 128, 1, 20, 20, 64, 128, 3},
      {DType::F16, 192, 128, 3, 9, 11, 128, 128, 1, true, 3},
      // filters multicast to clusters of two (-mc2): an even row-tile count; one row tile (its peer below
      // the grid) split in two; an odd count with stream-K; split-K 3 with ragged filter tiles
      {DType::F16, 128, 64, 2, 14, 14, 128, 64, 1, false, 0, true, EpilogueStore::Default, 2},
      {DType::F16, 64, 64, 1, 7, 7, 64, 128, 2, false, 0, true, EpilogueStore::Default, 2},
      {DType::F16, 64, 128, 3, 9, 11, 128, 128, 1, true, 6, true, EpilogueStore::Default, 2},
      {DType::F16, 128, 64, 2, 14, 14, 128, 192, 3, false, 0, false, EpilogueStore::Default, 2},
      // 64x32 (fp16): ragged pixels and filters (K = 96 = 3 tiles), split-K 3, stream-K
      {DType::F16, 64, 32, 2, 7, 7, 128, 96},
      {DType::F16, 64, 32, 1, 9, 13, 64, 64, 3},
      {DType::F16, 64, 32, 3, 9, 11, 128, 96, 1, true, 5},
      // two CTAs per SM (-o2): whole tiles, split-K (the deep layers' shape: 72 k-tiles), stream-K, 64x32
      {DType::F16, 64, 64, 2, 14, 14, 128, 128, 1, false, 0, true, EpilogueStore::Default, 1, 2},
      {DType::F16, 64, 64, 2, 7, 7, 512, 64, 4, false, 0, true, EpilogueStore::Default, 1, 2},
      {DType::F16, 64, 64, 3, 9, 11, 128, 128, 1, true, 200, true, EpilogueStore::Default, 1, 2},
      {DType::F16, 64, 32, 2, 7, 7, 512, 96, 3, false, 0, true, EpilogueStore::Default, 1, 2},
  };
  for (const auto& c : cases) {
    const std::string what = std::string(dtype_name(c.dt)) + " " + std::to_string(c.tile_m) + "x" +
                             std::to_string(c.tile_n) + " N=" + std::to_string(c.N) + " H=" + std::to_string(c.H) +
                             " W=" + std::to_string(c.W) + " C=" + std::to_string(c.C) + " K=" + std::to_string(c.K) +
                             " sk" + std::to_string(c.splits) + (c.stream_k ? " stream-K" : "") +
                             (c.relu ? " relu" : " none") + (c.store == EpilogueStore::Staged ? " staged" : "") +
                             (c.multicast > 1 ? " mc" + std::to_string(c.multicast) : "") +
                             (c.ctas_per_sm > 1 ? " o" + std::to_string(c.ctas_per_sm) : "");
    SCOPED_TRACE(what);
    const size_t pix = size_t(c.N) * c.H * c.W;
    Buf X(pix * c.C), Wt(size_t(c.K) * 9 * c.C), B(size_t(c.K)), Y(pix * c.K);
    X.random(rng, 1.0f, c.dt);
    Wt.random(rng, 1.0f / std::sqrt(9.0f * c.C), c.dt);
    B.random(rng, 0.1f, c.dt);
    GemmConfig cfg{c.tile_n, c.splits, c.ctas};
    cfg.tile_m = c.tile_m;
    cfg.stream_k = c.stream_k;
    cfg.order = OrderKind::RowMajor;
    cfg.store = c.store;
    cfg.multicast = c.multicast;
    cfg.ctas_per_sm = c.ctas_per_sm;
    const ConvArgs args{c.dt, X.d, Wt.d, B.d, Y.d, c.N, c.H, c.W, c.C, c.K, 3, 3, 1,
                        c.relu ? Activation::ReLU : Activation::None};
    ConvOp op;
    ASSERT_EQ(op.prepare(args, cfg), "");
    Y.poison();
    const long lean_before = lean_form_launches();
    op.run(nullptr);
    BRAID_CUDA_CHECK(cudaDeviceSynchronize());
    Y.download();
    const auto ref = conv_reference(to_floats(X, c.dt), Wt, B, c.N, c.H, c.W, c.C, c.K, c.relu, c.dt);
    EXPECT_LT(rel_error(ref, Y, c.dt), c.dt == DType::F16 ? 2e-3 : 1e-2);
    // Whole tiles run the lean form of their activation (gemm_config.hpp, "The forms of braid's GEMM
    // kernels"): the general form's bits.
    const bool whole = c.splits == 1 && !c.stream_k;
    EXPECT_EQ(lean_form_launches(), lean_before + (whole ? 1 : 0));
    if (whole) {
      LeanFormsScope scope;
      set_lean_forms(false);
      const std::vector<uint16_t> lean = Y.h;
      Y.poison();
      op.run(nullptr);
      BRAID_CUDA_CHECK(cudaDeviceSynchronize());
      Y.download();
      EXPECT_EQ(std::memcmp(lean.data(), Y.h.data(), lean.size() * 2), 0) << "lean vs general form";
    }
    // The output of the same conv with configuration `other`, bit for bit.
    auto expect_same_bits_as = [&](const GemmConfig& other, const char* what) {
      const std::vector<uint16_t> got = Y.h;
      ConvOp op1;
      ASSERT_EQ(op1.prepare(args, other), "");
      Y.poison();
      op1.run(nullptr);
      BRAID_CUDA_CHECK(cudaDeviceSynchronize());
      Y.download();
      EXPECT_EQ(std::memcmp(got.data(), Y.h.data(), got.size() * 2), 0) << what;
    };
    // Two CTAs per SM change where the units run, not the sums (except stream-K, whose cut depends on
    // the CTA count): the bits of the one-CTA-per-SM kernel.
    if (c.ctas_per_sm > 1 && !c.stream_k) {
      GemmConfig one = cfg;
      one.ctas_per_sm = 1;
      expect_same_bits_as(one, "-o2 vs one CTA per SM");
    }
    // Multicast changes who loads the filters, not the sums: the same bits as each CTA loading its own
    // (data-parallel and split-K keep every tile's k-ranges; stream-K cuts its tail by cluster).
    if (c.multicast > 1 && !c.stream_k) {
      GemmConfig own = cfg;
      own.multicast = 1;
      expect_same_bits_as(own, "multicast vs own loads");
    }
  }
}

// Split-K in clusters of 2-8 CTAs reducing over distributed shared memory (-dsm, cluster_exchange.cuh):
// the bits of reduce-scatter's L2 reduction (the same shares, summed in the same order), within fp16
// tolerance of the reference, run after run with Y poisoned -- 128x64 and 64x64 tiles, the deep layers'
// shape class (few pixels, K = 9 x 512 channels: 72 k-tiles), a ragged last row tile.
TEST_F(HopperTest, ConvClusterReduceIsBitIdenticalToReduceScatter) {
  std::mt19937 rng(41);
  const int N = 1, H = 7, W = 9, C = 512, K = 128;  // 63 pixels
  const size_t pix = size_t(N) * H * W;
  Buf X(pix * C), Wt(size_t(K) * 9 * C), B(static_cast<size_t>(K)), Y(pix * K);
  X.random(rng, 1.0f, DType::F16);
  Wt.random(rng, 1.0f / std::sqrt(9.0f * C), DType::F16);
  B.random(rng, 0.1f, DType::F16);
  const auto ref = conv_reference(to_floats(X, DType::F16), Wt, B, N, H, W, C, K, true, DType::F16);
  const ConvArgs args{DType::F16, X.d, Wt.d, B.d, Y.d, N, H, W, C, K, 3, 3, 1, Activation::ReLU};
  int checked = 0;
  for (int tm : {128, 64})
    for (int splits : {2, 4, 8}) {
      GemmConfig rs{64, splits, 0};
      rs.tile_m = tm;
      rs.order = OrderKind::RowMajor;
      rs.reduce_scatter = true;
      GemmConfig dsm = rs;
      dsm.reduce_scatter = false;
      dsm.dsmem_reduce = true;
      SCOPED_TRACE(dsm.name());
      ConvOp op_rs, op_dsm;
      ASSERT_EQ(op_rs.prepare(args, rs), "");
      ASSERT_EQ(op_dsm.prepare(args, dsm), "");
      Y.poison();
      op_rs.run(nullptr);
      BRAID_CUDA_CHECK(cudaDeviceSynchronize());
      Y.download();
      const std::vector<uint16_t> want = Y.h;
      EXPECT_LT(rel_error(ref, Y, DType::F16), 2e-3);
      for (int rep = 0; rep < 3; ++rep) {
        Y.poison();
        op_dsm.run(nullptr);
        BRAID_CUDA_CHECK(cudaDeviceSynchronize());
        Y.download();
        ASSERT_EQ(std::memcmp(want.data(), Y.h.data(), want.size() * 2), 0) << "run " << rep;
      }
      ++checked;
    }
  EXPECT_EQ(checked, 6);
}

TEST_F(HopperTest, ConvRejectsWhatItCannotRun) {
  Buf X(64), Wt(64), B(64), Y(64);
  ConvOp op;
  // What prepare says about a 1x4x4, 64 -> 64 channel conv with this type and configuration.
  auto refusal = [&](DType dt, const GemmConfig& c) { return op.prepare({dt, X.d, Wt.d, B.d, Y.d, 1, 4, 4, 64, 64}, c); };
  GemmConfig cfg{64, 1, 0};
  cfg.tile_m = 64;
  EXPECT_NE(op.prepare({DType::F16, X.d, Wt.d, B.d, Y.d, 1, 4, 4, 48, 64}, cfg).find("multiple of 64"), std::string::npos);
  EXPECT_NE(op.prepare({DType::F16, X.d, Wt.d, B.d, Y.d, 1, 4, 4, 64, 64, 3, 3, 0}, cfg).find("same padding"),
            std::string::npos);
  cfg.tile_n = 256;
  EXPECT_NE(refusal(DType::F16, cfg).find("tile_n"), std::string::npos);
  cfg.tile_n = 128;
  EXPECT_NE(refusal(DType::BF16, cfg).find("no bf16"), std::string::npos);
  cfg.tile_n = 32;  // 64x32 for fp16 only
  EXPECT_NE(refusal(DType::BF16, cfg).find("32-filter"), std::string::npos);
  cfg.tile_m = 128;
  EXPECT_NE(refusal(DType::F16, cfg).find("32-filter"), std::string::npos);
  cfg.tile_m = 192;
  cfg.tile_n = 64;
  EXPECT_NE(refusal(DType::F16, cfg).find("192-row"), std::string::npos);
  cfg.tile_n = 128;
  EXPECT_NE(refusal(DType::BF16, cfg).find("192-row"), std::string::npos);
  cfg.multicast = 2;  // no 192-row multicast instantiation, none for bf16, no -mc2 with reduce-scatter
  EXPECT_NE(refusal(DType::F16, cfg).find("-mc2"), std::string::npos);
  cfg.tile_m = 128;
  cfg.tile_n = 64;
  EXPECT_NE(refusal(DType::BF16, cfg).find("-mc2"), std::string::npos);
  cfg.splits = 2;
  cfg.reduce_scatter = true;
  EXPECT_NE(refusal(DType::F16, cfg).find("reduce-scatter"), std::string::npos);
  GemmConfig two{64, 1, 0};  // two CTAs per SM: fp16 64x64 / 64x32 only, not with -mc2
  two.ctas_per_sm = 2;       // (tile_m 128)
  EXPECT_NE(refusal(DType::F16, two).find("-o2"), std::string::npos);
  two.tile_m = 64;
  EXPECT_NE(refusal(DType::BF16, two).find("-o2"), std::string::npos);
  two.multicast = 2;
  EXPECT_NE(refusal(DType::F16, two).find("-o2"), std::string::npos);
  two.multicast = 1;
  two.ctas_per_sm = 3;
  EXPECT_NE(refusal(DType::F16, two).find("-o2"), std::string::npos);
  // What -o2 launches: two resident CTAs per SM (392 units: 49 row tiles x 2 filter tiles x split 4;
  // prepare only plans, it reads no data).
  two.ctas_per_sm = 2;
  two.splits = 4;
  ASSERT_EQ(op.prepare({DType::F16, X.d, Wt.d, B.d, Y.d, 4, 28, 28, 64, 128}, two), "");
  ConvOp one_op;
  GemmConfig one = two;
  one.ctas_per_sm = 1;
  ASSERT_EQ(one_op.prepare({DType::F16, X.d, Wt.d, B.d, Y.d, 4, 28, 28, 64, 128}, one), "");
  int sms = 0;
  BRAID_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  EXPECT_EQ(one_op.ctas(), std::min(sms, 392));
  EXPECT_EQ(op.ctas(), std::min(2 * sms, 392));
}

namespace {

std::vector<ConvChainVariant> conv_sync_variants() {
  std::vector<ConvChainVariant> v;
  for (auto s : {ConvChainVariant::Sync::Conv2DTileSync, ConvChainVariant::Sync::RowSync})
    for (Ordering o : {Ordering::PDL, Ordering::WaitKernel}) {
      ConvChainVariant x;
      x.sync = s;
      x.ordering = o;
      v.push_back(x);
    }
  ConvChainVariant nor;
  nor.weights_first = false;
  v.push_back(nor);
  ConvChainVariant dyn;  // dynamic dispatch, both policies
  dyn.dynamic = true;
  v.push_back(dyn);
  dyn.sync = ConvChainVariant::Sync::RowSync;
  v.push_back(dyn);
  ConvChainVariant pdl_only;
  pdl_only.ordering = Ordering::StreamOrder;
  pdl_only.pdl_only = true;
  v.push_back(pdl_only);
  return v;
}

// Layer configurations the chain is tried with (conv 1, conv 2).
std::vector<std::pair<GemmConfig, GemmConfig>> conv_chain_configs() {
  auto cfg = [](int tm, int tn, int splits, bool sk, int ctas) {
    GemmConfig c{tn, splits, ctas};
    c.tile_m = tm;
    c.stream_k = sk;
    c.order = OrderKind::RowMajor;
    return c;
  };
  auto staged = [](GemmConfig c) {
    c.store = EpilogueStore::Staged;
    return c;
  };
  auto reduce_scatter = [](GemmConfig c) {
    c.reduce_scatter = true;
    return c;
  };
  auto dsm = [](GemmConfig c) {
    c.dsmem_reduce = true;
    return c;
  };
  auto mc2 = [](GemmConfig c) {
    c.multicast = 2;
    return c;
  };
  auto o2 = [](GemmConfig c) {
    c.ctas_per_sm = 2;
    return c;
  };
  return {
      {cfg(128, 64, 1, false, 0), cfg(128, 64, 1, false, 0)},
      {cfg(128, 128, 1, false, 6), cfg(64, 64, 2, false, 0)},   // few producer CTAs, split-K consumer
      {cfg(64, 128, 1, true, 0), cfg(128, 64, 1, true, 9)},     // stream-K both
      {staged(cfg(128, 64, 1, false, 0)), staged(cfg(128, 64, 2, false, 0))},  // staged epilogues
      {reduce_scatter(cfg(128, 128, 3, false, 0)), reduce_scatter(cfg(64, 64, 2, false, 5))},  // 5 CTAs -> 4
      {dsm(cfg(128, 128, 2, false, 0)), dsm(staged(cfg(128, 64, 2, false, 6)))},  // split 2 in clusters
      {cfg(192, 128, 1, false, 0), cfg(192, 128, 2, false, 0)},  // three consumer warpgroups, whole and split
      {mc2(cfg(128, 64, 1, false, 0)), mc2(cfg(64, 64, 2, false, 0))},  // filters multicast in clusters of two
      {mc2(cfg(64, 128, 1, true, 0)), mc2(cfg(64, 64, 1, false, 0))},
      {cfg(64, 32, 1, false, 0), reduce_scatter(cfg(64, 32, 2, false, 0))},  // a k-tile's channels in two producer tiles
      {dsm(cfg(64, 64, 4, false, 0)), dsm(cfg(128, 64, 3, false, 0))},  // clusters of 4 and 3 reducing over DSMEM
      {o2(cfg(64, 64, 1, false, 0)), o2(reduce_scatter(cfg(64, 32, 2, false, 0)))},  // two CTAs per SM
  };
}

}  // namespace

// Sets the process-wide placement clusters (gemm_op.hpp) for a scope, and back to what they were after.
struct PlacementScope {
  explicit PlacementScope(int size) : previous(braid::hopper::placement_cluster_size()) {
    braid::hopper::set_placement_cluster(size);
  }
  ~PlacementScope() { braid::hopper::set_placement_cluster(previous); }
  int previous;
};

// Every synchronized chain variant of conv_chain_configs(), run under `placement` (clusters that only
// place the CTAs: 1 = plain launches), bit-identical to stream order under plain launches, which is
// checked against the host first.
void check_conv_chains_against_stream_order(int placement) {
  std::mt19937 rng(23);
  const int N = 2, H = 14, W = 14, C = 64, K1 = 128, K2 = 64;
  const size_t pix = size_t(N) * H * W;
  const DType dt = DType::F16;
  Buf X(pix * C), W1(size_t(K1) * 9 * C), B1(K1), W2(size_t(K2) * 9 * K1), B2(K2), Y1(pix * K1), Y2(pix * K2);
  X.random(rng, 1.0f, dt);
  W1.random(rng, 1.0f / std::sqrt(9.0f * C), dt);
  B1.random(rng, 0.1f, dt);
  W2.random(rng, 1.0f / std::sqrt(9.0f * K1), dt);
  B2.random(rng, 0.1f, dt);
  cudaStream_t s;
  BRAID_CUDA_CHECK(cudaStreamCreate(&s));
  for (const auto& [g1, g2] : conv_chain_configs()) {
    ConvChainProblem p{dt, {N, H, W}, C, X.d, {{K1, W1.d, B1.d, Y1.d, g1}, {K2, W2.d, B2.d, Y2.d, g2}}};
    // The reference: braid's kernels in stream order, checked against the host.
    ConvChainVariant stream;
    stream.ordering = Ordering::StreamOrder;
    ConvChain base(p, stream);
    Y1.poison();
    Y2.poison();
    {
      PlacementScope plain(1);
      base.run(s);
      base.check(s);
    }
    Y1.download();
    Y2.download();
    const std::vector<uint16_t> want1 = Y1.h, want2 = Y2.h;
    {
      SCOPED_TRACE("stream order vs host, " + g1.name() + " + " + g2.name());
      const auto r1 = conv_reference(to_floats(X, dt), W1, B1, N, H, W, C, K1, true, dt);
      EXPECT_LT(rel_error(r1, Y1, dt), 2e-3);
      const auto r2 = conv_reference(to_floats(Y1, dt), W2, B2, N, H, W, K1, K2, true, dt);
      EXPECT_LT(rel_error(r2, Y2, dt), 2e-3);
    }
    PlacementScope placed(placement);
    std::vector<ConvChainVariant> variants = conv_sync_variants();
    if (placement > 1) variants.insert(variants.begin(), stream);  // stream order itself, placed
    for (const auto& v : variants) {
      if (v.dynamic && (g1.stream_k || g2.stream_k || g1.multicast > 1 || g2.multicast > 1)) {
        // stream-K segments are bound to their CTAs; multicast clusters walk their tile groups statically
        EXPECT_THROW(ConvChain(p, v), PlanError);
        continue;
      }
      if ((v.dynamic || v.ordering == Ordering::WaitKernel) && (g1.segments_wait_for_peers() || g2.segments_wait_for_peers())) {
        EXPECT_THROW(ConvChain(p, v), PlanError);  // reduce-scatter segments wait for each other
        continue;
      }
      ConvChain chain(p, v);
      SCOPED_TRACE(v.name() + " " + g1.name() + " + " + g2.name());
      for (int rep = 0; rep < 3; ++rep) {
        Y1.poison();
        Y2.poison();
        chain.run(s);
        chain.check(s);
        Y1.download();
        Y2.download();
        ASSERT_EQ(std::memcmp(want1.data(), Y1.h.data(), want1.size() * 2), 0) << "conv 1, run " << rep;
        ASSERT_EQ(std::memcmp(want2.data(), Y2.h.data(), want2.size() * 2), 0) << "conv 2, run " << rep;
      }
    }
  }
  BRAID_CUDA_CHECK(cudaStreamDestroy(s));
}

TEST_F(HopperTest, ConvChainSyncIsBitIdenticalToStreamOrder) { check_conv_chains_against_stream_order(1); }

// Placement clusters (launch_kernel_persistent): the same kernels launched in clusters of 2 and 4 that
// use no cluster feature -- each CTA's pipeline releases stay local (release_stages_locally) -- give the
// same bits in every variant; the launches that could be clusters of that size were.
TEST_F(HopperTest, PlacementClustersAreBitIdenticalToPlainLaunches) {
  for (int placement : {4, 2}) {
    SCOPED_TRACE("placement clusters of " + std::to_string(placement));
    const long before = braid::hopper::placement_cluster_launches();
    check_conv_chains_against_stream_order(placement);
    EXPECT_GT(braid::hopper::placement_cluster_launches(), before);
  }
  EXPECT_THROW(braid::hopper::set_placement_cluster(3), std::invalid_argument);
}

// Two same-width 3x3 convs in a chain (C -> K -> K), fp16, small random data: the buffers and the
// chain problem of the trace and stuck-producer tests.
struct ConvPairBuffers {
  int N, H, W, C, K;
  Buf X, W1, B1, W2, B2, Y1, Y2;
  ConvPairBuffers(int n, int h, int w, int c, int k, std::mt19937& rng)
      : N(n), H(h), W(w), C(c), K(k), X(pixels() * c), W1(size_t(k) * 9 * c), B1(k), W2(size_t(k) * 9 * k), B2(k),
        Y1(pixels() * k), Y2(pixels() * k) {
    for (Buf* b : {&X, &W1, &B1, &W2, &B2}) b->random(rng, 0.1f, DType::F16);
  }
  size_t pixels() const { return size_t(N) * H * W; }
  ConvChainProblem problem(const GemmConfig& g1, const GemmConfig& g2) const {
    return {DType::F16, {N, H, W}, C, X.d, {{K, W1.d, B1.d, Y1.d, g1}, {K, W2.d, B2.d, Y2.d, g2}}};
  }
};

// The timeline's per-tile record: every tile of both convs traced once, on a real SM, with its mainloop
// ending between its start and its end -- through the poster warp (synchronized chain) and the
// consumers' own record (stream order), with a split-K configuration whose last segment records.
TEST_F(HopperTest, ConvChainTraceRecordsEveryTileWithItsMainloopEnd) {
  std::mt19937 rng(31);
  const int K = 128;
  const ConvPairBuffers b(2, 14, 14, 64, K, rng);
  const size_t pix = b.pixels();
  GemmConfig g1{64, 1, 0}, g2{64, 2, 0};  // conv 2 split in two along K
  g1.order = g2.order = OrderKind::RowMajor;
  GemmConfig g2_rs = g2;  // ... and reduced by both segments, the last to finish recording the tile
  g2_rs.reduce_scatter = true;
  int sms = 0;
  BRAID_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  cudaStream_t s;
  BRAID_CUDA_CHECK(cudaStreamCreate(&s));
  ChainOptions opt;
  opt.trace = true;
  ConvChainVariant stream, sync;
  stream.ordering = Ordering::StreamOrder;
  sync.ordering = Ordering::PDL;  // Conv2DTileSync by default
  for (const GemmConfig& c2 : {g2, g2_rs})
  for (const ConvChainVariant& v : {stream, sync}) {
    SCOPED_TRACE(v.name() + " conv 2 " + c2.name());
    ConvChain chain(b.problem(g1, c2), v, opt);
    chain.chain().clear_trace(s);
    chain.run(s);
    chain.check(s);
    const std::vector<TraceRecord> trace = chain.chain().download_trace();
    const uint32_t tiles = uint32_t((pix + 127) / 128) * uint32_t(K / 64);
    std::vector<std::set<std::pair<uint32_t, uint32_t>>> seen(2);
    for (const TraceRecord& r : trace) {
      ASSERT_TRUE(r.stage == 0 || r.stage == 1);
      EXPECT_TRUE(seen[r.stage].insert({r.tile.x, r.tile.y}).second) << "tile traced twice";
      EXPECT_LT(r.smid, uint32_t(sms));
      EXPECT_LE(r.start_us, r.mainloop_end_us);
      EXPECT_LE(r.mainloop_end_us, r.end_us);
      EXPECT_GE(r.start_us, 0.0);
      // The SM clock over the mainloop (cycles / ns): a plausible clock, not garbage (coarse bounds: the
      // globaltimer's resolution over a few-microsecond mainloop).
      EXPECT_GT(r.mainloop_mhz, 300u);
      EXPECT_LT(r.mainloop_mhz, 4000u);
    }
    EXPECT_EQ(seen[0].size(), tiles);
    EXPECT_EQ(seen[1].size(), tiles);
  }
  BRAID_CUDA_CHECK(cudaStreamDestroy(s));
}

TEST_F(HopperTest, ConvChainStuckProducerFailsWithSyncError) {
  std::mt19937 rng(29);
  const ConvPairBuffers b(1, 8, 8, 64, 64, rng);
  GemmConfig g{64, 1, 0};
  g.tile_m = 64;
  g.order = OrderKind::RowMajor;
  ChainOptions opt;
  opt.timeout_ms = 50;
  ConvChainVariant v;
  v.ordering = Ordering::WaitKernel;
  ConvChain chain(b.problem(g, g), v, opt);
  // Fault injection: conv 1 never posts, and never publishes its run as complete either (that would
  // let conv 2 skip its waits: ColumnWaiterWarp::stage_done).
  chain.chain().set_params_hook([](int stage, StageParams& sp) {
    if (stage == 0) {
      sp.sems = nullptr;
      sp.flags &= ~kSync;
    }
  });
  cudaStream_t s;
  BRAID_CUDA_CHECK(cudaStreamCreate(&s));
  chain.run(s);
  try {
    chain.check(s);
    FAIL() << "expected a SyncError";
  } catch (const SyncError& e) {
    EXPECT_NE(std::string(e.what()).find("conv2"), std::string::npos) << e.what();
  }
  BRAID_CUDA_CHECK(cudaStreamDestroy(s));
}

// A ResNet stage as one chain: L0 = conv(X), L1 = conv(L0) + X, L2 = conv(L1), L3 = conv(L2) + L1, each
// with bias + ReLU, the shortcuts fused into the epilogue. Stream order matches the host; every sync
// variant is bit-identical to it run after run; bind() moves the chain to another input.
TEST_F(HopperTest, ConvResidualChainIsBitIdenticalAndRebinds) {
  std::mt19937 rng(31);
  const int N = 2, H = 10, W = 12, C = 64;
  const size_t pix = size_t(N) * H * W;
  const DType dt = DType::F16;
  Buf X(pix * C), X2(pix * C);
  std::deque<Buf> Wt, B, Y;  // Buf is not movable: a deque never relocates its elements
  for (int i = 0; i < 4; ++i) {
    Wt.emplace_back(size_t(C) * 9 * C);
    B.emplace_back(size_t(C));
    Y.emplace_back(pix * C);
    Wt[i].random(rng, (i % 2 ? 0.5f : 1.0f) / std::sqrt(9.0f * C), dt);
    B[i].random(rng, 0.1f, dt);
  }
  X.random(rng, 1.0f, dt);
  X2.random(rng, 1.0f, dt);
  GemmConfig g{64, 1, 0};
  g.tile_m = 64;
  g.order = OrderKind::RowMajor;
  GemmConfig g2 = g;
  g2.tile_m = 128;
  g2.splits = 2;
  auto problem = [&](const void* x) {
    ConvChainProblem p{dt, {N, H, W}, C, x, {}};
    p.layers.push_back({C, Wt[0].d, B[0].d, Y[0].d, g});
    p.layers.push_back({C, Wt[1].d, B[1].d, Y[1].d, g2, x});
    p.layers.push_back({C, Wt[2].d, B[2].d, Y[2].d, g});
    p.layers.push_back({C, Wt[3].d, B[3].d, Y[3].d, g2, Y[1].d});
    return p;
  };
  cudaStream_t s;
  BRAID_CUDA_CHECK(cudaStreamCreate(&s));
  auto run_and_get = [&](ConvChain& c) {
    for (auto& y : Y) y.poison();
    c.run(s);
    c.check(s);
    std::vector<std::vector<uint16_t>> out;
    for (auto& y : Y) {
      y.download();
      out.push_back(y.h);
    }
    return out;
  };
  ConvChainVariant stream;
  stream.ordering = Ordering::StreamOrder;
  std::vector<std::vector<std::vector<uint16_t>>> want;  // [input][layer]
  for (const Buf* x : {&X, &X2}) {
    ConvChain base(problem(x->d), stream);
    want.push_back(run_and_get(base));
    SCOPED_TRACE(x == &X ? "stream order vs host, input 1" : "stream order vs host, input 2");
    const auto r0 = conv_reference(to_floats(*x, dt), Wt[0], B[0], N, H, W, C, C, true, dt);
    EXPECT_LT(rel_error(r0, Y[0], dt), 2e-3);
    const auto r1 = conv_reference(to_floats(Y[0], dt), Wt[1], B[1], N, H, W, C, C, true, dt, x);
    EXPECT_LT(rel_error(r1, Y[1], dt), 2e-3);
    const auto r3 = conv_reference(to_floats(Y[2], dt), Wt[3], B[3], N, H, W, C, C, true, dt, &Y[1]);
    EXPECT_LT(rel_error(r3, Y[3], dt), 2e-3);
  }
  for (const auto& v : conv_sync_variants()) {
    SCOPED_TRACE(v.name());
    ConvChain chain(problem(X.d), v);
    for (int rep = 0; rep < 2; ++rep) ASSERT_TRUE(run_and_get(chain) == want[0]) << "run " << rep;
    chain.bind(X2.d, {nullptr, X2.d, nullptr, Y[1].d});
    ASSERT_TRUE(run_and_get(chain) == want[1]) << "after bind";
  }
  ConvChain c(problem(X.d), stream);
  EXPECT_THROW(c.bind(X.d, {nullptr, nullptr}), PlanError);                    // one residual per layer
  EXPECT_THROW(c.bind(X.d, {nullptr, Y[2].d, nullptr, nullptr}), PlanError);   // written later in the chain
  BRAID_CUDA_CHECK(cudaStreamDestroy(s));
}

// A poster warp that lags its consumers by 20 us per tile (fault injection: StageParams::
// fault_poster_delay_ns) lets the consumer warps run tiles ahead of it; every tile must still be posted
// once, after all of its stores (the hand-off protocol: PostSlot in gemm_kernel.cuh). A ResNet-style
// residual chain on few CTAs (several tiles each) with short K (9 k-tiles, and up to 18 pipeline
// stages: warps can drift more than a tile apart), fresh inputs each run, against stream order.
TEST_F(HopperTest, ConvChainWithALaggingPosterIsBitIdentical) {
  std::mt19937 rng(37);
  const int N = 4, H = 28, W = 28, C = 64, L = 4;
  const size_t pix = size_t(N) * H * W;
  const DType dt = DType::F16;
  Buf X(pix * C);
  std::deque<Buf> Wt, B, Y;
  for (int i = 0; i < L; ++i) {
    Wt.emplace_back(size_t(C) * 9 * C);
    B.emplace_back(size_t(C));
    Y.emplace_back(pix * C);
    Wt[i].random(rng, 1.0f / std::sqrt(9.0f * C), dt);
    B[i].random(rng, 0.1f, dt);
  }
  auto cfg = [](int tm, int tn, int ctas, bool staged) {
    GemmConfig c{tn, 1, ctas};
    c.tile_m = tm;
    c.order = OrderKind::RowMajor;
    if (staged) c.store = EpilogueStore::Staged;
    return c;
  };
  cudaStream_t s;
  BRAID_CUDA_CHECK(cudaStreamCreate(&s));
  ConvChainVariant stream, tile, row_dyn, row_wait;
  stream.ordering = Ordering::StreamOrder;
  row_dyn.sync = row_wait.sync = ConvChainVariant::Sync::RowSync;
  row_dyn.dynamic = true;
  row_wait.ordering = Ordering::WaitKernel;
  for (const GemmConfig& g : {cfg(128, 64, 3, false), cfg(128, 64, 3, true), cfg(64, 64, 4, false), cfg(64, 32, 5, false)}) {
    auto problem = [&] {
      ConvChainProblem p{dt, {N, H, W}, C, X.d, {}};
      for (int i = 0; i < L; ++i) p.layers.push_back({C, Wt[i].d, B[i].d, Y[i].d, g, i == 1 ? X.d : i == 3 ? Y[1].d : nullptr});
      return p;
    };
    ConvChain ref(problem(), stream);
    for (const ConvChainVariant& v : {tile, row_dyn, row_wait}) {
      SCOPED_TRACE(g.name() + " " + v.name());
      ConvChain chain(problem(), v, ChainOptions{true, v.weights_first, 5000, false});
      chain.chain().set_params_hook([](int, StageParams& sp) { sp.fault_poster_delay_ns = 20000; });
      for (int rep = 0; rep < 2; ++rep) {
        X.random(rng, 1.0f, dt);  // a fresh input: a run that read the previous run's data cannot pass
        std::vector<std::vector<uint16_t>> want;
        for (auto& y : Y) y.poison();
        ref.run(s);
        ref.check(s);
        for (auto& y : Y) {
          y.download();
          want.push_back(y.h);
        }
        for (auto& y : Y) y.poison();
        chain.run(s);
        chain.check(s);
        for (int i = 0; i < L; ++i) {
          Y[i].download();
          ASSERT_TRUE(Y[i].h == want[i]) << "layer " << i + 1 << ", run " << rep;
        }
      }
    }
  }
  BRAID_CUDA_CHECK(cudaStreamDestroy(s));
}

// The variant names the benchmarks and the C interface take: parse() inverts name(), and rejects
// the rest. (Host only: runs without a GPU.)
TEST(ConvChainVariantNames, ParseInvertsName) {
  for (const auto& v : conv_sync_variants()) EXPECT_EQ(ConvChainVariant::parse(v.name()).name(), v.name());
  EXPECT_EQ(ConvChainVariant::parse("stream").name(), "stream");
  EXPECT_EQ(ConvChainVariant::parse("rowsync-pdl-noR").name(), "rowsync-pdl-noR");
  EXPECT_EQ(ConvChainVariant::parse("conv2dtilesync-pdl-noR-dyn").name(), "conv2dtilesync-pdl-noR-dyn");
  EXPECT_TRUE(ConvChainVariant::parse("rowsync-wait-kernel-dyn").dynamic);
  for (const char* bad : {"", "tilesync-pdl", "conv2dtilesync", "conv2dtilesync-stream", "rowsync-fast", "pdl"})
    EXPECT_THROW(ConvChainVariant::parse(bad), PlanError) << bad;
}

// Configurations that run one kernel function (a chain switching between two functions pays the
// switch, docs/hopper-conv.md): split-K, stream-K and their reductions share the segmented one; the
// whole-tile, another tile shape or another epilogue store are other functions. (Host only.)
TEST(ConvKernelFunction, GroupsConfigurationsByInstantiation) {
  auto fn = [](const char* name) {
    GemmConfig c;
    const std::string why = parse_gemm_config(name, c);
    EXPECT_EQ(why, "") << name;
    return hopper::ConvOp::kernel_function(c);
  };
  EXPECT_EQ(fn("128x128-sk3-rowmajor"), fn("128x128-streamk-rowmajor"));
  EXPECT_EQ(fn("128x128-sk2-rs-rowmajor"), fn("128x128-sk3-rowmajor"));
  EXPECT_EQ(fn("64x128-rowmajor"), fn("64x128"));
  EXPECT_NE(fn("128x128-rowmajor"), fn("128x128-streamk-rowmajor"));
  EXPECT_NE(fn("128x64-rowmajor"), fn("128x64-staged-rowmajor"));
  EXPECT_NE(fn("128x64-rowmajor"), fn("64x128-rowmajor"));
}

#endif  // BRAID_HAVE_HOPPER
