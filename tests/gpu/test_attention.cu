// GPU tests of braid's fused attention kernel and of the attention block chain built on it (issue 4):
//  - AttentionOp against the fp32 reference (attention_reference.cuh): fp16 and bf16, prompts (causal
//    and not), decode with a KV cache and key splits, a prompt appended to a cache, dropout; the cache
//    update writes exactly the new tokens' K and V;
//  - dropout: p = 0 is bit-identical to no dropout, a seed reproduces its bits, another seed does not;
//  - bad input is rejected with a reason;
//  - the paper's unfused chain (P, softmax-dropout, R.V kernels) against the same reference, and
//    against the fused kernel with the same dropout mask;
//  - the synchronized block (TileSync / RowSync / StridedSync x PDL / wait kernel, R off, PDL alone),
//    fused and unfused, is bit-identical to the same kernels in stream order, run after run with the
//    outputs poisoned, and matches the reference; a QKV stage that never posts makes the attention's bounded wait fail.
// Skips without a GPU, and without an sm_90 GPU (the block's GEMMs are Hopper kernels).
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "braid/bench/attention_reference.cuh"
#include "braid/kernels/attention/attention_op.hpp"
#include "braid/kernels/skinny/skinny_op.hpp"
#include "braid/workloads/attention_block.cuh"
#include "braid/kernels/common/activation.cuh"
#include "hopper_test_util.cuh"

#ifdef BRAID_HAVE_HOPPER

using namespace braid;
using namespace braid::hopper::testing;
using braid::attention::AttentionArgs;
using braid::attention::AttentionConfig;
using braid::attention::AttentionOp;
using braid::hopper::DType;
using braid::workloads::AttentionBlock;
using braid::workloads::AttentionBlockProblem;
using braid::workloads::AttentionBlockVariant;

namespace {

struct DevF32 {
  float* d = nullptr;
  std::vector<float> h;
  explicit DevF32(size_t n) : h(n) { BRAID_CUDA_CHECK(cudaMalloc(&d, n * 4)); }
  ~DevF32() { cudaFree(d); }
  void download() { BRAID_CUDA_CHECK(cudaMemcpy(h.data(), d, h.size() * 4, cudaMemcpyDeviceToHost)); }
};

template <class F>
void with_type(DType dt, F&& f) {
  if (dt == DType::F16) f(__half{});
  else f(__nv_bfloat16{});
}

bench::RefAttentionArgs ref_args(const AttentionArgs& a) {
  bench::RefAttentionArgs r;
  r.B = a.B;
  r.S_new = a.S_new;
  r.S_cached = a.S_cached;
  r.S_max = a.S_max;
  r.NH = a.NH;
  r.causal = a.causal;
  r.drop_threshold = attention::dropout_threshold(a.dropout_p);
  r.keep_scale = r.drop_threshold ? float(1.0 / (1.0 - double(a.dropout_p))) : 1.f;
  r.seed = a.seed;
  return r;
}

struct AttnCase {
  int B, S_new, S_cached, NH;
  bool causal;
  float dropout;
  AttentionConfig cfg;
  bool update_cache;
  bool unfused = false;  // the paper's three kernels instead of the fused one
};

// Runs one attention problem on random data; returns the output bits, checks it against the reference.
std::vector<uint16_t> run_case(const AttnCase& c, DType dt, uint64_t seed = 5, float dropout_override = -1) {
  std::mt19937 rng(unsigned(c.B * 1000 + c.S_new * 7 + c.S_cached));
  const int HD = c.NH * 128, M = c.B * c.S_new, S_max = c.S_cached + c.S_new + 3;
  Buf qkv(size_t(M) * 3 * HD), kc(size_t(c.B) * S_max * HD), vc(size_t(c.B) * S_max * HD), out(size_t(M) * HD);
  qkv.random(rng, 2.0f, dt);
  kc.random(rng, 2.0f, dt);
  vc.random(rng, 1.0f, dt);
  out.poison();
  AttentionArgs a;
  a.dtype = dt;
  a.qkv = qkv.d;
  a.k_cache = kc.d;
  a.v_cache = vc.d;
  a.S_max = S_max;
  a.out = out.d;
  a.B = c.B;
  a.S_new = c.S_new;
  a.S_cached = c.S_cached;
  a.NH = c.NH;
  a.causal = c.causal;
  a.dropout_p = dropout_override >= 0 ? dropout_override : c.dropout;
  a.seed = seed;
  a.update_cache = c.update_cache;
  DevF32 ref(size_t(M) * HD);
  with_type(dt, [&](auto t) {
    using T = decltype(t);
    bench::ref_attention(reinterpret_cast<const T*>(qkv.d), reinterpret_cast<const T*>(kc.d),
                         reinterpret_cast<const T*>(vc.d), ref.d, ref_args(a));
  });
  AttentionOp op;
  attention::UnfusedAttention un;
  const std::string why = c.unfused ? un.prepare(a) : op.prepare(a, c.cfg);
  EXPECT_EQ(why, "");
  if (!why.empty()) return {};
  if (c.unfused) un.run(nullptr);
  else op.run(nullptr);
  BRAID_CUDA_CHECK(cudaDeviceSynchronize());
  out.download();
  ref.download();
  EXPECT_LT(rel_error(ref.h, out, dt), 1e-2) << "B=" << c.B << " S_new=" << c.S_new << " S_cached=" << c.S_cached
                                             << " " << c.cfg.name() << " p=" << a.dropout_p;
  if (c.update_cache) {  // the new tokens' K and V, bit for bit, at positions S_cached ..; the rest untouched
    const std::vector<uint16_t> k0 = kc.h, v0 = vc.h;
    kc.download();
    vc.download();
    qkv.download();
    size_t bad_k = 0, bad_v = 0;
    for (int b = 0; b < c.B; ++b)
      for (int pos = 0; pos < S_max; ++pos)
        for (int e = 0; e < HD; e += 37) {
          const size_t ci = (size_t(b) * S_max + pos) * HD + e;
          const bool fresh = pos >= c.S_cached && pos < c.S_cached + c.S_new;
          const size_t qi = size_t(b * c.S_new + pos - c.S_cached) * 3 * HD;
          bad_k += kc.h[ci] != (fresh ? qkv.h[qi + HD + e] : k0[ci]);
          bad_v += vc.h[ci] != (fresh ? qkv.h[qi + 2 * HD + e] : v0[ci]);
        }
    EXPECT_EQ(bad_k, 0u) << "K cache elements not as expected";
    EXPECT_EQ(bad_v, 0u) << "V cache elements not as expected";
  }
  return out.h;
}

// Largest elementwise difference of two fp16 outputs of the same size.
double max_abs_diff_f16(const std::vector<uint16_t>& a, const std::vector<uint16_t>& b) {
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i)
    m = std::max(m, double(std::fabs(to_float(a[i], DType::F16) - to_float(b[i], DType::F16))));
  return m;
}

// The Hopper kernel with each tile's key blocks split over a 2-CTA cluster.
AttentionConfig hopper_pair(bool reverse) {
  AttentionConfig c{4, 0, reverse, true};
  c.cluster = 2;
  return c;
}

// The Hopper kernel with its long causal query blocks' keys halved between two CTAs (wg-s).
AttentionConfig hopper_split_long() {
  AttentionConfig c{4, 0, false, true};
  c.split_long = true;
  return c;
}

// The Hopper kernel with its PDL trigger after the key loop (-lt).
AttentionConfig hopper_late_trigger() {
  AttentionConfig c{4, 0, false, true};
  c.late_trigger = true;
  return c;
}

// The decode kernel with its keys split over a cluster of `ctas` CTAs.
AttentionConfig decode_cluster(int warps, int ctas) {
  AttentionConfig c{warps, 0, false, false, true};
  c.cluster = ctas;
  return c;
}

