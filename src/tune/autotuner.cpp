#include "braid/tune/autotuner.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace braid::tune {

// Cache format: one line per case, tab-separated: key, best, best_us, baseline_us. '#' comments.
Autotuner::Autotuner(Options opt) : opt_(std::move(opt)) { load(); }

void Autotuner::load() {
  if (opt_.cache_path.empty()) return;
  std::ifstream f(opt_.cache_path);
  std::string line;
  int n = 0;
  while (std::getline(f, line)) {
    ++n;
    if (line.empty() || line[0] == '#') continue;
    std::istringstream in(line);
    Choice c;
    std::string best_us, base_us;
    if (!std::getline(in, c.key, '\t') || !std::getline(in, c.best, '\t') || !std::getline(in, best_us, '\t') ||
        !std::getline(in, base_us))
      throw std::runtime_error(opt_.cache_path + ":" + std::to_string(n) +
                               ": malformed tuning cache line (expected key, best, best_us, baseline_us)");
    c.best_us = std::stod(best_us);
    c.baseline_us = std::stod(base_us);
    c.from_cache = true;
    cache_[c.key] = c;
  }
}

void Autotuner::save() const {
  if (opt_.cache_path.empty()) return;
  std::ofstream f(opt_.cache_path);
  if (!f) throw std::runtime_error("cannot write tuning cache " + opt_.cache_path);
  f << "# braid autotuner cache: key\tbest\tbest_us\tbaseline_us\n";
  for (const auto& [k, c] : cache_) f << k << '\t' << c.best << '\t' << c.best_us << '\t' << c.baseline_us << '\n';
}

Choice Autotuner::tune(const std::string& key, const Candidate& baseline, const std::vector<Candidate>& candidates) {
  if (key.find_first_of("\t\n") != std::string::npos) throw std::invalid_argument("tuning key has a tab or newline");
  if (!opt_.refresh) {
    auto it = cache_.find(key);
    if (it != cache_.end()) {
      bool known = it->second.best == baseline.name;
      for (const auto& c : candidates) known = known || c.name == it->second.best;
      if (known) return it->second;  // a cached name no longer offered is searched again
    }
  }
  Choice ch;
  ch.key = key;
  const size_t n = candidates.size() + 1;
  auto report = [&](size_t i, const std::string& name, double us) {
    if (opt_.progress)
      *opt_.progress << "[" << i << "/" << n << "] " << key << " " << name << ": "
                     << (us < 0 ? std::string("check FAILED") : std::to_string(us) + " us") << std::endl;
  };
  if (!baseline.check()) throw std::runtime_error("autotuner: the baseline '" + baseline.name + "' fails its check");
  // Every check first, then the timings: with rounds > 1 each passing candidate (the baseline included) is timed once
  // per round, forward in odd rounds and backward in even ones, and keeps the median of its rounds -- so a GPU whose
  // speed drifts while the search runs (clocks under a power cap) shifts every candidate alike instead of favouring
  // whichever was timed while it was fast.
  std::vector<const Candidate*> timed{&baseline};
  std::vector<size_t> number{1};  // each timed candidate's place in the progress lines ([i/n], the baseline first)
  std::vector<bool> passed(candidates.size());
  for (size_t i = 0; i < candidates.size(); ++i) {
    if ((passed[i] = candidates[i].check())) {
      timed.push_back(&candidates[i]);
      number.push_back(i + 2);
    } else {
      report(i + 2, candidates[i].name, -1);
    }
  }
  const int rounds = std::max(1, opt_.rounds);
  std::vector<std::vector<double>> t(timed.size());
  for (int r = 0; r < rounds; ++r)
    for (size_t k = 0; k < timed.size(); ++k) {
      const size_t i = r % 2 == 0 ? k : timed.size() - 1 - k;
      t[i].push_back(timed[i]->time_us());
      if (rounds == 1) report(number[i], timed[i]->name, t[i].back());
      else if (opt_.progress)  // (a long search shows it is moving; the medians follow at the end)
        *opt_.progress << "  round " << r + 1 << "/" << rounds << ", " << k + 1 << "/" << timed.size() << ": " << key
                       << " " << timed[i]->name << " " << t[i].back() << " us" << std::endl;
    }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const size_t m = v.size() / 2;
    return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
  };
  std::vector<double> us(timed.size());
  for (size_t i = 0; i < timed.size(); ++i) {
    us[i] = median(t[i]);
    if (rounds > 1) report(number[i], timed[i]->name, us[i]);
  }
  ch.baseline_us = us[0];
  ch.timings.push_back({baseline.name, ch.baseline_us});
  ch.best = baseline.name;
  ch.best_us = ch.baseline_us;
  double best_candidate = 0;
  std::string best_name;
  for (size_t i = 0, j = 1; i < candidates.size(); ++i) {
    const double c_us = passed[i] ? us[j++] : -1;
    ch.timings.push_back({candidates[i].name, c_us});
    if (c_us > 0 && (best_name.empty() || c_us < best_candidate)) {
      best_candidate = c_us;
      best_name = candidates[i].name;
    }
  }
  if (!best_name.empty() && best_candidate < ch.baseline_us * (1.0 - opt_.min_gain)) {
    ch.best = best_name;
    ch.best_us = best_candidate;
  }
  cache_[key] = ch;
  save();
  return ch;
}

}  // namespace braid::tune
