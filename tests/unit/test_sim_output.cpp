// Simulator output: timeline SVG and trace CSV.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "sim/examples.hpp"
#include "sim/simulator.hpp"
#include "sim/timeline.hpp"

using namespace braid;
using namespace braid::sim;

namespace {
size_t count(const std::string& s, const std::string& sub) {
  size_t n = 0;
  for (size_t p = s.find(sub); p != std::string::npos; p = s.find(sub, p + 1)) ++n;
  return n;
}
SimConfig cfg(uint32_t sms, Ordering o) {
  SimConfig c;
  c.sms = sms;
  c.ordering = o;
  return c;
}
}  // namespace

TEST(SimOutput, TimelineSvgHasLanesTilesSpinAxisLegendAndTitle) {
  const Plan p = make_gpt3_mlp_plan(512, 128, 256, TileSync());
  const SimResult r = simulate(p, cfg(132, Ordering::PDL));
  TimelineOptions o;
  o.title = "gpt3 <512>";
  const std::string svg = timeline_svg(p, r, o);
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
  EXPECT_NE(svg.find("gpt3 &lt;512&gt;"), std::string::npos);  // escaped
  EXPECT_NE(svg.find("makespan 24576"), std::string::npos);
  EXPECT_NE(svg.find("SM 0<"), std::string::npos);
  EXPECT_EQ(count(svg, "<title>"), 96u + 192u);  // one tooltip per tile
  EXPECT_EQ(count(svg, "fill=\"url(#spin1)\"/>"), 36u);  // the 36 early GEMM2 blocks spin
  EXPECT_NE(svg.find(">gemm1</text>"), std::string::npos);
  EXPECT_NE(svg.find(">gemm2</text>"), std::string::npos);
  EXPECT_NE(svg.find("spinning"), std::string::npos);
  EXPECT_NE(svg.find(">10000</text>"), std::string::npos);  // an axis tick
  // stacked: two panels on one time scale
  const SimResult s = simulate(p, cfg(132, Ordering::StreamOrder));
  const std::string two = timeline_svg({{"stream", &p, &s}, {"tile sync", &p, &r}});
  EXPECT_NE(two.find("stream: makespan 24576"), std::string::npos);
  EXPECT_NE(two.find("tile sync: makespan 24576"), std::string::npos);
  EXPECT_THROW(timeline_svg(std::vector<TimelinePanel>{}), PlanError);
}

TEST(SimOutput, DeadlockedTimelineSaysSo) {
  const Plan p = make_gpt3_mlp_plan(512, 128, 256, TileSync());
  SimConfig c = cfg(132, Ordering::WaitKernel);
  c.dispatch = Dispatch::Adversarial;
  const SimResult r = simulate(p, c);
  ASSERT_TRUE(r.deadlock);
  EXPECT_NE(timeline_svg(p, r).find("DEADLOCK"), std::string::npos);
}

TEST(SimOutput, TraceCsv) {
  Plan p;
  StageSpec a;
  a.name = "a,b";  // quoted in CSV
  a.grid = {2, 1, 1};
  a.tile_time = 3;
  p.add_stage(a);
  const SimResult r = simulate(p, cfg(1, Ordering::PDL));
  const std::string csv = trace_csv(p, r, "v1");
  std::istringstream in(csv);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "variant,stage,stage_name,tile_x,tile_y,tile_z,block,sm,slot,dispatch,start,end,spin");
  std::getline(in, line);
  EXPECT_EQ(line, "v1,0,\"a,b\",0,0,0,0,0,0,0,0,3,0");
  std::getline(in, line);
  EXPECT_EQ(line, "v1,0,\"a,b\",1,0,0,1,0,0,3,3,6,0");
  EXPECT_FALSE(std::getline(in, line));
}

TEST(SimOutput, WriteTextFile) {
  const std::string path = std::string(BRAID_BINARY_DIR) + "/sim_output_test.svg";
  write_text_file(path, "<svg/>");
  std::ifstream f(path);
  std::string s((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  EXPECT_EQ(s, "<svg/>");
  std::remove(path.c_str());
  EXPECT_THROW(write_text_file("/nonexistent-dir/x.svg", "x"), PlanError);
}