TEST_F(HopperTest, AttentionMatchesReference) {
  const std::vector<AttnCase> cases = {
      {1, 128, 0, 2, true, 0.f, {4, 0}, false},     // prompt, causal
      {2, 192, 0, 3, true, 0.f, {4, 0}, false},     // two batches, 3 q blocks each
      {1, 64, 0, 2, false, 0.f, {4, 0}, false},     // not causal
      {2, 16, 0, 2, true, 0.f, {1, 0}, false},      // one-warp CTAs
      {3, 1, 200, 2, true, 0.f, {1, 64}, true},     // decode: cache + one token, 4 key splits, cache update
      {2, 1, 513, 3, true, 0.f, {1, 128}, true},    // decode, ragged last split
      {1, 4, 77, 2, true, 0.f, {1, 0}, true},       // a few tokens appended to a cache
      {1, 128, 100, 2, true, 0.f, {4, 64}, true},   // prompt after a cache, with key splits
      {1, 128, 0, 2, true, 0.2f, {4, 0}, false},    // dropout
      {2, 256, 0, 2, true, 0.f, {4, 0, true}, false},  // query blocks launched last first
      {2, 1, 300, 2, true, 0.3f, {1, 128}, false},  // dropout with splits
      // The Hopper kernel (wg: TMA + wgmma, 128-row query blocks, 128-key blocks)
      {1, 128, 0, 2, true, 0.f, {4, 0, false, true}, false},   // one block: the diagonal only
      {2, 384, 0, 3, true, 0.f, {4, 0, true, true}, false},    // two sequences, 3 blocks, heavy first
      {1, 256, 0, 2, false, 0.f, {4, 0, false, true}, false},  // not causal
      {1, 256, 0, 2, true, 0.2f, {4, 0, false, true}, false},  // dropout
      {2, 128, 0, 1, true, 0.f, {4, 0, false, true}, true},    // the cache update of a prompt
      // ... its key blocks halved between the two CTAs of a cluster (wg-c2), merged through DSMEM
      {1, 128, 0, 2, true, 0.f, hopper_pair(false), false},   // one block: split 1 has no keys
      {2, 512, 0, 3, true, 0.f, hopper_pair(true), false},    // two sequences, 4 blocks, heavy first
      {1, 384, 0, 2, false, 0.f, hopper_pair(false), false},  // not causal: 3 blocks split 2 + 1
      {1, 256, 0, 2, true, 0.2f, hopper_pair(false), false},  // dropout
      {2, 256, 0, 1, true, 0.f, hopper_pair(true), true},     // the cache update (by the diagonal's CTA)
      // ... its long query blocks' key blocks halved between two CTAs (wg-s), merged by the later of the two
      {1, 512, 0, 2, true, 0.f, hopper_split_long(), false},     // 4 blocks: the last split 1 + 3
      {2, 768, 0, 3, true, 0.2f, hopper_split_long(), false},    // two sequences, 6 blocks (the last two split), dropout
      {2, 256, 0, 1, true, 0.f, hopper_split_long(), true},      // 2 blocks split 1 + 1; the cache update (by the diagonal's CTA)
      {1, 1024, 0, 12, true, 0.f, hopper_split_long(), false},   // GPT-3's S = 1024: 96 tiles, on 132 SMs 3 x 12 split
      {1, 2048, 0, 8, true, 0.f, hopper_split_long(), false},    // LLaMA's S = 2048: more CTAs than SMs (132: 160)
      // The decode kernel (d: 16 lanes per key, K and V into registers, at most 4 new tokens)
      {3, 1, 200, 2, true, 0.f, {4, 128, false, false, true}, true},   // 2 splits, ragged, cache update
      {2, 1, 513, 3, true, 0.f, {8, 0, false, false, true}, true},     // one split, 8 warps
      {1, 1, 2047, 2, true, 0.f, {4, 64, false, false, true}, false},  // 32 splits of one step each
      {1, 4, 77, 2, true, 0.f, {4, 0, false, false, true}, true},      // 4 tokens appended (causal rows)
      {2, 3, 130, 2, false, 0.f, {8, 64, false, false, true}, true},   // 3 tokens, not causal, splits
      {2, 1, 300, 2, true, 0.3f, {4, 128, false, false, true}, false}, // dropout with splits
      {1, 2, 0, 2, true, 0.f, {4, 0, false, false, true}, true},       // no cache: new keys only
      // ... its splits as one thread-block cluster, merged through distributed shared memory
      {3, 1, 700, 2, true, 0.f, decode_cluster(8, 8), true},   // 8 CTAs of 128 keys (the last ragged)
      {2, 4, 200, 3, true, 0.f, decode_cluster(4, 4), true},   // 4 tokens, causal rows, 4 CTAs
      {2, 1, 100, 2, true, 0.3f, decode_cluster(8, 8), false}, // 101 keys: 2 CTAs of 64, dropout
      {1, 1, 2047, 2, true, 0.f, decode_cluster(8, 16), true}, // 16 CTAs (a non-portable cluster size)
  };
  for (DType dt : {DType::F16, DType::BF16})
    for (const auto& c : cases) {
      SCOPED_TRACE(std::string(hopper::dtype_name(dt)) + " B=" + std::to_string(c.B) + " S_new=" + std::to_string(c.S_new) +
                   " S_cached=" + std::to_string(c.S_cached) + " " + c.cfg.name());
      run_case(c, dt);
    }
}

// The attention kernels' lean forms (gemm_config.hpp, "The forms of braid's GEMM kernels"; AttentionOp launches them
// without tile sync) give the general forms' bits: the Hopper prompt kernel (causal, not causal, dropout, keys
// split over a cluster, the cache update) and the decode kernel (key splits, clusters, several tokens, dropout,
// the cache update); each lean run counted as one.
TEST_F(HopperTest, AttentionLeanFormsAreBitIdenticalToTheGeneralForm) {
  hopper::testing::LeanFormsScope scope;
  const std::vector<AttnCase> cases = {
      {2, 384, 0, 3, true, 0.f, {4, 0, true, true}, false},    // wg: two sequences, heavy first
      {1, 256, 0, 2, false, 0.f, {4, 0, false, true}, false},  // wg, not causal
      {1, 256, 0, 2, true, 0.2f, {4, 0, false, true}, false},  // wg, dropout
      {2, 512, 0, 3, true, 0.f, hopper_pair(true), false},     // wg-c2
      {2, 256, 0, 1, true, 0.f, hopper_pair(true), true},      // wg-c2, the cache update
      {2, 768, 0, 3, true, 0.f, hopper_split_long(), true},    // wg-s, the cache update
      {3, 1, 200, 2, true, 0.f, {4, 128, false, false, true}, true},  // decode: splits, cache update
      {2, 3, 130, 2, false, 0.f, {8, 64, false, false, true}, true},  // 3 tokens, not causal
      {2, 1, 300, 2, true, 0.3f, {4, 128, false, false, true}, false},  // dropout with splits
      {3, 1, 700, 2, true, 0.f, decode_cluster(8, 8), true},           // a cluster of 8
  };
  for (const auto& c : cases) {
    SCOPED_TRACE("B=" + std::to_string(c.B) + " S_new=" + std::to_string(c.S_new) + " S_cached=" +
                 std::to_string(c.S_cached) + " " + c.cfg.name());
    hopper::set_lean_forms(false);
    const long before = hopper::lean_form_launches();
    const std::vector<uint16_t> general = run_case(c, DType::F16);
    EXPECT_EQ(hopper::lean_form_launches(), before);
    hopper::set_lean_forms(true);
    const std::vector<uint16_t> lean = run_case(c, DType::F16);
    EXPECT_EQ(hopper::lean_form_launches(), before + 1);
    ASSERT_FALSE(general.empty());
    EXPECT_TRUE(lean == general) << "the lean form's output differs";
  }
}

