// braid-sim: predict, without a GPU, what tile synchronization buys on a model's MLP, and draw the
// schedules. Runs stream order vs TileSync / RowSync under PDL, the wait kernel and no ordering.
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "gen/generator.hpp"
#include "gen/spec_parser.hpp"
#include "sim/examples.hpp"
#include "sim/simulator.hpp"
#include "sim/timeline.hpp"

using namespace braid;
using namespace braid::sim;

namespace {

const char* kUsage =
    "usage: braid-sim [--model gpt3] [--tokens N] [--tile MxN] [--sms N]\n"
    "       braid-sim --spec FILE [-D name=value]... [--sms N] ...   (any spec, through braid-gen's plan)\n"
    "                 [--dispatch inorder|random|adversarial] [--jitter X] [--seed N]\n"
    "                 [--svg out.svg] [--svg-all PREFIX] [--csv out.csv]\n"
    "Simulates the MLP of one model-parallel shard (GPT-3: H=12288, F=6144) as GEMM1 -> GEMM2 and\n"
    "prints stream order vs TileSync/RowSync under PDL, the wait kernel and no ordering.\n"
    "  --svg FILE       stream order and the fastest correct variant, stacked on one time scale\n"
    "  --svg-all PREFIX one SVG per variant: PREFIX<variant>.svg\n"
    "  --csv FILE       the per-tile trace of every variant\n";

[[noreturn]] void fail(const std::string& msg) {
  std::cerr << "braid-sim: " << msg << "\n\n" << kUsage;
  std::exit(2);
}

uint64_t parse_uint(const std::string& opt, const std::string& v, uint64_t lo, uint64_t hi) {
  if (v.empty() || v.find_first_not_of("0123456789") != std::string::npos)
    fail(opt + " expects a non-negative integer, got '" + v + "'");
  uint64_t x = 0;
  try {
    x = std::stoull(v);
  } catch (...) {
    fail(opt + ": '" + v + "' is out of range");
  }
  if (x < lo || x > hi) fail(opt + " must be between " + std::to_string(lo) + " and " + std::to_string(hi));
  return x;
}

double parse_double(const std::string& opt, const std::string& v) {
  char* end = nullptr;
  const double x = std::strtod(v.c_str(), &end);
  if (v.empty() || *end || !(x >= 0)) fail(opt + " expects a non-negative number, got '" + v + "'");
  return x;
}

std::string file_safe(std::string s) {
  for (char& c : s)
    if (!isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') c = '_';
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  std::string model = "gpt3", svg, svg_all, csv, spec_path;
  gen::ParamOverrides overrides;
  uint32_t tokens = 512, tile_m = 128, tile_n = 256;
  SimConfig cfg;
  cfg.sms = 132;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      std::cout << kUsage;
      return 0;
    }
    if (a.rfind("-", 0) != 0) fail("unexpected argument '" + a + "'");
    if (i + 1 >= argc) fail(a + " needs a value");
    const std::string v = argv[++i];
    if (a == "-D") {
      const auto eq = v.find('=');
      if (eq == std::string::npos || eq == 0) fail("-D expects name=value, got '" + v + "'");
      char* end = nullptr;
      const long long x = std::strtoll(v.c_str() + eq + 1, &end, 10);
      if (*end || eq + 1 == v.size()) fail("-D " + v.substr(0, eq) + ": '" + v.substr(eq + 1) + "' is not an integer");
      overrides[v.substr(0, eq)] = x;
    } else if (a == "--spec") {
      spec_path = v;
    } else if (a == "--model") {
      if (v != "gpt3") fail("unknown model '" + v + "' (supported: gpt3)");
      model = v;
    } else if (a == "--tokens") {
      tokens = uint32_t(parse_uint(a, v, 1, 1u << 20));
    } else if (a == "--tile") {
      const auto x = v.find('x');
      if (x == std::string::npos) fail("--tile expects MxN (e.g. 128x256), got '" + v + "'");
      tile_m = uint32_t(parse_uint("--tile M", v.substr(0, x), 1, 4096));
      tile_n = uint32_t(parse_uint("--tile N", v.substr(x + 1), 1, 4096));
    } else if (a == "--sms") {
      cfg.sms = uint32_t(parse_uint(a, v, 1, 100000));
    } else if (a == "--dispatch") {
      try {
        cfg.dispatch = parse_dispatch(v);
      } catch (const PlanError& e) {
        fail(e.what());
      }
    } else if (a == "--jitter") {
      cfg.jitter = parse_double(a, v);
    } else if (a == "--seed") {
      cfg.seed = parse_uint(a, v, 0, ~0ull);
    } else if (a == "--svg") {
      svg = v;
    } else if (a == "--svg-all") {
      svg_all = v;
    } else if (a == "--csv") {
      csv = v;
    } else {
      fail("unknown option '" + a + "'");
    }
  }

