// Generator: the checker, candidate policies, tile orders, Spec -> Plan, W/T advice, and a
// property test over random specs.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <string>

#include "braid/policy/conv2d.hpp"
#include "gen/generator.hpp"
#include "gen/spec_parser.hpp"

using namespace braid;
using namespace braid::gen;

namespace {

std::string spec_path(const std::string& name) {
  return std::string(BRAID_SOURCE_DIR) + "/examples/specs/" + name + ".spec";
}

std::string check_error(const std::string& text) {
  try {
    analyze(parse_spec(text, "t.spec"));
  } catch (const PlanError& e) {
    return e.what();
  }
  return "";
}

std::vector<std::string> names(const std::vector<Candidate>& c) {
  std::vector<std::string> r;
  for (const auto& x : c) r.push_back(x.name);
  return r;
}

bool is_permutation_of_tiles(const std::vector<uint32_t>& t, size_t n) {
  if (t.size() != n) return false;
  std::vector<uint32_t> s = t;
  std::sort(s.begin(), s.end());
  for (size_t i = 0; i < n; ++i)
    if (s[i] != i) return false;
  return true;
}

// Applies every candidate of every producer (one producer at a time, the others at candidate 0)
// with both order choices and validates the plan. Returns how many plans were checked.
int validate_all_candidates(const Analysis& a) {
  int n = 0;
  for (size_t si = 0; si < a.stages.size(); ++si)
    for (size_t k = 0; k < std::max<size_t>(1, a.candidates[si].size()); ++k)
      for (bool gen_orders : {true, false}) {
        PlanOptions o;
        o.generated_orders = gen_orders;
        if (!a.candidates[si].empty()) o.policy[a.stages[si].name] = std::to_string(k);
        const Plan p = to_plan(a, o);
        EXPECT_NO_THROW(p.validate()) << a.spec_name << " " << a.stages[si].name << " candidate " << k;
        ++n;
      }
  return n;
}

}  // namespace

// ---- checker ----------------------------------------------------------------------------------------
TEST(GenCheck, OutOfBoundsProducerTileIsNamed) {
  const std::string e = check_error(
      "grid g1 = (4, 3)\n"
      "grid g2 = (5, 3)\n"
      "dep g2(x, y) <- g1(x, y)\n");
  EXPECT_NE(e.find("dep 'g2(x, y) <- g1(x, y)' (line 3)"), std::string::npos) << e;
  EXPECT_NE(e.find("consumer tile g2(4,0,0)"), std::string::npos) << e;
  EXPECT_NE(e.find("producer tile g1(4,0,0)"), std::string::npos) << e;
  EXPECT_NE(e.find("outside the producer grid (4,3,1)"), std::string::npos) << e;
  // Negative coordinates too.
  const std::string n = check_error("grid a = (4)\ngrid b = (4)\ndep b(x) <- a(i) for i in x - 1..x + 1\n");
  EXPECT_NE(n.find("producer tile a(-1,0,0)"), std::string::npos) << n;
}

TEST(GenCheck, UnknownAndLaterGridsAreErrors) {
  // C++ DSL (the text parser already rejects unknown names with a position).
  Spec s("t");
  GridRef a = s.grid("a", 4);
  GridRef b = s.grid("b", 4);
  Var x("x");
  s.dep({b, {x}}, TileRef("ghost", {x}));
  try {
    analyze(s);
    FAIL() << "no error";
  } catch (const PlanError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown producer grid 'ghost'"), std::string::npos) << e.what();
  }
  Spec s2("t");
  GridRef a2 = s2.grid("a", 4);
  GridRef b2 = s2.grid("b", 4);
  s2.dep({a2, {x}}, {b2, {x}});
  try {
    analyze(s2);
    FAIL() << "no error";
  } catch (const PlanError& e) {
    EXPECT_NE(std::string(e.what()).find("declared after consumer 'a'"), std::string::npos) << e.what();
  }
  (void)a;
  const std::string t = check_error("grid a = (4)\ngrid b = (4)\ndep a(x) <- b(x)\n");
  EXPECT_NE(t.find("producer 'b' is declared after consumer 'a'"), std::string::npos) << t;
}

