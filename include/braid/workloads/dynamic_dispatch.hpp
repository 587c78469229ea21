// Whether a Hopper GEMM or convolution configuration can take its tiles by ticket -- a chain stage's dynamic
// order (StageSpec::dynamic_order, kDynamicOrder: each CTA takes the next tile in dispatch order when it is free,
// so CTAs that became resident early take more tiles) -- and why not. The workloads check it when a variant asks
// for dynamic dispatch, before any launch (PersistentOp::launch refuses the same at launch time).
#pragma once
#include <string>

#include "braid/kernels/hopper/gemm_config.hpp"

namespace braid::workloads {

// "" when `c` can run under dynamic dispatch, else the reason.
inline std::string dynamic_dispatch_refusal(const hopper::GemmConfig& c) {
  if (c.stream_k) return c.name() + ": stream-K's tail segments are bound to their CTAs -- dynamic dispatch needs data-parallel or split-K";
  if (c.multicast > 1 || c.group > 1)
    return c.name() + " runs clusters (groups) of CTAs on adjacent tiles: it needs static dispatch";
  if (c.pingpong) return c.name() + ": pingpong warpgroups take alternate units of a static schedule -- no dynamic dispatch";
  if (c.segments_wait_for_peers())
    return c.name() + ": reduce-scatter split-K's segments wait for each other, which only static dispatch keeps running together";
  return "";
}

}  // namespace braid::workloads
