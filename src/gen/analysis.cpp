// The checker, candidate policies, tile orders and Spec -> Plan.
#include <algorithm>
#include <numeric>
#include <set>
#include <sstream>

#include "gen/generator.hpp"

namespace braid::gen {

namespace {

std::string tstr(int64_t x, int64_t y, int64_t z) {
  std::ostringstream o;
  o << "(" << x << "," << y << "," << z << ")";
  return o.str();
}
std::string tstr(Tile t) { return tstr(t.x, t.y, t.z); }

// Thrown by evaluation; callers add the context (which dependency, which tile).
struct EvalError {
  std::string msg;
};

int64_t floordiv(int64_t a, int64_t b, const char* what) {
  if (b == 0) throw EvalError{std::string("division by zero in ") + what};
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

int64_t apply(Op op, int64_t a, int64_t b, const char* what) {
  switch (op) {
    case Op::Neg: return -a;
    case Op::Add: return a + b;
    case Op::Sub: return a - b;
    case Op::Mul: return a * b;
    case Op::Div: return floordiv(a, b, what);
    case Op::Mod: return a - b * floordiv(a, b, what);
    case Op::Min: return std::min(a, b);
    case Op::Max: return std::max(a, b);
    case Op::CeilDiv: return -floordiv(-a, b, what);
    default: return 0;
  }
}

// Values known outside dependencies: parameters and the extents of the grids declared so far.
struct Globals {
  std::map<std::string, int64_t> params;
  std::map<std::string, Grid> grids;
};

// A compiled expression: postfix program over variable slots, parameters and grid extents folded.
struct Program {
  struct Ins {
    Op op;
    int64_t v;  // Const: the value; Var: the slot
  };
  std::vector<Ins> code;
  std::string text;
  int depth = 0;

  int64_t eval(const int64_t* slots) const {
    int64_t st[64];
    int sp = 0;
    for (const Ins& i : code) {
      switch (i.op) {
        case Op::Const: st[sp++] = i.v; break;
        case Op::Var: st[sp++] = slots[i.v]; break;
        case Op::Neg: st[sp - 1] = -st[sp - 1]; break;
        default:
          --sp;
          st[sp - 1] = apply(i.op, st[sp - 1], st[sp], text.c_str());
      }
    }
    return st[0];
  }
};

// Where a name used in an expression is looked up.
struct Scope {
  const Globals* g = nullptr;
  const std::map<std::string, int>* slots = nullptr;  // variables; null: none allowed
  std::string where;                                  // for messages: "parameter 'T'"
};

int compile_into(const Expr& e, const Scope& s, Program& p) {
  const Op op = e.op();
  switch (op) {
    case Op::Const: p.code.push_back({Op::Const, e.value()}); return 1;
    case Op::Param: {
      auto it = s.g->params.find(e.name());
      if (it == s.g->params.end()) {
        if (s.slots && s.slots->count(e.name())) {
          p.code.push_back({Op::Var, s.slots->at(e.name())});
          return 1;
        }
        throw PlanError(s.where + ": unknown parameter '" + e.name() + "'");
      }
      p.code.push_back({Op::Const, it->second});
      return 1;
    }
    case Op::Var: {
      if (s.slots) {
        auto it = s.slots->find(e.name());
        if (it != s.slots->end()) {
          p.code.push_back({Op::Var, it->second});
          return 1;
        }
      }
      auto pit = s.g->params.find(e.name());  // a variable named like a parameter: the parameter
      if (pit != s.g->params.end()) {
        p.code.push_back({Op::Const, pit->second});
        return 1;
      }
      throw PlanError(s.where + ": unknown variable '" + e.name() + "'" +
                      (s.slots ? "" : " (variables are allowed only in dependencies)"));
    }
    case Op::GridExt: {
      auto it = s.g->grids.find(e.name());
      if (it == s.g->grids.end())
        throw PlanError(s.where + ": '" + e.name() + "." + "xyz"[e.dim()] + "' refers to grid '" + e.name() +
                        "', which is not declared before this point");
      p.code.push_back({Op::Const, int64_t(component(it->second, e.dim()))});
      return 1;
    }
    case Op::Neg: {
      int d = compile_into(e.lhs(), s, p);
      p.code.push_back({Op::Neg, 0});
      return d;
    }
    default: {
      int da = compile_into(e.lhs(), s, p);
      int db = compile_into(e.rhs(), s, p);
      p.code.push_back({op, 0});
      return std::max(da, db + 1);
    }
  }
}

Program compile(const Expr& e, const Scope& s) {
  Program p;
  p.text = "'" + to_string(e) + "'";
  p.depth = compile_into(e, s, p);
  if (p.depth > 60) throw PlanError(s.where + ": expression too deeply nested: " + p.text);
  return p;
}

int64_t eval_global(const Expr& e, const Scope& s) {
  Program p = compile(e, s);
  try {
    return p.eval(nullptr);
  } catch (const EvalError& err) {
    throw PlanError(s.where + ": " + err.msg);
  }
}

uint32_t to_u32(int64_t v, const std::string& what, int64_t min_value) {
  if (v < min_value || v > int64_t(UINT32_MAX))
    throw PlanError(what + " evaluates to " + std::to_string(v) + " (must be >= " + std::to_string(min_value) +
                    ")");
  return uint32_t(v);
}

std::string grid_where(const GridDecl& g) {
  return "grid '" + g.name + "'" + (g.line ? " (line " + std::to_string(g.line) + ")" : "");
}

}  // namespace

// ---- one dependency, compiled ----------------------------------------------------------------------
struct CompiledDep {
  int nslots = 3;
  std::vector<int> fslot;
  std::vector<Program> lo, hi;
  Program prod[3];