TEST(GenCheck, BadExtentsAndArithmetic) {
  std::string e = check_error("param T = 0\ngrid g = (4, ceildiv(T, 128))\n");
  EXPECT_NE(e.find("grid 'g' (line 2): extent y = ceildiv(T, 128) evaluates to 0"), std::string::npos) << e;
  e = check_error("grid g = (4 - 9)\n");
  EXPECT_NE(e.find("evaluates to -5"), std::string::npos) << e;
  e = check_error("param Z = 0\ngrid g = (4/Z)\n");
  EXPECT_NE(e.find("division by zero"), std::string::npos) << e;
  e = check_error("grid a = (4)\ngrid b = (4)\ndep b(x) <- a(4/x)\n");
  EXPECT_NE(e.find("consumer tile b(0,0,0): division by zero in '4/x'"), std::string::npos) << e;
  e = check_error("grid a = (4)\ngrid b = (a.x + b.x)\n");
  EXPECT_NE(e.find("unknown grid 'b'"), std::string::npos) << e;
  e = check_error("grid a = (4) occupancy 0\n");
  EXPECT_NE(e.find("occupancy evaluates to 0"), std::string::npos) << e;
}

TEST(GenCheck, TilesThatDependOnNothingAreWarnings) {
  const Analysis a = analyze(parse_spec(
      "grid a = (4, 4)\n"
      "grid b = (4, 4)\n"
      "dep b(x, y) <- a(i, y) for i in 0..x\n"));  // column 0 reads nothing
  ASSERT_EQ(a.warnings.size(), 1u);
  EXPECT_NE(a.warnings[0].find("grid 'b': 4 of 16 tiles depend on nothing: (0,0,0) (0,1,0)"), std::string::npos)
      << a.warnings[0];
  EXPECT_NO_THROW(to_plan(a).validate());
}

// ---- candidates ---------------------------------------------------------------------------------------
TEST(GenCandidates, Gpt3MlpIsTileSyncAndRowSync) {
  const Analysis a = analyze(load_spec(spec_path("gpt3-mlp")));
  ASSERT_EQ(a.stages.size(), 2u);
  EXPECT_EQ(a.stages[0].grid, (Grid{24, 4, 1}));
  EXPECT_EQ(a.stages[1].grid, (Grid{48, 4, 1}));
  EXPECT_EQ(names(a.candidates[0]), (std::vector<std::string>{"TileSync", "RowSync"}));
  EXPECT_EQ(a.candidates[0][0].policy.kind, PolicyKind::TileSync);
  EXPECT_EQ(a.candidates[0][1].policy.kind, PolicyKind::RowSync);
  EXPECT_EQ(a.candidates[0][1].policy.dim[0].count, 0u);  // the whole row
  EXPECT_TRUE(a.candidates[1].empty());                   // nothing depends on g2
  EXPECT_EQ(chosen_policy(a, 1, {}).policy.kind, PolicyKind::NoSync);
}

TEST(GenCandidates, AttentionHasStridedSync) {
  const Analysis a = analyze(load_spec(spec_path("attention")));
  const int qkv = a.find("qkv");
  ASSERT_GE(qkv, 0);
  const uint32_t stride = 12288 / 8 / 128;  // H/8/TN
  bool found = false;
  for (const auto& c : a.candidates[size_t(qkv)])
    if (c.policy.kind == PolicyKind::StridedSync) {
      found = true;
      EXPECT_EQ(c.policy.dim[0].stride, stride);
      EXPECT_EQ(c.policy.dim[0].count, 3u);
      EXPECT_EQ(c.name, "Strided(s12,n3)");
      EXPECT_EQ(c.ident, "Strided_s12_n3");
    }
  EXPECT_TRUE(found);
  EXPECT_EQ(names(a.deps[0].candidates), (std::vector<std::string>{"TileSync", "Strided(s12,n3)"}));
  // softmax needs a full row of P; T's V dependency spans columns of the QKV output
  EXPECT_EQ(names(a.candidates[size_t(a.find("p"))]), (std::vector<std::string>{"TileSync", "RowSync"}));
  EXPECT_EQ(names(a.deps[4].candidates), (std::vector<std::string>{"TileSync", "ColSync"}));
  // t fans in from two producers
  const Plan p = to_plan(a);
  EXPECT_EQ(p.producers_of(p.find("t")), (std::vector<int>{a.find("r"), qkv}));
}

