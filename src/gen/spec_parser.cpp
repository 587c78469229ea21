#include "gen/spec_parser.hpp"

#include <cctype>
#include <fstream>
#include <set>
#include <sstream>

namespace braid::gen {

namespace {

enum class Tok { Ident, Int, Punct, Newline, End };

struct Token {
  Tok kind;
  std::string text;
  int line, col;
  int64_t value = 0;
};

std::string show(const Token& t) {
  switch (t.kind) {
    case Tok::Newline: return "end of line";
    case Tok::End: return "end of file";
    default: return "'" + t.text + "'";
  }
}

class Lexer {
 public:
  Lexer(std::string_view s, const std::string& src) : s_(s), src_(src) {}

  std::vector<Token> run() {
    std::vector<Token> out;
    int depth = 0;
    while (i_ < s_.size()) {
      const char c = s_[i_];
      if (c == '#') {
        while (i_ < s_.size() && s_[i_] != '\n') adv();
      } else if (c == '\\' && next_is_newline()) {
        while (s_[i_] != '\n') adv();
        adv();  // line continuation
      } else if (c == '\n') {
        if (depth == 0 && (out.empty() || out.back().kind != Tok::Newline)) out.push_back({Tok::Newline, "", line_, col_});
        adv();
      } else if (std::isspace(static_cast<unsigned char>(c))) {
        adv();
      } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
        Token t{Tok::Ident, "", line_, col_};
        while (i_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_')) t.text += adv();
        out.push_back(t);
      } else if (std::isdigit(static_cast<unsigned char>(c))) {
        Token t{Tok::Int, "", line_, col_};
        while (i_ < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_')) t.text += adv();
        std::string digits;
        for (char d : t.text)
          if (d != '_') digits += d;
        if (digits.size() > 18) throw SpecError(src_, t.line, t.col, "integer '" + t.text + "' is too large");
        t.value = std::stoll(digits);
        if (i_ < s_.size() && (std::isalpha(static_cast<unsigned char>(s_[i_]))))
          throw SpecError(src_, line_, col_, "unexpected '" + std::string(1, s_[i_]) + "' after a number");
        out.push_back(t);
      } else {
        Token t{Tok::Punct, "", line_, col_};
        const std::string two(s_.substr(i_, 2));
        if (two == "<-" || two == "..") {
          t.text = two;
          adv();
          adv();
        } else if (std::string("(),=+-*/%.").find(c) != std::string::npos) {
          t.text = std::string(1, adv());
          if (c == '(') {
            ++depth;
            open_.push_back(t);
          }
          if (c == ')' && depth > 0) {
            --depth;
            open_.pop_back();
          }
        } else {
          throw SpecError(src_, line_, col_, "unexpected character '" + std::string(1, c) + "'");
        }
        out.push_back(t);
      }
    }
    if (depth > 0)
      throw SpecError(src_, open_.back().line, open_.back().col,
                      "'(' is never closed (expected ')' before the end of the file)");
    if (out.empty() || out.back().kind != Tok::Newline) out.push_back({Tok::Newline, "", line_, col_});
    out.push_back({Tok::End, "", line_, col_});
    return out;
  }

 private:
  bool next_is_newline() const {
    size_t j = i_ + 1;
    while (j < s_.size() && (s_[j] == ' ' || s_[j] == '\t' || s_[j] == '\r')) ++j;
    return j < s_.size() && s_[j] == '\n';
  }
  char adv() {
    const char c = s_[i_++];
    if (c == '\n') {
      ++line_;
      col_ = 1;
    } else {
      ++col_;
    }
    return c;
  }
  std::string_view s_;
  const std::string& src_;
  size_t i_ = 0;
  int line_ = 1, col_ = 1;
  std::vector<Token> open_;  // unclosed '('
};

const std::set<std::string> kKeywords = {"param", "grid", "dep", "spec", "for", "in", "min", "max", "ceildiv",
                                         "occupancy", "tile_time", "blocks", "policy"};

class Parser {
 public:
  Parser(std::vector<Token> toks, const std::string& src, Spec& spec) : t_(std::move(toks)), src_(src), spec_(spec) {}

