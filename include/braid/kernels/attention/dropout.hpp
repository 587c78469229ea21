// Attention dropout's random numbers: a counter-based generator, so a mask is a pure function of
// (seed, batch*heads + head, query position, key position) -- the same bits in every kernel, tile
// order, split and run, on the host (references, tests) and the device. The counter packs the three
// coordinates into 64 bits (head index < 2^16, positions < 2^24) and is mixed with the seed by the
// 64-bit finalizer of MurmurHash3 (a bijection with full avalanche), the construction of SplitMix64.
//
// An element is kept when its 32 random bits are >= threshold(p) = floor(p * 2^32), then scaled by
// 1 / (1 - p). p = 0 gives threshold 0: nothing is dropped, and the kernels skip the mask entirely, so
// p = 0 is bit-identical to no dropout.
#pragma once
#include <cstdint>

#include "braid/core/types.hpp"

namespace braid::attention {

BRAID_HD uint32_t dropout_bits(uint64_t seed, uint32_t head, uint32_t query, uint32_t key) {
  uint64_t x = (uint64_t(head & 0xffffu) << 48) | (uint64_t(query & 0xffffffu) << 24) | uint64_t(key & 0xffffffu);
  x += seed * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return uint32_t(x >> 32);
}

// 0 for p <= 0 (no dropout); p must be < 1.
inline uint32_t dropout_threshold(double p) {
  if (p <= 0) return 0;
  const double t = p * 4294967296.0;
  return t >= 4294967295.0 ? 0xffffffffu : uint32_t(t);
}

BRAID_HD bool dropout_keep(uint64_t seed, uint32_t threshold, uint32_t head, uint32_t query, uint32_t key) {
  return threshold == 0 || dropout_bits(seed, head, query, key) >= threshold;
}

}  // namespace braid::attention
