// Summaries of per-unit traces of braid's persistent Hopper GEMM (hopper::UnitTrace, recorded by
// PersistentOp::run_unit_trace): where a CTA's time goes between its mainloops, its split-K /
// stream-K fixups and its epilogues. Plain host code (CPU-tested), used by braid-gemm --unit-trace.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "braid/kernels/hopper/work_schedule.hpp"

namespace braid::bench {

struct UnitTraceSummary {
  int units = 0;                 // records with a start time
  double span_us = 0;            // first unit start to last unit end
  double mainloop_per_kstep_us = 0;  // sum of (mainloop end - start) over sum of k-steps
  double fixup_passing_us = 0;   // mean fixup of segments that did not reduce (store partial, arrive)
  double fixup_reducing_us = 0;  // mean fixup of reducing segments (own partial, arrive, sum the others)
  double epilogue_us = 0;        // mean epilogue (fixup end to unit end) of the units that stored
  double cta_start_us = 0;       // mean delay of a CTA's first unit after the first start of all
  double gap_us = 0;             // mean time between a unit's end and the CTA's next unit's start
  double idle_end_us = 0;        // mean time from a CTA's last unit end to the span's end
  int passing = 0, reducing = 0, stored = 0;
};

inline UnitTraceSummary summarize_unit_trace(const std::vector<hopper::UnitTrace>& recs) {
  UnitTraceSummary s;
  uint64_t t0 = UINT64_MAX, t1 = 0;
  std::map<uint32_t, std::vector<const hopper::UnitTrace*>> by_block;
  double ml_ns = 0, ksteps = 0, fix_pass = 0, fix_red = 0, epi = 0;
  for (const hopper::UnitTrace& r : recs) {
    if (r.start_ns == 0) continue;
    ++s.units;
    t0 = std::min(t0, r.start_ns);
    t1 = std::max(t1, r.end_ns);
    by_block[r.block].push_back(&r);
    ml_ns += double(r.mainloop_end_ns - r.start_ns);
    ksteps += double(r.k_end - r.k_begin);
    if (r.nseg > 1) {
      if (r.reduced) {
        fix_red += double(r.fixup_end_ns - r.mainloop_end_ns);
        ++s.reducing;
      } else {
        fix_pass += double(r.fixup_end_ns - r.mainloop_end_ns);
        ++s.passing;
      }
    }
    if (r.reduced) {
      epi += double(r.end_ns - r.fixup_end_ns);
      ++s.stored;
    }
  }
  if (s.units == 0) return s;
  s.span_us = double(t1 - t0) * 1e-3;
  s.mainloop_per_kstep_us = ksteps > 0 ? ml_ns / ksteps * 1e-3 : 0;
  s.fixup_passing_us = s.passing ? fix_pass / s.passing * 1e-3 : 0;
  s.fixup_reducing_us = s.reducing ? fix_red / s.reducing * 1e-3 : 0;
  s.epilogue_us = s.stored ? epi / s.stored * 1e-3 : 0;
  double start = 0, gap = 0, idle = 0;
  int gaps = 0;
  for (auto& [block, v] : by_block) {
    std::sort(v.begin(), v.end(), [](auto* a, auto* b) { return a->start_ns < b->start_ns; });
    start += double(v.front()->start_ns - t0);
    idle += double(t1 - v.back()->end_ns);
    for (size_t i = 1; i < v.size(); ++i, ++gaps) gap += double(v[i]->start_ns) - double(v[i - 1]->end_ns);
  }
  const double blocks = double(by_block.size());
  s.cta_start_us = start / blocks * 1e-3;
  s.idle_end_us = idle / blocks * 1e-3;
  s.gap_us = gaps ? gap / gaps * 1e-3 : 0;
  return s;
}

inline std::string describe(const UnitTraceSummary& s) {
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "units %d, span %.1f us: mainloop %.3f us/k-step; fixup %.2f us passing (%d) / %.2f us reducing (%d); "
                "epilogue %.2f us (%d); CTA start +%.2f us, gap between units %.2f us, idle at the end %.2f us",
                s.units, s.span_us, s.mainloop_per_kstep_us, s.fixup_passing_us, s.passing, s.fixup_reducing_us,
                s.reducing, s.epilogue_us, s.stored, s.cta_start_us, s.gap_us, s.idle_end_us);
  return buf;
}

// One CSV row per unit (times in ns from the first start).
inline bool write_unit_trace_csv(const std::string& path, const std::vector<hopper::UnitTrace>& recs) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (!f) return false;
  uint64_t t0 = UINT64_MAX;
  for (const auto& r : recs)
    if (r.start_ns) t0 = std::min(t0, r.start_ns);
  std::fprintf(f, "block,smid,tile,seg,nseg,k_begin,k_end,start_ns,mainloop_end_ns,fixup_end_ns,end_ns,reduced\n");
  for (const auto& r : recs)
    if (r.start_ns)
      std::fprintf(f, "%u,%u,%u,%u,%u,%u,%u,%llu,%llu,%llu,%llu,%u\n", r.block, r.smid, r.tile_lin, r.seg, r.nseg,
                   r.k_begin, r.k_end, (unsigned long long)(r.start_ns - t0), (unsigned long long)(r.mainloop_end_ns - t0),
                   (unsigned long long)(r.fixup_end_ns - t0), (unsigned long long)(r.end_ns - t0), r.reduced);
  return std::fclose(f) == 0;
}

}  // namespace braid::bench