TEST(GenCandidates, Conv2DWindowGroups) {
  const Analysis a = analyze(load_spec(spec_path("conv2d-pair")));
  EXPECT_EQ(names(a.candidates[0]),
            (std::vector<std::string>{"TileSync", "RowSync", "Group(y:3)", "Group(x:all,y:3)"}));
  const GroupPolicy g = a.candidates[0][3].policy;
  EXPECT_EQ(g.kind, PolicyKind::Generic);
  EXPECT_EQ(g.dim[0].count, 0u);
  EXPECT_EQ(g.dim[1].count, 3u);
  // The spec's window covers what braid::Conv2DWindow says a consumer tile reads.
  Conv2DWindow w;
  w.N = 4; w.H = 28; w.W = 28; w.R = 3; w.S = 3; w.pad = 1; w.tile_m = 128; w.tile_n = 64; w.C = 128;
  ASSERT_EQ(w.producer_grid(), a.stages[0].grid);
  for (uint32_t y = 0; y < a.stages[1].grid.y; ++y) {
    std::vector<Tile> got;
    a.reads(0, Tile{0, y, 0}, got);
    const std::set<std::pair<uint32_t, uint32_t>> have = [&] {
      std::set<std::pair<uint32_t, uint32_t>> s;
      for (Tile t : got) s.insert({t.x, t.y});
      return s;
    }();
    w.for_each_producer_tile(Tile{0, y, 0}, 128, [&](Tile t) {
      EXPECT_TRUE(have.count({t.x, t.y})) << "row tile " << y << " misses producer (" << t.x << "," << t.y << ")";
    });
  }
}

TEST(GenCandidates, EveryCandidateOfEveryExampleValidates) {
  for (const char* s : {"gpt3-mlp", "llama-mlp", "attention", "conv2d-pair"}) {
    for (int64_t T : {1, 512, 2048}) {
      ParamOverrides o;
      if (std::string(s).find("mlp") != std::string::npos) o["T"] = T;
      const Analysis a = analyze(load_spec(spec_path(s), o));
      EXPECT_GT(validate_all_candidates(a), 0) << s;
      for (const auto& d : a.deps)
        for (const auto& c : d.candidates) {
          PlanOptions po;
          po.policy[a.stages[size_t(d.producer)].name] = c.ident;  // per-dependency candidates are producer candidates
          EXPECT_NO_THROW(to_plan(a, po).validate()) << s << " " << c.name;
        }
    }
  }
}

TEST(GenCandidates, UnknownChoiceIsAnError) {
  const Analysis a = analyze(load_spec(spec_path("gpt3-mlp")));
  EXPECT_EQ(chosen_policy(a, 0, PlanOptions{{{"g1", "1"}}}).name, "RowSync");
  EXPECT_EQ(chosen_policy(a, 0, PlanOptions{{{"g1", "RowSync"}}}).name, "RowSync");
  try {
    to_plan(a, PlanOptions{{{"g1", "Strided_s2_n2"}}});
    FAIL();
  } catch (const PlanError& e) {
    EXPECT_NE(std::string(e.what()).find("candidates: 0:TileSync, 1:RowSync"), std::string::npos) << e.what();
  }
  EXPECT_THROW(to_plan(a, PlanOptions{{{"g9", "RowSync"}}}), PlanError);
  EXPECT_THROW(to_plan(a, PlanOptions{{{"g1", "7"}}}), PlanError);
}

// ---- orders and plans -----------------------------------------------------------------------------------
TEST(GenOrders, TablesArePermutationsAndGpt3ProducerIsRowMajor) {
  for (const char* s : {"gpt3-mlp", "llama-mlp", "attention", "conv2d-pair"}) {
    const Analysis a = analyze(load_spec(spec_path(s)));
    for (size_t i = 0; i < a.stages.size(); ++i)
      EXPECT_TRUE(is_permutation_of_tiles(a.orders[i], num_tiles(a.stages[i].grid))) << s << " " << a.stages[i].name;
  }
  const Analysis a = analyze(load_spec(spec_path("gpt3-mlp"), {{"T", 1024}}));
  for (uint32_t i = 0; i < a.orders[0].size(); ++i) EXPECT_EQ(a.orders[0][i], i);
  // The consumer: rows in the order their producer rows complete, row-major within.
  for (uint32_t i = 0; i < a.orders[1].size(); ++i) EXPECT_EQ(a.orders[1][i], i);
}

TEST(GenOrders, ColumnConsumersGetColumnMajorProducers) {
  const Analysis a = analyze(parse_spec(
      "grid a = (3, 4)\n"
      "grid b = (3, 2)\n"
      "dep b(x, y) <- a(x, j) for j in 0..a.y\n"));
  EXPECT_EQ(names(a.candidates[0]), (std::vector<std::string>{"TileSync", "ColSync"}));
  std::vector<uint32_t> col;
  for (uint32_t x = 0; x < 3; ++x)
    for (uint32_t y = 0; y < 4; ++y) col.push_back(x + 3 * y);
  EXPECT_EQ(a.orders[0], col);
  // b's tiles: column 0 first (its producer column completes first), ties row-major.
  EXPECT_EQ(a.orders[1], (std::vector<uint32_t>{0, 3, 1, 4, 2, 5}));
}