TEST_F(HopperTest, UnfusedAttentionMatchesReference) {
  const std::vector<AttnCase> cases = {
      {1, 128, 0, 2, true, 0.f, {4, 0}, false, true},    // prompt, causal
      {2, 192, 0, 3, false, 0.f, {4, 0}, false, true},   // not causal, two sequences
      {3, 1, 200, 2, true, 0.f, {4, 0}, true, true},     // decode with a cache (200 + 1 keys: ragged last tile)
      {1, 64, 77, 2, true, 0.f, {4, 0}, true, true},     // prompt appended to a cache
      {1, 128, 0, 2, true, 0.2f, {4, 0}, false, true},   // dropout
  };
  for (DType dt : {DType::F16, DType::BF16})
    for (const auto& c : cases) {
      SCOPED_TRACE(std::string("unfused ") + hopper::dtype_name(dt) + " B=" + std::to_string(c.B) + " S_new=" +
                   std::to_string(c.S_new) + " S_cached=" + std::to_string(c.S_cached));
      run_case(c, dt);
    }
  // Same function as the fused kernel: with dropout both apply the same mask to the same probabilities.
  AttnCase f{1, 128, 40, 2, true, 0.25f, {4, 0}, false, false}, u = f;
  u.unfused = true;
  const auto a = run_case(f, DType::F16, 3), b = run_case(u, DType::F16, 3);
  ASSERT_EQ(a.size(), b.size());
  EXPECT_LT(max_abs_diff_f16(a, b), 2e-2) << "fused and unfused attention disagree beyond fp16 rounding";
}

TEST_F(HopperTest, AttentionDropoutIsReproducibleAndZeroIsNone) {
  const AttnCase c{1, 128, 64, 2, true, 0.f, {4, 64}, false};
  const auto none = run_case(c, DType::F16, 1);
  EXPECT_EQ(run_case(c, DType::F16, 99, 0.0f), none) << "p = 0 must equal no dropout exactly, whatever the seed";
  const auto d1 = run_case(c, DType::F16, 7, 0.25f);
  EXPECT_EQ(run_case(c, DType::F16, 7, 0.25f), d1) << "same seed, same bits";
  EXPECT_NE(run_case(c, DType::F16, 8, 0.25f), d1) << "another seed, another mask";
  EXPECT_NE(d1, none);
  // The Hopper kernel draws the same mask (same counters): it agrees with the mma.sync kernel to fp16
  // rounding with dropout on, and is bit-reproducible.
  const AttnCase w4{2, 256, 0, 2, true, 0.f, {4, 0}, false}, wg{2, 256, 0, 2, true, 0.f, {4, 0, false, true}, false};
  const auto a = run_case(w4, DType::F16, 11, 0.3f), b = run_case(wg, DType::F16, 11, 0.3f);
  ASSERT_EQ(a.size(), b.size());
  EXPECT_LT(max_abs_diff_f16(a, b), 2e-2) << "the wg and w4 kernels disagree with dropout on";
  EXPECT_EQ(run_case(wg, DType::F16, 11, 0.3f), b) << "wg: same seed, same bits";
  AttnCase wg2 = wg;
  wg2.cfg = hopper_pair(false);
  const auto b2 = run_case(wg2, DType::F16, 11, 0.3f);
  EXPECT_LT(max_abs_diff_f16(a, b2), 2e-2) << "wg-c2 and w4 disagree with dropout on";
  EXPECT_EQ(run_case(wg2, DType::F16, 11, 0.3f), b2) << "wg-c2: same seed, same bits";
  AttnCase wgs = wg;
  wgs.cfg = hopper_split_long();
  const auto b3 = run_case(wgs, DType::F16, 11, 0.3f);
  EXPECT_LT(max_abs_diff_f16(a, b3), 2e-2) << "wg-s and w4 disagree with dropout on";
  EXPECT_EQ(run_case(wgs, DType::F16, 11, 0.3f), b3) << "wg-s: same seed, same bits";
  // The decode kernel too (fp32 P instead of fp16 P: agreement to fp16 rounding), and p = 0 is none.
  const AttnCase w1{2, 1, 300, 2, true, 0.f, {1, 128}, false}, d4{2, 1, 300, 2, true, 0.f, {4, 128, false, false, true}, false};
  const auto e = run_case(w1, DType::F16, 13, 0.3f), f = run_case(d4, DType::F16, 13, 0.3f);
  ASSERT_EQ(e.size(), f.size());
  EXPECT_LT(max_abs_diff_f16(e, f), 2e-2) << "the decode and w1 kernels disagree with dropout on";
  EXPECT_EQ(run_case(d4, DType::F16, 13, 0.3f), f) << "d4: same seed, same bits";
  EXPECT_EQ(run_case(d4, DType::F16, 99, 0.f), run_case(d4, DType::F16, 1)) << "d4: p = 0 must equal no dropout";
}

TEST_F(HopperTest, AttentionRejectsWhatItCannotRun) {
  uint16_t* p = nullptr;
  BRAID_CUDA_CHECK(cudaMalloc(&p, 1 << 20));
  AttentionArgs a;
  a.qkv = p;
  a.out = p;
  a.B = 1;
  a.S_new = 100;  // not a multiple of 64
  a.NH = 1;
  EXPECT_NE(AttentionOp::can_implement(a, {4, 0}).find("multiple"), std::string::npos);
  a.S_new = 128;
  EXPECT_EQ(AttentionOp::can_implement(a, {4, 0}), "");
  EXPECT_NE(AttentionOp::can_implement(a, {3, 0}), "");
  EXPECT_NE(AttentionOp::can_implement(a, {4, 100}).find("split_keys"), std::string::npos);
  a.S_cached = 10;  // a cache without buffers
  EXPECT_NE(AttentionOp::can_implement(a, {4, 0}).find("cache"), std::string::npos);
  a.S_cached = 0;
  a.dropout_p = 1.0f;
  EXPECT_NE(AttentionOp::can_implement(a, {4, 0}).find("dropout"), std::string::npos);
  AttentionConfig cfg;
  EXPECT_EQ(attention::parse_attention_config("w1-s256", cfg), "");
  EXPECT_EQ(cfg.name(), "w1-s256");
  EXPECT_NE(attention::parse_attention_config("x4", cfg), "");
  EXPECT_EQ(attention::parse_attention_config("w4-s128-r", cfg), "");
  EXPECT_TRUE(cfg.reverse);
  EXPECT_EQ(cfg.split_keys, 128);
  for (const char* n : {"wg-lt", "wg-r-c2-lt", "wg-s-lt"}) {
    EXPECT_EQ(attention::parse_attention_config(n, cfg), "") << n;
    EXPECT_TRUE(cfg.late_trigger && cfg.hopper) << n;
    EXPECT_EQ(cfg.name(), n);
  }
  EXPECT_NE(attention::parse_attention_config("wg-x-lt", cfg), "");
  AttentionConfig w4_late{4, 0};
  w4_late.late_trigger = true;  // (only the Hopper prompt kernel has it)
  EXPECT_NE(AttentionOp::can_implement(a, w4_late).find("-lt"), std::string::npos);
  EXPECT_NE(attention::parse_attention_config("w4-q", cfg), "");
  EXPECT_EQ(attention::parse_attention_config("wg-r", cfg), "");
  EXPECT_TRUE(cfg.hopper && cfg.reverse);
  EXPECT_EQ(cfg.name(), "wg-r");
  a.dropout_p = 0.f;
  a.S_new = 192;  // the Hopper kernel: 128-row query blocks, no cached keys
  EXPECT_NE(AttentionOp::can_implement(a, cfg).find("multiple of 128"), std::string::npos);
  a.S_new = 256;
  EXPECT_EQ(AttentionOp::can_implement(a, cfg), "");
  a.S_cached = 64;
  EXPECT_NE(AttentionOp::can_implement(a, cfg).find("cached"), std::string::npos);
  EXPECT_EQ(attention::parse_attention_config("d8-s512", cfg), "");  // the decode kernel: at most 4 new tokens
  EXPECT_TRUE(cfg.decode && cfg.warps == 8 && cfg.split_keys == 512);
  EXPECT_EQ(cfg.name(), "d8-s512");
  EXPECT_NE(attention::parse_attention_config("d4-r", cfg), "");
  EXPECT_NE(AttentionOp::can_implement(a, cfg).find("at most 4"), std::string::npos);
  a.S_new = 4;
  a.S_cached = 0;
  EXPECT_EQ(AttentionOp::can_implement(a, cfg), "");
  cfg.warps = 2;
  EXPECT_NE(AttentionOp::can_implement(a, cfg).find("4 or 8 warps"), std::string::npos);
  EXPECT_EQ(attention::parse_attention_config("d4-c8", cfg), "");  // keys over a cluster of 8 CTAs
  EXPECT_EQ(cfg.cluster, 8);
  EXPECT_EQ(cfg.name(), "d4-c8");
  EXPECT_EQ(AttentionOp::can_implement(a, cfg), "");
  cfg.cluster = 17;
  EXPECT_NE(AttentionOp::can_implement(a, cfg).find("2 to 16"), std::string::npos);
  cfg.cluster = 4;
  cfg.split_keys = 128;
  EXPECT_NE(AttentionOp::can_implement(a, cfg).find("not both"), std::string::npos);
  EXPECT_NE(attention::parse_attention_config("w4-c4", cfg), "");  // clusters: the decode and Hopper kernels only
  EXPECT_EQ(attention::parse_attention_config("wg-r-c2", cfg), "");
  EXPECT_TRUE(cfg.hopper && cfg.reverse && cfg.cluster == 2);
  EXPECT_EQ(cfg.name(), "wg-r-c2");
  EXPECT_EQ(attention::parse_attention_config("wg-s", cfg), "");  // the long causal query blocks split
  EXPECT_TRUE(cfg.hopper && cfg.split_long && !cfg.reverse && cfg.cluster == 0);
  EXPECT_EQ(cfg.name(), "wg-s");
  a.S_new = 256;
  a.causal = false;
  EXPECT_NE(AttentionOp::can_implement(a, cfg).find("causal"), std::string::npos);
  a.causal = true;
  EXPECT_EQ(AttentionOp::can_implement(a, cfg), "");
  cfg.reverse = true;
  EXPECT_NE(AttentionOp::can_implement(a, cfg).find("no -r or -c2"), std::string::npos);
  cfg.reverse = false;
  a.S_new = 128;  // one query block per sequence: nothing to split, said at prepare
  AttentionOp op;
  EXPECT_NE(op.prepare(a, cfg).find("nothing to split"), std::string::npos);
  AttentionConfig w4s{4, 0};
  w4s.split_long = true;
  EXPECT_NE(AttentionOp::can_implement(a, w4s).find("only the Hopper"), std::string::npos);
  cudaFree(p);
}

