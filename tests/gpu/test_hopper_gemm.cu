// GPU tests of braid's Hopper GEMM (TMA + wgmma, warp-specialized, persistent) and of the MLP chain
// built on it:
//  - GemmOp against an fp32 host reference: fp16 and bf16, tile_n 128 and 256, None / GeLU / SwiGLU,
//    ragged M, N and K, split-K;
//  - split-K is deterministic: bit-identical whatever the number of CTAs (which split reduces changes);
//  - B multicast in clusters of two gives the bits of every CTA loading its own B;
//  - the synchronized MLP chain (TileSync / RowSync x PDL / wait kernel, split-K, R on/off, CUDA graph
//    replays) is bit-identical to the same kernels in stream order, run after run;
//  - a producer that never posts makes the consumer's bounded wait fail with a SyncError (no hang).
// Skips without a GPU, and without an sm_90 GPU (the kernels are sm_90a only).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "braid/bench/half_bits.hpp"
#include "braid/kernels/hopper/gemm_op.hpp"
#include "braid/workloads/mlp.cuh"
#include "braid/kernels/common/activation.cuh"
#include "hopper_test_util.cuh"

#ifdef BRAID_HAVE_HOPPER

using namespace braid;
using namespace braid::hopper;
using namespace braid::hopper::testing;
using braid::workloads::Mlp;
using braid::workloads::MlpProblem;
using braid::workloads::MlpVariant;

namespace {

// fp32 reference of D = act(A . B) (B packed for SwiGLU, tile_n blocks), rounded like the kernel's output.
std::vector<float> reference(const Buf& A, const Buf& B, int M, int N, int K, Activation act, int tile_n, DType dt) {
  std::vector<float> acc(size_t(M) * N);
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n) {
      double s = 0;
      for (int k = 0; k < K; ++k) s += double(to_float(A.h[size_t(m) * K + k], dt)) * to_float(B.h[size_t(k) * N + n], dt);
      acc[size_t(m) * N + n] = float(s);
    }
  if (act == Activation::None) return acc;
  if (act == Activation::GeLU) {
    for (auto& v : acc) v = float(braid::act::gelu_reference(v));
    return acc;
  }
  const int n_out = N / 2, h = tile_n / 2;
  std::vector<float> out(size_t(M) * n_out);
  for (int m = 0; m < M; ++m)
    for (int j = 0; j < n_out; ++j) {
      const int blk = j / h, c = j % h;
      const float g = acc[size_t(m) * N + size_t(blk) * tile_n + c], u = acc[size_t(m) * N + size_t(blk) * tile_n + h + c];
      out[size_t(m) * n_out + j] = g / (1 + std::exp(-g)) * u;
    }
  return out;
}

struct GemmCase {
  DType dt;
  int tile_n, splits;
  Activation act;
  int M, N, K;
  bool stream_k = false;
  int ctas = 0;
  int tile_m = 128;
  EpilogueStore store = EpilogueStore::Default;
  int inflight = 0;  // GemmConfig::inflight (then also the same bits as uncapped)
};

// `reps` runs of `test`, D poisoned before each, give the first n elements of D that one run of `ref`
// gives (the same bits every time: every output written, nothing racing).
void expect_same_bits(const GemmOp& ref, const GemmOp& test, Buf& D, size_t n, int reps) {
  D.poison();
  ref.run(nullptr);
  BRAID_CUDA_CHECK(cudaDeviceSynchronize());
  D.download();
  const std::vector<uint16_t> want = D.h;
  for (int rep = 0; rep < reps; ++rep) {
    D.poison();
    test.run(nullptr);
    BRAID_CUDA_CHECK(cudaDeviceSynchronize());
    D.download();
    ASSERT_EQ(std::memcmp(want.data(), D.h.data(), n * 2), 0) << "run " << rep;
  }
}

// `test` cuts its tiles elsewhere than `ref` (other fp32 partial sums): it must be deterministic (the
// same bits run after run, output poisoned) and agree with `ref` to within accumulation rounding.
void expect_deterministic_and_close(const GemmOp& ref, const GemmOp& test, Buf& D, size_t n, DType dt, double tol) {
  D.poison();
  ref.run(nullptr);
  BRAID_CUDA_CHECK(cudaDeviceSynchronize());
  D.download();
  const std::vector<uint16_t> ref_out = D.h;
  expect_same_bits(test, test, D, n, 3);
  double num = 0, den = 0;
  for (size_t i = 0; i < n; ++i) {
    const double a = to_float(ref_out[i], dt), b = to_float(D.h[i], dt);
    num += (a - b) * (a - b);
    den += a * a;
  }
  EXPECT_LT(std::sqrt(num / den), tol);
}

// `dsm` (GemmConfig::dsmem_reduce) against the same split without it: launched in clusters of
// `cluster`, no workspace, and the same bits as the last-arrival reduction, three poisoned runs.
void expect_cluster_reduction_matches(GemmConfig dsm, const GemmArgs& args, Buf& D, uint32_t cluster) {
  GemmConfig last = dsm;
  last.dsmem_reduce = false;
  GemmOp g_last, g_dsm;
  ASSERT_EQ(g_last.prepare(args, last), "");
  ASSERT_EQ(g_dsm.prepare(args, dsm), "");
  EXPECT_EQ(g_dsm.ctas() % int(cluster), 0) << "CTAs not in whole clusters";
  EXPECT_EQ(g_dsm.schedule().cluster, cluster);
  EXPECT_EQ(g_dsm.schedule().workspace_slots(), 0u) << "no workspace: the partials go from CTA to CTA";
  const size_t n = size_t(args.M) * (args.act == Activation::SwiGLU ? args.N / 2 : args.N);
  expect_same_bits(g_last, g_dsm, D, n, 3);
}

}  // namespace

TEST_F(HopperTest, GemmMatchesReference) {
  std::mt19937 rng(7);
  const std::vector<GemmCase> cases = {
      {DType::F16, 128, 1, Activation::None, 300, 392, 520},   // ragged M, N, K
      {DType::F16, 128, 3, Activation::GeLU, 200, 256, 1024},  // split-K
      {DType::F16, 256, 1, Activation::GeLU, 129, 512, 384},
      {DType::F16, 128, 2, Activation::SwiGLU, 70, 384, 448},
      {DType::F16, 256, 1, Activation::SwiGLU, 257, 512, 256},
      {DType::BF16, 128, 1, Activation::GeLU, 300, 256, 512},
      {DType::BF16, 256, 4, Activation::None, 1, 256, 1024},  // one token, split-K
      {DType::BF16, 128, 1, Activation::SwiGLU, 130, 256, 320},
      // stream-K: fewer tiles than CTAs (all tail), whole waves + a tail, segments of one k-tile
      {DType::F16, 128, 1, Activation::GeLU, 1, 1024, 2048, true},
      {DType::F16, 256, 1, Activation::None, 300, 1280, 1024, true, 7},
      {DType::BF16, 128, 1, Activation::SwiGLU, 260, 512, 512, true, 5},
      {DType::F16, 128, 1, Activation::None, 70, 384, 200, true, 9},
      // 64-row tiles (one consumer warpgroup): plain, split-K, stream-K, SwiGLU
      {DType::F16, 128, 1, Activation::GeLU, 100, 384, 520, false, 0, 64},
      {DType::BF16, 256, 3, Activation::None, 1, 512, 1024, false, 0, 64},
      {DType::F16, 256, 1, Activation::SwiGLU, 65, 512, 448, true, 6, 64},
      {DType::BF16, 128, 1, Activation::GeLU, 200, 640, 768, true, 0, 64},
      // 128x128 with direct stores (the default 128x128 stages its tile; n_out % 8 != 0 falls back)
      {DType::F16, 128, 1, Activation::GeLU, 300, 392, 520, false, 0, 128, EpilogueStore::Direct},
      {DType::F16, 128, 3, Activation::SwiGLU, 130, 512, 448, false, 0, 128, EpilogueStore::Direct},
      {DType::F16, 128, 1, Activation::None, 257, 384, 1024, true, 5, 128, EpilogueStore::Direct},
      // tiles that fit the SM count (fp16): 192 rows (three consumer warpgroups) and/or 192 columns
      {DType::F16, 192, 1, Activation::None, 300, 392, 520, false, 0, 192},   // ragged M, N, K
      {DType::F16, 192, 2, Activation::GeLU, 450, 576, 1024, false, 0, 192},  // split-K
      {DType::F16, 192, 1, Activation::SwiGLU, 200, 768, 448, false, 0, 192},
      {DType::F16, 192, 1, Activation::GeLU, 385, 960, 704, true, 7, 192},   // stream-K
      {DType::F16, 128, 3, Activation::SwiGLU, 130, 512, 448, false, 0, 192},
      {DType::F16, 128, 1, Activation::None, 1, 256, 320, true, 0, 192},
      {DType::F16, 192, 1, Activation::GeLU, 129, 600, 520, false, 0, 128},  // 128x192
      {DType::F16, 192, 1, Activation::SwiGLU, 260, 768, 512, true, 5, 128},
      {DType::F16, 192, 1, Activation::GeLU, 129, 600, 520, false, 0, 64},   // 64x192
      {DType::F16, 192, 2, Activation::SwiGLU, 70, 768, 448, false, 0, 64},
      {DType::F16, 192, 1, Activation::None, 200, 1152, 640, true, 7, 64},
      // Wide tiles staged for the TMA-store epilogue (whole tiles; 192x192 SwiGLU: 96-column output
      // tiles, not whole TMA panels, so the consumers copy the staged tile out themselves)
      {DType::F16, 256, 1, Activation::GeLU, 300, 392, 520, false, 0, 128, EpilogueStore::Staged},
      {DType::F16, 192, 1, Activation::None, 385, 600, 520, false, 0, 192, EpilogueStore::Staged},
      {DType::F16, 128, 1, Activation::SwiGLU, 260, 768, 512, false, 0, 192, EpilogueStore::Staged},
      {DType::F16, 192, 1, Activation::SwiGLU, 200, 768, 448, false, 0, 192, EpilogueStore::Staged},
      // 64-row tiles staged for the TMA store (whole tiles): ragged M and N (the consumers copy out a tile
      // whose rows are not whole TMA panels), GeLU, SwiGLU (64- and 96-column output tiles)
      {DType::F16, 128, 1, Activation::GeLU, 129, 600, 520, false, 0, 64, EpilogueStore::Staged},
      {DType::F16, 128, 1, Activation::None, 200, 1024, 640, false, 0, 64, EpilogueStore::Staged},
      {DType::F16, 192, 1, Activation::GeLU, 70, 768, 448, false, 0, 64, EpilogueStore::Staged},
      {DType::F16, 192, 1, Activation::SwiGLU, 130, 768, 512, false, 0, 64, EpilogueStore::Staged},
      // 128x64 (fp16): direct and staged, split-K, stream-K, SwiGLU (32-column output tiles)
      {DType::F16, 64, 1, Activation::GeLU, 129, 600, 520, false, 0, 128},
      {DType::F16, 64, 3, Activation::None, 200, 384, 1024, false, 0, 128},
      {DType::F16, 64, 1, Activation::SwiGLU, 130, 512, 448, true, 5, 128},
      {DType::F16, 64, 1, Activation::GeLU, 257, 640, 520, false, 0, 128, EpilogueStore::Staged},
      // 192x96 (fp16, three consumer warpgroups, 12 accumulator groups): ragged, split-K, stream-K, SwiGLU
      {DType::F16, 96, 1, Activation::GeLU, 385, 600, 520, false, 0, 192},
      {DType::F16, 96, 2, Activation::None, 200, 384, 1024, false, 0, 192},
      {DType::F16, 96, 1, Activation::GeLU, 300, 960, 640, true, 7, 192},
      {DType::F16, 96, 1, Activation::SwiGLU, 130, 576, 448, false, 0, 192},
      // 64x96 (fp16, direct stores): ragged, split-K, stream-K, SwiGLU (48-column output tiles)
      {DType::F16, 96, 1, Activation::GeLU, 129, 600, 520, false, 0, 64},
      {DType::F16, 96, 3, Activation::None, 70, 384, 1024, false, 0, 64},
      {DType::F16, 96, 1, Activation::SwiGLU, 130, 576, 448, true, 5, 64},
      // 64x64 staged (fp16, whole tiles): ragged, one token, SwiGLU (32-column output tiles)
      {DType::F16, 64, 1, Activation::GeLU, 129, 600, 520, false, 0, 64, EpilogueStore::Staged},
      {DType::F16, 64, 1, Activation::None, 1, 1024, 2048, false, 0, 64, EpilogueStore::Staged},
      {DType::F16, 64, 1, Activation::SwiGLU, 65, 512, 448, false, 0, 64, EpilogueStore::Staged},
      // k-tiles in flight capped below the ring's depth (-f<N>): whole tiles, split-K, stream-K, the 64x64 ring at the
      // least cap (2: a consumer releases a stage once the next one's MMAs are issued; 1 is refused, below)
      {DType::F16, 128, 1, Activation::GeLU, 64, 768, 1024, false, 0, 64, EpilogueStore::Staged, 2},
      {DType::F16, 128, 3, Activation::None, 300, 384, 1024, false, 0, 128, EpilogueStore::Default, 3},
      {DType::F16, 128, 1, Activation::SwiGLU, 130, 1024, 2048, true, 0, 128, EpilogueStore::Default, 4},
      {DType::F16, 64, 1, Activation::GeLU, 1, 1024, 2048, false, 0, 64, EpilogueStore::Staged, 2},
  };
  for (const auto& c : cases) {
    const std::string what = std::string(dtype_name(c.dt)) + " " + std::to_string(c.tile_m) + "x" +
                             std::to_string(c.tile_n) + " sk" +
                             std::to_string(c.splits) + " " + activation_name(c.act) + " M=" + std::to_string(c.M) +
                             " N=" + std::to_string(c.N) + " K=" + std::to_string(c.K) +
                             (c.stream_k ? " stream-K ctas=" + std::to_string(c.ctas) : std::string()) +
                             (c.store == EpilogueStore::Direct ? " direct" : c.store == EpilogueStore::Staged ? " staged" : "") +
                             (c.inflight > 0 ? " inflight " + std::to_string(c.inflight) : std::string());
    SCOPED_TRACE(what);
    const int n_out = c.act == Activation::SwiGLU ? c.N / 2 : c.N;
    Buf A(size_t(c.M) * c.K), B(size_t(c.K) * c.N), D(size_t(c.M) * n_out);
    A.random(rng, 1.0f, c.dt);
    B.random(rng, 2.0f / std::sqrt(float(c.K)), c.dt);
    GemmOp g;
    GemmConfig cfg{c.tile_n, c.splits, c.ctas};
    cfg.stream_k = c.stream_k;
    cfg.tile_m = c.tile_m;
    cfg.store = c.store;
    cfg.inflight = c.inflight;
    ASSERT_EQ(g.prepare({c.dt, A.d, B.d, D.d, c.M, c.N, c.K, c.act}, cfg), "");
    D.poison();
    g.run(nullptr);
    BRAID_CUDA_CHECK(cudaDeviceSynchronize());
    D.download();
    const double err = rel_error(reference(A, B, c.M, c.N, c.K, c.act, c.tile_n, c.dt), D, c.dt);
    EXPECT_LT(err, c.dt == DType::F16 ? 2e-3 : 1e-2) << what;
    if (c.inflight > 0) {  // the cap only delays loads: the same bits as the whole ring, run after run
      GemmOp whole;
      GemmConfig uncapped = cfg;
      uncapped.inflight = 0;
      ASSERT_EQ(whole.prepare({c.dt, A.d, B.d, D.d, c.M, c.N, c.K, c.act}, uncapped), "");
      expect_same_bits(whole, g, D, D.h.size(), 3);
    }
  }
  // A cap of one k-tile would deadlock (the consumers release a stage once the next one's MMAs are issued): refused.
  Buf A(size_t(64) * 512), B(size_t(512) * 256), D(size_t(64) * 256);
  GemmOp g;
  GemmConfig one{128, 1, 0};
  one.tile_m = 64;
  one.inflight = 1;
  const std::string why = g.prepare({DType::F16, A.d, B.d, D.d, 64, 256, 512, Activation::None}, one);
  EXPECT_NE(why.find("at least 2 k-tiles"), std::string::npos) << why;
}

