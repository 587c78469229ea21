// What braid's attention kernels share (flash_kernel.cuh, the fused one; unfused_kernels.cuh, the
// paper's P / softmax-dropout / R.V chain): the problem's layout (FlashParams), the swizzled shared-
// memory rows, where a key's K or V row lives (cache or QKV output), the KV-cache update, and the
// "has my producer finished this run?" shortcut for tile waits.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "braid/core/grid_stage.cuh"
#include "braid/core/stage.cuh"
#include "braid/kernels/attention/dropout.hpp"
#include "braid/kernels/attention/mma_sm80.cuh"

namespace braid::attention {

constexpr int kHeadDim = 128;
constexpr int kKeyBlock = 64;
constexpr int kRowBytes = kHeadDim * 2;  // one head row in shared memory: 16 chunks of 16 bytes

struct FlashParams {
  const void* qkv = nullptr;  // [B * S_new, 3 * NH * 128]
  uint32_t qkv_ld = 0;        // elements per row
  void* k_cache = nullptr;    // [B, S_max, NH * 128]; may be null when S_cached == 0 and !write_cache
  void* v_cache = nullptr;
  uint32_t cache_ld = 0;          // NH * 128
  uint64_t cache_bstride = 0;     // S_max * NH * 128
  void* o = nullptr;              // [B * S_new, NH * 128]
  uint32_t o_ld = 0;
  int B = 0, S_new = 0, S_cached = 0, NH = 0;
  int q_rows = 0;    // query rows per braid tile: min(BM, S_new)
  int q_blocks = 0;  // tiles per batch along the queries
  int splits = 1, split_keys = 0;  // key splits per tile, keys per split (a multiple of kKeyBlock)
  float scale_log2 = 0;            // softmax scale * log2(e)
  uint32_t drop_threshold = 0;     // 0: no dropout
  float keep_scale = 1;            // 1 / (1 - p)
  uint64_t seed = 0;
  int causal = 1;
  int write_cache = 0;  // split 0 of each tile copies its new tokens' K, V into the cache
  int reverse_rows = 0;  // launch order of the query blocks: last first
  int kv_buffers = 2;    // K/V block buffers: 2 (double-buffered), 1 when every split is one block
  int cluster_merge = 0;   // decode kernel: a tile's splits are one thread-block cluster, merged in shared memory
  float* part_o = nullptr;     // splits > 1: [tiles, splits, q_rows, 128]
  float* part_ml = nullptr;    //             [tiles, splits, q_rows, 2] (running max in log2 units, sum)
  uint32_t* arrivals = nullptr;  //           [tiles], zero between launches
  // Diagnostic, the decode kernel's general form (AttentionArgs::phase_ns; null: off): per CTA (linear block index
  // of the launch grid) kPromptKernelPhases %globaltimer stamps of thread 0 -- entry, cached keys issued, the
  // waits for the QKV GEMM done, the key loop's end, the CTA's partial pushed (or stored), the cluster barrier
  // passed, the tile's output stored, the end.
  uint64_t* phase_ns = nullptr;
};

namespace detail {

// Byte offset of 16-byte chunk `chunk` of row r in a [rows][128] tile: chunks XOR-swizzled by r % 8,
// so the 8 rows one ldmatrix phase reads fall in 8 different bank groups.
__device__ __forceinline__ uint32_t swz(int r, int chunk) { return uint32_t(r * kRowBytes + ((chunk ^ (r & 7)) << 4)); }
// The same for [rows][64] tiles (8 chunks a row): the unfused chain's P / R blocks.
__device__ __forceinline__ uint32_t swz64(int r, int chunk) { return uint32_t(r * 128 + ((chunk ^ (r & 7)) << 4)); }


// The query rows of braid tile row y: batch b, new-token indices q0 .. q0 + q_valid - 1, which are rows
// row0 .. of the QKV output and of O.
struct QueryBlock {
  int b, q0, q_valid, row0;
  __device__ __forceinline__ QueryBlock(const FlashParams& p, int y)
      : b(y / p.q_blocks), q0((y % p.q_blocks) * p.q_rows), q_valid(min(p.q_rows, p.S_new - q0)), row0(b * p.S_new + q0) {}
};

// The keys [begin, end) that key split `split` of a query block covers: the split's range, cut at the
// block's last visible key (causal: its last query's position).
struct KeyRange {
  int begin, end;
  __device__ __forceinline__ KeyRange(const FlashParams& p, const QueryBlock& qb, int split) {
    const int key_end = p.causal ? p.S_cached + qb.q0 + qb.q_valid : p.S_cached + p.S_new;
    begin = split * p.split_keys;
    end = min(key_end, begin + p.split_keys);
  }
};

// Global address of key kp's K (or V) row of head h in batch b: cached keys from the cache, new ones
// from the QKV GEMM's output.
template <class T>
__device__ __forceinline__ const T* key_row(const FlashParams& p, int b, int h, int kp, bool v) {
  if (kp < p.S_cached)
    return static_cast<const T*>(v ? p.v_cache : p.k_cache) + uint64_t(b) * p.cache_bstride + uint64_t(kp) * p.cache_ld +
           h * kHeadDim;
  return static_cast<const T*>(p.qkv) + uint64_t(b * p.S_new + kp - p.S_cached) * p.qkv_ld +
         (v ? 2 : 1) * uint32_t(p.NH) * kHeadDim + h * kHeadDim;
}

// The KV-cache update: the new tokens q0 .. q0+q_valid-1 of batch b, head h, their K and V rows copied
// from the QKV output to positions S_cached + q0 .. of the cache (the caller waited for those rows).
template <class T>
__device__ __forceinline__ void copy_new_kv_to_cache(const FlashParams& p, int b, int h, int q0, int q_valid, int tid,
                                                     int nthreads) {
  const uint32_t HD = uint32_t(p.NH) * kHeadDim;
  const T* qkv = static_cast<const T*>(p.qkv);
  for (int c = tid; c < q_valid * 32; c += nthreads) {
    const int qi = c / 32, half = (c / 16) % 2, ch = c % 16;
    const uint4* src =
        reinterpret_cast<const uint4*>(qkv + uint64_t(b * p.S_new + q0 + qi) * p.qkv_ld + (half + 1) * HD + h * kHeadDim) + ch;
    uint4* dst = reinterpret_cast<uint4*>(static_cast<T*>(half ? p.v_cache : p.k_cache) + uint64_t(b) * p.cache_bstride +
                                          uint64_t(p.S_cached + q0 + qi) * p.cache_ld + h * kHeadDim) + ch;
    *dst = __ldcg(src);
  }
}

}  // namespace detail
}  // namespace braid::attention