// wg-s: the later CTA of a split tile merges, with split 0's values first -- the same bits whichever CTA arrives
// first -- and re-arms the tile's state for the next launch. One op run again and again on a shape whose split CTAs
// race (GPT-3's S = 1024 on 12 heads; the output poisoned before each run) gives the first run's bits, which
// run_case checks against the reference.
TEST_F(HopperTest, AttentionLongQuerySplitIsDeterministic) {
  const AttnCase c{1, 1024, 0, 12, true, 0.f, hopper_split_long(), false};
  const std::vector<uint16_t> want = run_case(c, DType::F16);
  ASSERT_FALSE(want.empty());
  std::mt19937 rng(unsigned(c.B * 1000 + c.S_new * 7 + c.S_cached));  // run_case's data
  const int HD = c.NH * 128, M = c.B * c.S_new;
  Buf qkv(size_t(M) * 3 * HD), out(size_t(M) * HD);
  qkv.random(rng, 2.0f, DType::F16);
  AttentionArgs a;
  a.qkv = qkv.d;
  a.out = out.d;
  a.B = c.B;
  a.S_new = c.S_new;
  a.NH = c.NH;
  AttentionOp op;
  ASSERT_EQ(op.prepare(a, c.cfg), "");
  for (int rep = 0; rep < 8; ++rep) {
    out.poison();
    op.run(nullptr);
    BRAID_CUDA_CHECK(cudaDeviceSynchronize());
    out.download();
    EXPECT_TRUE(out.h == want) << "run " << rep << " differs";
  }
}

// One attention block on random data: QKV GEMM -> attention -> output GEMM.
// X and Attn with workloads::padded_rows(M) rows: the chains under test read them padded (AttentionBlockProblem::
// x_rows, attn_rows; X holds NaN past row M, Attn is poisoned whole) and must give the reference's bits, which reads
// M rows -- and write nothing past row M of Attn.
struct BlockBuffers {
  int M, rows;
  Buf X, Wqkv, Wo, QKV, kc, vc, Attn, Y;
  BlockBuffers(int M_, int H, int HD, int B, int S_max)
      : M(M_), rows(workloads::padded_rows(M_)), X(size_t(rows) * H), Wqkv(size_t(H) * 3 * HD), Wo(size_t(HD) * H),
        QKV(size_t(M_) * 3 * HD), kc(size_t(B) * S_max * HD), vc(size_t(B) * S_max * HD), Attn(size_t(rows) * HD),
        Y(size_t(M_) * H) {}
  void random_x(std::mt19937& rng, DType dt) {
    X.random(rng, 1.0f, dt);
    for (size_t i = X.h.size() / size_t(rows) * size_t(M); i < X.h.size(); ++i) X.h[i] = 0xffff;
    BRAID_CUDA_CHECK(cudaMemcpy(X.d, X.h.data(), X.h.size() * 2, cudaMemcpyHostToDevice));
  }
};

// Where two row-major fp16 matrices of `cols` columns differ: how many elements, in which rows, and per
// 128-column tile (a whole wrong tile points at a tile's reduction or store, scattered elements at its loads).
std::string describe_diff(const std::vector<uint16_t>& a, const std::vector<uint16_t>& b, int cols) {
  std::map<int, int> tiles, rows;
  size_t n = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i)
    if (a[i] != b[i]) {
      ++n;
      ++tiles[int(i % cols) / 128];
      ++rows[int(i / cols)];
    }
  std::string r = std::to_string(n) + " of " + std::to_string(a.size()) + " differ; rows";
  for (const auto& [k, v] : rows) r += " " + std::to_string(k) + ":" + std::to_string(v);
  r += "; 128-column tiles";
  for (const auto& [k, v] : tiles) r += " " + std::to_string(k) + ":" + std::to_string(v);
  return r;
}