// The staged epilogue copies its tile out in 16-byte pieces only where D allows them; a D that is not
// 16-byte aligned (here 8 bytes into an allocation) takes the element-by-element copy: same values,
// and nothing written outside D.
TEST_F(HopperTest, StagedEpilogueWritesAnUnalignedOutput) {
  std::mt19937 rng(17);
  const int M = 200, N = 384, K = 512, kOffset = 4;  // 4 fp16 elements: 8 bytes
  Buf A(size_t(M) * K), B(size_t(K) * N), D(size_t(M) * N + 2 * kOffset);
  A.random(rng, 1.0f, DType::F16);
  B.random(rng, 2.0f / std::sqrt(float(K)), DType::F16);
  for (bool split : {false, true}) {
    SCOPED_TRACE(split ? "split-K 2" : "whole tiles");
    GemmOp g;
    GemmConfig cfg{128, split ? 2 : 1, 0};
    cfg.tile_m = 128;
    cfg.store = EpilogueStore::Staged;
    ASSERT_EQ(g.prepare({DType::F16, A.d, B.d, D.d + kOffset, M, N, K, Activation::GeLU}, cfg), "");
    D.poison();
    g.run(nullptr);
    BRAID_CUDA_CHECK(cudaDeviceSynchronize());
    D.download();
    for (int i = 0; i < kOffset; ++i) {
      EXPECT_EQ(D.h[i], 0xffffu) << "written before D, element " << i;
      EXPECT_EQ(D.h[D.h.size() - 1 - i], 0xffffu) << "written after D, element " << i;
    }
    Buf got(size_t(M) * N);
    std::copy(D.h.begin() + kOffset, D.h.begin() + kOffset + size_t(M) * N, got.h.begin());
    EXPECT_LT(rel_error(reference(A, B, M, N, K, Activation::GeLU, 128, DType::F16), got, DType::F16), 2e-3);
  }
}

// Stream-K: a fixed schedule gives the same bits run after run (whichever segment arrives last
// reduces, always in segment order), and agrees with the fp32 reference whatever the CTA count.
namespace {

// fp32 SwiGLU of A . W with W unpacked ([K, 2F] = [gate | up]), the output rounded to the kernel's type.
std::vector<float> swiglu_reference(const Buf& A, const std::vector<uint16_t>& W, int M, int F, int K, DType dt) {
  std::vector<float> out(size_t(M) * F);
  for (int m = 0; m < M; ++m)
    for (int j = 0; j < F; ++j) {
      double g = 0, u = 0;
      for (int k = 0; k < K; ++k) {
        const double a = to_float(A.h[size_t(m) * K + k], dt);
        g += a * to_float(W[size_t(k) * 2 * F + j], dt);
        u += a * to_float(W[size_t(k) * 2 * F + F + j], dt);
      }
      out[size_t(m) * F + j] = to_float(from_float(float(g / (1 + std::exp(-g)) * u), dt), dt);
    }
  return out;
}

}  // namespace

// A SwiGLU weight packed for a tile width whose half does not divide F (swiglu_packed_cols: the last block
// padded with zero columns, GemmArgs::n_out = F) -- how a 192-wide tile serves LLaMA's F = 2752: the
// output against an fp32 reference from the unpacked weight for every tile shape that has a SwiGLU
// epilogue (direct and staged stores, split-K), nothing written past D's F columns, and a B whose width
// is not the padded packing's refused with the reason.
TEST_F(HopperTest, PaddedSwigluWeightsMatchReference) {
  std::mt19937 rng(23);
  const int M = 200, K = 320, F = 176, kGuard = 64;
  struct Case {
    DType dt;
    int tile_m, tile_n, splits;
    EpilogueStore store;
  };
  const std::vector<Case> cases = {
      {DType::F16, 64, 192, 1, EpilogueStore::Default},  {DType::F16, 64, 192, 3, EpilogueStore::Default},
      {DType::F16, 64, 192, 1, EpilogueStore::Staged},   {DType::F16, 128, 192, 1, EpilogueStore::Default},
      {DType::F16, 192, 192, 1, EpilogueStore::Default}, {DType::F16, 192, 192, 1, EpilogueStore::Staged},
      {DType::F16, 128, 128, 1, EpilogueStore::Default}, {DType::F16, 128, 128, 2, EpilogueStore::Direct},
      {DType::F16, 128, 256, 1, EpilogueStore::Default}, {DType::F16, 128, 256, 1, EpilogueStore::Staged},
      {DType::F16, 128, 64, 1, EpilogueStore::Default},  {DType::F16, 192, 96, 1, EpilogueStore::Default},
      {DType::F16, 64, 96, 1, EpilogueStore::Default},   {DType::F16, 64, 96, 2, EpilogueStore::Default},
      {DType::BF16, 128, 128, 1, EpilogueStore::Default}, {DType::BF16, 128, 256, 1, EpilogueStore::Default},
  };
  for (DType dt : {DType::F16, DType::BF16}) {
    Buf A(size_t(M) * K), W(size_t(K) * 2 * F);
    A.random(rng, 1.0f, dt);
    W.random(rng, 2.0f / std::sqrt(float(K)), dt);
    const std::vector<float> ref = swiglu_reference(A, W.h, M, F, K, dt);
    for (const Case& c : cases) {
      if (c.dt != dt) continue;
      GemmConfig cfg{c.tile_n, c.splits, 0};
      cfg.tile_m = c.tile_m;
      cfg.store = c.store;
      SCOPED_TRACE(std::string(dtype_name(dt)) + " " + cfg.name());
      const int P = swiglu_packed_cols(F, c.tile_n);
      ASSERT_NE(P, 2 * F) << "the case must need padding";
      Buf B(size_t(K) * P), D(size_t(M) * F + kGuard);
      pack_swiglu_columns(W.h.data(), B.h.data(), K, F, c.tile_n);
      BRAID_CUDA_CHECK(cudaMemcpy(B.d, B.h.data(), B.h.size() * 2, cudaMemcpyHostToDevice));
      GemmArgs a{dt, A.d, B.d, D.d, M, P, K, Activation::SwiGLU};
      a.n_out = F;
      GemmOp g;
      ASSERT_EQ(g.prepare(a, cfg), "");
      EXPECT_EQ(g.grid().x, uint32_t((F + c.tile_n / 2 - 1) / (c.tile_n / 2)));
      for (int rep = 0; rep < 2; ++rep) {
        D.poison();
        g.run(nullptr);
        BRAID_CUDA_CHECK(cudaDeviceSynchronize());
        D.download();
        for (int i = 0; i < kGuard; ++i) ASSERT_EQ(D.h[size_t(M) * F + i], 0xffffu) << "written past D, element " << i;
        EXPECT_LT(rel_error(ref, D, dt), dt == DType::F16 ? 2e-3 : 1e-2) << "rep " << rep;
      }
      GemmArgs unpadded = a;
      unpadded.N = P + c.tile_n;  // a whole block too many
      GemmOp refused;
      EXPECT_NE(refused.prepare(unpadded, cfg).find("swiglu_packed_cols"), std::string::npos);
    }
  }
}

