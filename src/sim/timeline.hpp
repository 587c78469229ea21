// Timeline drawing and trace export for simulator results: an SVG like Figure 1 of the cuSync paper
// (one lane per SM slot, one rectangle per tile colored by stage, spin time hatched) and a CSV dump
// of the per-tile trace. No external dependencies.
#pragma once
#include <string>
#include <vector>

#include "braid/plan/plan.hpp"
#include "sim/simulator.hpp"

namespace braid::sim {

struct TimelineOptions {
  double width = 1200;      // pixels of the time axis
  double lane_height = 4;   // pixels per SM slot
  std::string title;        // default: the plan's name and the ordering
  bool tooltips = true;     // a <title> per tile (stage, tile, SM, times)
};

struct TimelinePanel {
  std::string title;
  const Plan* plan = nullptr;
  const SimResult* result = nullptr;
};

// One timeline.
std::string timeline_svg(const Plan& plan, const SimResult& result, const TimelineOptions& opt = {});
// Several timelines stacked on one time scale (e.g. stream order above the best variant).
std::string timeline_svg(const std::vector<TimelinePanel>& panels, const TimelineOptions& opt = {});

// CSV of the trace: variant,stage,stage_name,tile_x,tile_y,tile_z,block,sm,slot,dispatch,start,end,spin
std::string trace_csv_header();
std::string trace_csv_rows(const Plan& plan, const SimResult& result, const std::string& variant = "");
inline std::string trace_csv(const Plan& plan, const SimResult& result, const std::string& variant = "") {
  return trace_csv_header() + trace_csv_rows(plan, result, variant);
}

// Writes text to a file; throws PlanError naming the path when it cannot.
void write_text_file(const std::string& path, const std::string& text);

}  // namespace braid::sim
