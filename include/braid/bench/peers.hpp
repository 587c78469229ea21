// What the C++ benchmarks share for their command lines and peers: comma-separated integer lists, and
// the peers' CSV that a framework script (bench/conv_torch.py, bench/attn_torch.py) writes just before
// on the same GPU: `shape,variant,time_us,check[,...]`, one row per peer and shape.
#pragma once
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "braid/kernels/hopper/gemm_config.hpp"

namespace braid::bench {

// The non-empty items of a comma-separated list ("a,,b" -> {"a", "b"}).
inline std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string t;
  while (std::getline(ss, t, ','))
    if (!t.empty()) out.push_back(t);
  return out;
}

// The configurations named in a comma-separated list (GemmConfig::name()); "" or what is wrong with one.
inline std::string parse_config_list(const std::string& s, std::vector<hopper::GemmConfig>& out) {
  for (const std::string& name : split_list(s)) {
    hopper::GemmConfig c;
    if (std::string why = hopper::parse_gemm_config(name, c); !why.empty()) return why;
    out.push_back(c);
  }
  return "";
}

inline std::vector<int> parse_int_list(const std::string& s) {
  std::vector<int> v;
  std::stringstream ss(s);
  std::string t;
  while (std::getline(ss, t, ',')) {
    try {
      v.push_back(std::stoi(t));
    } catch (const std::exception&) {
      throw std::invalid_argument("expected a comma-separated list of integers, got '" + s + "'");
    }
  }
  return v;
}

struct PeerRow {
  std::string variant;
  double us;
  bool pass;
};

// Keyed by shape; empty when path is empty. Throws when the file cannot be read.
inline std::multimap<std::string, PeerRow> read_peers(const std::string& path) {
  std::multimap<std::string, PeerRow> m;
  if (path.empty()) return m;
  std::ifstream f(path);
  if (!f) throw std::runtime_error("cannot read --peers " + path);
  std::string line;
  std::getline(f, line);  // header
  while (std::getline(f, line)) {
    std::vector<std::string> c;
    std::stringstream ss(line);
    std::string t;
    while (std::getline(ss, t, ',')) c.push_back(t);
    if (c.size() < 4) continue;
    m.insert({c[0], PeerRow{c[1], std::stod(c[2]), c[3] == "pass"}});
  }
  return m;
}

}  // namespace braid::bench