// The transposed kernels (GemmConfig::transposed: D^T = B^T A^T, the weights as the MMA's M operand, the
// tokens split between two warpgroups, the epilogue staged in 64-column panels): every tile against an
// fp32 reference -- None and GeLU on a B whose width is not whole tiles or panels (N = 328), SwiGLU on a
// weight packed in 16-column blocks with F not a multiple of 8 output columns of a panel (n_out = F = 172,
// padded) -- with M and K ragged, nothing written past D, the same bits on every run; and the
// configurations they cannot run refused with the reason.
TEST_F(HopperTest, TransposedKernelsMatchReference) {
  std::mt19937 rng(29);
  const int M = 300, K = 328, N = 328, F = 172, kGuard = 64;
  Buf A(size_t(M) * K), B(size_t(K) * N), W(size_t(K) * 2 * F);
  A.random(rng, 1.0f, DType::F16);
  B.random(rng, 2.0f / std::sqrt(float(K)), DType::F16);
  W.random(rng, 2.0f / std::sqrt(float(K)), DType::F16);
  const int P = swiglu_packed_cols(F, kTransposedSwigluBlock);
  Buf Bp(size_t(K) * P);
  pack_swiglu_columns(W.h.data(), Bp.h.data(), K, F, kTransposedSwigluBlock);
  BRAID_CUDA_CHECK(cudaMemcpy(Bp.d, Bp.h.data(), Bp.h.size() * 2, cudaMemcpyHostToDevice));
  const std::vector<float> ref_none = reference(A, B, M, N, K, Activation::None, 128, DType::F16);
  const std::vector<float> ref_gelu = reference(A, B, M, N, K, Activation::GeLU, 128, DType::F16);
  const std::vector<float> ref_glu = swiglu_reference(A, W.h, M, F, K, DType::F16);
  // One run into a poisoned D (n_out columns, then kGuard guard elements): nothing past D, D near `ref`.
  auto run_checked = [&](GemmOp& g, Buf& D, int n_out, const std::vector<float>& ref, int rep) {
    D.poison();
    g.run(nullptr);
    BRAID_CUDA_CHECK(cudaDeviceSynchronize());
    D.download();
    for (int i = 0; i < kGuard; ++i) ASSERT_EQ(D.h[size_t(M) * n_out + i], 0xffffu) << "written past D, element " << i;
    Buf got(size_t(M) * n_out);
    std::copy(D.h.begin(), D.h.begin() + size_t(M) * n_out, got.h.begin());
    EXPECT_LT(rel_error(ref, got, DType::F16), 2e-3) << "rep " << rep;
  };
  // Every instance (is_transposed_tile), the multicast one after the same tile without: a multicast cluster
  // computes the same MMAs in the same order, so the same bits. M = 300 leaves cluster members below the grid
  // (64-token tiles: 5 row tiles, clusters of 4 -> three members past the last).
  struct Instance {
    int tm, tn, mc;
  };
  std::map<std::string, std::vector<uint16_t>> own_loads;  // tile + activation -> D without multicast
  for (auto [tm, tn, mc] : {Instance{192, 192, 1}, {128, 192, 1}, {128, 256, 1}, {256, 128, 1}, {128, 320, 1},
                            {128, 320, 4}, {64, 320, 1}, {64, 320, 4}}) {
    ASSERT_TRUE(is_transposed_tile(tm, tn, mc)) << tm << "x" << tn << " mc" << mc;
    for (Activation act : {Activation::None, Activation::GeLU, Activation::SwiGLU}) {
      GemmConfig cfg{tn, 1, 0};
      cfg.tile_m = tm;
      cfg.transposed = true;
      cfg.multicast = mc;
      SCOPED_TRACE(cfg.name() + " " + activation_name(act));
      const std::string key = std::to_string(tm) + "x" + std::to_string(tn) + activation_name(act);
      const bool glu = act == Activation::SwiGLU;
      const int n_out = glu ? F : N;
      Buf D(size_t(M) * n_out + kGuard);
      GemmArgs a{DType::F16, A.d, glu ? Bp.d : B.d, D.d, M, glu ? P : N, K, act};
      if (glu) a.n_out = F;
      GemmOp g;
      ASSERT_EQ(g.prepare(a, cfg), "");
      std::vector<uint16_t> first;
      for (int rep = 0; rep < 3; ++rep) {
        run_checked(g, D, n_out, glu ? ref_glu : act == Activation::GeLU ? ref_gelu : ref_none, rep);
        if (HasFatalFailure()) return;
        if (rep == 0) first = D.h;
        else EXPECT_TRUE(first == D.h) << "rep " << rep << " moved";
      }
      if (mc == 1) own_loads[key] = first;
      else EXPECT_TRUE(own_loads.at(key) == first) << "multicast to " << mc << " changed the bits";
    }
  }
  // One k-step and an odd count (the pipeline's first and last stages in one unit), on a ragged M whose
  // last tile leaves warpgroup 1 no token (M = 300: 44 rows of a 128-token tile).
  for (int k2 : {40, 136}) {
    GemmConfig cfg{320, 1, 0};
    cfg.tile_m = 128;
    cfg.transposed = true;
    SCOPED_TRACE("128x320-t K=" + std::to_string(k2));
    Buf A2(size_t(M) * k2), B2(size_t(k2) * N), D(size_t(M) * N + kGuard);
    A2.random(rng, 1.0f, DType::F16);
    B2.random(rng, 2.0f / std::sqrt(float(k2)), DType::F16);
    const std::vector<float> ref = reference(A2, B2, M, N, k2, Activation::GeLU, 128, DType::F16);
    GemmOp g;
    ASSERT_EQ(g.prepare({DType::F16, A2.d, B2.d, D.d, M, N, k2, Activation::GeLU}, cfg), "");
    run_checked(g, D, N, ref, 0);
    if (HasFatalFailure()) return;
  }
  // What they cannot run, refused with the reason.
  GemmConfig bad{192, 1, 0};
  bad.tile_m = 192;
  bad.transposed = true;
  Buf D(size_t(M) * N);
  GemmOp g;
  EXPECT_NE(g.prepare({DType::BF16, A.d, B.d, D.d, M, N, K, Activation::None}, bad).find("fp16"), std::string::npos);
  GemmConfig split = bad;
  split.splits = 2;
  EXPECT_NE(g.prepare({DType::F16, A.d, B.d, D.d, M, N, K, Activation::None}, split).find("whole tiles"), std::string::npos);
  GemmConfig small = bad;  // (64x192: no transposed instance)
  small.tile_m = 64;
  EXPECT_NE(g.prepare({DType::F16, A.d, B.d, D.d, M, N, K, Activation::None}, small).find("transposed tiles"),
            std::string::npos);
  // Multicast only where instantiated: not 192x192, not 64x320 in pairs, no cluster of 8.
  for (auto [tm, tn, mc] : {Instance{192, 192, 4}, {64, 320, 2}, {64, 320, 8}}) {
    GemmConfig c = bad;
    c.tile_m = tm;
    c.tile_n = tn;
    c.multicast = mc;
    EXPECT_NE(g.prepare({DType::F16, A.d, B.d, D.d, M, N, K, Activation::None}, c).find("transposed tiles"),
              std::string::npos)
        << c.name();
  }
  GemmArgs tile_packed{DType::F16, A.d, Bp.d, D.d, M, swiglu_packed_cols(F, 192), K, Activation::SwiGLU};
  tile_packed.n_out = F;  // a weight packed for the row-major 192-wide tile, not in blocks of 16
  EXPECT_NE(g.prepare(tile_packed, bad).find("swiglu_packed_cols"), std::string::npos);
}

TEST_F(HopperTest, StreamKIsDeterministicAndCorrectForAnyCtaCount) {
  std::mt19937 rng(13);
  const int M = 200, N = 640, K = 3072;
  Buf A(size_t(M) * K), B(size_t(K) * N), D(size_t(M) * N);
  A.random(rng, 1.0f, DType::F16);
  B.random(rng, 0.03f, DType::F16);
  const auto ref = reference(A, B, M, N, K, Activation::GeLU, 128, DType::F16);
  for (int ctas : {0, 3, 7, 11}) {
    GemmOp g;
    GemmConfig cfg{128, 1, ctas};
    cfg.stream_k = true;
    ASSERT_EQ(g.prepare({DType::F16, A.d, B.d, D.d, M, N, K, Activation::GeLU}, cfg), "");
    std::vector<uint16_t> first;
    for (int rep = 0; rep < 4; ++rep) {
      D.poison();
      g.run(nullptr);
      BRAID_CUDA_CHECK(cudaDeviceSynchronize());
      D.download();
      if (rep == 0) {
        first = D.h;
        EXPECT_LT(rel_error(ref, D, DType::F16), 2e-3) << "ctas=" << ctas;
      }
      ASSERT_EQ(std::memcmp(first.data(), D.h.data(), first.size() * 2), 0) << "ctas=" << ctas << " rep=" << rep;
    }
  }
}

TEST_F(HopperTest, SplitKIsDeterministicAcrossSchedules) {
  std::mt19937 rng(11);
  const int M = 256, N = 512, K = 4096;
  Buf A(size_t(M) * K), B(size_t(K) * N), D1(size_t(M) * N), D2(size_t(M) * N);
  A.random(rng, 1.0f, DType::F16);
  B.random(rng, 0.03f, DType::F16);
  std::vector<uint16_t> first;
  for (int ctas : {0, 1, 5, 7}) {  // different CTA counts: different splits finish last and reduce
    GemmOp g;
    ASSERT_EQ(g.prepare({DType::F16, A.d, B.d, D1.d, M, N, K, Activation::GeLU}, {128, 5, ctas}), "");
    for (int rep = 0; rep < 3; ++rep) {
      D1.poison();
      g.run(nullptr);
      BRAID_CUDA_CHECK(cudaDeviceSynchronize());
      D1.download();
      if (first.empty()) first = D1.h;
      ASSERT_EQ(std::memcmp(first.data(), D1.h.data(), first.size() * 2), 0) << "ctas=" << ctas << " rep=" << rep;
    }
  }
}

// Reduce-scatter split-K (every segment reduces a share of its tile's columns) gives the bits of the
// last-arrival reduction (the same sums in the same segment order): every tile shape, 2-4 splits,
// GeLU and SwiGLU (whose shares pair gate and up columns), a row count that is no multiple of the
// tile, one CTA per SM and few CTAs (rounded down to a multiple of the splits: rounds of units), and
// repeated runs with D poisoned (every output written, the same bits each time).
TEST_F(HopperTest, ReduceScatterSplitKIsBitIdenticalToLastArrival) {
  std::mt19937 rng(19);
  const int M = 200, N = 512, K = 1536;
  Buf A(size_t(M) * K), B(size_t(K) * N), D(size_t(M) * N);
  A.random(rng, 1.0f, DType::F16);
  B.random(rng, 2.0f / std::sqrt(float(K)), DType::F16);
  struct Tiles {
    int m, n;
    EpilogueStore store;
  };
  int checked = 0;
  for (const Tiles& tl : {Tiles{128, 128, EpilogueStore::Default}, Tiles{128, 128, EpilogueStore::Direct},
                          Tiles{64, 128, EpilogueStore::Default}, Tiles{128, 256, EpilogueStore::Default},
                          Tiles{64, 256, EpilogueStore::Default}})
    for (int splits : {2, 3, 4})
      for (Activation act : {Activation::GeLU, Activation::SwiGLU}) {
        const int ctas = (splits + int(act)) % 2 == 0 ? 0 : 7;
        GemmConfig last{tl.n, splits, ctas};
        last.tile_m = tl.m;
        last.store = tl.store;
        GemmConfig rs = last;
        rs.reduce_scatter = true;
        SCOPED_TRACE(rs.name() + (act == Activation::SwiGLU ? " SwiGLU" : " GeLU"));
        const GemmArgs args{DType::F16, A.d, B.d, D.d, M, N, K, act};
        GemmOp g_last, g_rs;
        ASSERT_EQ(g_last.prepare(args, last), "");
        ASSERT_EQ(g_rs.prepare(args, rs), "");
        if (ctas > 0) EXPECT_EQ(g_rs.ctas() % splits, 0) << "CTAs not rounded to whole rounds of segments";
        const size_t n = size_t(M) * (act == Activation::SwiGLU ? N / 2 : N);
        expect_same_bits(g_last, g_rs, D, n, 2);
        if (HasFatalFailure()) return;
        ++checked;
      }
  EXPECT_EQ(checked, 30);
  // Fewer CTAs than a tile's segments cannot hold them all at once: refused, not hung.
  GemmConfig few{128, 3, 2};
  few.reduce_scatter = true;
  GemmOp g;
  EXPECT_NE(g.prepare({DType::F16, A.d, B.d, D.d, M, N, K, Activation::GeLU}, few), "");
  few.ctas = 0;
  few.splits = 1;
  EXPECT_NE(g.prepare({DType::F16, A.d, B.d, D.d, M, N, K, Activation::GeLU}, few), "");
}

// Split-K 2 through distributed shared memory (GemmConfig::dsmem_reduce: a tile's two segments are
// the two CTAs of a cluster and hand each other their partials): the bits of the last-arrival
// reduction, for the staged 128x128 kernel, None / GeLU / SwiGLU, a row count that is no multiple of
// the tile, one CTA per SM and few CTAs (several rounds of clusters), repeated runs with D poisoned.
// Configurations it cannot run are refused with a reason.
TEST_F(HopperTest, ClusterExchangeSplitKIsBitIdenticalToLastArrival) {
  std::mt19937 rng(29);
  const int M = 200, N = 512, K = 1536;
  Buf A(size_t(M) * K), B(size_t(K) * N), D(size_t(M) * N);
  A.random(rng, 1.0f, DType::F16);
  B.random(rng, 2.0f / std::sqrt(float(K)), DType::F16);
  int checked = 0;
  for (int ctas : {0, 6, 3})
    for (Activation act : {Activation::None, Activation::GeLU, Activation::SwiGLU}) {
      GemmConfig dsm{128, 2, ctas};
      dsm.dsmem_reduce = true;
      SCOPED_TRACE(dsm.name() + " " + activation_name(act));
      expect_cluster_reduction_matches(dsm, {DType::F16, A.d, B.d, D.d, M, N, K, act}, D, 2u);
      if (HasFatalFailure()) return;
      ++checked;
    }
  EXPECT_EQ(checked, 9);
  GemmOp g;
  const GemmArgs gelu{DType::F16, A.d, B.d, D.d, M, N, K, Activation::GeLU};
  GemmConfig three{128, 3, 0};  // the staging buffer holds one peer's share: two segments only
  three.dsmem_reduce = true;
  EXPECT_NE(g.prepare(gelu, three), "");
  GemmConfig direct{128, 2, 0};  // no staging buffer to receive into
  direct.store = EpilogueStore::Direct;
  direct.dsmem_reduce = true;
  EXPECT_NE(g.prepare(gelu, direct), "");
  GemmConfig wide{256, 2, 0};  // 128x256 stores directly
  wide.dsmem_reduce = true;
  EXPECT_NE(g.prepare(gelu, wide), "");
}

