// braid-gen: check a dependency spec, print its summary, emit the C++ header.
//
//   braid-gen SPEC [-D name=value]... [--sms N] [--emit header.hpp] [--policy producer=name]...
//             [--row-major] [--summary]
// Exit code 0 on success, 1 on any error (bad arguments, bad spec, failed check).
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>

#include "gen/generator.hpp"
#include "gen/spec_parser.hpp"

namespace {

const char* kUsage =
    "usage: braid-gen SPEC [-D name=value]... [--sms N] [--emit FILE] [--policy grid=candidate]...\n"
    "                 [--row-major] [--summary]\n"
    "  SPEC                 dependency spec (see docs/spec-format.md)\n"
    "  -D name=value        override a parameter (repeatable; also -Dname=value)\n"
    "  --sms N              multiprocessors for waves and the W/T advice (default 132)\n"
    "  --emit FILE          write the generated C++ header to FILE\n"
    "  --policy g=name      choose grid g's output policy among its candidates (name or index)\n"
    "  --row-major          use row-major tile orders instead of the generated tables\n"
    "  --summary            print the summary (default when --emit is not given)\n";

[[noreturn]] void die(const std::string& msg) {
  std::cerr << "braid-gen: error: " << msg << "\n";
  std::exit(1);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace braid::gen;
  std::string spec_path, emit_path;
  ParamOverrides defs;
  GenOptions opt;
  bool want_summary = false;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      auto value = [&](const std::string& flag) -> std::string {
        if (i + 1 >= argc) die("option " + flag + " needs a value\n" + kUsage);
        return argv[++i];
      };
      if (a == "-h" || a == "--help") {
        std::cout << kUsage;
        return 0;
      } else if (a == "-D") {
        auto [k, v] = parse_define(value(a));
        defs[k] = v;
      } else if (a.rfind("-D", 0) == 0) {
        auto [k, v] = parse_define(a.substr(2));
        defs[k] = v;
      } else if (a == "--sms") {
        const std::string v = value(a);
        char* end = nullptr;
        const long n = std::strtol(v.c_str(), &end, 10);
        if (v.empty() || *end || n < 1 || n > 100000) die("--sms needs a positive integer, got '" + v + "'");
        opt.sms = uint32_t(n);
      } else if (a == "--emit") {
        emit_path = value(a);
      } else if (a == "--policy") {
        const std::string v = value(a);
        const size_t eq = v.find('=');
        if (eq == std::string::npos || eq == 0 || eq + 1 == v.size())
          die("--policy needs GRID=CANDIDATE (e.g. g1=RowSync), got '" + v + "'");
        opt.plan.policy[v.substr(0, eq)] = v.substr(eq + 1);
      } else if (a == "--row-major") {
        opt.plan.generated_orders = false;
      } else if (a == "--summary") {
        want_summary = true;
      } else if (!a.empty() && a[0] == '-') {
        die("unknown option '" + a + "'\n" + kUsage);
      } else if (spec_path.empty()) {
        spec_path = a;
      } else {
        die("more than one spec given ('" + spec_path + "' and '" + a + "')");
      }
    }
    if (spec_path.empty()) die(std::string("no spec given\n") + kUsage);

    const Spec spec = load_spec(spec_path, defs);
    const Analysis an = analyze(spec);
    const std::string hpp = emit_header(an, opt);  // also checks --policy choices
    if (want_summary || emit_path.empty()) std::cout << summary(an, opt);
    for (const auto& w : an.warnings) std::cerr << "braid-gen: warning: " << w << "\n";
    if (!emit_path.empty()) {
      std::ofstream f(emit_path);
      if (!f) die("cannot write '" + emit_path + "'");
      f << hpp;
      if (!f.flush()) die("cannot write '" + emit_path + "'");
      std::cout << "wrote " << emit_path << "\n";
    }
  } catch (const braid::PlanError& e) {
    die(e.what());
  }
  return 0;
}
