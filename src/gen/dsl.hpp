// braid::gen -- the dependency DSL (the cuSyncGen counterpart), embedded in C++.
//
// A Spec lists integer parameters, grids (kernels, in launch order) and tile dependencies:
//
//   braid::gen::Spec s("gpt3-mlp");
//   Expr H = s.param("H", 12288), T = s.param("T", 512), TM = s.param("TM", 128), TN = s.param("TN", 256);
//   GridRef g1 = s.grid("g1", 4 * H / 8 / TN, ceildiv(T, TM)).occupancy(1).tile_time(12288);
//   GridRef g2 = s.grid("g2", H / TN, ceildiv(T, TM));
//   Var x("x"), y("y"), i("i");
//   s.dep({g2, {x, y}}, {g1, {i, y}}, {ForAll(i, Range(0, g1.x))});   // a g2 tile needs a row of g1
//
// Expressions are integer ASTs (64-bit): constants, parameters, variables, + - * / (floor division)
// % (floor modulo), min, max, ceildiv and grid extents (g1.x). They are evaluated by the checker /
// generator (analysis.hpp) once the parameters are fixed. The text format (spec_parser.hpp,
// docs/spec-format.md) produces exactly the same Spec.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "braid/core/error.hpp"
#include "braid/policy/policy.hpp"

namespace braid::gen {

// ---- expressions ---------------------------------------------------------------------------------
enum class Op : uint8_t { Const, Param, Var, GridExt, Neg, Add, Sub, Mul, Div, Mod, Min, Max, CeilDiv };

struct ExprNode;

class Expr {
 public:
  Expr() : Expr(int64_t(0)) {}
  Expr(int64_t v);                                  // NOLINT: constants convert implicitly
  Expr(int v) : Expr(int64_t(v)) {}                 // NOLINT
  Expr(uint32_t v) : Expr(int64_t(v)) {}            // NOLINT

  static Expr param(const std::string& name);
  static Expr var(const std::string& name);
  static Expr grid_extent(const std::string& grid, int dim);  // dim 0/1/2 = x/y/z
  static Expr make(Op op, Expr a, Expr b = Expr());

  Op op() const;
  int64_t value() const;             // Const
  const std::string& name() const;   // Param / Var / GridExt (grid name)
  int dim() const;                   // GridExt
  Expr lhs() const;
  Expr rhs() const;
  bool is_var() const { return op() == Op::Var; }
  bool is_const() const { return op() == Op::Const; }
  const ExprNode* node() const { return n_.get(); }

 private:
  explicit Expr(std::shared_ptr<const ExprNode> n) : n_(std::move(n)) {}
  std::shared_ptr<const ExprNode> n_;
};

struct ExprNode {
  Op op = Op::Const;
  int64_t value = 0;
  std::string name;
  int dim = 0;
  std::shared_ptr<const ExprNode> a, b;  // operands (null when unused)
};

Expr operator+(Expr a, Expr b);
Expr operator-(Expr a, Expr b);
Expr operator*(Expr a, Expr b);
Expr operator/(Expr a, Expr b);  // floor division
Expr operator%(Expr a, Expr b);  // floor modulo (result has the sign of b)
Expr operator-(Expr a);
Expr min(Expr a, Expr b);
Expr max(Expr a, Expr b);
Expr ceildiv(Expr a, Expr b);

// Evaluates an expression. `env` gives parameters and variables by name and grid extents as
// "g1.x". Division is floor division. Throws PlanError on an unknown name or a division by zero.
int64_t evaluate(const Expr& e, const std::map<std::string, int64_t>& env = {});

// Spec-syntax text of an expression ("4*H/8/TN", "ceildiv(T, TM)", "g1.x"), minimal parentheses.
std::string to_string(const Expr& e);

// A named index variable: a consumer tile index (x, y, z) or a ForAll variable.
class Var : public Expr {
 public:
  explicit Var(const std::string& name) : Expr(Expr::var(name)) {}
};

// Half-open range [lo, hi); lo/hi may use consumer variables and earlier ForAll variables.
struct Range {
  Expr lo, hi;
  Range(Expr lo_, Expr hi_) : lo(std::move(lo_)), hi(std::move(hi_)) {}
  explicit Range(Expr hi_) : lo(0), hi(std::move(hi_)) {}
};

struct ForAll {
  std::string var;
  Range range;
  ForAll(const Var& v, Range r) : var(v.name()), range(std::move(r)) {}
  ForAll(std::string v, Range r) : var(std::move(v)), range(std::move(r)) {}
};

// ---- grids, settings, dependencies ---------------------------------------------------------------
// A policy override for a grid (its output policy), with expression arguments.
struct PolicyOverride {
  PolicyKind kind = PolicyKind::TileSync;
  Expr stride[3] = {1, 1, 1};
  Expr count[3] = {1, 1, 1};  // 0 = whole dimension
  static PolicyOverride tile_sync() { return {}; }
  static PolicyOverride row_sync();
  static PolicyOverride no_sync();
  static PolicyOverride strided(Expr stride, Expr count);
  static PolicyOverride group(Expr sx, Expr nx, Expr sy, Expr ny, Expr sz = 1, Expr nz = 1);
};

struct GridDecl {
  std::string name;
  Expr extent[3] = {1, 1, 1};
  std::optional<Expr> occupancy, tile_time, blocks;
  std::optional<PolicyOverride> policy;
  int line = 0;  // source line (text specs), 0 for C++ specs
};

class Spec;

// What Spec::grid returns: the grid's name plus its extents as expressions (g1.x, g1.y, g1.z refer
// to them symbolically) and fluent setters for the optional per-grid settings.
class GridRef {
 public:
  std::string name;
  Expr x, y, z;
  GridRef& occupancy(Expr e);
  GridRef& tile_time(Expr e);
  GridRef& blocks(Expr e);  // blocks launched (persistent kernels), default one per tile
  GridRef& policy(PolicyOverride p);
  GridRef(Spec* s, std::string n);