// Split-K 2-8 through distributed shared memory in clusters of `splits` CTAs (GemmConfig::dsmem_reduce
// where the pair exchange does not apply: every segment on its own CTA, the partials left in its pipeline
// buffers for the peers to read, cluster_exchange.cuh): the bits of the last-arrival reduction, 64x128
// tiles (direct stores) at split 2, 3, 4 and 8 (the whole cluster size range), None / GeLU / SwiGLU, a
// row count that is no multiple of the tile, repeated runs with D poisoned. More units than CTAs, more
// than 8 segments and stream-K are refused with a reason.
TEST_F(HopperTest, ClusterReduceSplitKIsBitIdenticalToLastArrival) {
  std::mt19937 rng(37);
  const int M = 120, N = 512, K = 2048;  // 2 x 4 tiles of 64x128: 64 CTAs at split 8 (15 clusters of 8 fit an H100)
  Buf A(size_t(M) * K), B(size_t(K) * N), D(size_t(M) * N);
  A.random(rng, 1.0f, DType::F16);
  B.random(rng, 2.0f / std::sqrt(float(K)), DType::F16);
  int checked = 0;
  for (int splits : {2, 3, 4, 8})
    for (Activation act : {Activation::None, Activation::GeLU, Activation::SwiGLU}) {
      GemmConfig dsm{128, splits, 0};
      dsm.tile_m = 64;
      dsm.dsmem_reduce = true;
      SCOPED_TRACE(dsm.name() + " " + activation_name(act));
      const GemmArgs args{DType::F16, A.d, B.d, D.d, M, N, K, act};
      GemmOp g_dsm;
      ASSERT_EQ(g_dsm.prepare(args, dsm), "");
      EXPECT_EQ(g_dsm.ctas(), 8 * splits) << "every segment on its own CTA";
      expect_cluster_reduction_matches(dsm, args, D, uint32_t(splits));
      if (HasFatalFailure()) return;
      ++checked;
    }
  EXPECT_EQ(checked, 12);
  GemmOp g;
  const GemmArgs gelu{DType::F16, A.d, B.d, D.d, M, N, K, Activation::GeLU};
  GemmConfig few{128, 4, 8};  // 32 units on 8 CTAs: not one round
  few.tile_m = 64;
  few.dsmem_reduce = true;
  EXPECT_NE(g.prepare(gelu, few).find("own CTA"), std::string::npos);
  GemmConfig nine{128, 9, 0};  // clusters of at most 8
  nine.tile_m = 64;
  nine.dsmem_reduce = true;
  EXPECT_NE(g.prepare(gelu, nine).find("split-K 2 to 8"), std::string::npos);
  GemmConfig sk{128, 1, 0};
  sk.tile_m = 64;
  sk.stream_k = true;
  sk.dsmem_reduce = true;
  EXPECT_NE(g.prepare(gelu, sk), "");
}