TEST_F(HopperTest, AttentionBlockSyncIsBitIdenticalToStreamOrder) {
  struct BlockCase {
    int B, S_new, S_cached, NH, H;
    workloads::GemmChoice qkv, out;
    AttentionConfig attn;
  };
  hopper::GemmConfig g128{128, 1, 0, OrderKind::RowMajor};
  hopper::GemmConfig g64 = g128;
  g64.tile_m = 64;
  hopper::GemmConfig g64sk = g64;
  g64sk.splits = 2;
  hopper::GemmConfig g256 = g128;
  g256.tile_n = 256;
  hopper::GemmConfig g64x192{192, 1, 0};  // 64-row QKV tiles: a query block of 128 waits for two row tiles
  g64x192.tile_m = 64;
  const std::vector<BlockCase> cases = {
      {1, 256, 0, 2, 512, g128, g128, {4, 0}},    // prompt
      {2, 128, 0, 2, 384, g256, g64, {4, 0, true}},  // two sequences, 256-wide QKV tiles, heavy query blocks first
      {2, 1, 300, 2, 512, g64sk, g64sk, {1, 128}},  // decode, split-K GEMMs, key splits
      {3, 1, 200, 2, 768, workloads::GemmChoice::skinny({1, 4, 5}), workloads::GemmChoice::skinny({2, 6, 0}), {1, 64}},  // skinny GEMMs
      {1, 384, 0, 2, 512, g128, g128, {4, 0, false, true}},  // the Hopper attention kernel (TMA waits in its producer)
      {2, 256, 0, 2, 384, g256, g64, {4, 0, true, true}},    // ... two sequences, 256-wide QKV tiles, heavy first
      {3, 1, 700, 2, 512, workloads::GemmChoice::skinny({1, 4, 5}), workloads::GemmChoice::skinny({2, 6, 0}),
       {4, 256, false, false, true}},  // the decode kernel: 3 splits, only the last waits for new K, V
      {2, 3, 200, 2, 384, g64sk, g64, {8, 64, false, false, true}},  // ... 3 new tokens, 4 splits, 8 warps
      {2, 1, 900, 2, 512, workloads::GemmChoice::skinny({1, 4, 0, true}), g64, decode_cluster(8, 8)},  // ... a cluster
      {1, 512, 0, 2, 512, g128, g128, hopper_pair(true)},  // the Hopper kernel, key blocks split over 2 CTAs
      {2, 512, 0, 2, 512, g128, g64, hopper_split_long()},  // ... the long query blocks' keys split, merged by the later
      {1, 256, 0, 3, 512, g64x192, g128, {4, 0}},                 // prompt, 64x192 QKV tiles (3 heads: 192 divides HD)
      {1, 384, 0, 3, 512, g64x192, g128, {4, 0, false, true}},    // ... the Hopper kernel waiting for them
      {1, 512, 0, 2, 512, g128, g128, hopper_late_trigger()},      // the Hopper kernel's PDL trigger after its key loop
      // LLaMA-65B's decode layer at 8-way tensor parallelism (H = 8192, 8 heads, B = 4, 2048 cached keys) with the
      // K-aligned skinny GEMMs (a1s4: 5 CTAs per QKV tile) and the clustered decode kernel: session 50's
      // warp-specialized skinny GEMM gave other bits under PDL here (the attention CTAs co-resident with the QKV
      // GEMM's from its start; bench/results/skinny-ws-h200-20261128/) while the small cases above passed.
      {4, 1, 2048, 8, 8192, workloads::GemmChoice::skinny({1, 4, 0, true}), workloads::GemmChoice::skinny({1, 4, 0, true, true}),
       decode_cluster(8, 8)},
  };
  const DType dt = DType::F16;
  cudaStream_t s;
  BRAID_CUDA_CHECK(cudaStreamCreate(&s));
  for (const auto& c : cases) {
    SCOPED_TRACE("B=" + std::to_string(c.B) + " S_new=" + std::to_string(c.S_new) + " S_cached=" + std::to_string(c.S_cached));
    std::mt19937 rng(unsigned(c.S_new + c.S_cached));
    const int HD = c.NH * 128, M = c.B * c.S_new, S_max = c.S_cached + c.S_new;
    BlockBuffers bb(M, c.H, HD, c.B, S_max);
    bb.random_x(rng, dt);
    bb.Wqkv.random(rng, 2.0f / std::sqrt(float(c.H)), dt);
    bb.Wo.random(rng, 1.0f / std::sqrt(float(HD)), dt);
    bb.kc.random(rng, 1.0f, dt);
    bb.vc.random(rng, 1.0f, dt);
    AttentionBlockProblem p;
    p.dtype = dt;
    p.B = c.B;
    p.S_new = c.S_new;
    p.S_cached = c.S_cached;
    p.S_max = S_max;
    p.NH = c.NH;
    p.H = c.H;
    p.X = bb.X.d;
    p.Wqkv = bb.Wqkv.d;
    p.Wo = bb.Wo.d;
    p.QKV = bb.QKV.d;
    p.k_cache = bb.kc.d;
    p.v_cache = bb.vc.d;
    p.Attn = bb.Attn.d;
    p.Y = bb.Y.d;
    p.update_cache = c.S_cached > 0;
    AttentionBlockVariant base_v;
    base_v.qkv = c.qkv;
    base_v.out = c.out;
    base_v.attn = c.attn;
    base_v.ordering = Ordering::StreamOrder;
    AttentionBlock base(p, base_v);
    for (Buf* b : {&bb.QKV, &bb.Attn, &bb.Y}) b->poison();
    base.run(s);
    base.check(s);
    bb.Y.download();
    bb.Attn.download();
    bb.QKV.download();
    const std::vector<uint16_t> want_y = bb.Y.h, want_a = bb.Attn.h, want_qkv = bb.QKV.h;
    {  // stream order against the fp32 reference of the whole block
      DevF32 qkv_ref(size_t(M) * 3 * HD), attn_ref(size_t(M) * HD), y_ref(size_t(M) * c.H);
      bench::ref_gemm(reinterpret_cast<const __half*>(bb.X.d), reinterpret_cast<const __half*>(bb.Wqkv.d), qkv_ref.d, M,
                      3 * HD, c.H);
      bench::RefAttentionArgs ra;
      ra.B = c.B;
      ra.S_new = c.S_new;
      ra.S_cached = c.S_cached;
      ra.S_max = S_max;
      ra.NH = c.NH;
      bench::ref_attention(qkv_ref.d, reinterpret_cast<const __half*>(bb.kc.d), reinterpret_cast<const __half*>(bb.vc.d),
                           attn_ref.d, ra);
      bench::ref_gemm(attn_ref.d, reinterpret_cast<const __half*>(bb.Wo.d), y_ref.d, M, c.H, HD);
      BRAID_CUDA_CHECK(cudaDeviceSynchronize());
      y_ref.download();
      EXPECT_LT(rel_error(y_ref.h, bb.Y, dt), 1e-2);
      AttentionBlockVariant uv = AttentionBlockVariant::parse("unfused-stream");
      uv.qkv = c.qkv;
      uv.out = c.out;
      AttentionBlock ub(p, uv);
      bb.Y.poison();
      ub.run(s);
      ub.check(s);
      bb.Y.download();
      EXPECT_LT(rel_error(y_ref.h, bb.Y, dt), 1e-2) << "unfused chain";
    }
    std::vector<std::string> names = {"pdl-only", "tilesync-pdl", "rowsync-pdl", "stridedsync-pdl", "tilesync-wait-kernel",
                                      "stridedsync-wait-kernel-noR", "tilesync-pdl-dyn", "rowsync-wait-kernel-dyn"};
    // The paper's unfused chain computes the same function with other roundings: its own stream order
    // is its reference for bit-identity, and it must match the fp32 reference too.
    std::vector<uint16_t> want_uy, want_ua;
    {
      AttentionBlockVariant uv = AttentionBlockVariant::parse("unfused-stream");
      uv.qkv = c.qkv;
      uv.out = c.out;
      AttentionBlock ub(p, uv);
      for (Buf* b : {&bb.QKV, &bb.Attn, &bb.Y}) b->poison();
      ub.run(s);
      ub.check(s);
      bb.Y.download();
      bb.Attn.download();
      want_uy = bb.Y.h;
      want_ua = bb.Attn.h;
    }
    for (const char* n : {"unfused-pdl-only", "unfused-tilesync-pdl", "unfused-rowsync-pdl", "unfused-stridedsync-wait-kernel"})
      names.push_back(n);
    for (const auto& name : names) {
      AttentionBlockVariant v = AttentionBlockVariant::parse(name);
      v.qkv = c.qkv;
      v.out = c.out;
      v.attn = c.attn;
      SCOPED_TRACE(name);
      if (v.dynamic && c.out.is_skinny) {  // the output GEMM by ticket: the skinny GEMM has no tickets
        EXPECT_THROW({ AttentionBlock refused(p, v); }, PlanError);
        continue;
      }
      AttentionBlockProblem padded = p;  // (X and Attn read with their rows past M: the same bits)
      padded.x_rows = bb.rows;
      padded.attn_rows = bb.rows;
      AttentionBlock blk(padded, v);
      for (int rep = 0; rep < 3; ++rep) {
        for (Buf* b : {&bb.QKV, &bb.Attn, &bb.Y}) b->poison();
        blk.run(s);
        blk.check(s);
        bb.Y.download();
        bb.Attn.download();
        bb.QKV.download();
        const bool unf = !v.fused;
        // (the unfused chain runs the same QKV GEMM: the same bits)
        ASSERT_EQ(std::memcmp(want_qkv.data(), bb.QKV.h.data(), want_qkv.size() * 2), 0)
            << "QKV, run " << rep << ": " << describe_diff(want_qkv, bb.QKV.h, 3 * HD);
        ASSERT_EQ(std::memcmp((unf ? want_ua : want_a).data(), bb.Attn.h.data(), want_a.size() * 2), 0) << "attention, run " << rep;
        ASSERT_EQ(std::memcmp((unf ? want_uy : want_y).data(), bb.Y.h.data(), want_y.size() * 2), 0) << "output, run " << rep;
      }
    }
  }
  BRAID_CUDA_CHECK(cudaStreamDestroy(s));
}

