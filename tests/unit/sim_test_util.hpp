// Small builders shared by the simulator tests.
#pragma once
#include <string>

#include "sim/simulator.hpp"

namespace braid::sim::testing {

inline StageSpec stage(const std::string& name, Grid g, double t, GroupPolicy p = TileSync(), uint32_t occ = 1) {
  StageSpec s;
  s.name = name;
  s.grid = g;
  s.tile_time = t;
  s.policy = p;
  s.occupancy = occ;
  return s;
}

inline SimConfig config(uint32_t sms, Ordering o, Dispatch d = Dispatch::InOrder) {
  SimConfig c;
  c.sms = sms;
  c.ordering = o;
  c.dispatch = d;
  return c;
}

}  // namespace braid::sim::testing
