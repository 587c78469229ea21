// The autotuner: for one case (a workload + shape + device key), try every candidate variant, drop
// those whose output check fails, keep the fastest, and fall back to the baseline (stream order)
// unless a candidate beats it by more than the noise margin. The choice is cached in a small text
// file keyed by case, so a user pays the search once. Kernel-agnostic: a candidate is a name, a
// check and a timer (median microseconds), so the Hopper kernels plug in unchanged.
#pragma once
#include <functional>
#include <map>
#include <ostream>
#include <string>
#include <vector>

namespace braid::tune {

struct Candidate {
  std::string name;
  std::function<bool()> check;     // runs once on fresh data; false = wrong output, never chosen
  std::function<double()> time_us; // median time of many runs
};

struct Choice {
  std::string key, best;  // best: the chosen candidate's name (the baseline when nothing wins)
  double best_us = 0, baseline_us = 0;
  bool from_cache = false;
  std::vector<std::pair<std::string, double>> timings;  // this search (empty when cached); -1 = failed check
  double speedup() const { return best_us > 0 ? baseline_us / best_us : 0; }
};

struct Options {
  std::string cache_path;        // empty: no cache
  double min_gain = 0.01;        // a candidate must beat the baseline by this fraction
  std::ostream* progress = nullptr;  // "[i/n] name: time" lines while searching
  bool refresh = false;          // ignore the cached choice
  // Times each passing candidate this many times, round-robin (alternating direction), and keeps its median: drift in
  // the GPU's speed during the search then shifts all candidates alike. 1: each timed once, in order.
  int rounds = 1;
};

class Autotuner {
 public:
  explicit Autotuner(Options opt);
  // `baseline` is always measured (and must pass its check); every candidate is checked, then the passing ones timed
  // (Options::rounds).
  Choice tune(const std::string& key, const Candidate& baseline, const std::vector<Candidate>& candidates);

 private:
  void load();
  void save() const;
  Options opt_;
  std::map<std::string, Choice> cache_;
};

}  // namespace braid::tune