// The skinny GEMM tests' cases: W's columns and rows, the epilogue, the configuration; and two configurations
// they share -- the cluster reduction of the K-aligned split, and wgmma consumers at 2 CTAs per SM.
struct SkinnyCase {
  int N, K;
  hopper::Activation act;
  skinny::SkinnyConfig cfg;
};
// A case's operands at M rows and type dt: X and W random (W scaled by 1/sqrt(K)), Y for the N (SwiGLU: N / 2) outputs.
struct SkinnyOperands {
  Buf X, W, Y;
  SkinnyOperands(const SkinnyCase& c, int M, DType dt, std::mt19937& rng)
      : X(size_t(M) * c.K), W(size_t(c.K) * c.N), Y(size_t(M) * (c.act == hopper::Activation::SwiGLU ? c.N / 2 : c.N)) {
    X.random(rng, 1.0f, dt);
    W.random(rng, 1.0f / std::sqrt(float(c.K)), dt);
  }
};
std::string skinny_case_name(const SkinnyCase& c, int M, DType dt) {
  return std::string(hopper::dtype_name(dt)) + " M=" + std::to_string(M) + " N=" + std::to_string(c.N) +
         " K=" + std::to_string(c.K) + " " + hopper::activation_name(c.act) + " " + c.cfg.name();
}
skinny::SkinnyConfig skinny_dsm() {
  skinny::SkinnyConfig c{1, 4, 0, true};
  c.dsmem = true;
  return c;
}
skinny::SkinnyConfig skinny_wg() {
  skinny::SkinnyConfig c{2, 6, 0, true};
  c.wgmma = true;
  return c;
}

// Y = act(X . W) in fp32 from the host copies of X [M, K] and W [K, N] (SwiGLU: W packed per 128 columns, 64 gate
// then their 64 up columns; N / 2 outputs per row).
std::vector<float> skinny_reference(const Buf& X, const Buf& W, int M, int N, int K, hopper::Activation act, DType dt) {
  using hopper::Activation;
  const int n_out = act == Activation::SwiGLU ? N / 2 : N;
  std::vector<float> acc(size_t(M) * N, 0.f), ref(size_t(M) * n_out);
  for (int m = 0; m < M; ++m)
    for (int k = 0; k < K; ++k) {
      const float x = to_float(X.h[size_t(m) * K + k], dt);
      for (int n = 0; n < N; ++n) acc[size_t(m) * N + n] += x * to_float(W.h[size_t(k) * N + n], dt);
    }
  for (int m = 0; m < M; ++m)
    for (int j = 0; j < n_out; ++j) {
      const float* a = &acc[size_t(m) * N];
      if (act == Activation::SwiGLU) {
        const float gate = a[j / 64 * 128 + j % 64], up = a[j / 64 * 128 + 64 + j % 64];
        ref[size_t(m) * n_out + j] = gate / (1.f + std::exp(-gate)) * up;
      } else if (act == Activation::GeLU) {
        ref[size_t(m) * n_out + j] = float(braid::act::gelu_reference(a[j]));
      } else {
        ref[size_t(m) * n_out + j] = a[j];
      }
    }
  return ref;
}

// The skinny (weight-streaming) GEMM against an fp32 reference: row counts 1..64 (every MMA width),
// ragged N and K, no activation / GeLU / SwiGLU (W packed per 128 columns), fp16 and bf16, CTA counts
// that cut tiles between CTAs at many places (stream-K reduction), mma.sync and wgmma consumers (-wg)
// -- and bit-identical run after run.
TEST_F(HopperTest, SkinnyGemmMatchesReference) {
  using hopper::Activation;
  std::mt19937 rng(41);
  using Case = SkinnyCase;
  const std::vector<Case> cases = {{4608, 1536, Activation::None, {1, 4, 0, true}},  {776, 1000, Activation::GeLU, {1, 4, 3}},
                                   {256, 4096, Activation::None, {1, 6, 7}},   {1024, 520, Activation::SwiGLU, {2, 6, 0, true}},
                                   {640, 2048, Activation::SwiGLU, {1, 4, 13}}, {136, 64, Activation::GeLU, {2, 4, 0}},
                                   {256, 4096, Activation::None, {1, 4, 37}}};  // (~18 CTAs per tile: several reduce groups)
  for (DType dt : {DType::F16, DType::BF16})
    for (int M : {1, 3, 8, 13, 33, 64})
      for (const Case& c : cases) {
        const int N = c.N, K = c.K, n_out = c.act == Activation::SwiGLU ? N / 2 : N;
        SCOPED_TRACE(std::string(hopper::dtype_name(dt)) + " M=" + std::to_string(M) + " N=" + std::to_string(N) +
                     " K=" + std::to_string(K) + " " + hopper::activation_name(c.act) + " " + c.cfg.name());
        Buf X(size_t(M) * K), W(size_t(K) * N), Y(size_t(M) * n_out);
        X.random(rng, 1.0f, dt);
        W.random(rng, 1.0f / std::sqrt(float(K)), dt);
        const std::vector<float> ref = skinny_reference(X, W, M, N, K, c.act, dt);
        for (bool wg : {false, true}) {  // the mma.sync and the wgmma consumers
          skinny::SkinnyConfig cfg = c.cfg;
          cfg.wgmma = wg;
          SCOPED_TRACE(cfg.name());
          skinny::SkinnyGemmOp op;
          ASSERT_EQ(op.prepare({dt, X.d, W.d, Y.d, M, N, K, c.act}, cfg), "");
          Y.poison();
          op.run(nullptr);
          BRAID_CUDA_CHECK(cudaDeviceSynchronize());
          Y.download();
          EXPECT_LT(rel_error(ref, Y, dt), 1e-2);
          const std::vector<uint16_t> first = Y.h;
          Y.poison();
          op.run(nullptr);
          BRAID_CUDA_CHECK(cudaDeviceSynchronize());
          Y.download();
          EXPECT_EQ(first, Y.h) << "not deterministic";
        }
      }
  skinny::SkinnyGemmOp op;
  uint16_t* p = nullptr;
  BRAID_CUDA_CHECK(cudaMalloc(&p, 1 << 16));
  EXPECT_NE(op.prepare({DType::F16, p, p, p, 65, 256, 64, Activation::None}).find("1 to 64 rows"), std::string::npos);
  EXPECT_NE(op.prepare({DType::F16, p, p, p, 2, 100, 64, Activation::None}).find("multiple of 8"), std::string::npos);
  EXPECT_NE(op.prepare({DType::F16, p, p, p, 2, 192, 64, Activation::SwiGLU}).find("multiple of 128"), std::string::npos);
  EXPECT_NE(op.prepare({DType::F16, p, p, p, 2, 256, 64, Activation::ReLU}).find("no relu"), std::string::npos);
  EXPECT_NE(op.prepare({DType::F16, p, p, p, 2, 256, 64, Activation::None}, {2, 5, 0}).find("stages"), std::string::npos);
  skinny::SkinnyConfig wg8{1, 8, 0};
  wg8.wgmma = true;
  EXPECT_NE(op.prepare({DType::F16, p, p, p, 2, 256, 64, Activation::None}, wg8).find("4 or 6 stages"), std::string::npos);
  cudaFree(p);
}

