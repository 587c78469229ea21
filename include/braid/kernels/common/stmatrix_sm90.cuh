// stmatrix (sm_90): a warp stores 8x8 matrices of 16-bit values to shared memory, each thread giving two
// values of a row per matrix -- the layout of an mma/wgmma accumulator fragment's 8-column groups once
// packed to 16 bits (thread `lane`: row lane / 4, columns 2 (lane % 4) + {0, 1}). Matrix k's 8 rows (16 bytes
// each) go to the addresses lanes 8k..8k+7 give. One instruction for what took a 4-byte shared store per
// matrix and thread (or, transposed, 8 two-byte stores), and one address per lane instead of one per
// store: the epilogues that stage a tile in shared memory use it (hopper/epilogue.cuh,
// hopper/epilogue_transposed.cuh, attention/flash_sm90_kernel.cuh).
#pragma once
#include <cstdint>

namespace braid::stsm {

// Four matrices; r_k is the thread's pair of matrix k (the first value in the low half).
__device__ __forceinline__ void x4(uint32_t addr, uint32_t r0, uint32_t r1, uint32_t r2, uint32_t r3) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(addr), "r"(r0), "r"(r1),
               "r"(r2), "r"(r3)
               : "memory");
}

// Transposed: matrix k is stored as its transpose (the thread's pair becomes one value in each of two
// consecutive rows): a fragment of 8 weight columns x 8 tokens becomes 8 token rows of 8 output columns.
__device__ __forceinline__ void x4_trans(uint32_t addr, uint32_t r0, uint32_t r1, uint32_t r2, uint32_t r3) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(addr), "r"(r0),
               "r"(r1), "r"(r2), "r"(r3)
               : "memory");
}

__device__ __forceinline__ void x2_trans(uint32_t addr, uint32_t r0, uint32_t r1) {
  asm volatile("stmatrix.sync.aligned.m8n8.x2.trans.shared.b16 [%0], {%1, %2};\n" ::"r"(addr), "r"(r0), "r"(r1) : "memory");
}

// A lane's part of an x4 that stores column groups n and n + 1 (n even) of a warp's 16 fragment rows -- the four
// 8x8 matrices (rows +0, group n), (+8, n), (+0, n + 1), (+8, n + 1) -- into rows of 128 bytes in the 128-byte
// swizzle (16-byte chunk c of row r at c ^ (r % 8)), the warp's first row a multiple of 8: lane l gives row l % 8
// (+8 for matrices 1 and 3) of group n + l / 16. (hopper/epilogue.cuh's staged epilogue, the prompt attention's
// output staging.)
struct SwizzledRowsX4 {
  uint32_t row;  // the lane's row among the warp's 16
  uint32_t sel;  // its group is n + sel
  uint32_t xs;   // its chunk's swizzle
  __device__ __forceinline__ explicit SwizzledRowsX4(int lane)
      : row(uint32_t(8 * ((lane / 8) % 2) + lane % 8)),
        sel(uint32_t(lane / 16)),
        xs((uint32_t(lane / 16) ^ uint32_t(lane % 8)) << 4) {}
  // The byte offset in the lane's row of the chunk that holds column groups n .. (group n % 8 of a 64-column panel).
  __device__ __forceinline__ uint32_t chunk(int n) const { return (uint32_t(n % 8) << 4) ^ xs; }
};

}  // namespace braid::stsm