  // Calls f(px, py, pz) for every producer tile, in ForAll order. `limit` bounds the count.
  template <class F>
  void each(Tile c, F&& f, uint64_t limit = UINT64_MAX) const {
    int64_t slots[32];
    slots[0] = c.x;
    slots[1] = c.y;
    slots[2] = c.z;
    uint64_t n = 0;
    rec(0, slots, f, n, limit);
  }

 private:
  template <class F>
  void rec(size_t k, int64_t* slots, F& f, uint64_t& n, uint64_t limit) const {
    if (k == fslot.size()) {
      if (++n > limit)
        throw EvalError{"a consumer tile needs more than " + std::to_string(limit) + " producer tiles"};
      f(prod[0].eval(slots), prod[1].eval(slots), prod[2].eval(slots));
      return;
    }
    const int64_t a = lo[k].eval(slots), b = hi[k].eval(slots);
    for (int64_t v = a; v < b; ++v) {
      slots[fslot[k]] = v;
      rec(k + 1, slots, f, n, limit);
    }
  }
};

std::string DepInfo::label() const {
  return "dep '" + text + "'" + (line ? " (line " + std::to_string(line) + ")" : "");
}

int Analysis::find(const std::string& n) const {
  for (size_t i = 0; i < stages.size(); ++i)
    if (stages[i].name == n) return int(i);
  return -1;
}

void Analysis::reads(int dep, Tile c, std::vector<Tile>& out) const {
  deps.at(size_t(dep)).fn->each(c, [&](int64_t x, int64_t y, int64_t z) {
    out.push_back(Tile{uint32_t(x), uint32_t(y), uint32_t(z)});
  });
}

// ---- candidate naming ------------------------------------------------------------------------------
Candidate name_policy(GroupPolicy p) {
  auto trivial = [&](int d) { return p.dim[d].stride == 1 && p.dim[d].count == 1; };
  auto whole = [&](int d) { return p.dim[d].stride == 1 && p.dim[d].count == 0; };
  Candidate c;
  if (p.kind == PolicyKind::NoSync) {
    c.name = "NoSync";
  } else if (trivial(0) && trivial(1) && trivial(2)) {
    if (p.kind != PolicyKind::Conv2DTileSync) p.kind = PolicyKind::TileSync;
    c.name = policy_kind_name(p.kind);
  } else if (whole(0) && trivial(1) && trivial(2)) {
    p.kind = PolicyKind::RowSync;
    c.name = "RowSync";
  } else if (p.dim[0].stride > 1 && trivial(1) && trivial(2)) {
    p.kind = PolicyKind::StridedSync;
    c.name = "Strided(s" + std::to_string(p.dim[0].stride) + ",n" +
             (p.dim[0].count ? std::to_string(p.dim[0].count) : std::string("all")) + ")";
  } else if (trivial(0) && whole(1) && trivial(2)) {
    p.kind = PolicyKind::Generic;
    c.name = "ColSync";
  } else {
    p.kind = PolicyKind::Generic;
    std::string s;
    for (int d = 0; d < 3; ++d) {
      if (trivial(d)) continue;
      s += s.empty() ? "" : ",";
      s += std::string(1, "xyz"[d]) + ":" + (p.dim[d].count ? std::to_string(p.dim[d].count) : "all");
      if (p.dim[d].stride > 1) s += "s" + std::to_string(p.dim[d].stride);
    }
    c.name = "Group(" + s + ")";
  }
  c.policy = p;
  c.ident = ident(c.name);
  return c;
}

namespace {

std::vector<Candidate> cross(const std::vector<DimGroup> opts[3]) {
  std::vector<Candidate> out;
  std::set<std::string> seen;
  for (const DimGroup& gz : opts[2])
    for (const DimGroup& gy : opts[1])
      for (const DimGroup& gx : opts[0]) {
        Candidate c = name_policy(GenericPolicy(gx, gy, gz));
        if (seen.insert(c.name).second) out.push_back(c);
      }
  return out;
}

void add_option(std::vector<DimGroup>& v, DimGroup g) {
  for (const auto& o : v)
    if (o.stride == g.stride && o.count == g.count) return;
  v.push_back(g);
}

std::vector<Candidate> dep_candidates(const DepInfo& d) {
  std::vector<DimGroup> opts[3];
  for (int k = 0; k < 3; ++k) {
    opts[k].push_back(DimGroup{});
    if (d.spread[k].varies) add_option(opts[k], d.spread[k].group());
  }
  return cross(opts);
}

GroupPolicy eval_policy(const PolicyOverride& o, const Scope& s) {
  GroupPolicy p;
  p.kind = o.kind;
  for (int d = 0; d < 3; ++d) {
    p.dim[d].stride = to_u32(eval_global(o.stride[d], s), s.where + ": policy stride", 1);
    p.dim[d].count = to_u32(eval_global(o.count[d], s), s.where + ": policy count", 0);
  }
  return p;
}

// Producer rule: iterate the tiles of one consumer's group consecutively (groups in row-major order
// of their semaphore coordinates, members x fastest). No grouping: row-major.
std::vector<uint32_t> producer_order(Grid g, const GroupPolicy& gp) {
  const uint32_t n = uint32_t(num_tiles(g));
  std::vector<std::pair<uint64_t, uint32_t>> key(n);
  const uint32_t G[3] = {g.x, g.y, g.z};
  uint32_t ext[3], cnt[3];
  for (int d = 0; d < 3; ++d) {
    ext[d] = gp.extent(d, G[d]);
    cnt[d] = gp.count_of(d, G[d]);
  }
  for (uint32_t i = 0; i < n; ++i) {
    const Tile t = delinear(i, g);
    uint64_t gc[3], m[3];
    for (int d = 0; d < 3; ++d) {
      const uint32_t v = component(t, d), s = gp.dim[d].stride, span = s * cnt[d];
      gc[d] = gp.coord(d, v, G[d]);
      m[d] = (v % span) / s;
    }
    const uint64_t group = gc[0] + uint64_t(ext[0]) * (gc[1] + uint64_t(ext[1]) * gc[2]);
    const uint64_t member = m[0] + uint64_t(cnt[0]) * (m[1] + uint64_t(cnt[1]) * m[2]);
    key[i] = {group * (uint64_t(cnt[0]) * cnt[1] * cnt[2]) + member, i};
  }
  std::stable_sort(key.begin(), key.end());
  std::vector<uint32_t> order(n);
  for (uint32_t i = 0; i < n; ++i) order[i] = key[i].second;
  return order;
}

}  // namespace

// ---- analyze -----------------------------------------------------------------------------------------
Analysis analyze(const Spec& spec) {
  Analysis a;
  a.spec = spec;
  a.spec_name = spec.name;
  Globals glob;

  // Parameters, in declaration order (each may use the earlier ones).
  for (const auto& p : spec.params) {
    Scope s{&glob, nullptr, "parameter '" + p.name + "'" + (p.line ? " (line " + std::to_string(p.line) + ")" : "")};
    const int64_t v = eval_global(p.value, s);
    glob.params[p.name] = v;
    a.params.emplace_back(p.name, v);
  }

  // Grids, in launch order (extents may use parameters and earlier grids).
  BRAID_REQUIRE(!spec.grids.empty(), "spec '" + spec.name + "' declares no grids");
  for (const auto& gd : spec.grids) {
    const std::string where = grid_where(gd);
    Scope s{&glob, nullptr, where};
    BRAID_REQUIRE(!glob.grids.count(gd.name), where + ": declared twice");
    StageInfo st;
    st.name = gd.name;
    st.line = gd.line;
    uint32_t ext[3];
    for (int d = 0; d < 3; ++d) {
      const int64_t v = eval_global(gd.extent[d], s);
      if (v <= 0)
        throw PlanError(where + ": extent " + std::string(1, "xyz"[d]) + " = " + to_string(gd.extent[d]) +
                        " evaluates to " + std::to_string(v) + "; every extent must be >= 1");
      ext[d] = to_u32(v, where + ": extent", 1);
    }
    st.grid = Grid{ext[0], ext[1], ext[2]};
    BRAID_REQUIRE(num_tiles(st.grid) < (uint64_t(1) << 31), where + ": too many tiles (" +
                                                                   std::to_string(num_tiles(st.grid)) + ")");
    if (gd.occupancy) st.occupancy = to_u32(eval_global(*gd.occupancy, s), where + ": occupancy", 1);
    if (gd.tile_time) {
      const int64_t t = eval_global(*gd.tile_time, s);
      BRAID_REQUIRE(t >= 0, where + ": tile_time evaluates to " + std::to_string(t) + " (must be >= 0)");
      st.tile_time = double(t);
    }
    if (gd.blocks) st.block_count = to_u32(eval_global(*gd.blocks, s), where + ": blocks", 1);
    if (gd.policy) st.policy_override = eval_policy(*gd.policy, s);
    glob.grids[gd.name] = st.grid;
    a.stages.push_back(st);
  }

  // Dependencies.
  std::vector<std::vector<char>> has_input(a.stages.size());
  for (size_t di = 0; di < spec.deps.size(); ++di) {
    const Dep& d = spec.deps[di];
    DepInfo info;
    info.text = describe(d);
    info.line = d.line;
    const std::string lab = info.label();
    info.consumer = a.find(d.consumer.grid);
    info.producer = a.find(d.producer.grid);
    BRAID_REQUIRE(info.consumer >= 0, lab + ": unknown consumer grid '" + d.consumer.grid + "'");
    BRAID_REQUIRE(info.producer >= 0, lab + ": unknown producer grid '" + d.producer.grid + "'");
    BRAID_REQUIRE(info.producer != info.consumer, lab + ": grid '" + d.producer.grid + "' depends on itself");
    BRAID_REQUIRE(info.producer < info.consumer,
                  lab + ": producer '" + d.producer.grid + "' is declared after consumer '" + d.consumer.grid +
                      "' (grids are launched in declaration order, so a producer must be declared first)");
    BRAID_REQUIRE(d.consumer.idx.size() <= 3 && d.producer.idx.size() <= 3,
                  lab + ": a tile has at most three indices (x, y, z)");
    const StageInfo& cs = a.stages[size_t(info.consumer)];
    const StageInfo& ps = a.stages[size_t(info.producer)];

    auto cd = std::make_shared<CompiledDep>();
    std::map<std::string, int> slots;
    for (size_t k = 0; k < d.consumer.idx.size(); ++k) {
      const Expr& v = d.consumer.idx[k];
      BRAID_REQUIRE(v.is_var() || v.op() == Op::Param,
                    lab + ": consumer index " + std::to_string(k + 1) + " ('" + to_string(v) +
                        "') must be a variable name");
      BRAID_REQUIRE(!glob.params.count(v.name()), lab + ": consumer variable '" + v.name() +
                                                      "' has the name of a parameter");
      BRAID_REQUIRE(slots.emplace(v.name(), int(k)).second, lab + ": variable '" + v.name() + "' appears twice");
    }
    for (size_t k = 0; k < d.foralls.size(); ++k) {
      const ForAll& f = d.foralls[k];
      Scope s{&glob, &slots, lab + ", range of '" + f.var + "'"};
      cd->lo.push_back(compile(f.range.lo, s));
      cd->hi.push_back(compile(f.range.hi, s));
      BRAID_REQUIRE(!glob.params.count(f.var), lab + ": ForAll variable '" + f.var + "' has the name of a parameter");
      BRAID_REQUIRE(slots.emplace(f.var, int(3 + k)).second, lab + ": variable '" + f.var + "' is declared twice");
      cd->fslot.push_back(int(3 + k));
      BRAID_REQUIRE(3 + k < 32, lab + ": too many ForAll variables");
    }
    for (int k = 0; k < 3; ++k) {
      Scope s{&glob, &slots, lab + ", producer index " + std::string(1, "xyz"[k])};
      cd->prod[k] = compile(size_t(k) < d.producer.idx.size() ? d.producer.idx[size_t(k)] : Expr(0), s);
    }
    info.fn = cd;

    // Check every consumer tile; measure the spread of the producer tiles it needs.
    auto& hin = has_input[size_t(info.consumer)];
    const uint32_t nc = uint32_t(num_tiles(cs.grid));
    hin.resize(nc, 0);
    uint64_t gcd[3] = {0, 0, 0}, span[3] = {0, 0, 0};
    std::vector<int64_t> vals[3];
    const int64_t PG[3] = {ps.grid.x, ps.grid.y, ps.grid.z};
    for (uint32_t i = 0; i < nc; ++i) {
      const Tile c = delinear(i, cs.grid);
      for (auto& v : vals) v.clear();
      uint32_t n = 0;
      try {
        cd->each(
            c,
            [&](int64_t x, int64_t y, int64_t z) {
              if (x < 0 || y < 0 || z < 0 || x >= PG[0] || y >= PG[1] || z >= PG[2])
                throw PlanError(lab + ": consumer tile " + cs.name + tstr(c) + " needs producer tile " + ps.name +
                                tstr(x, y, z) + ", outside the producer grid " + tstr(ps.grid));
              vals[0].push_back(x);
              vals[1].push_back(y);
              vals[2].push_back(z);
              ++n;
            },
            uint64_t(1) << 24);
      } catch (const EvalError& e) {
        throw PlanError(lab + ", consumer tile " + cs.name + tstr(c) + ": " + e.msg);
      }
      if (n) hin[i] = 1;
      info.total_reads += n;
      info.max_reads = std::max(info.max_reads, n);
      for (int k = 0; k < 3; ++k) {
        auto& v = vals[k];
        std::sort(v.begin(), v.end());
        v.erase(std::unique(v.begin(), v.end()), v.end());
        if (v.size() < 2) continue;
        for (size_t j = 1; j < v.size(); ++j) gcd[k] = std::gcd(gcd[k], uint64_t(v[j] - v[j - 1]));
        span[k] = std::max(span[k], uint64_t(v.back() - v.front()));
      }
    }
    for (int k = 0; k < 3; ++k) {
      DimSpread& sp = info.spread[k];
      if (!gcd[k]) continue;
      sp.varies = true;
      sp.stride = uint32_t(gcd[k]);
      sp.count = uint32_t(span[k] / gcd[k] + 1);
      sp.whole = sp.stride == 1 && sp.count >= uint32_t(PG[k]);
    }
    info.candidates = dep_candidates(info);
    a.deps.push_back(std::move(info));
  }

  // Warnings: consumer tiles that depend on nothing.
  for (size_t si = 0; si < a.stages.size(); ++si) {
    const auto& hin = has_input[si];
    if (hin.empty()) continue;
    std::vector<uint32_t> none;
    for (uint32_t i = 0; i < hin.size(); ++i)
      if (!hin[i]) none.push_back(i);
    if (none.empty()) continue;
    std::string w = "grid '" + a.stages[si].name + "': " + std::to_string(none.size()) + " of " +
                    std::to_string(hin.size()) + " tiles depend on nothing:";
    for (size_t k = 0; k < none.size() && k < 8; ++k) w += " " + tstr(delinear(none[k], a.stages[si].grid));
    if (none.size() > 8) w += " ...";
    a.warnings.push_back(w);
  }

  // Candidates per producer: per dimension the union of its consumer dependencies' options.
  a.candidates.resize(a.stages.size());
  std::vector<GroupPolicy> order_group(a.stages.size(), TileSync());
  for (size_t si = 0; si < a.stages.size(); ++si) {
    std::vector<DimGroup> opts[3];
    bool any = false;
    for (int k = 0; k < 3; ++k) opts[k].push_back(DimGroup{});
    for (const auto& d : a.deps) {
      if (d.producer != int(si)) continue;
      any = true;
      for (int k = 0; k < 3; ++k)
        if (d.spread[k].varies) {
          add_option(opts[k], d.spread[k].group());
          if (order_group[si].dim[k].stride == 1 && order_group[si].dim[k].count == 1)
            order_group[si].dim[k] = d.spread[k].group();
        }
    }
    if (any) a.candidates[si] = cross(opts);
  }

  // Tile orders, in launch order (a consumer's order uses its producers' final orders).
  a.orders.resize(a.stages.size());
  a.order_notes.resize(a.stages.size());
  std::vector<std::vector<uint32_t>> pos(a.stages.size());
  for (size_t si = 0; si < a.stages.size(); ++si) {
    const Grid g = a.stages[si].grid;
    const uint32_t n = uint32_t(num_tiles(g));
    std::vector<uint32_t> base = producer_order(g, order_group[si]);
    std::string note;
    if (!a.candidates[si].empty()) {
      const Candidate grp = name_policy(order_group[si]);
      note = grp.name == "TileSync" ? "producer: row-major (consumers need single tiles)"
             : grp.name == "RowSync" ? "producer: row-major (consumers need whole rows)"
             : grp.name == "ColSync" ? "producer: column-major (consumers need whole columns)"
                                     : "producer: the tiles of each " + grp.name + " group consecutively";
    }
    std::vector<int> prods;
    for (const auto& d : a.deps)
      if (d.consumer == int(si) && std::find(prods.begin(), prods.end(), d.producer) == prods.end())
        prods.push_back(d.producer);
    std::sort(prods.rbegin(), prods.rend());  // latest-launched producer first: it finishes last
    if (!prods.empty()) {
      // key[tile] = latest position of a needed tile in each producer's order, then the base order.
      std::vector<int64_t> key(size_t(n) * (prods.size() + 1), -1);
      const size_t w = prods.size() + 1;
      for (uint32_t i = 0; i < n; ++i) key[size_t(base[i]) * w + prods.size()] = i;
      for (size_t di = 0; di < a.deps.size(); ++di) {
        const auto& d = a.deps[di];
        if (d.consumer != int(si)) continue;
        const size_t slot = size_t(std::find(prods.begin(), prods.end(), d.producer) - prods.begin());
        const auto& pp = pos[size_t(d.producer)];
        const Grid pg = a.stages[size_t(d.producer)].grid;
        for (uint32_t i = 0; i < n; ++i) {
          int64_t& k = key[size_t(i) * w + slot];
          d.fn->each(delinear(i, g), [&](int64_t x, int64_t y, int64_t z) {
            k = std::max<int64_t>(k, pp[linear(Tile{uint32_t(x), uint32_t(y), uint32_t(z)}, pg)]);
          });
        }
      }
      std::vector<uint32_t> idx(n);
      std::iota(idx.begin(), idx.end(), 0u);
      std::sort(idx.begin(), idx.end(), [&](uint32_t l, uint32_t r) {
        return std::lexicographical_compare(key.begin() + l * w, key.begin() + (l + 1) * w, key.begin() + r * w,
                                            key.begin() + (r + 1) * w);
      });
      base = idx;
      std::string ps;
      for (int p : prods) ps += (ps.empty() ? "" : ", ") + a.stages[size_t(p)].name;
      note += std::string(note.empty() ? "" : "; ") + "consumer: by the latest needed tile in the order of " + ps +
              (note.empty() ? ", ties row-major" : ", ties by the producer order");
    }
    if (note.empty()) note = "row-major (no dependencies)";
    a.order_notes[si] = note;
    pos[si].assign(n, 0);
    for (uint32_t i = 0; i < n; ++i) pos[si][base[i]] = i;
    a.orders[si] = std::move(base);
  }
  return a;
}

// ---- Spec -> Plan ------------------------------------------------------------------------------------
Candidate chosen_policy(const Analysis& a, int si, const PlanOptions& opt) {
  const StageInfo& st = a.stages.at(size_t(si));
  const auto& cands = a.candidates[size_t(si)];
  auto it = opt.policy.find(st.name);
  if (it != opt.policy.end()) {
    const std::string& want = it->second;
    for (const auto& c : cands)
      if (c.name == want || c.ident == want) return c;
    if (!want.empty() && std::all_of(want.begin(), want.end(), [](char ch) { return ch >= '0' && ch <= '9'; })) {
      const size_t k = std::stoul(want);
      if (k < cands.size()) return cands[k];
    }
    std::string known;
    for (size_t k = 0; k < cands.size(); ++k) known += (k ? ", " : "") + std::to_string(k) + ":" + cands[k].name;
    throw PlanError("grid '" + st.name + "' has no candidate policy '" + want + "' (candidates: " +
                    (known.empty() ? "none, nothing depends on it" : known) + ")");
  }
  if (st.policy_override) return name_policy(*st.policy_override);
  if (!cands.empty()) return cands[0];
  return name_policy(NoSync());
}

braid::Plan to_plan(const Analysis& a, const PlanOptions& opt) {
  for (const auto& [name, v] : opt.policy)
    BRAID_REQUIRE(a.find(name) >= 0, "policy for unknown grid '" + name + "' (spec '" + a.spec_name + "')");
  braid::Plan plan;
  plan.name = a.spec_name;
  for (size_t si = 0; si < a.stages.size(); ++si) {
    const StageInfo& st = a.stages[si];
    StageSpec s;
    s.name = st.name;
    s.grid = st.grid;
    s.policy = chosen_policy(a, int(si), opt).policy;
    if (opt.generated_orders) {
      s.order.kind = OrderKind::Table;
      s.order_table = a.orders[si];
    }
    s.dynamic_order = opt.dynamic_order;
    s.occupancy = st.occupancy;
    s.tile_time = st.tile_time;
    s.block_count = st.block_count;
    plan.add_stage(std::move(s));
  }
  for (size_t di = 0; di < a.deps.size(); ++di) {
    const DepInfo& d = a.deps[di];
    std::shared_ptr<const CompiledDep> fn = d.fn;
    auto reads = [fn](Tile c, std::vector<Tile>& out) {
      fn->each(c, [&](int64_t x, int64_t y, int64_t z) {
        out.push_back(Tile{uint32_t(x), uint32_t(y), uint32_t(z)});
      });
    };
    // Waits: one producer tile per distinct semaphore, in read order.
    const GroupPolicy pol = plan.stages[size_t(d.producer)].policy;
    const Grid pg = plan.stages[size_t(d.producer)].grid;
    auto waits = [fn, pol, pg](Tile c, std::vector<Tile>& out) {
      std::set<uint32_t> seen;
      fn->each(c, [&](int64_t x, int64_t y, int64_t z) {
        const Tile t{uint32_t(x), uint32_t(y), uint32_t(z)};
        if (seen.insert(pol.sem(t, pg)).second) out.push_back(t);
      });
    };
    plan.add_dep(d.consumer, d.producer, reads, waits);
  }
  return plan;
}

braid::Plan to_plan(const Spec& spec, const PlanOptions& opt) { return to_plan(analyze(spec), opt); }

}  // namespace braid::gen