// Packed weights (-pk: skinny_pack.hpp, one 16 KB bulk copy per stage) put the same bytes in the ring as the
// tensor-map boxes: the same bits as the same configuration reading W itself -- ragged N and K (padding), every
// activation, 1-64 rows, fp16 and bf16, tiles cut between CTAs, the cluster reduction, wgmma consumers, 8 stages
// -- in the general and the lean form; pack_weights refuses what it cannot pack.
TEST_F(HopperTest, SkinnyPackedWeightsGiveTheSameBits) {
  using hopper::Activation;
  std::mt19937 rng(59);
  using Case = SkinnyCase;
  const skinny::SkinnyConfig dsm = skinny_dsm(), wg = skinny_wg();
  const std::vector<Case> cases = {{328, 200, Activation::None, {2, 4, 0}},     {776, 1000, Activation::GeLU, {1, 4, 3}},
                                   {4608, 1536, Activation::None, dsm},         {1024, 520, Activation::SwiGLU, wg},
                                   {256, 4096, Activation::GeLU, {1, 8, 37}},   {2048, 1536, Activation::SwiGLU, dsm}};
  int checked = 0;
  for (DType dt : {DType::F16, DType::BF16})
    for (int M : {1, 13, 64})
      for (const Case& c : cases) {
        SCOPED_TRACE(skinny_case_name(c, M, dt));
        SkinnyOperands o(c, M, dt, rng);
        Buf &X = o.X, &W = o.W, &Y = o.Y;
        skinny::SkinnyConfig packed = c.cfg;
        packed.packed = true;
        std::vector<uint16_t> want;
        bool skipped = false;
        for (const skinny::SkinnyConfig& cfg : {c.cfg, packed}) {
          skinny::SkinnyGemmOp op;
          const std::string why = op.prepare({dt, X.d, W.d, Y.d, M, c.N, c.K, c.act}, cfg);
          if (cfg.dsmem && why.find("resident") != std::string::npos) {  // (a smaller GPU)
            skipped = true;
            break;
          }
          ASSERT_EQ(why, "");
          for (int rep = 0; rep < 2; ++rep) {
            Y.poison();
            op.run(nullptr);
            BRAID_CUDA_CHECK(cudaDeviceSynchronize());
            Y.download();
            if (want.empty()) want = Y.h;
            else ASSERT_EQ(Y.h, want) << cfg.name() << ", run " << rep;
          }
        }
        if (!skipped) ++checked;
      }
  EXPECT_GE(checked, 30);
  {  // weights the caller keeps packed (pack_weights; prepare's w_packed): no copy, the same bits
    const int M = 5, N = 776, K = 1000;
    Buf X(size_t(M) * K), W(size_t(K) * N), Y(size_t(M) * N);
    X.random(rng, 1.0f, DType::F16);
    W.random(rng, 1.0f / std::sqrt(float(K)), DType::F16);
    void* packed_w = nullptr;
    BRAID_CUDA_CHECK(cudaMalloc(&packed_w, skinny::packed_weight_bytes(K, N)));
    ASSERT_EQ(skinny::pack_weights(W.d, K, N, packed_w, nullptr), "");
    skinny::SkinnyConfig cfg{1, 4, 3}, pk = cfg;
    pk.packed = true;
    std::vector<uint16_t> want;
    for (int q = 0; q < 2; ++q) {
      skinny::SkinnyGemmOp op;
      // q = 1: W itself is not given -- only the caller's packed copy
      ASSERT_EQ(q == 0 ? op.prepare({DType::F16, X.d, W.d, Y.d, M, N, K, Activation::GeLU}, cfg)
                       : op.prepare({DType::F16, X.d, nullptr, Y.d, M, N, K, Activation::GeLU}, pk, packed_w),
                "");
      Y.poison();
      op.run(nullptr);
      BRAID_CUDA_CHECK(cudaDeviceSynchronize());
      Y.download();
      if (q == 0) want = Y.h;
      else EXPECT_EQ(Y.h, want) << "the caller's packed weights";
    }
    skinny::SkinnyGemmOp op;
    EXPECT_NE(op.prepare({DType::F16, X.d, W.d, Y.d, M, N, K, Activation::GeLU}, cfg, packed_w).find("-pk"),
              std::string::npos);
    cudaFree(packed_w);
  }
  uint16_t* p = nullptr;
  BRAID_CUDA_CHECK(cudaMalloc(&p, 1 << 16));
  EXPECT_NE(skinny::pack_weights(p, 100, 64, p, nullptr).find("multiples of 8"), std::string::npos);
  EXPECT_NE(skinny::pack_weights(p, 64, 64, p + 1, nullptr).find("16-byte aligned"), std::string::npos);
  EXPECT_NE(skinny::pack_weights(nullptr, 64, 64, p, nullptr).find("device pointers"), std::string::npos);
  cudaFree(p);
}

// The dynamic tail (-dt: static stream-K ranges over the first ~85% of every tile's K-chunks, the rest as items the
// CTAs take from a queue): right against the fp32 reference and the same bits run after run however the items were
// taken (queue reset between launches), in the lean and the general form (the phase record forces the latter) --
// ragged N and K, every activation (SwiGLU: a gate warp and its up warp finish together), 1-64 rows, fp16 and
// bf16, mma.sync and wgmma, few CTAs (many static contributors per tile) and 2 per SM, tail shares 15-60%; and
// prepare() refuses what it cannot run.
TEST_F(HopperTest, SkinnyDynamicTailIsRightAndDeterministic) {
  using hopper::Activation;
  std::mt19937 rng(61);
  using Case = SkinnyCase;
  auto dt_cfg = [](skinny::SkinnyConfig c, int pct, bool pk, bool wg) {
    c.dyn_tail = pct;
    c.packed = pk;
    c.wgmma = wg;
    return c;
  };
  const std::vector<Case> cases = {{776, 1000, Activation::GeLU, dt_cfg({1, 4, 0}, 15, false, false)},
                                   {4608, 1536, Activation::None, dt_cfg({1, 4, 0, true}, 15, true, false)},
                                   {1024, 2056, Activation::SwiGLU, dt_cfg({2, 4, 0}, 25, true, true)},
                                   {256, 4096, Activation::GeLU, dt_cfg({1, 4, 13}, 60, true, false)},
                                   {2048, 1536, Activation::SwiGLU, dt_cfg({1, 4, 0, true}, 15, false, true)},
                                   {328, 712, Activation::None, dt_cfg({1, 4, 5}, 40, false, false)}};
  int checked = 0;
  for (DType dt : {DType::F16, DType::BF16})
    for (int M : {1, 13, 64})
      for (const Case& c : cases) {
        SCOPED_TRACE(skinny_case_name(c, M, dt));
        SkinnyOperands o(c, M, dt, rng);
        Buf &X = o.X, &W = o.W, &Y = o.Y;
        const std::vector<float> ref = skinny_reference(X, W, M, c.N, c.K, c.act, dt);
        skinny::SkinnyGemmOp op;
        ASSERT_EQ(op.prepare({dt, X.d, W.d, Y.d, M, c.N, c.K, c.act}, c.cfg), "");
        unsigned long long* stamps = nullptr;
        BRAID_CUDA_CHECK(cudaMalloc(&stamps, size_t(op.ctas()) * skinny::kSkinnyPhaseSlots * sizeof(unsigned long long)));
        std::vector<uint16_t> want;
        for (int rep = 0; rep < 4; ++rep) {
          op.set_phases(rep == 3 ? stamps : nullptr);  // the last run in the general form
          Y.poison();
          op.run(nullptr);
          BRAID_CUDA_CHECK(cudaDeviceSynchronize());
          Y.download();
          if (rep == 0) {
            EXPECT_LT(rel_error(ref, Y, dt), 1e-2);
            want = Y.h;
          } else {
            ASSERT_EQ(Y.h, want) << "run " << rep << (rep == 3 ? " (general form)" : "");
          }
        }
        cudaFree(stamps);
        ++checked;
      }
  EXPECT_EQ(checked, 36);
  uint16_t* p = nullptr;
  BRAID_CUDA_CHECK(cudaMalloc(&p, 1 << 20));
  skinny::SkinnyGemmOp op;
  skinny::SkinnyConfig dsm = skinny_dsm();
  dsm.dyn_tail = 15;
  EXPECT_NE(op.prepare({DType::F16, p, p, p, 2, 4096, 1024, Activation::None}, dsm).find("not with -dsm"), std::string::npos);
  EXPECT_NE(op.prepare({DType::F16, p, p, p, 2, 4096, 1024, Activation::None}, dt_cfg({1, 6, 0}, 15, false, false))
                .find("4 stages"),
            std::string::npos);
  const skinny::SkinnyConfig short_k = dt_cfg({1, 4, 0}, 15, false, false);  // 1 chunk per tile: nothing to hand out
  EXPECT_NE(op.prepare({DType::F16, p, p, p, 2, 4096, 64, Activation::None}, short_k).find("dynamic tail"), std::string::npos);
  cudaFree(p);
}

