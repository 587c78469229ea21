#include "sim/timeline.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace braid::sim {

namespace {

const char* kColors[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2",
                         "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
constexpr size_t kNumColors = sizeof(kColors) / sizeof(kColors[0]);

std::string esc(const std::string& s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      default: o += c;
    }
  }
  return o;
}

std::string f(double v) {
  char b[48];
  std::snprintf(b, sizeof b, "%.2f", v);
  return b;
}

std::string g(double v) {
  char b[48];
  std::snprintf(b, sizeof b, "%.6g", v);
  return b;
}

double nice_step(double span, int target) {
  if (span <= 0) return 1;
  const double raw = span / target;
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * p >= raw) return m * p;
  return 10 * p;
}

}  // namespace

std::string timeline_svg(const Plan& plan, const SimResult& result, const TimelineOptions& opt) {
  TimelinePanel p;
  p.title = opt.title.empty() ? plan.name + " (" + ordering_name(result.ordering) + ")" : opt.title;
  p.plan = &plan;
  p.result = &result;
  TimelineOptions o = opt;
  o.title.clear();
  return timeline_svg(std::vector<TimelinePanel>{p}, o);
}

std::string timeline_svg(const std::vector<TimelinePanel>& panels, const TimelineOptions& opt) {
  BRAID_REQUIRE(!panels.empty(), "timeline: no panels");
  double tmax = 0;
  size_t nstages = 0;
  for (const auto& p : panels) {
    BRAID_REQUIRE(p.plan && p.result, "timeline: a panel has no plan or result");
    tmax = std::max(tmax, p.result->makespan);
    nstages = std::max(nstages, p.plan->stages.size());
  }
  if (tmax <= 0) tmax = 1;
  const double left = 70, right = 20, W = opt.width, lh = opt.lane_height;
  const double title_h = 34, axis_h = 30, gap = 16, legend_h = 26;
  double total_h = 10 + (opt.title.empty() ? 0 : 26);
  for (const auto& p : panels)
    total_h += title_h + double(p.result->sms) * p.result->lanes_per_sm * lh + axis_h + gap;
  total_h += legend_h;
  const double sx = W / tmax;

  std::ostringstream o;
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << f(left + W + right) << "\" height=\"" << f(total_h)
    << "\" font-family=\"sans-serif\" font-size=\"11\">\n";
  o << "<defs>\n";
  for (size_t s = 0; s < std::max<size_t>(nstages, 1); ++s) {
    const char* c = kColors[s % kNumColors];
    o << "<pattern id=\"spin" << s << "\" patternUnits=\"userSpaceOnUse\" width=\"4\" height=\"4\">"
      << "<rect width=\"4\" height=\"4\" fill=\"" << c << "\" fill-opacity=\"0.18\"/>"
      << "<path d=\"M0,4 L4,0\" stroke=\"" << c << "\" stroke-width=\"1\"/></pattern>\n";
  }
  o << "</defs>\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  double y = 10;
  if (!opt.title.empty()) {
    o << "<text x=\"" << f(left) << "\" y=\"" << f(y + 16) << "\" font-size=\"15\" font-weight=\"bold\">"
      << esc(opt.title) << "</text>\n";
    y += 26;
  }
  for (const auto& p : panels) {
    const SimResult& r = *p.result;
    const Plan& plan = *p.plan;
    const uint32_t lanes = r.sms * r.lanes_per_sm;
    std::string t = p.title.empty() ? plan.name : p.title;
    t += ": makespan " + g(r.makespan) + ", utilization " + f(100 * r.utilization) + "%";
    if (r.deadlock) t += "  [DEADLOCK]";
    if (r.race_count) t += "  [" + std::to_string(r.race_count) + " RACES]";
    o << "<text x=\"" << f(left) << "\" y=\"" << f(y + 20) << "\" font-size=\"13\" font-weight=\"bold\">" << esc(t)
      << "</text>\n";
    y += title_h;
    const double top = y, h = lanes * lh;
    o << "<rect x=\"" << f(left) << "\" y=\"" << f(top) << "\" width=\"" << f(W) << "\" height=\"" << f(h)
      << "\" fill=\"#f4f4f4\" stroke=\"#999\"/>\n";
    // SM labels (every few SMs)
    const uint32_t every = std::max<uint32_t>(1, uint32_t(std::ceil(12.0 / (r.lanes_per_sm * lh))));
    for (uint32_t m = 0; m < r.sms; m += every)
      o << "<text x=\"" << f(left - 4) << "\" y=\"" << f(top + (m * r.lanes_per_sm + r.lanes_per_sm * 0.5) * lh + 4)
        << "\" text-anchor=\"end\" font-size=\"9\">SM " << m << "</text>\n";
    for (const auto& rec : r.trace) {
      const double ly = top + (double(rec.sm) * r.lanes_per_sm + rec.slot) * lh;
      const double rh = std::max(0.5, rec.lanes * lh - (lh >= 3 ? 0.5 : 0));
      const size_t cs = size_t(rec.stage) % kNumColors;
      // spin: hatched, over the whole span; compute: solid pieces between the spin intervals
      if (rec.spin > 0)
        for (const auto& sp : rec.spins)
          o << "<rect x=\"" << f(left + sp.first * sx) << "\" y=\"" << f(ly) << "\" width=\""
            << f(std::max(0.0, (sp.second - sp.first) * sx)) << "\" height=\"" << f(rh) << "\" fill=\"url(#spin"
            << rec.stage << ")\"/>\n";
      double from = rec.dispatch;
      auto solid = [&](double a, double b, bool tip) {
        if (b <= a) return;
        o << "<rect x=\"" << f(left + a * sx) << "\" y=\"" << f(ly) << "\" width=\"" << f((b - a) * sx)
          << "\" height=\"" << f(rh) << "\" fill=\"" << kColors[cs] << "\" stroke=\"white\" stroke-width=\"0.3\">";
        if (tip && opt.tooltips)
          o << "<title>" << esc(plan.stages[rec.stage].name) << " tile (" << rec.tile.x << "," << rec.tile.y << ","
            << rec.tile.z << ") SM " << rec.sm << " slot " << rec.slot << ": " << g(rec.dispatch) << " .. " << g(rec.end)
            << ", spin " << g(rec.spin) << "</title>";
        o << "</rect>\n";
      };
      bool first = true;
      for (const auto& sp : rec.spins) {
        solid(from, sp.first, first && sp.first > from);
        if (sp.first > from) first = false;
        from = std::max(from, sp.second);
      }
      solid(from, rec.end, true);
    }
    y = top + h;
    // time axis
    const double step = nice_step(tmax, 10);
    o << "<line x1=\"" << f(left) << "\" y1=\"" << f(y) << "\" x2=\"" << f(left + W) << "\" y2=\"" << f(y)
      << "\" stroke=\"black\"/>\n";
    for (double tt = 0; tt <= tmax * (1 + 1e-9); tt += step) {
      const double x = left + tt * sx;
      o << "<line x1=\"" << f(x) << "\" y1=\"" << f(y) << "\" x2=\"" << f(x) << "\" y2=\"" << f(y + 4)
        << "\" stroke=\"black\"/><text x=\"" << f(x) << "\" y=\"" << f(y + 15) << "\" text-anchor=\"middle\">"
        << g(tt) << "</text>\n";
    }
    // makespan marker
    const double xm = left + r.makespan * sx;
    o << "<line x1=\"" << f(xm) << "\" y1=\"" << f(top) << "\" x2=\"" << f(xm) << "\" y2=\"" << f(y)
      << "\" stroke=\"#d62728\" stroke-dasharray=\"3,2\"/>\n";
    o << "<text x=\"" << f(left + W) << "\" y=\"" << f(y + 27) << "\" text-anchor=\"end\">time</text>\n";
    y += axis_h + gap;
  }
  // legend (stages of the first panel's plan with the most stages)
  const Plan* lp = panels[0].plan;
  for (const auto& p : panels)
    if (p.plan->stages.size() > lp->stages.size()) lp = p.plan;
  double x = left;
  for (size_t s = 0; s < lp->stages.size(); ++s) {
    o << "<rect x=\"" << f(x) << "\" y=\"" << f(y) << "\" width=\"12\" height=\"12\" fill=\"" << kColors[s % kNumColors]
      << "\"/><text x=\"" << f(x + 16) << "\" y=\"" << f(y + 10) << "\">" << esc(lp->stages[s].name) << "</text>\n";
    x += 30 + 7.0 * lp->stages[s].name.size();
  }
  o << "<rect x=\"" << f(x) << "\" y=\"" << f(y) << "\" width=\"12\" height=\"12\" fill=\"url(#spin0)\" "
    << "stroke=\"#999\"/><text x=\"" << f(x + 16) << "\" y=\"" << f(y + 10)
    << "\">spinning (hatched, holds the slot)</text>\n";
  o << "</svg>\n";
  return o.str();
}

std::string trace_csv_header() {
  return "variant,stage,stage_name,tile_x,tile_y,tile_z,block,sm,slot,dispatch,start,end,spin\n";
}

std::string trace_csv_rows(const Plan& plan, const SimResult& result, const std::string& variant) {
  std::ostringstream o;
  auto q = [](const std::string& s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string r = "\"";
    for (char c : s) r += (c == '"') ? std::string("\"\"") : std::string(1, c);
    return r + "\"";
  };
  for (const auto& r : result.trace)
    o << q(variant) << "," << r.stage << "," << q(plan.stages[r.stage].name) << "," << r.tile.x << "," << r.tile.y
      << "," << r.tile.z << "," << r.block << "," << r.sm << "," << r.slot << "," << g(r.dispatch) << "," << g(r.start)
      << "," << g(r.end) << "," << g(r.spin) << "\n";
  return o.str();
}

void write_text_file(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  BRAID_REQUIRE(bool(f), "cannot open '" + path + "' for writing");
  f << text;
  f.close();
  BRAID_REQUIRE(bool(f), "could not write '" + path + "'");
}

}  // namespace braid::sim
