#include "gen/dsl.hpp"

#include <cctype>

namespace braid::gen {

namespace {
std::shared_ptr<const ExprNode> mk(Op op, int64_t v, std::string name, int dim,
                                     std::shared_ptr<const ExprNode> a = nullptr,
                                     std::shared_ptr<const ExprNode> b = nullptr) {
  auto n = std::make_shared<ExprNode>();
  n->op = op;
  n->value = v;
  n->name = std::move(name);
  n->dim = dim;
  n->a = std::move(a);
  n->b = std::move(b);
  return n;
}
}  // namespace

Expr::Expr(int64_t v) : n_(mk(Op::Const, v, "", 0)) {}
Expr Expr::param(const std::string& name) { return Expr(mk(Op::Param, 0, name, 0)); }
Expr Expr::var(const std::string& name) { return Expr(mk(Op::Var, 0, name, 0)); }
Expr Expr::grid_extent(const std::string& grid, int dim) { return Expr(mk(Op::GridExt, 0, grid, dim)); }
Expr Expr::make(Op op, Expr a, Expr b) { return Expr(mk(op, 0, "", 0, a.n_, b.n_)); }

Op Expr::op() const { return n_->op; }
int64_t Expr::value() const { return n_->value; }
const std::string& Expr::name() const { return n_->name; }
int Expr::dim() const { return n_->dim; }
Expr Expr::lhs() const { return Expr(n_->a); }
Expr Expr::rhs() const { return Expr(n_->b); }

Expr operator+(Expr a, Expr b) { return Expr::make(Op::Add, a, b); }
Expr operator-(Expr a, Expr b) { return Expr::make(Op::Sub, a, b); }
Expr operator*(Expr a, Expr b) { return Expr::make(Op::Mul, a, b); }
Expr operator/(Expr a, Expr b) { return Expr::make(Op::Div, a, b); }
Expr operator%(Expr a, Expr b) { return Expr::make(Op::Mod, a, b); }
Expr operator-(Expr a) { return Expr::make(Op::Neg, a); }
Expr min(Expr a, Expr b) { return Expr::make(Op::Min, a, b); }
Expr max(Expr a, Expr b) { return Expr::make(Op::Max, a, b); }
Expr ceildiv(Expr a, Expr b) { return Expr::make(Op::CeilDiv, a, b); }

int64_t evaluate(const Expr& e, const std::map<std::string, int64_t>& env) {
  auto div = [&](int64_t a, int64_t b) {
    if (b == 0) throw PlanError("division by zero in '" + to_string(e) + "'");
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
  };
  switch (e.op()) {
    case Op::Const: return e.value();
    case Op::Param:
    case Op::Var:
    case Op::GridExt: {
      const std::string key = e.op() == Op::GridExt ? e.name() + "." + "xyz"[e.dim()] : e.name();
      auto it = env.find(key);
      if (it == env.end()) throw PlanError("unknown name '" + key + "' in '" + to_string(e) + "'");
      return it->second;
    }
    case Op::Neg: return -evaluate(e.lhs(), env);
    default: break;
  }
  const int64_t a = evaluate(e.lhs(), env), b = evaluate(e.rhs(), env);
  switch (e.op()) {
    case Op::Add: return a + b;
    case Op::Sub: return a - b;
    case Op::Mul: return a * b;
    case Op::Div: return div(a, b);
    case Op::Mod: return a - b * div(a, b);
    case Op::Min: return a < b ? a : b;
    case Op::Max: return a > b ? a : b;
    case Op::CeilDiv: return -div(-a, b);
    default: return 0;
  }
}

namespace {
int prec(const Expr& e) {
  switch (e.op()) {
    case Op::Add: case Op::Sub: return 1;
    case Op::Mul: case Op::Div: case Op::Mod: return 2;
    case Op::Neg: return 3;
    case Op::Const: return e.value() < 0 ? 3 : 4;
    default: return 4;
  }
}
const char* sym(Op op) {
  switch (op) {
    case Op::Add: return " + ";
    case Op::Sub: return " - ";
    case Op::Mul: return "*";
    case Op::Div: return "/";
    case Op::Mod: return "%";
    default: return "?";
  }
}
std::string paren(const Expr& e, bool need) {
  if (!need) return to_string(e);
  std::string s = "(";
  s += to_string(e);
  s += ")";
  return s;
}
}  // namespace

std::string to_string(const Expr& e) {
  switch (e.op()) {
    case Op::Const: return std::to_string(e.value());
    case Op::Param: case Op::Var: return e.name();
    case Op::GridExt: return e.name() + "." + "xyz"[e.dim()];
    case Op::Neg: {
      std::string s = "-";
      s += paren(e.lhs(), prec(e.lhs()) < 3);
      return s;
    }
    case Op::Min: return "min(" + to_string(e.lhs()) + ", " + to_string(e.rhs()) + ")";
    case Op::Max: return "max(" + to_string(e.lhs()) + ", " + to_string(e.rhs()) + ")";
    case Op::CeilDiv: return "ceildiv(" + to_string(e.lhs()) + ", " + to_string(e.rhs()) + ")";
    default: {
      const int p = prec(e);
      return paren(e.lhs(), prec(e.lhs()) < p) + sym(e.op()) + paren(e.rhs(), prec(e.rhs()) <= p);
    }
  }
}

PolicyOverride PolicyOverride::row_sync() {
  PolicyOverride p;
  p.kind = PolicyKind::RowSync;
  p.count[0] = 0;
  return p;
}
PolicyOverride PolicyOverride::no_sync() {
  PolicyOverride p;
  p.kind = PolicyKind::NoSync;
  return p;
}
PolicyOverride PolicyOverride::strided(Expr stride, Expr count) {
  PolicyOverride p;
  p.kind = PolicyKind::StridedSync;
  p.stride[0] = std::move(stride);
  p.count[0] = std::move(count);
  return p;
}
PolicyOverride PolicyOverride::group(Expr sx, Expr nx, Expr sy, Expr ny, Expr sz, Expr nz) {
  PolicyOverride p;
  p.kind = PolicyKind::Generic;
  p.stride[0] = sx; p.count[0] = nx;
  p.stride[1] = sy; p.count[1] = ny;
  p.stride[2] = sz; p.count[2] = nz;
  return p;
}

GridRef::GridRef(Spec* s, std::string n)
    : name(std::move(n)),
      x(Expr::grid_extent(name, 0)),
      y(Expr::grid_extent(name, 1)),
      z(Expr::grid_extent(name, 2)),
      spec_(s) {}
GridDecl& GridRef::decl() {
  const int i = spec_->find_grid(name);
  BRAID_REQUIRE(i >= 0, "grid '" + name + "' is not declared");
  return spec_->grids[size_t(i)];
}
GridRef& GridRef::occupancy(Expr e) { decl().occupancy = std::move(e); return *this; }
GridRef& GridRef::tile_time(Expr e) { decl().tile_time = std::move(e); return *this; }
GridRef& GridRef::blocks(Expr e) { decl().blocks = std::move(e); return *this; }
GridRef& GridRef::policy(PolicyOverride p) { decl().policy = std::move(p); return *this; }

std::string describe(const Dep& d) {
  if (!d.text.empty()) return d.text;
  auto list = [](const TileRef& t) {
    std::string s = t.grid + "(";
    for (size_t i = 0; i < t.idx.size(); ++i) s += (i ? ", " : "") + to_string(t.idx[i]);
    return s + ")";
  };
  std::string s = list(d.consumer) + " <- " + list(d.producer);
  for (size_t i = 0; i < d.foralls.size(); ++i) {
    const auto& f = d.foralls[i];
    s += (i ? ", " : " for ") + f.var + " in " + to_string(f.range.lo) + ".." + to_string(f.range.hi);
  }
  return s;
}

Expr Spec::param(const std::string& n, Expr value, int line) {
  BRAID_REQUIRE(find_param(n) < 0, "parameter '" + n + "' is declared twice");
  params.push_back(ParamDecl{n, std::move(value), false, line});
  return Expr::param(n);
}

void Spec::set_param(const std::string& n, int64_t value) {
  const int i = find_param(n);
  if (i < 0) {
    std::string known;
    for (const auto& p : params) known += (known.empty() ? "" : ", ") + p.name;
    throw PlanError("cannot set parameter '" + n + "': spec '" + name + "' declares no such parameter (known: " +
                    (known.empty() ? "none" : known) + ")");
  }
  params[size_t(i)].value = Expr(value);
  params[size_t(i)].overridden = true;
}

void Spec::set_params(const std::map<std::string, int64_t>& values) {
  for (const auto& [k, v] : values) set_param(k, v);
}

GridRef Spec::grid(const std::string& n, Expr x, Expr y, Expr z, int line) {
  BRAID_REQUIRE(find_grid(n) < 0, "grid '" + n + "' is declared twice");
  BRAID_REQUIRE(find_param(n) < 0, "grid '" + n + "' has the name of a parameter");
  GridDecl g;
  g.name = n;
  g.extent[0] = std::move(x);
  g.extent[1] = std::move(y);
  g.extent[2] = std::move(z);
  g.line = line;
  grids.push_back(std::move(g));
  return GridRef(this, n);
}

void Spec::dep(TileRef consumer, TileRef producer, std::vector<ForAll> foralls, int line) {
  Dep d{std::move(consumer), std::move(producer), std::move(foralls), line, ""};
  add(std::move(d));
}

void Spec::add(Dep d) { deps.push_back(std::move(d)); }

int Spec::find_grid(const std::string& n) const {
  for (size_t i = 0; i < grids.size(); ++i)
    if (grids[i].name == n) return int(i);
  return -1;
}
int Spec::find_param(const std::string& n) const {
  for (size_t i = 0; i < params.size(); ++i)
    if (params[i].name == n) return int(i);
  return -1;
}
GridRef Spec::ref(const std::string& n) {
  BRAID_REQUIRE(find_grid(n) >= 0, "grid '" + n + "' is not declared in spec '" + name + "'");
  return GridRef(this, n);
}

std::string ident(const std::string& s) {
  std::string r;
  bool us = false;
  for (char c : s) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      r += c;
      us = false;
    } else if (!us && !r.empty()) {
      r += '_';
      us = true;
    }
  }
  while (!r.empty() && r.back() == '_') r.pop_back();
  if (r.empty() || std::isdigit(static_cast<unsigned char>(r[0]))) r = "_" + r;
  return r;
}

}  // namespace braid::gen
