// Generator DSL: expressions, the text format and its error messages, C++ DSL == text spec.
#include <gtest/gtest.h>

#include <string>

#include "gen/generator.hpp"
#include "gen/spec_parser.hpp"

using namespace braid;
using namespace braid::gen;

namespace {

std::string parse_error(const std::string& text, int* line = nullptr, int* col = nullptr) {
  try {
    parse_spec(text, "t.spec");
  } catch (const SpecError& e) {
    if (line) *line = e.line;
    if (col) *col = e.col;
    return e.what();
  }
  return "";
}

Expr parse_expr(const std::string& e) {
  Spec s = parse_spec("param A = 7\nparam B = -3\nparam E = " + e + "\n");
  return s.params.back().value;
}

}  // namespace

TEST(GenExpr, ArithmeticIsFloorBased) {
  Var x("x"), y("y");
  const std::map<std::string, int64_t> env{{"x", 7}, {"y", -3}, {"g.x", 5}};
  EXPECT_EQ(evaluate(x + y * 2, env), 1);
  EXPECT_EQ(evaluate(x / 2, env), 3);
  EXPECT_EQ(evaluate(y / 2, env), -2);  // floor, not truncation
  EXPECT_EQ(evaluate(y % 2, env), 1);   // floor modulo
  EXPECT_EQ(evaluate(x % -2, env), -1);
  EXPECT_EQ(evaluate(ceildiv(x, 2), env), 4);
  EXPECT_EQ(evaluate(ceildiv(y, 2), env), -1);
  EXPECT_EQ(evaluate(min(x, y), env), -3);
  EXPECT_EQ(evaluate(max(x, y), env), 7);
  EXPECT_EQ(evaluate(-x + Expr::grid_extent("g", 0), env), -2);
  EXPECT_THROW(evaluate(x / (y + 3), env), PlanError);
  EXPECT_THROW(evaluate(Var("q"), env), PlanError);
}

TEST(GenExpr, PrintsWithMinimalParentheses) {
  Var x("x"), y("y");
  EXPECT_EQ(to_string(x + y * 2), "x + y*2");
  EXPECT_EQ(to_string((x + y) * 2), "(x + y)*2");
  EXPECT_EQ(to_string(x - (y - 1)), "x - (y - 1)");
  EXPECT_EQ(to_string(ceildiv(x, 4) + min(x, Expr::grid_extent("g1", 1))), "ceildiv(x, 4) + min(x, g1.y)");
  EXPECT_EQ(to_string(-(x + 1)), "-(x + 1)");
}

TEST(GenExpr, ParsedExpressionsEvaluate) {
  const std::map<std::string, int64_t> env{{"A", 7}, {"B", -3}};
  EXPECT_EQ(evaluate(parse_expr("A + B*2"), env), 1);
  EXPECT_EQ(evaluate(parse_expr("(A + B)*2"), env), 8);
  EXPECT_EQ(evaluate(parse_expr("4*A/8/2"), env), 1);  // left-associative: ((4*7)/8)/2
  EXPECT_EQ(evaluate(parse_expr("-A % 3"), env), 2);
  EXPECT_EQ(evaluate(parse_expr("ceildiv(A, 2) + min(A, B) - max(1, 2)"), env), 4 - 3 - 2);
  EXPECT_EQ(evaluate(parse_expr("12_288"), env), 12288);
  // Text -> AST -> text -> AST gives the same value.
  for (const char* e : {"A - (B - 1)*3", "ceildiv(A*2, B + 5) % 4", "-(A + B)/2"}) {
    const Expr a = parse_expr(e);
    EXPECT_EQ(evaluate(parse_expr(to_string(a)), env), evaluate(a, env)) << e;
  }
}