  void run() {
    while (peek().kind != Tok::End) {
      if (peek().kind == Tok::Newline) {
        ++p_;
        continue;
      }
      const Token& kw = peek();
      if (kw.kind != Tok::Ident) fail(kw, "expected 'param', 'grid', 'dep' or 'spec' at the start of a statement");
      if (kw.text == "param") param();
      else if (kw.text == "grid") grid();
      else if (kw.text == "dep") dep();
      else if (kw.text == "spec") spec_name();
      else fail(kw, "expected 'param', 'grid', 'dep' or 'spec', found '" + kw.text + "'");
      end_of_statement();
    }
  }

 private:
  [[noreturn]] void fail(const Token& t, const std::string& msg) { throw SpecError(src_, t.line, t.col, msg); }
  const Token& peek(size_t k = 0) const { return t_[std::min(p_ + k, t_.size() - 1)]; }
  const Token& take() { return t_[p_ < t_.size() - 1 ? p_++ : p_]; }
  bool is(const char* punct) const { return peek().kind == Tok::Punct && peek().text == punct; }
  bool is_word(const char* w) const { return peek().kind == Tok::Ident && peek().text == w; }
  void expect(const char* punct, const std::string& ctx) {
    if (!is(punct)) fail(peek(), std::string("expected '") + punct + "' " + ctx + ", found " + show(peek()));
    ++p_;
  }
  void expect_word(const char* w, const std::string& ctx) {
    if (!is_word(w)) fail(peek(), std::string("expected '") + w + "' " + ctx + ", found " + show(peek()));
    ++p_;
  }
  void end_of_statement() {
    if (peek().kind != Tok::Newline && peek().kind != Tok::End)
      fail(peek(), "expected end of line, found " + show(peek()));
  }
  const Token& new_name(const std::string& what) {
    const Token& t = peek();
    if (t.kind != Tok::Ident) fail(t, "expected " + what + " name, found " + show(t));
    if (kKeywords.count(t.text)) fail(t, "'" + t.text + "' is a keyword and cannot be a " + what + " name");
    ++p_;
    return t;
  }
  bool known_name(const std::string& n) const {
    return spec_.find_param(n) >= 0 || spec_.find_grid(n) >= 0 || vars_.count(n);
  }

  // expr := term (('+'|'-') term)* ; term := unary (('*'|'/'|'%') unary)* ; unary := '-' unary | primary
  Expr expr() {
    Expr e = term();
    while (is("+") || is("-")) {
      const bool plus = take().text == "+";
      Expr r = term();
      e = plus ? e + r : e - r;
    }
    return e;
  }
  Expr term() {
    Expr e = unary();
    while (is("*") || is("/") || is("%")) {
      const char op = take().text[0];
      Expr r = unary();
      e = op == '*' ? e * r : op == '/' ? e / r : e % r;
    }
    return e;
  }
  Expr unary() {
    if (is("-")) {
      take();
      Expr a = unary();
      if (a.is_const()) return Expr(-a.value());
      return -a;
    }
    return primary();
  }
  Expr primary() {
    const Token& t = peek();
    if (t.kind == Tok::Int) {
      take();
      return Expr(t.value);
    }
    if (is("(")) {
      take();
      Expr e = expr();
      expect(")", "to close '('");
      return e;
    }
    if (t.kind != Tok::Ident) fail(t, "expected an expression, found " + show(t));
    take();
    if (t.text == "min" || t.text == "max" || t.text == "ceildiv") {
      expect("(", "after '" + t.text + "'");
      Expr a = expr();
      expect(",", "between the arguments of '" + t.text + "'");
      Expr b = expr();
      expect(")", "after the arguments of '" + t.text + "'");
      return t.text == "min" ? min(a, b) : t.text == "max" ? max(a, b) : ceildiv(a, b);
    }
    if (is(".")) {
      take();
      const Token& d = peek();
      if (d.kind != Tok::Ident || d.text.size() != 1 || std::string("xyz").find(d.text) == std::string::npos)
        fail(d, "expected 'x', 'y' or 'z' after '" + t.text + ".', found " + show(d));
      take();
      if (spec_.find_grid(t.text) < 0) fail(t, "unknown grid '" + t.text + "' (grids must be declared before use)");
      return Expr::grid_extent(t.text, int(std::string("xyz").find(d.text)));
    }
    if (vars_.count(t.text)) return Expr::var(t.text);
    if (spec_.find_param(t.text) >= 0) return Expr::param(t.text);
    if (spec_.find_grid(t.text) >= 0)
      fail(t, "'" + t.text + "' is a grid; use " + t.text + ".x, " + t.text + ".y or " + t.text + ".z for its extent");
    fail(t, "unknown name '" + t.text + "' (not a parameter" + std::string(in_dep_ ? " or variable" : "") + ")");
  }

