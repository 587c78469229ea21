// The skinny GEMM's packed weights (SkinnyConfig::packed, "-pk"): W [K, N] rewritten unit by unit in the
// order and layout the kernel's ring holds it, so that a stage's W is one contiguous 16 KB bulk copy.
//
// Unit u = t * chunks_per_tile + c (tile t: columns 128 t .. 128 t + 127; chunk c: rows 64 c .. 64 c + 63)
// occupies bytes [u * kUnitWBytes, (u + 1) * kUnitWBytes). Inside it, exactly what the two 64 x 64 tensor-map
// boxes would leave in shared memory with the 128-byte swizzle: half h (columns 128 t + 64 h ..), row r
// (K index 64 c + r), 16-byte slot s holds the 8 columns 128 t + 64 h + 8 (s ^ (r % 8)) .. +7 -- the chunk
// XOR-ed with the row within each 8-row (1024-byte) block. Rows past K and columns past N are zeros, as the
// boxes deliver them. The same bytes land in the ring, so the MMAs and their sums are the same bits.
#pragma once
#include <cstddef>
#include <cstdint>

#include "braid/core/types.hpp"
#include "braid/kernels/skinny/skinny_config.hpp"

namespace braid::skinny {

constexpr int kUnitWBytes = 2 * kChunkK * 128;  // one ring stage's W: 64 rows x 128 columns of 2 bytes
constexpr int kUnitSlots = kUnitWBytes / 16;    // 16-byte slots per unit

BRAID_HD int packed_tiles(int N) { return (N + kTileCols - 1) / kTileCols; }
BRAID_HD int packed_chunks_per_tile(int K) { return (K + kChunkK - 1) / kChunkK; }
inline size_t packed_weight_bytes(int K, int N) {
  return size_t(packed_tiles(N)) * size_t(packed_chunks_per_tile(K)) * kUnitWBytes;
}

// The source of 16-byte slot q of the packed copy: W's row k and its 8 columns from n (n a multiple of 8).
// Returns false where the slot is padding (k >= K or n >= N: zeros).
BRAID_HD bool packed_slot_source(uint64_t q, int K, int N, int& k, int& n) {
  const uint64_t unit = q / kUnitSlots;
  const int in_unit = int(q % kUnitSlots);
  const int cpt = packed_chunks_per_tile(K);
  const int t = int(unit / uint64_t(cpt)), c = int(unit % uint64_t(cpt));
  const int h = in_unit / (kUnitSlots / 2), r = (in_unit % (kUnitSlots / 2)) / 8, s = in_unit % 8;
  k = c * kChunkK + r;
  n = t * kTileCols + 64 * h + 8 * (s ^ (r % 8));
  return k < K && n < N;
}

}  // namespace braid::skinny