TEST(GenParse, ErrorsGiveLineColumnAndWhatWasExpected) {
  int line = 0, col = 0;
  std::string e = parse_error("param A = 4\ngrid g = (A, 2\n", &line, &col);
  EXPECT_EQ(line, 2);
  EXPECT_EQ(col, 10);  // the unclosed '('
  EXPECT_NE(e.find("t.spec:2:10: error: '(' is never closed"), std::string::npos) << e;

  e = parse_error("param A = 4\ngrid g = (A 2)\n", &line, &col);
  EXPECT_EQ(line, 2);
  EXPECT_EQ(col, 13);
  EXPECT_NE(e.find("expected ')' after the grid extents, found '2'"), std::string::npos) << e;

  e = parse_error("param A = 4\nparam B = A +* 2\n", &line, &col);
  EXPECT_EQ(line, 2);
  EXPECT_EQ(col, 14);
  EXPECT_NE(e.find("expected an expression"), std::string::npos) << e;

  e = parse_error("grid g = (4)\n  grud h = (4)\n", &line, &col);
  EXPECT_EQ(line, 2);
  EXPECT_EQ(col, 3);
  EXPECT_NE(e.find("expected 'param', 'grid', 'dep' or 'spec'"), std::string::npos) << e;

  e = parse_error("grid g = (4)\ngrid h = (4)\ndep h(x) <- g(x + q)\n", &line, &col);
  EXPECT_EQ(line, 3);
  EXPECT_EQ(col, 19);
  EXPECT_NE(e.find("unknown name 'q'"), std::string::npos) << e;

  e = parse_error("grid g = (4)\ndep g(x) <- nope(x)\n", &line, &col);
  EXPECT_EQ(col, 13);
  EXPECT_NE(e.find("unknown grid 'nope'"), std::string::npos) << e;

  e = parse_error("grid g = (4) occupancy 1 colour 3\n", &line, &col);
  EXPECT_EQ(col, 26);
  EXPECT_NE(e.find("expected 'occupancy', 'tile_time', 'blocks' or 'policy'"), std::string::npos) << e;

  e = parse_error("grid g = (4)\ngrid h = (4)\ndep h(x) <- g(i) for i in 0 g.x\n", &line, &col);
  EXPECT_EQ(line, 3);
  EXPECT_NE(e.find("expected '..'"), std::string::npos) << e;

  e = parse_error("param A = 4 $\n", &line, &col);
  EXPECT_EQ(col, 13);
  EXPECT_NE(e.find("unexpected character '$'"), std::string::npos) << e;

  e = parse_error("param A = 1\nparam A = 2\n", &line, &col);
  EXPECT_EQ(line, 2);
  EXPECT_NE(e.find("already declared"), std::string::npos) << e;

  // A ForAll range may only use variables declared before it.
  e = parse_error("grid g = (4, 4)\ngrid h = (4)\ndep h(x) <- g(i, j) for i in 0..j, j in 0..4\n", &line, &col);
  EXPECT_NE(e.find("unknown name 'j'"), std::string::npos) << e;
}

TEST(GenParse, CommentsContinuationsAndOverrides) {
  const char* text =
      "# a comment line\n"
      "spec my-spec   # trailing comment\n"
      "param T = 512\n"
      "param TM = 128\n"
      "param ROWS = ceildiv(T, TM)\n"
      "grid a = (8, ROWS)\n"
      "grid b = (4, \n"
      "          a.y)   tile_time 3*T   # newline inside parentheses continues\n"
      "dep b(x, y) <- a(i, y) \\\n"
      "    for i in 0..a.x\n";
  Spec s = parse_spec(text, "dir/file.spec");
  EXPECT_EQ(s.name, "my-spec");
  ASSERT_EQ(s.grids.size(), 2u);
  ASSERT_EQ(s.deps.size(), 1u);
  EXPECT_EQ(s.deps[0].text, "b(x, y) <- a(i, y) for i in 0..a.x");
  EXPECT_EQ(s.deps[0].line, 9);
  Analysis a = analyze(s);
  EXPECT_EQ(a.stages[1].grid, (Grid{4, 4, 1}));
  EXPECT_EQ(a.stages[1].tile_time, 3 * 512);

  // -D overrides propagate to parameters that use them.
  Analysis b = analyze(parse_spec(text, "x.spec", {{"T", 1024}}));
  EXPECT_EQ(b.stages[0].grid, (Grid{8, 8, 1}));
  EXPECT_THROW(parse_spec(text, "x.spec", {{"NOPE", 1}}), PlanError);

  // Without a `spec` line the name is the file stem.
  EXPECT_EQ(parse_spec("grid a = (1)\n", "some/dir/gpt3-mlp.spec").name, "gpt3-mlp");
  EXPECT_EQ(parse_define("T=1024"), (std::pair<std::string, int64_t>{"T", 1024}));
  EXPECT_THROW(parse_define("T"), PlanError);
  EXPECT_THROW(parse_define("T=12x"), PlanError);
}