  void spec_name() {
    take();
    const Token& t = peek();
    if (t.kind != Tok::Ident) fail(t, "expected the spec name, found " + show(t));
    take();
    spec_.name = t.text;
    while (is("-") && peek(1).kind != Tok::Newline) {  // allow dashed names: gpt3-mlp
      take();
      spec_.name += "-" + take().text;
    }
  }

  void param() {
    const int line = take().line;
    const Token& n = new_name("parameter");
    if (known_name(n.text)) fail(n, "'" + n.text + "' is already declared");
    expect("=", "after the parameter name");
    Expr v = expr();
    spec_.param(n.text, v, line);
  }

  void grid() {
    const int line = take().line;
    const Token& n = new_name("grid");
    if (known_name(n.text)) fail(n, "'" + n.text + "' is already declared");
    expect("=", "after the grid name");
    expect("(", "to start the grid extents (x, y, z)");
    std::vector<Expr> ext{expr()};
    while (is(",")) {
      take();
      if (ext.size() == 3) fail(peek(), "a grid has at most three extents (x, y, z)");
      ext.push_back(expr());
    }
    expect(")", "after the grid extents");
    while (ext.size() < 3) ext.push_back(Expr(1));
    GridRef g = spec_.grid(n.text, ext[0], ext[1], ext[2], line);
    std::set<std::string> seen;
    while (peek().kind == Tok::Ident) {
      const Token& k = take();
      if (!seen.insert(k.text).second) fail(k, "'" + k.text + "' is given twice");
      if (k.text == "occupancy") g.occupancy(expr());
      else if (k.text == "tile_time") g.tile_time(expr());
      else if (k.text == "blocks") g.blocks(expr());
      else if (k.text == "policy") g.policy(policy());
      else fail(k, "expected 'occupancy', 'tile_time', 'blocks' or 'policy', found '" + k.text + "'");
    }
  }

  PolicyOverride policy() {
    const Token& t = peek();
    if (t.kind != Tok::Ident) fail(t, "expected a policy (TileSync, RowSync, NoSync, Strided(s, n), Group(...))");
    take();
    auto args = [&](size_t lo, size_t hi) {
      expect("(", "after '" + t.text + "'");
      std::vector<Expr> a{expr()};
      while (is(",")) {
        take();
        a.push_back(expr());
      }
      if (a.size() < lo || a.size() > hi)
        fail(t, "'" + t.text + "' takes " + std::to_string(lo) + (lo == hi ? "" : " to " + std::to_string(hi)) +
                    " arguments, got " + std::to_string(a.size()));
      expect(")", "after the arguments of '" + t.text + "'");
      return a;
    };
    if (t.text == "TileSync") return PolicyOverride::tile_sync();
    if (t.text == "RowSync") return PolicyOverride::row_sync();
    if (t.text == "NoSync") return PolicyOverride::no_sync();
    if (t.text == "Strided") {
      auto a = args(2, 2);
      return PolicyOverride::strided(a[0], a[1]);
    }
    if (t.text == "Group") {
      auto a = args(2, 6);
      if (a.size() % 2) fail(t, "'Group' takes (stride, count) pairs for x[, y[, z]]");
      while (a.size() < 6) a.push_back(Expr(1));
      return PolicyOverride::group(a[0], a[1], a[2], a[3], a[4], a[5]);
    }
    fail(t, "unknown policy '" + t.text + "' (expected TileSync, RowSync, NoSync, Strided(s, n) or Group(...))");
  }