TEST(GenOrders, StridedProducerRunsEachGroupConsecutively) {
  const Analysis a = analyze(parse_spec(
      "grid a = (6, 1)\n"
      "grid b = (2, 1)\n"
      "dep b(x, y) <- a(x + j*2, y) for j in 0..3\n"));
  EXPECT_EQ(names(a.candidates[0]), (std::vector<std::string>{"TileSync", "Strided(s2,n3)"}));
  EXPECT_EQ(a.orders[0], (std::vector<uint32_t>{0, 2, 4, 1, 3, 5}));
  EXPECT_EQ(a.orders[1], (std::vector<uint32_t>{0, 1}));
}

TEST(GenPlan, ReadsFollowForAllOrderAndWaitsOncePerSemaphore) {
  const Analysis a = analyze(load_spec(spec_path("conv2d-pair")));
  PlanOptions o;
  o.policy["conv1"] = "Group(x:all,y:3)";
  const Plan p = to_plan(a, o);
  p.validate();
  ASSERT_EQ(p.deps.size(), 1u);
  std::vector<Tile> r, w;
  p.deps[0].reads(Tile{0, 4, 0}, r);
  p.deps[0].waits(Tile{0, 4, 0}, w);
  // j outermost (rows 3..5), c innermost (channel tiles 0..1)
  EXPECT_EQ(r, (std::vector<Tile>{{0, 3, 0}, {1, 3, 0}, {0, 4, 0}, {1, 4, 0}, {0, 5, 0}, {1, 5, 0}}));
  EXPECT_EQ(w, (std::vector<Tile>{{0, 3, 0}}));  // rows 3..5 are one group
  EXPECT_EQ(p.stages[0].order.kind, OrderKind::Table);
  EXPECT_TRUE(p.stages[0].dynamic_order);
  EXPECT_EQ(p.stages[0].occupancy, 2u);
  EXPECT_EQ(p.stages[0].tile_time, 9.0 * 128);
  PlanOptions rm;
  rm.generated_orders = false;
  EXPECT_EQ(to_plan(a, rm).stages[1].order.kind, OrderKind::RowMajor);
}

TEST(GenAdvice, SmallShapesSkipWaitKernelAndOrder) {
  const Analysis small = analyze(load_spec(spec_path("gpt3-mlp"), {{"T", 128}}));  // 24 + 48 tiles
  OptimizationAdvice s = advise(to_plan(small), 132);
  EXPECT_TRUE(s.W);
  EXPECT_TRUE(s.T);
  const Analysis large = analyze(load_spec(spec_path("gpt3-mlp"), {{"T", 2048}}));  // 384 + 768 tiles
  OptimizationAdvice l = advise(to_plan(large), 132);
  EXPECT_FALSE(l.W);
  EXPECT_FALSE(l.T);
  const std::string h = emit_header(small, {});
  EXPECT_NE(h.find("inline constexpr bool advise_W = true;"), std::string::npos);
  EXPECT_NE(h.find("inline constexpr bool advise_T = true;"), std::string::npos);
  const std::string hl = emit_header(large, {});
  EXPECT_NE(hl.find("inline constexpr bool advise_W = false;"), std::string::npos);
  EXPECT_NE(hl.find("inline constexpr bool advise_T = false;"), std::string::npos);
  EXPECT_NE(summary(large, {}).find("W (no wait kernel)  : no"), std::string::npos);
}

