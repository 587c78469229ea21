// Generator golden tests: the header emitted for each example spec equals the checked-in file in
// tests/golden/, and those headers compile (they are included below) and agree with the analysis.
//
// To regenerate the golden files after an intended change to the emitter or the examples:
//   BRAID_UPDATE_GOLDEN=1 build-gen/tests/braid_unit_tests --gtest_filter='GenGolden*'
// then rebuild (the headers are compiled into this test) and review the diff.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "gen/generator.hpp"
#include "gen/spec_parser.hpp"

// The checked-in golden headers, compiled as the runtime would include them.
#include "../golden/attention.hpp"
#include "../golden/conv2d-pair.hpp"
#include "../golden/gpt3-mlp.hpp"
#include "../golden/llama-mlp.hpp"

using namespace braid;
using namespace braid::gen;

namespace {

const char* kSpecs[] = {"gpt3-mlp", "llama-mlp", "attention", "conv2d-pair"};

std::string src(const std::string& rel) { return std::string(BRAID_SOURCE_DIR) + "/" + rel; }

std::string read(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

Analysis example(const std::string& name) { return analyze(load_spec(src("examples/specs/" + name + ".spec"))); }

}  // namespace

namespace gm = braid::generated::gpt3_mlp;
namespace at = braid::generated::attention;
namespace cv = braid::generated::conv2d_pair;

// Compile-time facts of the golden headers.
static_assert(gm::g1_grid.x == 24 && gm::g1_grid.y == 4 && gm::g1_grid.z == 1);
static_assert(gm::g2_grid.x == 48 && gm::g1_tiles == 96);
static_assert(gm::g1_num_candidates == 2 && gm::g1_RowSync.kind == braid::PolicyKind::RowSync);
static_assert(sizeof(gm::g2_order) / sizeof(gm::g2_order[0]) == gm::g2_tiles);
static_assert(gm::param::H == 12288 && gm::num_stages == 2);
static_assert(at::qkv_Strided_s12_n3.dim[0].stride == 12 && at::qkv_Strided_s12_n3.dim[0].count == 3);
static_assert(at::qkv_grid.x == 36 && at::p_grid.z == 12);
static_assert(cv::conv1_Group_x_all_y_3.dim[1].count == 3);
static_assert(braid::generated::llama_mlp::g1_grid.x == 43);
static_assert(!gm::advise_W && !gm::advise_T && cv::advise_W && cv::advise_T);
// The emitted dependency functions are constexpr.
static_assert([] {
  uint32_t n = 0, sum = 0;
  gm::dep0_reads(braid::Tile{5, 3, 0}, [&](braid::Tile t) {
    ++n;
    sum += t.x + (t.y == 3 ? 0 : 1000);
  });
  return n == 24 && sum == 23 * 24 / 2;
}());

TEST(GenGolden, EmittedHeadersMatchCheckedInFiles) {
  const bool update = std::getenv("BRAID_UPDATE_GOLDEN") != nullptr;
  for (const char* name : kSpecs) {
    const std::string path = src(std::string("tests/golden/") + name + ".hpp");
    const std::string got = emit_header(example(name), GenOptions{});
    if (update) {
      std::ofstream(path) << got;
      continue;
    }
    const std::string want = read(path);
    ASSERT_FALSE(want.empty()) << "missing golden file " << path << " (run with BRAID_UPDATE_GOLDEN=1)";
    EXPECT_EQ(got, want) << name << ": emitted header differs from " << path
                         << " (if intended, regenerate with BRAID_UPDATE_GOLDEN=1)";
  }
}

TEST(GenGolden, EmissionIsDeterministic) {
  for (const char* name : kSpecs) {
    const Analysis a = example(name);
    EXPECT_EQ(emit_header(a, {}), emit_header(example(name), {})) << name;
  }
}

TEST(GenGolden, IncludedHeadersAgreeWithTheAnalysis) {
  const Analysis a = example("attention");
  // Orders.
  const uint32_t* orders[] = {at::qkv_order, at::p_order, at::r_order, at::t_order, at::out_order};
  for (size_t s = 0; s < a.stages.size(); ++s)
    for (size_t i = 0; i < a.orders[s].size(); ++i) ASSERT_EQ(orders[s][i], a.orders[s][i]) << a.stages[s].name;
  // Candidates.
  ASSERT_EQ(at::qkv_num_candidates, a.candidates[0].size());
  for (size_t k = 0; k < a.candidates[0].size(); ++k) {
    EXPECT_EQ(std::string(at::qkv_candidates[k].name), a.candidates[0][k].name);
    EXPECT_EQ(describe(at::qkv_candidates[k].policy), describe(a.candidates[0][k].policy));
  }
  // The emitted reads functions enumerate exactly what the plan's reads do, in the same order.
  const Plan p = to_plan(a);
  auto check = [&](int dep, auto&& fn) {
    const Grid g = p.stages[size_t(p.deps[size_t(dep)].consumer)].grid;
    for (uint32_t i = 0; i < num_tiles(g); ++i) {
      const Tile c = delinear(i, g);
      std::vector<Tile> want, got;
      p.deps[size_t(dep)].reads(c, want);
      fn(c, [&](Tile t) { got.push_back(t); });
      ASSERT_EQ(got, want) << "dep " << dep << " tile " << c.x << "," << c.y << "," << c.z;
    }
  };
  check(0, [](Tile c, auto&& f) { at::dep0_reads(c, f); });
  check(1, [](Tile c, auto&& f) { at::dep1_reads(c, f); });
  check(2, [](Tile c, auto&& f) { at::dep2_reads(c, f); });
  check(3, [](Tile c, auto&& f) { at::dep3_reads(c, f); });
  check(4, [](Tile c, auto&& f) { at::dep4_reads(c, f); });
  check(5, [](Tile c, auto&& f) { at::dep5_reads(c, f); });
  EXPECT_EQ(at::num_deps, 6u);
  EXPECT_EQ(at::deps[4].producer, 0u);
  EXPECT_EQ(std::string(at::deps[4].text), a.deps[4].text);

  const Analysis c = example("conv2d-pair");
  const Plan cp = to_plan(c);
  for (uint32_t y = 0; y < cv::conv2_grid.y; ++y) {
    std::vector<Tile> want, got;
    cp.deps[0].reads(Tile{1, y, 0}, want);
    cv::dep0_reads(Tile{1, y, 0}, [&](Tile t) { got.push_back(t); });
    ASSERT_EQ(got, want);
  }
}

// The CLI: exit code 0 on success, 1 with a message on bad arguments or a bad spec.
TEST(GenCli, ExitCodes) {
  const std::string exe = std::string(BRAID_BINARY_DIR) + "/tools/braid-gen";
  if (!std::ifstream(exe)) GTEST_SKIP() << "braid-gen not built at " << exe;
  const std::string spec = src("examples/specs/gpt3-mlp.spec");
  const std::string out = std::string(BRAID_BINARY_DIR) + "/gen-cli-test.hpp";
  auto run = [](const std::string& cmd) {
    const int rc = std::system((cmd + " >/dev/null 2>&1").c_str());
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  };
  EXPECT_EQ(run(exe + " " + spec + " -D T=1024 --sms 108 --summary --policy g1=RowSync --emit " + out), 0);
  const std::string h = read(out);
  EXPECT_NE(h.find("inline constexpr braid::Grid g1_grid{24, 8, 1};"), std::string::npos);
  EXPECT_NE(h.find("g1_policy = braid::GroupPolicy{braid::PolicyKind::RowSync"), std::string::npos);
  EXPECT_NE(h.find("advice_sms = 108;"), std::string::npos);
  EXPECT_EQ(run(exe), 1);                                    // no spec
  EXPECT_EQ(run(exe + " " + spec + " --bogus"), 1);           // unknown option
  EXPECT_EQ(run(exe + " " + spec + " --sms zero"), 1);        // bad value
  EXPECT_EQ(run(exe + " " + spec + " -D NOPE=1"), 1);         // unknown parameter
  EXPECT_EQ(run(exe + " " + spec + " -D T=0"), 1);            // empty grid
  EXPECT_EQ(run(exe + " " + spec + " --policy g1=Nope"), 1);  // unknown candidate
  EXPECT_EQ(run(exe + " /nonexistent.spec"), 1);
}