  // dep CONS(v, ...) <- PROD(e, ...) [for v in lo..hi {, v in lo..hi}]
  void dep() {
    const Token& kw = take();
    in_dep_ = true;
    vars_.clear();
    const Token& c = peek();
    if (c.kind != Tok::Ident) fail(c, "expected the consumer grid name, found " + show(c));
    take();
    if (spec_.find_grid(c.text) < 0) fail(c, "unknown grid '" + c.text + "' (grids must be declared before use)");
    expect("(", "after the consumer grid name");
    std::vector<Expr> cv;
    while (true) {
      const Token& v = new_name("variable");
      if (spec_.find_param(v.text) >= 0 || spec_.find_grid(v.text) >= 0)
        fail(v, "variable '" + v.text + "' has the name of a parameter or grid");
      if (!vars_.insert(v.text).second) fail(v, "variable '" + v.text + "' appears twice");
      if (cv.size() == 3) fail(v, "a tile has at most three indices (x, y, z)");
      cv.push_back(Expr::var(v.text));
      if (!is(",")) break;
      take();
    }
    expect(")", "after the consumer variables");
    expect("<-", "between the consumer and the producer");
    const Token& pr = peek();
    if (pr.kind != Tok::Ident) fail(pr, "expected the producer grid name, found " + show(pr));
    take();
    if (spec_.find_grid(pr.text) < 0) fail(pr, "unknown grid '" + pr.text + "' (grids must be declared before use)");
    expect("(", "after the producer grid name");
    // The producer indices may use ForAll variables declared after them: skip now, parse later.
    const size_t prod_at = p_;
    for (int depth = 1; depth > 0;) {
      const Token& t = take();
      if (t.kind == Tok::Newline || t.kind == Tok::End) fail(t, "expected ')' to close the producer tile");
      if (t.kind == Tok::Punct && t.text == "(") ++depth;
      if (t.kind == Tok::Punct && t.text == ")") --depth;
    }
    std::vector<ForAll> fa;
    if (is_word("for")) {
      take();
      while (true) {
        const Token& v = new_name("variable");
        if (known_name(v.text)) fail(v, "'" + v.text + "' is already declared");
        expect_word("in", "after the ForAll variable");
        Expr lo = expr();
        expect("..", "in the range (lo..hi, hi excluded)");
        Expr hi = expr();
        vars_.insert(v.text);
        fa.emplace_back(v.text, Range(lo, hi));
        if (!is(",")) break;
        take();
      }
    }
    end_of_statement();
    const size_t end = p_;
    p_ = prod_at;
    std::vector<Expr> pe{expr()};
    while (is(",")) {
      take();
      if (pe.size() == 3) fail(peek(), "a tile has at most three indices (x, y, z)");
      pe.push_back(expr());
    }
    expect(")", "after the producer indices");
    p_ = end;
    Dep d{TileRef(c.text, cv), TileRef(pr.text, pe), fa, kw.line, ""};
    d.text = describe(d);
    spec_.add(std::move(d));
    in_dep_ = false;
    vars_.clear();
  }

  std::vector<Token> t_;
  const std::string& src_;
  Spec& spec_;
  size_t p_ = 0;
  bool in_dep_ = false;
  std::set<std::string> vars_;
};

std::string stem(const std::string& path) {
  std::string s = path;
  const size_t slash = s.find_last_of('/');
  if (slash != std::string::npos) s = s.substr(slash + 1);
  const size_t dot = s.find_last_of('.');
  if (dot != std::string::npos && dot > 0) s = s.substr(0, dot);
  return s;
}

}  // namespace

Spec parse_spec(std::string_view text, const std::string& source, const ParamOverrides& overrides) {
  Spec spec(stem(source));
  Parser(Lexer(text, source).run(), source, spec).run();
  spec.set_params(overrides);
  return spec;
}

Spec load_spec(const std::string& path, const ParamOverrides& overrides) {
  std::ifstream f(path);
  if (!f) throw PlanError("cannot read spec file '" + path + "'");
  std::stringstream ss;
  ss << f.rdbuf();
  return parse_spec(ss.str(), path, overrides);
}

std::pair<std::string, int64_t> parse_define(const std::string& arg) {
  const size_t eq = arg.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == arg.size())
    throw PlanError("bad parameter definition '" + arg + "' (expected NAME=VALUE, e.g. T=1024)");
  const std::string name = arg.substr(0, eq), val = arg.substr(eq + 1);
  for (char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_'))
      throw PlanError("bad parameter name '" + name + "' in '" + arg + "'");
  size_t used = 0;
  int64_t v = 0;
  try {
    v = std::stoll(val, &used, 0);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != val.size()) throw PlanError("bad parameter value '" + val + "' in '" + arg + "' (expected an integer)");
  return {name, v};
}

}  // namespace braid::gen