  try {
    Plan base;
    std::vector<Variant> variants;
    if (!spec_path.empty()) {
      // spec -> analysis -> plans: candidate k of every producer (its last one where it has fewer),
      // generated tile orders, under each ordering.
      const gen::Analysis an = gen::analyze(gen::load_spec(spec_path, overrides));
      size_t kmax = 0;
      for (const auto& c : an.candidates) kmax = std::max(kmax, c.size());
      base = gen::to_plan(an);
      for (size_t k = 0; k < kmax; ++k) {
        gen::PlanOptions po;
        std::string name;
        for (size_t st = 0; st < an.candidates.size(); ++st) {
          if (an.candidates[st].empty()) continue;
          const auto& c = an.candidates[st][std::min(k, an.candidates[st].size() - 1)];
          po.policy[an.stages[st].name] = c.name;
          name += (name.empty() ? "" : ",") + c.name;
        }
        const Plan p = gen::to_plan(an, po);
        for (Ordering o : {Ordering::PDL, Ordering::WaitKernel, Ordering::None})
          variants.push_back(Variant{name + "+" + ordering_name(o), p, o});
      }
      model = an.spec_name;
    } else {
      if (!overrides.empty()) fail("-D needs --spec");
      base = make_gpt3_mlp_plan(tokens, tile_m, tile_n, TileSync());
      for (auto [pname, pol] : {std::pair<const char*, GroupPolicy>{"TileSync", TileSync()}, {"RowSync", RowSync()}})
        for (Ordering o : {Ordering::PDL, Ordering::WaitKernel, Ordering::None})
          variants.push_back(Variant{std::string(pname) + "+" + ordering_name(o),
                                     make_gpt3_mlp_plan(tokens, tile_m, tile_n, pol), o});
    }
    std::vector<SimResult> results;
    const auto rows = compare(base, variants, cfg, &results);
    const auto adv = advise(base, cfg.sms);
    if (spec_path.empty())
      std::printf("%s MLP, %u tokens, tile %ux%u, %u SMs, %s dispatch%s\n", model.c_str(), tokens, tile_m, tile_n,
                  cfg.sms, dispatch_name(cfg.dispatch), cfg.jitter > 0 ? (", jitter " + std::to_string(cfg.jitter)).c_str() : "");
    else
      std::printf("spec '%s' (%s), %u SMs, %s dispatch\n", model.c_str(), spec_path.c_str(), cfg.sms,
                  dispatch_name(cfg.dispatch));
    std::printf("grids:");
    for (const auto& st : base.stages) std::printf(" %s %ux%ux%u (%u tiles);", st.name.c_str(), st.grid.x, st.grid.y, st.grid.z, st.tiles());
    std::printf(" advise: W=%s T=%s\n\n", adv.W ? "yes" : "no", adv.T ? "yes" : "no");
    std::cout << format_table(rows);
    for (size_t i = 0; i < rows.size(); ++i)
      if (!rows[i].ok) std::cout << "\n" << rows[i].name << ":\n" << results[i].error_text();

    auto plan_of = [&](size_t i) -> const Plan& { return i == 0 ? base : variants[i - 1].plan; };
    if (!svg.empty()) {
      size_t best = 0;
      for (size_t i = 1; i < rows.size(); ++i)
        if (rows[i].ok && rows[i].makespan < rows[best].makespan) best = i;
      if (best == 0)  // nothing beats stream order: show the first correct variant anyway
        for (size_t i = 1; i < rows.size(); ++i)
          if (rows[i].ok) { best = i; break; }
      std::vector<TimelinePanel> panels{{"stream order", &base, &results[0]}};
      if (best) panels.push_back({rows[best].name, &plan_of(best), &results[best]});
      TimelineOptions to;
      to.title = base.name + " on " + std::to_string(cfg.sms) + " SMs";
      write_text_file(svg, timeline_svg(panels, to));
      std::printf("\nwrote %s\n", svg.c_str());
    }
    if (!svg_all.empty())
      for (size_t i = 0; i < rows.size(); ++i) {
        TimelineOptions to;
        to.title = rows[i].name + " (" + ordering_name(rows[i].ordering) + ")";
        const std::string path = svg_all + file_safe(rows[i].name) + ".svg";
        write_text_file(path, timeline_svg(plan_of(i), results[i], to));
        std::printf("wrote %s\n", path.c_str());
      }
    if (!csv.empty()) {
      std::string text = trace_csv_header();
      for (size_t i = 0; i < rows.size(); ++i) text += trace_csv_rows(plan_of(i), results[i], rows[i].name);
      write_text_file(csv, text);
      std::printf("wrote %s\n", csv.c_str());
    }
  } catch (const PlanError& e) {
    std::cerr << "braid-sim: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