// The skinny GEMM's lean forms (fp16; gemm_config.hpp, "The forms of braid's GEMM kernels") give the general
// form's bits: every activation, tiles cut between CTAs (stream-K), the cluster reduction, the wgmma consumers,
// 1-64 rows; and the fp16 launches in stream order are counted as lean ones.
TEST_F(HopperTest, SkinnyLeanFormsAreBitIdenticalToTheGeneralForm) {
  using hopper::Activation;
  hopper::testing::LeanFormsScope scope;
  std::mt19937 rng(53);
  using Case = SkinnyCase;
  const skinny::SkinnyConfig dsm = skinny_dsm(), wg = skinny_wg();
  const std::vector<Case> cases = {{4608, 1536, Activation::None, dsm}, {776, 1000, Activation::GeLU, {1, 4, 3}},
                                   {1024, 520, Activation::SwiGLU, wg}, {2048, 1536, Activation::SwiGLU, dsm},
                                   {256, 4096, Activation::None, {1, 8, 37}}};
  int checked = 0;
  for (int M : {1, 13, 64})
    for (const Case& c : cases) {
      SCOPED_TRACE(skinny_case_name(c, M, DType::F16));
      SkinnyOperands o(c, M, DType::F16, rng);
      Buf &X = o.X, &W = o.W, &Y = o.Y;
      skinny::SkinnyGemmOp op;
      const std::string why = op.prepare({DType::F16, X.d, W.d, Y.d, M, c.N, c.K, c.act}, c.cfg);
      if (c.cfg.dsmem && why.find("resident") != std::string::npos) continue;  // (a smaller GPU)
      ASSERT_EQ(why, "");
      hopper::set_lean_forms(false);
      const long before = hopper::lean_form_launches();
      Y.poison();
      op.run(nullptr);
      BRAID_CUDA_CHECK(cudaDeviceSynchronize());
      Y.download();
      EXPECT_EQ(hopper::lean_form_launches(), before);
      const std::vector<uint16_t> general = Y.h;
      hopper::set_lean_forms(true);
      for (int rep = 0; rep < 3; ++rep) {
        Y.poison();
        op.run(nullptr);
        BRAID_CUDA_CHECK(cudaDeviceSynchronize());
        Y.download();
        ASSERT_EQ(Y.h, general) << "run " << rep;
      }
      EXPECT_EQ(hopper::lean_form_launches(), before + 3);
      ++checked;
    }
  EXPECT_GE(checked, 12);
}

// The cluster (DSMEM) reduction of the K-aligned split adds the same partials in the same order as
// the global-memory reduction: the same bits, for every shape where a tile has 2..8 CTAs.
TEST_F(HopperTest, SkinnyGemmClusterReductionIsBitIdentical) {
  using hopper::Activation;
  std::mt19937 rng(43);
  struct Case {
    int N, K;
    Activation act;
    int per_sm;
    int stages = 4;
  };
  // (tiles x splits: 36 x 3, 36 x 7, 16 x 8, 24 x 5 -- LLaMA's QKV; and two with 8-stage rings, a tuning candidate)
  const std::vector<Case> cases = {{4608, 1536, Activation::None, 1},    {4608, 1536, Activation::GeLU, 2},
                                   {2048, 1536, Activation::SwiGLU, 1},  {3072, 2048, Activation::None, 1},
                                   {2048, 1536, Activation::SwiGLU, 1, 8}, {4608, 1536, Activation::None, 1, 8}};
  int ran = 0;
  for (DType dt : {DType::F16, DType::BF16})
    for (int M : {1, 8, 33})
      for (const Case& c : cases) {
        SCOPED_TRACE(std::string(hopper::dtype_name(dt)) + " M=" + std::to_string(M) + " N=" + std::to_string(c.N) +
                     " K=" + std::to_string(c.K) + " " + hopper::activation_name(c.act) + " a" + std::to_string(c.per_sm) +
                     "s" + std::to_string(c.stages));
        const int n_out = c.act == Activation::SwiGLU ? c.N / 2 : c.N;
        Buf X(size_t(M) * c.K), W(size_t(c.K) * c.N), Y(size_t(M) * n_out);
        X.random(rng, 1.0f, dt);
        W.random(rng, 1.0f / std::sqrt(float(c.K)), dt);
        skinny::SkinnyConfig global{c.per_sm, c.stages, 0, true}, dsm = global;
        dsm.dsmem = true;
        std::vector<uint16_t> want;
        for (const skinny::SkinnyConfig& cfg : {global, dsm}) {
          skinny::SkinnyGemmOp op;
          const std::string why = op.prepare({dt, X.d, W.d, Y.d, M, c.N, c.K, c.act}, cfg);
          if (cfg.dsmem && why.find("resident") != std::string::npos) continue;  // (a smaller GPU)
          ASSERT_EQ(why, "");
          Y.poison();
          op.run(nullptr);
          BRAID_CUDA_CHECK(cudaDeviceSynchronize());
          Y.download();
          if (!cfg.dsmem) {
            want = Y.h;
          } else {
            EXPECT_EQ(Y.h, want) << "the cluster reduction differs from the global one";
            ++ran;
          }
        }
      }
  EXPECT_GT(ran, 0);
  skinny::SkinnyGemmOp op;
  uint16_t* p = nullptr;
  BRAID_CUDA_CHECK(cudaMalloc(&p, 1 << 20));
  skinny::SkinnyConfig stream_k{2, 4, 0};
  stream_k.dsmem = true;
  EXPECT_NE(op.prepare({DType::F16, p, p, p, 2, 256, 64, Activation::None}, stream_k).find("K-aligned"), std::string::npos);
  skinny::SkinnyConfig one{1, 4, 0, true};
  one.dsmem = true;  // 2 tiles of 128 columns x 1 K-chunk: 1 CTA per tile, nothing to reduce
  EXPECT_NE(op.prepare({DType::F16, p, p, p, 2, 256, 64, Activation::None}, one).find("2 to 8"), std::string::npos);
  cudaFree(p);
}

TEST_F(HopperTest, AttentionBlockStuckProducerFailsWithSyncError) {
  std::mt19937 rng(31);
  const int B = 1, S = 128, NH = 2, H = 256, HD = NH * 128;
  BlockBuffers bb(B * S, H, HD, B, S);
  for (Buf* b : {&bb.X, &bb.Wqkv, &bb.Wo}) b->random(rng, 0.1f, DType::F16);
  AttentionBlockProblem p;
  p.B = B;
  p.S_new = S;
  p.S_max = S;
  p.NH = NH;
  p.H = H;
  p.X = bb.X.d;
  p.Wqkv = bb.Wqkv.d;
  p.Wo = bb.Wo.d;
  p.QKV = bb.QKV.d;
  p.Attn = bb.Attn.d;
  p.Y = bb.Y.d;
  AttentionBlockVariant v = AttentionBlockVariant::parse("stridedsync-wait-kernel");
  v.qkv.hopper.order = v.out.hopper.order = OrderKind::RowMajor;
  ChainOptions opt;
  opt.timeout_ms = 50;
  AttentionBlock blk(p, v, opt);
  blk.chain().set_params_hook([](int stage, StageParams& sp) {
    if (stage == 0) {  // the QKV GEMM never posts
      sp.sems = nullptr;
      sp.flags &= ~kSync;
    }
  });
  cudaStream_t s;
  BRAID_CUDA_CHECK(cudaStreamCreate(&s));
  blk.run(s);
  try {
    blk.check(s);
    FAIL() << "expected a SyncError";
  } catch (const SyncError& e) {
    EXPECT_NE(std::string(e.what()).find("'attention'"), std::string::npos) << e.what();
  }
  BRAID_CUDA_CHECK(cudaStreamDestroy(s));
}

}  // namespace

#endif  // BRAID_HAVE_HOPPER

TEST(AttentionVariantNames, ParseInvertsName) {
  for (const char* n : {"stream", "pdl-only", "tilesync-pdl", "rowsync-wait-kernel", "stridedsync-pdl-noR", "unfused-stream",
                        "unfused-stridedsync-pdl", "tilesync-pdl-dyn", "rowsync-wait-kernel-noR-dyn"})
    EXPECT_EQ(braid::workloads::AttentionBlockVariant::parse(n).name(), n);
  EXPECT_TRUE(braid::workloads::AttentionBlockVariant::parse("tilesync-pdl-dyn").dynamic);
  EXPECT_THROW(braid::workloads::AttentionBlockVariant::parse("stream-dyn"), braid::PlanError);
  EXPECT_THROW(braid::workloads::AttentionBlockVariant::parse("fastsync-pdl"), braid::PlanError);
  EXPECT_THROW(braid::workloads::AttentionBlockVariant::parse("tilesync-stream"), braid::PlanError);
}