// ---- property test ----------------------------------------------------------------------------------------
// Random chains of grids with random affine dependencies (coefficients, offsets, clamped ForAll
// ranges, clamped tile expressions): every candidate policy gives a plan that validates, orders are
// permutations, and the plan's reads agree with a direct evaluation of the expressions.
TEST(GenProperty, RandomSpecsGiveValidPlansForEveryCandidate) {
  std::mt19937 rng(12345);
  auto rnd = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  int plans = 0;
  for (int iter = 0; iter < 60; ++iter) {
    std::string text = "spec random" + std::to_string(iter) + "\n";
    const int n = rnd(2, 4);
    for (int g = 0; g < n; ++g)
      text += "grid g" + std::to_string(g) + " = (" + std::to_string(rnd(1, 9)) + ", " + std::to_string(rnd(1, 6)) +
              ", " + std::to_string(rnd(1, 2)) + ")\n";
    const char* cv[3] = {"x", "y", "z"};
    for (int c = 1; c < n; ++c) {
      const int ndeps = rnd(1, 2);
      for (int k = 0; k < ndeps; ++k) {
        const std::string P = "g" + std::to_string(rnd(0, c - 1));
        std::string line = "dep g" + std::to_string(c) + "(x, y, z) <- " + P + "(";
        std::string fa;
        for (int d = 0; d < 3; ++d) {
          const std::string ext = P + "." + cv[d];
          std::string e;
          const int kind = rnd(0, 3);
          if (kind == 0) {
            e = std::to_string(rnd(0, 2)) + "*" + cv[rnd(0, 2)] + " + " + std::to_string(rnd(-2, 2));
          } else if (kind == 1) {  // a whole-dimension ForAll
            const std::string v = std::string("i") + cv[d];
            e = v;
            fa += (fa.empty() ? " for " : ", ") + v + " in 0.." + ext;
          } else if (kind == 2) {  // a clamped window around a consumer index
            const std::string v = std::string("i") + cv[d], r = std::to_string(rnd(0, 2));
            const char* c0 = cv[rnd(0, 2)];
            e = v;
            fa += (fa.empty() ? " for " : ", ") + v + " in max(" + c0 + " - " + r + ", 0)..min(" + c0 + " + " + r +
                  " + 1, " + ext + ")";
          } else {  // a strided ForAll
            const std::string v = std::string("i") + cv[d], s = std::to_string(rnd(2, 3));
            e = std::string(cv[rnd(0, 2)]) + " + " + v + "*" + s;
            fa += (fa.empty() ? " for " : ", ") + v + " in 0.." + std::to_string(rnd(1, 3));
          }
          line += std::string(d ? ", " : "") + "min(max(" + e + ", 0), " + ext + " - 1)";
        }
        text += line + ")" + fa + "\n";
      }
    }
    SCOPED_TRACE(text);
    const Analysis a = analyze(parse_spec(text, "random.spec"));
    for (size_t i = 0; i < a.stages.size(); ++i) {
      ASSERT_TRUE(is_permutation_of_tiles(a.orders[i], num_tiles(a.stages[i].grid)));
      for (const auto& c : a.candidates[i]) EXPECT_EQ(c.name, name_policy(c.policy).name);
    }
    plans += validate_all_candidates(a);
    // Every combination of candidates at once for the first two producers.
    const auto& c0 = a.candidates[0];
    const auto& c1 = a.candidates[1];
    for (size_t i = 0; i < c0.size(); ++i)
      for (size_t j = 0; j < std::max<size_t>(1, c1.size()); ++j) {
        PlanOptions o;
        o.policy["g0"] = c0[i].name;
        if (!c1.empty()) o.policy["g1"] = c1[j].name;
        EXPECT_NO_THROW(to_plan(a, o).validate());
        ++plans;
      }
    // The reads agree with a direct evaluation of the AST.
    const Spec& s = a.spec;
    for (size_t di = 0; di < s.deps.size(); ++di) {
      const Dep& d = s.deps[di];
      const Grid cg = a.stages[size_t(a.deps[di].consumer)].grid;
      const Tile c{cg.x - 1, cg.y / 2, cg.z - 1};
      std::map<std::string, int64_t> env{{"x", c.x}, {"y", c.y}, {"z", c.z}};
      for (const auto& st : a.stages) {
        env[st.name + ".x"] = st.grid.x;
        env[st.name + ".y"] = st.grid.y;
        env[st.name + ".z"] = st.grid.z;
      }
      std::vector<Tile> want;
      std::function<void(size_t)> rec = [&](size_t k) {
        if (k == d.foralls.size()) {
          Tile t;
          t.x = uint32_t(evaluate(d.producer.idx[0], env));
          t.y = uint32_t(evaluate(d.producer.idx[1], env));
          t.z = uint32_t(evaluate(d.producer.idx[2], env));
          want.push_back(t);
          return;
        }
        const int64_t lo = evaluate(d.foralls[k].range.lo, env), hi = evaluate(d.foralls[k].range.hi, env);
        for (int64_t v = lo; v < hi; ++v) {
          env[d.foralls[k].var] = v;
          rec(k + 1);
        }
      };
      rec(0);
      std::vector<Tile> got;
      a.reads(int(di), c, got);
      EXPECT_EQ(got, want) << describe(d);
    }
  }
  EXPECT_GT(plans, 200);
}