 private:
  Spec* spec_;
  GridDecl& decl();
};

// A tile reference: a grid plus up to three index expressions (missing ones are 0 for producers,
// unnamed for consumers).
struct TileRef {
  std::string grid;
  std::vector<Expr> idx;
  TileRef(const GridRef& g, std::initializer_list<Expr> i) : grid(g.name), idx(i) {}
  TileRef(std::string g, std::vector<Expr> i) : grid(std::move(g)), idx(std::move(i)) {}
};

struct Dep {
  TileRef consumer;  // indices must be distinct variables
  TileRef producer;  // expressions of the consumer variables, ForAll variables and parameters
  std::vector<ForAll> foralls;  // outermost first; the reads enumerate in this nesting order
  int line = 0;
  std::string text;  // the spec text of the dependency (set by the parser, or built by describe)
};

std::string describe(const Dep& d);  // "g2(x, y) <- g1(i, y) for i in 0..g1.x"

struct ParamDecl {
  std::string name;
  Expr value;
  bool overridden = false;
  int line = 0;
};

class Spec {
 public:
  explicit Spec(std::string name = "spec") : name(std::move(name)) {}
  std::string name;
  std::vector<ParamDecl> params;  // declaration order; values may use earlier params
  std::vector<GridDecl> grids;    // launch order
  std::vector<Dep> deps;

  // Declares a parameter and returns a reference to it for use in expressions.
  Expr param(const std::string& name, Expr value, int line = 0);
  // Sets a declared parameter's value (the CLI's -D name=value); throws PlanError when unknown.
  void set_param(const std::string& name, int64_t value);
  void set_params(const std::map<std::string, int64_t>& values);
  GridRef grid(const std::string& name, Expr x, Expr y = 1, Expr z = 1, int line = 0);
  void dep(TileRef consumer, TileRef producer, std::vector<ForAll> foralls = {}, int line = 0);
  void add(Dep d);

  int find_grid(const std::string& name) const;  // -1 when absent
  int find_param(const std::string& name) const;
  GridRef ref(const std::string& grid_name);      // throws when absent
};

// The free-function form, mirroring the paper: s.add(make_dep({g2, {x, y}}, {g1, {i, y}}, {ForAll(i, Range(0, g1.x))})).
inline Dep make_dep(TileRef consumer, TileRef producer, std::vector<ForAll> foralls = {}) {
  return Dep{std::move(consumer), std::move(producer), std::move(foralls), 0, ""};
}

// Identifier-safe form of a name ("gpt3-mlp" -> "gpt3_mlp", "Strided(s12,n3)" -> "Strided_s12_n3").
std::string ident(const std::string& s);

}  // namespace braid::gen