// B multicast to clusters of two CTAs on vertically adjacent tiles (GemmConfig::multicast): the
// same MMAs in the same order as each CTA loading its own B, so the same bits (stream-K: deterministic,
// and within rounding, since its tail is cut at other k-steps) -- for every multicast instantiation
// (128x128 staged, 128x256, 128x192, 64x192, 64x128), an odd number of row tiles (the last cluster's
// second CTA runs below the grid), a single row tile, data-parallel / split-K / stream-K, few CTAs
// (several rounds of clusters), None / GeLU / SwiGLU, repeated runs with D poisoned. Configurations
// without a multicast kernel are refused.
TEST_F(HopperTest, MulticastIsBitIdenticalToOwnLoads) {
  std::mt19937 rng(31);
  const int K = 1536;
  int checked = 0;
  for (int M : {300, 100, 512}) {
    const std::pair<int, int> tiles[] = {{128, 128}, {128, 256}, {128, 192}, {64, 192}, {64, 128}};
    for (auto [tile_m, tile_n] : tiles) {
      const int N = tile_n == 192 ? 1152 : 1024;  // (SwiGLU: N a multiple of tile_n)
      Buf A(size_t(M) * K), B(size_t(K) * N), D(size_t(M) * N);
      A.random(rng, 1.0f, DType::F16);
      B.random(rng, 2.0f / std::sqrt(float(K)), DType::F16);
      for (int variant = 0; variant < 4; ++variant) {
        GemmConfig own{tile_n, 1, 0};
        own.tile_m = tile_m;
        if (variant == 1) own.splits = 3;
        if (variant == 2) own.stream_k = true;
        if (variant == 3) own.ctas = 6;  // 3 clusters: several rounds
        if (variant == 2 && M == 512) own.ctas = 10;  // whole waves of groups, then a shared tail
        GemmConfig mc = own;
        mc.multicast = 2;
        const Activation act = variant == 1 ? Activation::SwiGLU : variant == 2 ? Activation::GeLU : Activation::None;
        SCOPED_TRACE(mc.name() + " M=" + std::to_string(M) + " " + activation_name(act));
        const GemmArgs args{DType::F16, A.d, B.d, D.d, M, N, K, act};
        GemmOp g_own, g_mc;
        ASSERT_EQ(g_own.prepare(args, own), "");
        ASSERT_EQ(g_mc.prepare(args, mc), "");
        EXPECT_EQ(g_mc.ctas() % 2, 0) << "CTAs not in whole clusters";
        EXPECT_EQ(g_mc.schedule().group, 2u);
        const size_t n = size_t(M) * (act == Activation::SwiGLU ? N / 2 : N);
        if (!own.stream_k) {
          expect_same_bits(g_own, g_mc, D, n, 3);
        } else {
          // Stream-K cuts the tail at other k-steps when groups, not tiles, are dealt.
          expect_deterministic_and_close(g_own, g_mc, D, n, DType::F16, 1e-3);
        }
        if (HasFatalFailure()) return;
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, 60);
  const int M = 64, N = 1024;
  Buf A(size_t(M) * K), B(size_t(K) * N), D(size_t(M) * N);
  GemmOp g;
  GemmConfig bf{128, 1, 0};
  bf.multicast = 2;
  EXPECT_NE(g.prepare({DType::BF16, A.d, B.d, D.d, M, N, K, Activation::None}, bf), "") << "no bf16 multicast kernel";
  GemmConfig short_wide = bf;  // no 64x256 multicast instantiation
  short_wide.tile_m = 64;
  short_wide.tile_n = 256;
  EXPECT_NE(g.prepare({DType::F16, A.d, B.d, D.d, M, N, K, Activation::None}, short_wide), "");
  GemmConfig rs{128, 2, 0};
  rs.multicast = 2;
  rs.reduce_scatter = true;
  EXPECT_NE(g.prepare({DType::F16, A.d, B.d, D.d, M, N, K, Activation::None}, rs), "");
  GemmConfig three = bf;
  three.multicast = 3;
  EXPECT_NE(g.prepare({DType::F16, A.d, B.d, D.d, M, N, K, Activation::None}, three), "");
}

// Stream-K's owner reduction (WorkSchedule::owner_reduces: a split tile's first segment waits for the
// others and sums in segment order without storing its own partials) gives the same bits as the
// last-arrival reduction (BRAID_STREAMK_LAST_ARRIVAL=1), for direct and staged epilogues, SwiGLU,
// groups, and a tile cut into more segments than the staged reduction holds at once (-c47 at M=512
// without the tail's cost model: one tail tile of 64 k-tiles over 16 CTAs).
TEST_F(HopperTest, StreamKOwnerReductionIsBitIdenticalToLastArrival) {
  std::mt19937 rng(41);
  const int N = 1536, K = 4096;
  int checked = 0;
  for (int M : {200, 512}) {
    Buf A(size_t(M) * K), B(size_t(K) * N), D(size_t(M) * N);
    A.random(rng, 1.0f, DType::F16);
    B.random(rng, 2.0f / std::sqrt(float(K)), DType::F16);
    for (const char* name : {"128x128-streamk", "128x192-streamk", "128x256-streamk", "128x128-g2-streamk",
                             "128x128-streamk-c5", "128x128-streamk-c47", "128x192-streamk-c7", "64x128-streamk"}) {
      GemmConfig c;
      ASSERT_EQ(parse_gemm_config(name, c), "");
      for (Activation act : {Activation::GeLU, Activation::SwiGLU}) {
        if (act == Activation::SwiGLU && N % c.tile_n != 0) continue;
        SCOPED_TRACE(std::string(name) + " M=" + std::to_string(M) + " " + activation_name(act));
        const GemmArgs args{DType::F16, A.d, B.d, D.d, M, N, K, act};
        GemmOp last, owner;
        // -c47: the tail over every CTA allowed (no reduction cost model), 16 segments per tail tile
        const bool spread = std::string(name).find("-c47") != std::string::npos;
        if (spread) ::setenv("BRAID_STREAMK_ALL_CTAS", "1", 1);
        ::setenv("BRAID_STREAMK_LAST_ARRIVAL", "1", 1);
        const std::string why = last.prepare(args, c);
        ::unsetenv("BRAID_STREAMK_LAST_ARRIVAL");
        ASSERT_EQ(why, "");
        ASSERT_EQ(owner.prepare(args, c), "");
        ::unsetenv("BRAID_STREAMK_ALL_CTAS");
        if (spread && M == 512) EXPECT_GT(owner.schedule().max_segs, 9u);
        ASSERT_EQ(last.schedule().owner_reduces, 0u);
        if (owner.schedule().max_segs <= 1) continue;  // nothing cut
        ASSERT_EQ(owner.schedule().owner_reduces, 1u);
        expect_same_bits(last, owner, D, size_t(M) * (act == Activation::SwiGLU ? N / 2 : N), 3);
        if (HasFatalFailure()) return;
        ++checked;
      }
    }
  }
  EXPECT_GE(checked, 16);
}

// CTA groups without multicast (-g<N>): groups of N CTAs walk vertically adjacent tiles over the same
// k-steps. Data-parallel and split-K tiles keep their k-ranges: the same bits as ungrouped. Stream-K
// deals groups, like -mc2: -g2-streamk has the same schedule as -mc2-streamk (same bits), other group
// sizes cut the tail elsewhere (deterministic, equal to ungrouped within accumulation rounding).
// M = 300 / 100 leave group members below the grid (they skip their units).
TEST_F(HopperTest, GroupsWalkInStepWithTheSameResults) {
  std::mt19937 rng(37);
  const int N = 1024, K = 1536;
  int checked = 0;
  for (int M : {300, 100, 512})
    for (DType dt : {DType::F16, DType::BF16}) {
      Buf A(size_t(M) * K), B(size_t(K) * N), D(size_t(M) * N);
      A.random(rng, 1.0f, dt);
      B.random(rng, 2.0f / std::sqrt(float(K)), dt);
      for (int variant = 0; variant < 4; ++variant)
        for (int group : {2, 3, 4}) {
          if (dt == DType::BF16 && group == 3) continue;
          GemmConfig own{128, 1, 0};
          if (variant == 1) own.splits = 3;
          if (variant == 2) own.stream_k = true;
          if (variant == 3) own.ctas = 12;  // several rounds of groups
          GemmConfig grouped = own;
          grouped.group = group;
          const Activation act = variant == 1 ? Activation::SwiGLU : variant == 2 ? Activation::GeLU : Activation::None;
          SCOPED_TRACE(grouped.name() + " M=" + std::to_string(M) + " " + dtype_name(dt) + " " + activation_name(act));
          const GemmArgs args{dt, A.d, B.d, D.d, M, N, K, act};
          GemmOp g_own, g_grp;
          ASSERT_EQ(g_own.prepare(args, own), "");
          ASSERT_EQ(g_grp.prepare(args, grouped), "");
          EXPECT_EQ(g_grp.ctas() % group, 0) << "CTAs not in whole groups";
          EXPECT_EQ(g_grp.schedule().group, uint32_t(group));
          const size_t n = size_t(M) * (act == Activation::SwiGLU ? N / 2 : N);
          if (!own.stream_k) {
            expect_same_bits(g_own, g_grp, D, n, 3);
          } else {
            if (group == 2 && dt == DType::F16) {  // the multicast cluster's schedule, bit for bit
              GemmConfig mc = own;
              mc.multicast = 2;
              GemmOp g_mc;
              ASSERT_EQ(g_mc.prepare(args, mc), "");
              expect_same_bits(g_mc, g_grp, D, n, 3);
            }
            expect_deterministic_and_close(g_own, g_grp, D, n, dt, dt == DType::F16 ? 1e-3 : 8e-3);
          }
          if (HasFatalFailure()) return;
          ++checked;
        }
    }
  EXPECT_EQ(checked, 3 * 4 * (3 + 2));
  const int M = 64;
  Buf A(size_t(M) * K), B(size_t(K) * N), D(size_t(M) * N);
  const GemmArgs args{DType::F16, A.d, B.d, D.d, M, N, K, Activation::None};
  GemmOp g;
  GemmConfig bad{128, 1, 0};
  bad.group = 17;
  EXPECT_NE(g.prepare(args, bad), "");
  bad.group = 2;
  bad.multicast = 2;  // the cluster is the group
  EXPECT_NE(g.prepare(args, bad), "");
  bad.multicast = 1;
  bad.splits = 2;
  bad.reduce_scatter = true;
  EXPECT_NE(g.prepare(args, bad), "");
  GemmConfig pp{128, 1, 0};
  pp.pingpong = true;
  pp.group = 2;
  EXPECT_NE(g.prepare(args, pp), "");
}

namespace {

// X and Hid have workloads::padded_rows(T) rows: the chains under test read them padded (MlpProblem::x_rows,
// hid_rows), with NaN in the rows past T, and must give the bits of the reference, which reads T rows.
struct MlpBuffers {
  int T, rows;
  Buf X, W1, W2, Hid, Y;
  MlpBuffers(int T_, int H, int F, int F1)
      : T(T_), rows(workloads::padded_rows(T_)), X(size_t(rows) * H), W1(size_t(H) * F1), W2(size_t(F) * H),
        Hid(size_t(rows) * F), Y(size_t(T_) * H) {}
  // X random in its first T rows, NaN past them.
  void random_x(std::mt19937& rng, DType dt) {
    X.random(rng, 1.0f, dt);
    const size_t H = X.h.size() / size_t(rows);
    for (size_t i = size_t(T) * H; i < X.h.size(); ++i) X.h[i] = 0xffff;
    BRAID_CUDA_CHECK(cudaMemcpy(X.d, X.h.data(), X.h.size() * 2, cudaMemcpyHostToDevice));
  }
};

// Pingpong warpgroups (GemmConfig::pingpong) run each tile's MMAs in one warpgroup (two 64-row atoms)
// instead of two: the same wgmma sequence per output element, so the bits of the cooperative 128x128
// kernel (fp16: with the same, direct store) -- for ragged M/N/K, one row tile, an odd and an even number of
// units per CTA (few CTAs: many rounds, the last unit's warpgroup alternating), row- and column-major
// orders, None / GeLU / SwiGLU, fp16 and bf16, repeated runs with D poisoned; fp16 also with the
// staged pingpong epilogue ("-staged-pp": 64-column panels per warpgroup, TMA stores, or the
// warpgroup's own copy-out where D is not 16-byte aligned). What pingpong cannot run is refused.
TEST_F(HopperTest, PingpongIsBitIdenticalToCooperative) {
  std::mt19937 rng(37);
  int checked = 0;
  for (DType dt : {DType::F16, DType::BF16})
    for (auto [M, N, K] : {std::tuple{300, 1032, 1544}, std::tuple{100, 512, 64}, std::tuple{513, 768, 2048}}) {
      Buf A(size_t(M) * K), B(size_t(K) * N), D(size_t(M) * N);
      A.random(rng, 1.0f, dt);
      B.random(rng, 2.0f / std::sqrt(float(K)), dt);
      for (int variant = 0; variant < 4; ++variant) {
        GemmConfig coop{128, 1, 0};
        // (bf16 has only the staged cooperative 128x128: it stores the same bits through shared memory)
        if (dt == DType::F16) coop.store = EpilogueStore::Direct;
        if (variant == 1) coop.ctas = 5;  // many rounds per CTA
        if (variant == 2) coop.order = OrderKind::RowMajor;
        if (variant == 3) coop.ctas = 4;
        GemmConfig pp = coop;
        pp.pingpong = true;
        pp.store = EpilogueStore::Default;
        const Activation act = variant == 1 ? Activation::GeLU : variant == 3 && N % 128 == 0 ? Activation::SwiGLU : Activation::None;
        SCOPED_TRACE(pp.name() + " " + dtype_name(dt) + " M=" + std::to_string(M) + " N=" + std::to_string(N) +
                     " K=" + std::to_string(K) + " " + activation_name(act));
        const GemmArgs args{dt, A.d, B.d, D.d, M, N, K, act};
        GemmOp g_coop, g_pp;
        ASSERT_EQ(g_coop.prepare(args, coop), "");
        ASSERT_EQ(g_pp.prepare(args, pp), "");
        EXPECT_EQ(g_pp.ctas(), g_coop.ctas());
        expect_same_bits(g_coop, g_pp, D, size_t(M) * (act == Activation::SwiGLU ? N / 2 : N), 3);
        if (HasFatalFailure()) return;
        ++checked;
        if (dt == DType::F16) {  // the staged pingpong epilogue: same bits, TMA stores
          GemmConfig staged = pp;
          staged.store = EpilogueStore::Staged;
          GemmOp g_staged;
          ASSERT_EQ(g_staged.prepare(args, staged), "");
          expect_same_bits(g_coop, g_staged, D, size_t(M) * (act == Activation::SwiGLU ? N / 2 : N), 3);
          if (HasFatalFailure()) return;
          ++checked;
        }
      }
      if (dt == DType::F16) {  // D 4 bytes off 16-byte alignment: no tensor map, the panels copied out
        Buf D1(size_t(M) * N + 8);
        GemmConfig coop{128, 1, 0};
        coop.store = EpilogueStore::Direct;
        GemmConfig staged = coop;
        staged.pingpong = true;
        staged.store = EpilogueStore::Staged;
        const GemmArgs args{dt, A.d, B.d, D1.d + 2, M, N, K, Activation::GeLU};
        GemmOp g_coop, g_staged;
        ASSERT_EQ(g_coop.prepare(args, coop), "");
        ASSERT_EQ(g_staged.prepare(args, staged), "");
        SCOPED_TRACE("misaligned D, " + staged.name() + " M=" + std::to_string(M) + " N=" + std::to_string(N));
        expect_same_bits(g_coop, g_staged, D1, size_t(M) * N + 2, 3);
        if (HasFatalFailure()) return;
        ++checked;
      }
    }
  EXPECT_EQ(checked, 24 + 12 + 3);
  const int M = 256, N = 512, K = 512;
  Buf A(size_t(M) * K), B(size_t(K) * N), D(size_t(M) * N);
  const GemmArgs args{DType::F16, A.d, B.d, D.d, M, N, K, Activation::None};
  for (const char* bad : {"128x256-pp", "64x128-pp", "128x128-pp-sk2", "128x128-pp-streamk", "128x128-pp-mc2",
                          "128x128-staged-pp-sk2"}) {
    GemmConfig c;
    ASSERT_EQ(parse_gemm_config(bad, c), "") << bad;
    GemmOp g;
    EXPECT_NE(g.prepare(args, c), "") << bad << " was accepted";
  }
  {  // staged pingpong is instantiated for fp16 only
    GemmConfig c;
    ASSERT_EQ(parse_gemm_config("128x128-staged-pp", c), "");
    GemmOp g;
    EXPECT_NE(g.prepare(GemmArgs{DType::BF16, A.d, B.d, D.d, M, N, K, Activation::None}, c), "") << "bf16 staged pp accepted";
  }
  // Two CTAs per SM (-o2) exist for the convolutions only (ConvOp): GemmOp refuses them, saying so.
  for (const char* bad : {"128x128-o2", "64x128-o2", "64x128-sk2-o2"}) {
    GemmConfig c;
    ASSERT_EQ(parse_gemm_config(bad, c), "") << bad;
    GemmOp g;
    EXPECT_NE(g.prepare(args, c).find("-o2"), std::string::npos) << bad << " was accepted or refused for another reason";
  }
}

// The staged epilogues write the tile into shared memory by stmatrix, every column and row of the tile
// (epilogue.cuh, stage_rows: no bounds tests, no column share), and copy out only D's rows and columns
// of the unit's share; the direct one stores pair by pair from the accumulators (for_each_output_pair).
// Same bits: whole tiles (the TMA-stored epilogue), split-K last arrival and reduce-scatter (each
// segment copies out its share only, the rest of the staged tile partial sums), None / GeLU / SwiGLU,
// rows and columns past D's edges (M and N no multiple of the tile), three poisoned runs each.
TEST_F(HopperTest, StagedEpiloguesAreBitIdenticalToDirectStores) {
  std::mt19937 rng(43);
  int checked = 0;
  for (Activation act : {Activation::None, Activation::GeLU, Activation::SwiGLU}) {
    const int M = 300, N = act == Activation::SwiGLU ? 1024 : 1032, K = 1544;
    Buf A(size_t(M) * K), B(size_t(K) * N), D(size_t(M) * N);
    A.random(rng, 1.0f, DType::F16);
    B.random(rng, 2.0f / std::sqrt(float(K)), DType::F16);
    const GemmArgs args{DType::F16, A.d, B.d, D.d, M, N, K, act};
    const size_t n = size_t(M) * (act == Activation::SwiGLU ? N / 2 : N);
    for (int splits : {1, 2, 3})
      for (bool scatter : {false, true}) {
        if (splits == 1 && scatter) continue;
        GemmConfig direct{128, splits, 0};
        direct.store = EpilogueStore::Direct;
        GemmConfig staged = direct;
        staged.store = EpilogueStore::Staged;
        staged.reduce_scatter = scatter;
        SCOPED_TRACE(staged.name() + " vs " + direct.name() + " " + activation_name(act));
        GemmOp g_direct, g_staged;
        ASSERT_EQ(g_direct.prepare(args, direct), "");
        ASSERT_EQ(g_staged.prepare(args, staged), "");
        expect_same_bits(g_direct, g_staged, D, n, 3);
        if (HasFatalFailure()) return;
        ++checked;
      }
  }
  EXPECT_EQ(checked, 15);
}

// The lean forms (gemm_config.hpp): a whole-tile GEMM launched without tile sync runs the form of its
// activation that has no waiting producer, poster, traces or other activations. Same bits as the general
// form of the same instantiation: row-major tiles (TMA-stored, direct, pingpong panels, three consumer
// warpgroups, 128x256's register split), transposed tiles with and without multicast, None / GeLU /
// SwiGLU, M and N past the tile edges, three poisoned runs each; and the lean launches are counted.
TEST_F(HopperTest, LeanKernelFormsAreBitIdenticalToTheGeneralForm) {
  LeanFormsScope scope;
  std::mt19937 rng(47);
  int checked = 0;
  const char* configs[] = {"128x128", "128x128-direct", "128x128-staged-pp", "64x192-staged", "192x192-staged",
                           "128x256-staged", "128x192-t", "64x320-t-mc4"};
  for (Activation act : {Activation::None, Activation::GeLU, Activation::SwiGLU}) {
    const int M = 300, N = act == Activation::SwiGLU ? 3840 : 3832, K = 1544;
    Buf A(size_t(M) * K), B(size_t(K) * N), D(size_t(M) * N);
    A.random(rng, 1.0f, DType::F16);
    B.random(rng, 2.0f / std::sqrt(float(K)), DType::F16);
    const GemmArgs args{DType::F16, A.d, B.d, D.d, M, N, K, act};
    const size_t n = size_t(M) * (act == Activation::SwiGLU ? N / 2 : N);
    for (const char* name : configs) {
      SCOPED_TRACE(std::string(name) + " " + activation_name(act));
      GemmConfig c;
      ASSERT_EQ(parse_gemm_config(name, c), "");
      GemmOp g;
      ASSERT_EQ(g.prepare(args, c), "");
      braid::hopper::set_lean_forms(false);
      D.poison();
      const long before = braid::hopper::lean_form_launches();
      g.run(nullptr);
      BRAID_CUDA_CHECK(cudaDeviceSynchronize());
      EXPECT_EQ(braid::hopper::lean_form_launches(), before) << "a lean launch with the lean forms off";
      D.download();
      const std::vector<uint16_t> general = D.h;
      braid::hopper::set_lean_forms(true);
      for (int rep = 0; rep < 3; ++rep) {
        D.poison();
        g.run(nullptr);
        BRAID_CUDA_CHECK(cudaDeviceSynchronize());
        D.download();
        ASSERT_EQ(std::memcmp(general.data(), D.h.data(), n * 2), 0) << "run " << rep;
      }
      EXPECT_EQ(braid::hopper::lean_form_launches(), before + 3) << "the whole-tile launches did not take the lean form";
      ++checked;
    }
  }
  EXPECT_EQ(checked, 24);
}

// Data-parallel configurations run the whole-tile instantiation (no split-K / stream-K fixup
// compiled in); stream-K over exactly one wave of tiles runs the segmented one on the same whole
// tiles. Both give the same bits.
TEST_F(HopperTest, WholeTileKernelsMatchSegmentedOnes) {
  std::mt19937 rng(41);
  int checked = 0;
  for (auto [tm, tn] : {std::pair{128, 128}, std::pair{128, 256}, std::pair{192, 192}, std::pair{64, 128}}) {
    const int M = 3 * tm - 17, N = 4 * tn, K = 1000;  // 12 tiles, ragged M and K
    Buf A(size_t(M) * K), B(size_t(K) * N), D(size_t(M) * N);
    A.random(rng, 1.0f, DType::F16);
    B.random(rng, 2.0f / std::sqrt(float(K)), DType::F16);
    GemmConfig whole{tn, 1, 12};
    whole.tile_m = tm;
    GemmConfig seg = whole;
    seg.stream_k = true;
    SCOPED_TRACE(whole.name() + " vs " + seg.name());
    const GemmArgs args{DType::F16, A.d, B.d, D.d, M, N, K, Activation::GeLU};
    GemmOp g_whole, g_seg;
    ASSERT_EQ(g_whole.prepare(args, whole), "");
    ASSERT_EQ(g_seg.prepare(args, seg), "");
    expect_same_bits(g_seg, g_whole, D, size_t(M) * N, 2);
    if (HasFatalFailure()) return;
    ++checked;
  }
  EXPECT_EQ(checked, 4);
}

// The same chain under RowSync, ordered by the wait kernel: the second form of most variants below.
MlpVariant rowsync_wait_kernel(MlpVariant v) {
  v.sync = MlpVariant::Sync::RowSync;
  v.ordering = Ordering::WaitKernel;
  return v;
}

std::vector<MlpVariant> sync_variants() {
  std::vector<MlpVariant> v;
  for (auto s : {MlpVariant::Sync::TileSync, MlpVariant::Sync::RowSync})
    for (Ordering o : {Ordering::PDL, Ordering::WaitKernel}) {
      MlpVariant x;
      x.sync = s;
      x.ordering = o;
      v.push_back(x);
    }
  MlpVariant sk;  // split-K in both GEMMs, no R, row-major orders
  sk.g1.hopper.splits = 3;
  sk.g2.hopper.splits = 2;
  sk.g1.hopper.order = sk.g2.hopper.order = OrderKind::RowMajor;
  sk.weights_first = false;
  v.push_back(sk);
  MlpVariant wide;  // 128x256 tiles, few CTAs (consumer CTAs start while the producer still runs)
  wide.g1.hopper.tile_n = 256;
  wide.g1.hopper.ctas = 20;
  wide.g2.hopper.tile_n = 256;
  wide.g2.hopper.ctas = 30;
  v.push_back(wide);
  MlpVariant streamk;  // stream-K in both GEMMs, few CTAs: whole waves, then a shared tail
  streamk.g1.hopper.stream_k = streamk.g2.hopper.stream_k = true;
  streamk.g1.hopper.ctas = 9;
  streamk.g2.hopper.ctas = 13;
  v.push_back(streamk);
  MlpVariant streamk_row = streamk;  // RowSync over stream-K tiles, one CTA per SM
  streamk_row.sync = MlpVariant::Sync::RowSync;
  streamk_row.g1.hopper.ctas = streamk_row.g2.hopper.ctas = 0;
  v.push_back(streamk_row);
  MlpVariant short_tiles;  // 64-row tiles, split-K GEMM 1, stream-K GEMM 2, RowSync
  short_tiles.sync = MlpVariant::Sync::RowSync;
  short_tiles.g1.hopper.tile_m = short_tiles.g2.hopper.tile_m = 64;
  short_tiles.g1.hopper.splits = 2;
  short_tiles.g2.hopper.stream_k = true;
  v.push_back(short_tiles);
  MlpVariant pdl_only;
  pdl_only.ordering = Ordering::StreamOrder;
  pdl_only.pdl_only = true;
  v.push_back(pdl_only);
  MlpVariant pdl_only_capped = pdl_only;  // PDL alone, both GEMMs' loads capped (GEMM 2's early weights: the cap's)
  pdl_only_capped.g1.hopper.inflight = 3;
  pdl_only_capped.g2.hopper.inflight = 2;
  v.push_back(pdl_only_capped);
  MlpVariant pdl_only_late_weights = pdl_only;  // PDL alone, GEMM 2 loading nothing before GEMM 1 is done ("-noR")
  pdl_only_late_weights.weights_first = false;
  v.push_back(pdl_only_late_weights);
  MlpVariant capped;  // TileSync / PDL, GEMM 2's loads capped at two k-tiles (the least) while it waits on GEMM 1's tiles
  capped.g2.hopper.inflight = 2;
  v.push_back(capped);
  MlpVariant multicast;  // B multicast in clusters of two (fp16 only), stream-K GEMM 2, few CTAs in GEMM 1
  multicast.g1.hopper.multicast = multicast.g2.hopper.multicast = 2;
  multicast.g1.hopper.ctas = 12;
  multicast.g2.hopper.stream_k = true;
  v.push_back(multicast);
  MlpVariant multicast_row = rowsync_wait_kernel(multicast);  // RowSync, wait kernel, 128x256 producer tiles
  multicast_row.g1.hopper.tile_n = 256;
  v.push_back(multicast_row);
  MlpVariant pingpong;  // pingpong warpgroups in both GEMMs (posts from alternating warpgroups), few CTAs in GEMM 2
  pingpong.g1.hopper.pingpong = pingpong.g2.hopper.pingpong = true;
  pingpong.g2.hopper.ctas = 7;
  v.push_back(pingpong);
  MlpVariant pingpong_row = rowsync_wait_kernel(pingpong);  // RowSync, wait kernel, row-major orders, a cooperative producer
  pingpong_row.g1.hopper.pingpong = false;
  pingpong_row.g1.hopper.order = pingpong_row.g2.hopper.order = OrderKind::RowMajor;
  v.push_back(pingpong_row);
  MlpVariant fit;  // 192x192 producer (three consumer warpgroups), 192x128 consumer, few CTAs in GEMM 2
  fit.g1.hopper.tile_m = fit.g1.hopper.tile_n = 192;
  fit.g2.hopper.tile_m = 192;
  fit.g2.hopper.ctas = 11;
  v.push_back(fit);
  MlpVariant fit_row = rowsync_wait_kernel(fit);  // RowSync, wait kernel: 128x192 producer over 192-row consumer tiles, split-K
  fit_row.g1.hopper.tile_m = 128;
  fit_row.g2.hopper.tile_n = 192;
  fit_row.g2.hopper.splits = 2;
  fit_row.g2.hopper.ctas = 0;
  v.push_back(fit_row);
  MlpVariant tr;  // transposed kernels in both GEMMs (fp16): 192x192 producer, 128x256 consumer on few CTAs
  tr.g1.hopper.tile_m = tr.g1.hopper.tile_n = 192;
  tr.g2.hopper.tile_n = 256;
  tr.g1.hopper.transposed = tr.g2.hopper.transposed = true;
  tr.g2.hopper.ctas = 9;
  v.push_back(tr);
  MlpVariant tr_row = rowsync_wait_kernel(tr);  // RowSync, wait kernel, row-major orders: 256-token producer tiles, 128x192 consumer
  tr_row.g1.hopper.tile_m = 256;
  tr_row.g1.hopper.tile_n = 128;
  tr_row.g2.hopper.tile_n = 192;
  tr_row.g2.hopper.ctas = 0;
  tr_row.g1.hopper.order = tr_row.g2.hopper.order = OrderKind::RowMajor;
  v.push_back(tr_row);
  MlpVariant tr_mixed;  // a row-major producer (128x128, few CTAs) under a transposed 192x192 consumer
  tr_mixed.g1.hopper.ctas = 17;
  tr_mixed.g2.hopper.tile_m = tr_mixed.g2.hopper.tile_n = 192;
  tr_mixed.g2.hopper.transposed = true;
  v.push_back(tr_mixed);
  MlpVariant tr_wide;  // 320 weight columns: 128x320 producer and consumer, the consumer on few CTAs
  tr_wide.g1.hopper.tile_n = tr_wide.g2.hopper.tile_n = 320;
  tr_wide.g1.hopper.transposed = tr_wide.g2.hopper.transposed = true;
  tr_wide.g2.hopper.ctas = 5;
  v.push_back(tr_wide);
  MlpVariant tr_wide_row = rowsync_wait_kernel(tr_wide);  // RowSync, wait kernel: a 128x320 producer under a 128x192-t consumer on every SM
  tr_wide_row.g2.hopper.tile_n = 192;
  tr_wide_row.g2.hopper.ctas = 0;
  v.push_back(tr_wide_row);
  // The weights multicast to clusters of 4 (64x320-t-mc4) in the consumer: its clusters wait for a 128x320-t
  // producer's tiles (T = 333: 6 row tiles, the second cluster of each column block half below the grid) ...
  MlpVariant tr_mc;
  tr_mc.g1.hopper.tile_n = 320;
  tr_mc.g2.hopper.tile_m = 64;
  tr_mc.g2.hopper.tile_n = 320;
  tr_mc.g2.hopper.multicast = 4;
  tr_mc.g1.hopper.transposed = tr_mc.g2.hopper.transposed = true;
  v.push_back(tr_mc);
  // ... and in the producer: RowSync, wait kernel, a 64x320-t consumer on few CTAs.
  MlpVariant tr_mc_row = rowsync_wait_kernel(tr_mc);
  tr_mc_row.g1.hopper.tile_m = 64;
  tr_mc_row.g1.hopper.multicast = 4;
  tr_mc_row.g2.hopper.multicast = 1;
  tr_mc_row.g2.hopper.ctas = 7;
  v.push_back(tr_mc_row);
  // GEMM 2 by ticket (MlpVariant::dynamic), row-major orders: TileSync / PDL with a transposed 128x192 producer, and
  // RowSync / wait kernel with split-K in the consumer on few CTAs (tickets of split-K segments).
  MlpVariant dyn;
  dyn.dynamic = true;
  dyn.g1.hopper.tile_n = 192;
  dyn.g1.hopper.transposed = true;
  dyn.g1.hopper.order = dyn.g2.hopper.order = OrderKind::RowMajor;
  dyn.g2.hopper.tile_n = 256;
  v.push_back(dyn);
  MlpVariant dyn_row = rowsync_wait_kernel(dyn);
  dyn_row.g1.hopper.transposed = false;
  dyn_row.g2.hopper.tile_n = 128;
  dyn_row.g2.hopper.splits = 2;
  dyn_row.g2.hopper.ctas = 19;
  v.push_back(dyn_row);
  return v;
}

// Chains with the weight-streaming skinny GEMM (T <= 64): both stages skinny, or one of each, with
// few CTAs so that tiles are cut between CTAs and consumer CTAs start while the producer runs.
std::vector<MlpVariant> skinny_variants() {
  using workloads::GemmChoice;
  std::vector<MlpVariant> v;
  for (Ordering o : {Ordering::PDL, Ordering::WaitKernel, Ordering::StreamOrder}) {
    MlpVariant x;
    x.ordering = o;
    x.g1 = GemmChoice::skinny();
    x.g2 = GemmChoice::skinny({1, 6, 0, true});
    v.push_back(x);
  }
  MlpVariant few;  // 7 and 11 CTAs: every tile cut, RowSync, no R
  few.g1 = GemmChoice::skinny({1, 4, 7});
  few.g2 = GemmChoice::skinny({1, 4, 11});
  few.sync = MlpVariant::Sync::RowSync;
  few.weights_first = false;
  v.push_back(few);
  MlpVariant mixed1;  // skinny producer, Hopper consumer
  mixed1.g1 = GemmChoice::skinny({1, 6, 0});
  mixed1.g2.hopper.tile_m = 64;
  v.push_back(mixed1);
  MlpVariant mixed2;  // Hopper producer (64-row tiles, split-K), skinny consumer
  mixed2.g1.hopper.tile_m = 64;
  mixed2.g1.hopper.splits = 2;
  mixed2.g2 = GemmChoice::skinny({2, 4, 0});
  v.push_back(mixed2);
  MlpVariant pdl_only;
  pdl_only.ordering = Ordering::StreamOrder;
  pdl_only.pdl_only = true;
  pdl_only.g1 = GemmChoice::skinny();
  pdl_only.g2 = GemmChoice::skinny();
  v.push_back(pdl_only);
  skinny::SkinnyConfig late{1, 4, 0, true};  // the late PDL trigger, under PDL alone and under TileSync + PDL
  late.late_trigger = true;
  MlpVariant late_pdl_only = pdl_only, late_sync;
  late_pdl_only.g1 = late_sync.g1 = GemmChoice::skinny(late);
  late_sync.g2 = GemmChoice::skinny();
  v.push_back(late_pdl_only);
  v.push_back(late_sync);
  // Packed weights (-pk: one bulk copy of W per stage) under PDL alone, the W loaded before the PDL wait included:
  // stream-K on a 4-stage ring, and 11 CTAs on an 8-stage ring (every tile cut, each stage refilled).
  MlpVariant packed_pdl_only = pdl_only;
  packed_pdl_only.g1 = GemmChoice::skinny(skinny::parse_skinny_config("a1s4-pk-lt"));
  packed_pdl_only.g2 = GemmChoice::skinny(skinny::parse_skinny_config("p1s4-pk"));
  v.push_back(packed_pdl_only);
  packed_pdl_only.g2 = GemmChoice::skinny(skinny::parse_skinny_config("c11s8-pk"));
  v.push_back(packed_pdl_only);
  // Both GEMMs in one launch (skinny::SkinnyChainOp): the default split, the K-aligned split, and few
  // CTAs (every tile cut; the phases on different CTA counts, either way round; RowSync once).
  MlpVariant fused;  // (one CTA per SM: two of the fused kernel do not fit at 64 rows with SwiGLU)
  fused.fused = true;
  fused.g1 = GemmChoice::skinny({1, 4, 0});
  fused.g2 = GemmChoice::skinny({1, 4, 0});
  v.push_back(fused);
  MlpVariant fused_aligned = fused;
  fused_aligned.g1 = fused_aligned.g2 = GemmChoice::skinny({1, 4, 0, true});
  v.push_back(fused_aligned);
  MlpVariant fused_few = fused;
  fused_few.sync = MlpVariant::Sync::RowSync;
  fused_few.g1 = GemmChoice::skinny({1, 6, 7});
  fused_few.g2 = GemmChoice::skinny({1, 6, 11});
  v.push_back(fused_few);
  MlpVariant fused_few2 = fused;
  fused_few2.g1 = GemmChoice::skinny({1, 8, 13});
  fused_few2.g2 = GemmChoice::skinny({1, 8, 5});
  v.push_back(fused_few2);
  // A variant like `base` with these two skinny GEMMs.
  auto add = [&v](MlpVariant x, const skinny::SkinnyConfig& c1, const skinny::SkinnyConfig& c2) {
    x.g1 = GemmChoice::skinny(c1);
    x.g2 = GemmChoice::skinny(c2);
    v.push_back(x);
  };
  // The wgmma consumers (-wg): two launches under TileSync + PDL (the aligned split and stream-K),
  // and one launch with every tile cut.
  skinny::SkinnyConfig wg_aligned{1, 4, 0, true}, wg_streamk{1, 6, 0}, wg_few1{1, 4, 7}, wg_few2{1, 4, 11};
  for (skinny::SkinnyConfig* c : {&wg_aligned, &wg_streamk, &wg_few1, &wg_few2}) c->wgmma = true;
  add(MlpVariant{}, wg_aligned, wg_streamk);
  add(fused, wg_few1, wg_few2);
  // Packed weights (-pk, one 16 KB bulk copy per stage): two launches under TileSync + PDL, and one launch
  // with every tile cut and wgmma consumers.
  skinny::SkinnyConfig pk_aligned{1, 4, 0, true}, pk_streamk{2, 4, 0}, pk_few1 = wg_few1, pk_few2 = wg_few2;
  for (skinny::SkinnyConfig* c : {&pk_aligned, &pk_streamk, &pk_few1, &pk_few2}) c->packed = true;
  add(MlpVariant{}, pk_aligned, pk_streamk);
  add(fused, pk_few1, pk_few2);
  // The dynamic tail (-dt: items from a queue, tiles finished by whichever warp publishes last): TileSync + PDL
  // (the consumer's X waits per item, posts by the tile's last column group), RowSync with few CTAs and wgmma,
  // and PDL alone with the late trigger.
  skinny::SkinnyConfig dt_aligned = pk_aligned, dt_streamk = pk_streamk, dt_few1{1, 4, 7}, dt_few2{1, 4, 11};
  for (skinny::SkinnyConfig* c : {&dt_aligned, &dt_streamk, &dt_few1, &dt_few2}) c->dyn_tail = skinny::kDefaultDynTail;
  dt_few1.wgmma = dt_few2.wgmma = true;
  dt_few2.dyn_tail = 40;
  add(MlpVariant{}, dt_aligned, dt_streamk);
  add(few, dt_few1, dt_few2);
  skinny::SkinnyConfig dt_late = dt_aligned;
  dt_late.late_trigger = true;
  add(pdl_only, dt_late, dt_streamk);
  return v;
}

}  // namespace

namespace {

// Every variant's output, run after run and under CUDA-graph replay, is bit-identical to the same
// kernels (same tiles, splits, orders, CTA counts) run in stream order.
// poster_delay_ns: fault injection (StageParams::fault_poster_delay_ns), a poster warp that lags its
// consumers by that much per tile.
// F: GEMM 1's output width (SwiGLU: W1 [H, 2F] packed for each variant's GEMM-1 tile width, padded to
// whole blocks where its half does not divide F).
void expect_chains_bit_identical(int T, const std::vector<MlpVariant>& variants, std::mt19937& rng,
                                 uint32_t poster_delay_ns = 0, int F = 1536) {
  for (Activation act : {Activation::GeLU, Activation::SwiGLU}) {
    for (DType dt : {DType::F16, DType::BF16}) {
      const int H = 1024, F1 = act == Activation::SwiGLU ? 2 * F : F;
      MlpBuffers b(T, H, F, F1);
      b.random_x(rng, dt);
      b.W1.random(rng, 2.0f / std::sqrt(float(H)), dt);
      b.W2.random(rng, 2.0f / std::sqrt(float(F)), dt);
      std::map<int, std::unique_ptr<Buf>> packed;  // SwiGLU: W1 packed per GEMM-1 tile width
      for (const MlpVariant& v : variants) {
        const void* w1 = b.W1.d;
        if (act == Activation::SwiGLU) {
          const int tn = v.g1.swiglu_pack();
          std::unique_ptr<Buf>& pk = packed[tn];
          if (!pk) {
            pk = std::make_unique<Buf>(size_t(H) * workloads::mlp_w1_cols(act, F, v.g1));
            pack_swiglu_columns(b.W1.h.data(), pk->h.data(), H, F, tn);
            BRAID_CUDA_CHECK(cudaMemcpy(pk->d, pk->h.data(), pk->h.size() * 2, cudaMemcpyHostToDevice));
          }
          w1 = pk->d;
        }
        const MlpProblem p{dt, act, T, H, F, b.X.d, w1, b.W2.d, b.Hid.d, b.Y.d};
        try {
          auto fp16_only = [](const hopper::GemmConfig& c) {
            return c.multicast > 1 || c.tile_m == 192 || c.tile_n == 192 || c.transposed;
          };
          if (dt == DType::BF16 && (fp16_only(v.g1.hopper) || fp16_only(v.g2.hopper))) continue;
          SCOPED_TRACE(std::string(activation_name(act)) + " " + dtype_name(dt) + " " + v.name());
          // Reference: the same kernels (same tiles, splits, orders) in stream order.
          MlpVariant stream = v;
          stream.ordering = Ordering::StreamOrder;
          stream.pdl_only = false;
          stream.fused = false;
          stream.dynamic = false;
          Mlp ref(p, stream);
          b.Y.poison();
          ref.run(nullptr);
          ref.check(nullptr);
          b.Y.download();
          const std::vector<uint16_t> expect = b.Y.h;
          for (size_t i = 0; i < expect.size(); ++i) ASSERT_TRUE(std::isfinite(to_float(expect[i], dt))) << i;
          MlpProblem padded = p;  // (X and Hid read with their NaN rows past T: the same Y)
          padded.x_rows = b.rows;
          padded.hid_rows = b.rows;
          Mlp m(padded, v, ChainOptions{true, v.weights_first, 5000, false});
          if (poster_delay_ns)
            m.chain().set_params_hook([&](int, StageParams& sp) { sp.fault_poster_delay_ns = poster_delay_ns; });
          cudaStream_t s;
          BRAID_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
          for (int rep = 0; rep < 4; ++rep) {
            b.Y.poison();
            b.Hid.poison();
            m.run(s);
            m.check(s);
            b.Y.download();
            ASSERT_EQ(std::memcmp(expect.data(), b.Y.h.data(), expect.size() * 2), 0) << "rep " << rep;
          }
          // CUDA graph replays (the run counters live on the device).
          cudaGraph_t graph;
          cudaGraphExec_t exec;
          BRAID_CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
          m.run(s);
          BRAID_CUDA_CHECK(cudaStreamEndCapture(s, &graph));
          BRAID_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
          for (int rep = 0; rep < 20; ++rep) BRAID_CUDA_CHECK(cudaGraphLaunch(exec, s));
          b.Y.poison();
          BRAID_CUDA_CHECK(cudaGraphLaunch(exec, s));
          m.check(s);
          b.Y.download();
          EXPECT_EQ(std::memcmp(expect.data(), b.Y.h.data(), expect.size() * 2), 0) << "graph replay";
          cudaGraphExecDestroy(exec);
          cudaGraphDestroy(graph);
          cudaStreamDestroy(s);
        } catch (const std::exception& e) {
          ADD_FAILURE() << "T=" << T << " " << activation_name(act) << " " << dtype_name(dt) << " " << v.name() << ": "
                        << e.what();
        }
      }
    }
  }
}

}  // namespace

TEST_F(HopperTest, MlpChainBitIdenticalToStreamOrder) {
  std::mt19937 rng(3);
  expect_chains_bit_identical(333, sync_variants(), rng);
}

// GEMM 2 by ticket (MlpVariant::dynamic) needs tile sync and a Hopper GEMM that can take tickets: each refusal
// names the variant and why, before anything runs.
TEST_F(HopperTest, MlpDynamicDispatchIsRefusedWhereItCannotRun) {
  const int T = 200, H = 512, F = 768;
  MlpBuffers b(T, H, F, F);
  const MlpProblem p{DType::F16, Activation::GeLU, T, H, F, b.X.d, b.W1.d, b.W2.d, b.Hid.d, b.Y.d};
  auto refusal = [&](const MlpVariant& v) -> std::string {
    try {
      Mlp m(p, v);
    } catch (const PlanError& e) {
      return e.what();
    }
    return "";
  };
  MlpVariant ok;
  ok.dynamic = true;
  EXPECT_EQ(refusal(ok), "");
  EXPECT_NE(ok.name().find("-dyn"), std::string::npos) << ok.name();
  MlpVariant stream = ok;
  stream.ordering = Ordering::StreamOrder;
  EXPECT_NE(refusal(stream).find("needs tile sync"), std::string::npos) << refusal(stream);
  MlpVariant streamk = ok;
  streamk.g2.hopper.stream_k = true;
  streamk.g2.hopper.ctas = 5;  // (a whole wave of 4 tiles, then a tail shared by 5 CTAs)
  EXPECT_NE(refusal(streamk).find("stream-K"), std::string::npos) << refusal(streamk);
  MlpVariant pingpong = ok;
  pingpong.g2.hopper.pingpong = true;
  EXPECT_NE(refusal(pingpong).find("pingpong"), std::string::npos) << refusal(pingpong);
  MlpVariant skinny = ok;
  skinny.g2 = workloads::GemmChoice::skinny(skinny::SkinnyConfig{});
  MlpProblem few = p;
  few.T = 8;
  MlpVariant skinny_few = skinny;
  std::string why;
  try {
    Mlp m(few, skinny_few);
  } catch (const PlanError& e) {
    why = e.what();
  }
  EXPECT_NE(why.find("no dynamic dispatch"), std::string::npos) << why;
}

// The synced kernel forms (gemm_config.hpp, "The forms of braid's GEMM kernels"): a tile-synchronized chain of
// whole-tile GEMMs walking a static order launches both GEMMs in the synced form of their activation -- counted --
// and computes the general form's bits, under PDL and behind the wait kernel (its start mark), run after run. (Its
// bits against stream order: MlpChainBitIdenticalToStreamOrder, which runs the synced forms by default.)
TEST_F(HopperTest, SyncedKernelFormsAreTakenAndBitIdentical) {
  LeanFormsScope scope;
  std::mt19937 rng(12);
  const int T = 333, H = 1024, F = 1536;
  MlpBuffers b(T, H, F, F);
  b.X.random(rng, 1.0f, DType::F16);
  b.W1.random(rng, 2.0f / std::sqrt(float(H)), DType::F16);
  b.W2.random(rng, 2.0f / std::sqrt(float(F)), DType::F16);
  const MlpProblem p{DType::F16, Activation::GeLU, T, H, F, b.X.d, b.W1.d, b.W2.d, b.Hid.d, b.Y.d};
  cudaStream_t s;
  BRAID_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  const std::pair<MlpVariant::Sync, Ordering> kinds[] = {{MlpVariant::Sync::TileSync, Ordering::PDL},
                                                         {MlpVariant::Sync::RowSync, Ordering::WaitKernel}};
  for (const auto& [sync, ordering] : kinds) {
    MlpVariant v;
    v.sync = sync;
    v.ordering = ordering;
    SCOPED_TRACE(v.name());
    Mlp m(p, v, ChainOptions{true, v.weights_first, 5000, false});
    set_lean_forms(false);
    const long before = synced_form_launches();
    b.Y.poison();
    m.run(s);
    m.check(s);
    b.Y.download();
    EXPECT_EQ(synced_form_launches(), before) << "a synced-form launch with the forms off";
    const std::vector<uint16_t> general = b.Y.h;
    for (size_t i = 0; i < general.size(); ++i) ASSERT_TRUE(std::isfinite(to_float(general[i], DType::F16))) << i;
    set_lean_forms(true);
    for (int rep = 0; rep < 3; ++rep) {
      b.Y.poison();
      b.Hid.poison();
      m.run(s);
      m.check(s);
      b.Y.download();
      ASSERT_EQ(std::memcmp(general.data(), b.Y.h.data(), general.size() * 2), 0) << "rep " << rep;
    }
    EXPECT_EQ(synced_form_launches(), before + 6) << "both GEMMs of each run in a synced form";
  }
  cudaStreamDestroy(s);
}

// A poster warp that lags its consumers by 20 us per tile (fault injection): the consumer warps run
// tiles ahead of it, and every tile must still be posted once, after all of its stores (the hand-off
// protocol: PostSlot in gemm_kernel.cuh). The variants with few CTAs give each CTA several tiles.
TEST_F(HopperTest, MlpChainWithALaggingPosterIsBitIdentical) {
  std::mt19937 rng(6);
  expect_chains_bit_identical(333, sync_variants(), rng, 20000);
}

// An F whose halves of 192- and 256-wide tiles are not whole blocks (176 = 1.8 x 96 = 1.4 x 128), as
// LLaMA-65B's 2752 is for 192: GEMM 1 on W1 packed with zero padding (swiglu_packed_cols), synchronized
// chains bit-identical to stream order, and stream order within fp16 tolerance of an fp32 reference of
// the whole MLP computed from the unpacked weights.
TEST_F(HopperTest, MlpChainOnPaddedSwigluWeights) {
  std::mt19937 rng(8);
  std::vector<MlpVariant> variants;
  for (int tm : {64, 128})
    for (int tn : {192, 256}) {
      if (tm == 64 && tn == 256) continue;
      for (auto s : {MlpVariant::Sync::TileSync, MlpVariant::Sync::RowSync}) {
        MlpVariant x;
        x.sync = s;
        x.g1.hopper.tile_m = tm;
        x.g1.hopper.tile_n = tn;
        variants.push_back(x);
      }
    }
  const int T = 200, H = 1024, F = 176;
  expect_chains_bit_identical(T, variants, rng, 0, F);

  // Stream order against the fp32 reference (Hid rounded to fp16 as GEMM 1 stores it).
  MlpBuffers b(T, H, F, 2 * F);
  b.X.random(rng, 1.0f, DType::F16);
  b.W1.random(rng, 2.0f / std::sqrt(float(H)), DType::F16);
  b.W2.random(rng, 2.0f / std::sqrt(float(F)), DType::F16);
  const std::vector<float> hid = swiglu_reference(b.X, b.W1.h, T, F, H, DType::F16);
  std::vector<float> want(size_t(T) * H);
  for (int m = 0; m < T; ++m)
    for (int n = 0; n < H; ++n) {
      double y = 0;
      for (int k = 0; k < F; ++k) y += double(hid[size_t(m) * F + k]) * to_float(b.W2.h[size_t(k) * H + n], DType::F16);
      want[size_t(m) * H + n] = float(y);
    }
  for (const MlpVariant& v : {variants[0], variants[2], variants[4]}) {
    SCOPED_TRACE(v.name());
    Buf W1p(size_t(H) * workloads::mlp_w1_cols(Activation::SwiGLU, F, v.g1));
    pack_swiglu_columns(b.W1.h.data(), W1p.h.data(), H, F, v.g1.swiglu_pack());
    BRAID_CUDA_CHECK(cudaMemcpy(W1p.d, W1p.h.data(), W1p.h.size() * 2, cudaMemcpyHostToDevice));
    MlpVariant stream = v;
    stream.ordering = Ordering::StreamOrder;
    Mlp m({DType::F16, Activation::SwiGLU, T, H, F, b.X.d, W1p.d, b.W2.d, b.Hid.d, b.Y.d}, stream);
    b.Y.poison();
    b.Hid.poison();
    m.run(nullptr);
    m.check(nullptr);
    b.Y.download();
    EXPECT_LT(rel_error(want, b.Y, DType::F16), 1e-2);
  }
}

TEST_F(HopperTest, SkinnyMlpChainBitIdenticalToStreamOrder) {
  std::mt19937 rng(4);
  for (int T : {1, 5, 37}) expect_chains_bit_identical(T, skinny_variants(), rng);
}


// GemmArgs::a_rows: A read with rows past M (here NaN) gives D's first M rows bit for bit as A read with M rows --
// every output row is the product of its own row of A -- and writes nothing past them. Every kind of kernel that
// reads A through a tensor map: whole tiles (64/128 rows, direct and staged stores), split-K (last arrival,
// reduce-scatter), stream-K, pingpong, the transposed kernels (A as the MMA's N operand), the skinny GEMM (both
// consumers, the cluster reduction); M within one row tile, ragged over two, fp16 and bf16. Rows declared past the
// allocation are refused.
TEST_F(HopperTest, PaddedRowsOfAGiveTheSameBits) {
  std::mt19937 rng(57);
  const int K = 512, N = 512, kGuard = 64;
  int checked = 0;
  for (DType dt : {DType::F16, DType::BF16})
    for (int M : {1, 5, 37, 70}) {
      const int rows = workloads::padded_rows(M);
      Buf A(size_t(rows) * K), B(size_t(K) * N), D(size_t(M + kGuard) * N);
      A.random(rng, 1.0f, dt);
      for (size_t i = size_t(M) * K; i < A.h.size(); ++i) A.h[i] = (i & 1) ? 0xffff : (dt == DType::F16 ? 0x7c00 : 0x7f80);
      BRAID_CUDA_CHECK(cudaMemcpy(A.d, A.h.data(), A.h.size() * 2, cudaMemcpyHostToDevice));
      B.random(rng, 2.0f / std::sqrt(float(K)), dt);
      std::vector<workloads::GemmChoice> choices;
      for (const char* name : {"64x128", "64x128-staged", "64x192-staged", "128x128-sk2", "128x128-sk3-rs", "128x64-streamk",
                               "128x128-pp", "128x192-t", "192x192-t"}) {
        GemmConfig c;
        ASSERT_EQ(parse_gemm_config(name, c), "") << name;
        choices.push_back(c);
      }
      if (M <= skinny::kMaxRows)
        for (const char* name : {"a1s4", "p1s4-wg", "a1s4-dsm", "c13s4"})
          choices.push_back(workloads::GemmChoice::skinny(skinny::parse_skinny_config(name)));
      for (const workloads::GemmChoice& c : choices) {
        SCOPED_TRACE(std::string(dtype_name(dt)) + " M=" + std::to_string(M) + " " + c.name());
        GemmArgs exact{dt, A.d, B.d, D.d, M, N, K, Activation::GeLU};
        GemmArgs padded = exact;
        padded.a_rows = rows;
        workloads::GemmStage ref, test;
        const std::string why = ref.prepare(exact, c);
        if (!why.empty()) continue;  // (not for this type or shape; the configurations' own tests cover that)
        ASSERT_EQ(test.prepare(padded, c), "");
        D.poison();
        ref.run(nullptr);
        BRAID_CUDA_CHECK(cudaDeviceSynchronize());
        D.download();
        const std::vector<uint16_t> want = D.h;
        for (size_t i = 0; i < size_t(M) * N; ++i) ASSERT_TRUE(std::isfinite(to_float(want[i], dt))) << i;
        for (int rep = 0; rep < 2; ++rep) {
          D.poison();
          test.run(nullptr);
          BRAID_CUDA_CHECK(cudaDeviceSynchronize());
          D.download();
          ASSERT_EQ(std::memcmp(want.data(), D.h.data(), size_t(M) * N * 2), 0) << "rep " << rep;
          for (size_t i = size_t(M) * N; i < D.h.size(); ++i) ASSERT_EQ(D.h[i], 0xffff) << "written past row M: " << i;
        }
        ++checked;
        // Declared rows past the allocation are refused, not read.
        GemmArgs beyond = exact;
        beyond.a_rows = rows * 16;
        workloads::GemmStage refused;
        EXPECT_NE(refused.prepare(beyond, c).find("past the end of its allocation"), std::string::npos);
      }
    }
  EXPECT_GE(checked, 50);
}

// The stuck-wait tests' chain: random fp16 inputs, GeLU, bounded waits of 200 ms.
struct StuckTestMlp {
  int T, H, F;
  MlpVariant v;
  MlpBuffers b;
  Mlp m;
  StuckTestMlp(std::mt19937& rng, int T_, int H_, int F_, const MlpVariant& v_)
      : T(T_), H(H_), F(F_), v(v_), b(T, H, F, F),
        m({DType::F16, Activation::GeLU, T, H, F, b.X.d, b.W1.d, b.W2.d, b.Hid.d, b.Y.d}, v,
          ChainOptions{true, true, 200, false}) {
    b.X.random(rng, 1.0f, DType::F16);
    b.W1.random(rng, 0.05f, DType::F16);
    b.W2.random(rng, 0.05f, DType::F16);
  }
  // Fault injection: GEMM 1 posts nothing (its output policy switched off), and GEMM 2 reads its
  // producer's completion from its own run counter. Without the latter, a GEMM 2 CTA that starts after
  // GEMM 1 has finished (tiny GEMMs: it happens) sees the producer stage complete, skips its waits and
  // reports nothing -- correctly, since nothing is stuck then (seen once, 2026-11-27, with GEMM code that
  // had passed this test before: bench/results/attn-kernel-h100-20261127/gpu-tests-before-fix.log).
  void stick_gemm2() {
    m.chain().set_params_hook([](int stage, StageParams& sp) {
      if (stage == 0) sp.sems = nullptr;
      if (stage == 1) sp.inputs[0].state = sp.state;
    });
  }
  // After a report, with the fault removed (the hook): the chain runs again and gives the bits of braid's
  // kernels in stream order.
  void expect_stream_order_bits_without_the_fault() {
    m.chain().set_params_hook(nullptr);
    MlpVariant stream = v;
    stream.fused = false;
    stream.ordering = Ordering::StreamOrder;
    Mlp ref({DType::F16, Activation::GeLU, T, H, F, b.X.d, b.W1.d, b.W2.d, b.Hid.d, b.Y.d}, stream);
    b.Y.poison();
    ref.run(nullptr);
    ref.check(nullptr);
    b.Y.download();
    const std::vector<uint16_t> expect = b.Y.h;
    b.Y.poison();
    m.run(nullptr);
    m.check(nullptr);
    b.Y.download();
    EXPECT_EQ(std::memcmp(expect.data(), b.Y.h.data(), expect.size() * 2), 0);
  }
  // One run; check() must throw a SyncError naming stage gemm2 (and, with `gave_up`, a bounded wait
  // that gave up).
  void expect_gemm2_reported(bool gave_up) {
    m.run(nullptr);
    try {
      m.check(nullptr);
      FAIL() << "expected a SyncError";
    } catch (const SyncError& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("gemm2"), std::string::npos) << msg;
      if (gave_up) EXPECT_NE(msg.find("gave up"), std::string::npos) << "a bounded wait should have reported: " << msg;
    }
  }
};

TEST_F(HopperTest, StuckWaitReportsInsteadOfHanging) {
  std::mt19937 rng(5);
  StuckTestMlp t(rng, 256, 512, 512, MlpVariant{});
  t.stick_gemm2();
  t.expect_gemm2_reported(false);
}

// The fused skinny chain (one launch, two stages): a phase-1 wait that can never be satisfied is
// reported (stage gemm2) and the kernel finishes, instead of hanging.
TEST_F(HopperTest, FusedSkinnyStuckWaitReportsInsteadOfHanging) {
  std::mt19937 rng(6);
  const int T = 8, H = 512, F = 768;
  MlpVariant v;
  v.fused = true;
  v.g1 = v.g2 = workloads::GemmChoice::skinny();
  StuckTestMlp t(rng, T, H, F, v);
  t.stick_gemm2();
  t.expect_gemm2_reported(true);
  t.expect_stream_order_bits_without_the_fault();
}

// The skinny GEMM in two launches (its producer warp runs the waits for X while the consumer warps
// compute): a wait that can never be satisfied is reported (stage gemm2, a bounded wait that gave up)
// and the kernels finish; with the hook removed the synchronized chain gives stream order's bits again.
TEST_F(HopperTest, SkinnyStuckWaitReportsInsteadOfHanging) {
  std::mt19937 rng(7);
  const int T = 8, H = 512, F = 768;
  MlpVariant v;
  v.g1 = v.g2 = workloads::GemmChoice::skinny();
  StuckTestMlp t(rng, T, H, F, v);
  t.stick_gemm2();
  t.expect_gemm2_reported(true);
  t.expect_stream_order_bits_without_the_fault();
}

#endif  // BRAID_HAVE_HOPPER