TEST(GenParse, PolicyOverride) {
  Spec s = parse_spec(
      "param S = 4\n"
      "grid a = (12, 2) policy Strided(S, 3)\n"
      "grid b = (4, 2)\n"
      "dep b(x, y) <- a(x + j*S, y) for j in 0..3\n");
  Analysis a = analyze(s);
  ASSERT_TRUE(a.stages[0].policy_override.has_value());
  const Candidate c = chosen_policy(a, 0, {});
  EXPECT_EQ(c.name, "Strided(s4,n3)");
  EXPECT_EQ(c.policy.kind, PolicyKind::StridedSync);
  EXPECT_NO_THROW(to_plan(a).validate());
  // An explicit choice wins over the spec's setting.
  EXPECT_EQ(chosen_policy(a, 0, PlanOptions{{{"a", "TileSync"}}}).name, "TileSync");
  EXPECT_THROW(parse_spec("grid a = (1) policy Fancy\n"), SpecError);
}

TEST(GenDsl, CppDslMatchesTextSpec) {
  Spec s("gpt3-mlp");
  Expr H = s.param("H", 12288), T = s.param("T", 512), TM = s.param("TM", 128), TN = s.param("TN", 256);
  GridRef g1 = s.grid("g1", 4 * H / 8 / TN, ceildiv(T, TM));
  g1.occupancy(1).tile_time(12288);
  GridRef g2 = s.grid("g2", H / TN, ceildiv(T, TM));
  g2.occupancy(1).tile_time(6144);
  Var x("x"), y("y"), i("i");
  s.dep({g2, {x, y}}, {g1, {i, y}}, {ForAll(i, Range(0, g1.x))});
  EXPECT_EQ(describe(s.deps[0]), "g2(x, y) <- g1(i, y) for i in 0..g1.x");

  const Spec t = load_spec(std::string(BRAID_SOURCE_DIR) + "/examples/specs/gpt3-mlp.spec");
  // Same header apart from the source line numbers in comments: compare the analyses instead.
  const Analysis a = analyze(s), b = analyze(t);
  ASSERT_EQ(a.stages.size(), b.stages.size());
  for (size_t k = 0; k < a.stages.size(); ++k) {
    EXPECT_EQ(a.stages[k].grid, b.stages[k].grid);
    EXPECT_EQ(a.stages[k].tile_time, b.stages[k].tile_time);
    EXPECT_EQ(a.orders[k], b.orders[k]);
  }
  ASSERT_EQ(a.candidates[0].size(), b.candidates[0].size());
  for (size_t k = 0; k < a.candidates[0].size(); ++k) EXPECT_EQ(a.candidates[0][k].name, b.candidates[0][k].name);
  std::vector<Tile> ra, rb;
  a.reads(0, Tile{3, 2, 0}, ra);
  b.reads(0, Tile{3, 2, 0}, rb);
  EXPECT_EQ(ra, rb);
  ASSERT_EQ(ra.size(), 24u);
  EXPECT_EQ(ra[5], (Tile{5, 2, 0}));
}
