// braid's decode attention kernel: a few new query rows per sequence (S_new <= kDecodeMaxRows, one new
// token in plain decoding) against many cached keys, as a stage of a tile-synchronized chain. Same
// problem, layout, tiles, waits, key splits and KV-cache update as flash_kernel.cuh (FlashParams), but
// built for what decode is: a stream of K and V rows read once, with almost no arithmetic per byte.
//
// Why not the mma kernel with one warp: an m16n8k16 tile wastes 15 of its 16 query rows, a 64-key block
// is staged through shared memory by one warp, and one warp per CTA keeps too few bytes in flight --
// measured 17-23 us for 12.7 MB of keys (GPT-3, B=1, 2048 cached), about 0.6 TB/s.
//
// Here a CTA of kWarps warps covers one key split of one tile (head h, batch b): each 16-lane half-warp
// (a "group") owns one key at a time, each lane 8 of its 128 dims (one 16-byte load of K, one of V), so a
// key row is two full 128-byte lines read by 16 lanes. A group takes keys grp, grp + G, ... of each
// step of G * kDecodeUnroll keys, and the next step's loads are issued before this step's arithmetic:
// 2 * kDecodeUnroll 16-byte loads per lane in flight, straight into registers (no shared memory, no
// barriers in the loop). Scores: 8 FMAs and a 4-step shuffle reduction per key and row, in fp32, against
// Q pre-scaled by scale * log2(e); online softmax per group; O accumulated in fp32 from fp32 P (no
// rounding of P to 16 bits, unlike the mma kernel: both are checked against the fp32 reference, and
// each is bit-reproducible on its own). At the end the G groups' (max, sum, O) are merged in shared
// memory in group order, then the splits: through global memory as in flash_kernel.cuh
// (split_merge.cuh), or -- cluster_merge, the tile's splits launched as one thread-block cluster --
// split 0 reads the others' partials from their shared memory (DSMEM) between two cluster barriers.
// Decode is latency-bound: the global merge costs a partial store, a fence, an atomic and two dependent
// loads (several microseconds per tile); the cluster merge, a barrier and on-chip reads.
//
// Never hangs and never strands a cluster: a wait that fails (bounded mode) skips this CTA's loads and
// arithmetic but not its barriers; the tile is then not posted and the chain's check() reports the
// stuck semaphore.
//
// Waits: the tile's Q rows; the new tokens' K and V only in the split that holds new keys (cached keys
// need no wait), so the other splits stream the cache as soon as Q is ready -- and a split whose first
// keys are all cached issues their loads before it waits for Q (or, PDL-launched in stream order, for
// the whole QKV GEMM).
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "braid/core/grid_stage.cuh"
#include "braid/core/stage.cuh"
#include "braid/kernels/attention/attention_common.cuh"
#include "braid/kernels/attention/split_merge.cuh"
#include "braid/kernels/common/cluster_sm90.cuh"

namespace braid::attention {

constexpr int kDecodeMaxRows = 4;  // new query rows per sequence the decode kernel takes
constexpr int kDecodeUnroll = 4;   // keys per group per step

namespace detail {

template <class T>
__device__ __forceinline__ float2 unpack2(uint32_t w);
template <>
__device__ __forceinline__ float2 unpack2<__half>(uint32_t w) {
  return __half22float2(*reinterpret_cast<const __half2*>(&w));
}
template <>
__device__ __forceinline__ float2 unpack2<__nv_bfloat16>(uint32_t w) {
  return __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&w));
}

template <class T>
__device__ __forceinline__ void unpack8(const uint4& v, float (&f)[8]) {
  const float2 a = unpack2<T>(v.x), b = unpack2<T>(v.y), c = unpack2<T>(v.z), d = unpack2<T>(v.w);
  f[0] = a.x, f[1] = a.y, f[2] = b.x, f[3] = b.y, f[4] = c.x, f[5] = c.y, f[6] = d.x, f[7] = d.y;
}

}  // namespace detail

// Shared memory (floats): the groups' merge, [G][q_rows][128] O rows then [G][q_rows] maxima and sums;
// reused by the global split merge, (2 * splits + 1) * q_rows; then, with the cluster merge, what the
// cluster's CTAs push to split 0: [splits][q_rows][128] O rows and [splits][q_rows][2] maxima and sums.
__host__ __device__ constexpr size_t decode_groups_floats(int warps, int q_rows) {
  return size_t(2 * warps) * q_rows * (kHeadDim + 2);
}
__host__ __device__ constexpr size_t decode_cluster_base_floats(int warps, int q_rows, int splits) {
  const size_t groups = decode_groups_floats(warps, q_rows), merge = size_t(2 * splits + 1) * q_rows;
  return groups > merge ? groups : merge;
}
__host__ __device__ constexpr size_t decode_smem_floats(int warps, int q_rows, int splits, bool cluster_merge) {
  return decode_cluster_base_floats(warps, q_rows, splits) +
         (cluster_merge && splits > 1 ? size_t(splits) * q_rows * (kHeadDim + 2) : 0);
}


// Stamps per CTA of FlashParams::phase_ns (AttentionArgs::phase_ns: the same count as the prompt kernel's).
constexpr int kDecodePhases = 8;

// kRows: query rows held per thread (1: plain decode; kDecodeMaxRows: up to that many new tokens).
// kLean: the lean form (gemm_config.hpp, "The forms of braid's GEMM kernels"), launched only without tile sync
// and traces (AttentionOp::launch): the waits on the QKV tiles and the post compile out.
template <class T, int kWarps, int kRows, bool kLean = false>
__global__ void __launch_bounds__(kWarps * 32) flash_decode_kernel(const FlashParams p, const StageParams sp_arg) {
  const StageParams sp = stage_params_for_form<kLean>(sp_arg);
  constexpr int kThreads = kWarps * 32, D = kHeadDim, G = 2 * kWarps, U = kDecodeUnroll, kStep = G * U;
  static_assert(kRows >= 1 && kRows <= kDecodeMaxRows, "kRows");
  extern __shared__ __align__(16) float smem_f[];
  __shared__ BlockSync bs;
  __shared__ uint32_t s_last;

  begin_block(sp, bs);
  // The cluster merge pushes each CTA's partial into split 0's shared memory: every CTA of the cluster must
  // have started before another writes to it -- this arrival, waited for just before the pushes (long
  // satisfied by then, so the wait costs nothing).
  const bool clustered = p.cluster_merge && p.splits > 1;
  if (clustered) cluster::arrive_relaxed();

  const int tid = threadIdx.x, lane = tid % 32, grp = (tid / 32) * 2 + lane / 16, l16 = lane % 16;
  const int h = blockIdx.x, y = blockIdx.y, split = blockIdx.z;
  uint64_t* const phases = !kLean && p.phase_ns != nullptr && tid == 0
                               ? p.phase_ns + (blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z)) * kDecodePhases
                               : nullptr;
  auto stamp = [&](int k) {
    if (phases != nullptr) phases[k] = ptx::globaltimer_ns();
  };
  stamp(0);
  const Tile tile{uint32_t(h), uint32_t(y), 0};
  const detail::QueryBlock qb(p, y);
  const int b = qb.b, q0 = qb.q0, q_valid = qb.q_valid, row0 = qb.row0;
  const uint32_t HD = uint32_t(p.NH) * D;
  const detail::KeyRange keys(p, qb, split);
  const int k_begin = keys.begin, k_end = keys.end;
  const int n_steps = k_end > k_begin ? (k_end - k_begin + kStep - 1) / kStep : 0;
  const T* qkv = static_cast<const T*>(p.qkv);

  // K and V of this lane's 8 dims of the group's keys of step `st` (zeros past the split's keys).
  auto load = [&](int st, uint4 (&kr)[U], uint4 (&vr)[U]) {
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int kp = k_begin + st * kStep + u * G + grp;
      if (kp < k_end) {
        kr[u] = __ldcg(reinterpret_cast<const uint4*>(detail::key_row<T>(p, b, h, kp, false)) + l16);
        vr[u] = __ldcg(reinterpret_cast<const uint4*>(detail::key_row<T>(p, b, h, kp, true)) + l16);
      } else {
        kr[u] = vr[u] = make_uint4(0u, 0u, 0u, 0u);
      }
    }
  };

  uint4 kc[U], vc[U], kn[U], vn[U];  // this step's and the next step's K and V
  const bool first_cached = n_steps > 0 && min(k_end, k_begin + kStep) <= p.S_cached;
  // ... and the second step's, where the loop would issue them at once anyway (the two steps the
  // registers hold): a split of 2 steps (128 keys of d8) is then all in flight before any wait.
  const bool second_cached = first_cached && n_steps > 1 && min(k_end, k_begin + 2 * kStep) <= p.S_cached;
  if (first_cached) load(0, kc, vc);  // cached keys: nothing to wait for
  if (second_cached) load(1, kn, vn);
  stamp(1);
  // Stream order, PDL-launched: only now wait for the QKV GEMM. The cached keys below S_cached are
  // written by no stage of this chain (the update writes positions S_cached + ...), and the chain's
  // first stage starts after everything before it in the stream: their loads above overlap the GEMM.
  wait_primary_grid(sp, bs);

  const bool qkv_done = producer_complete(sp, bs, 0);
  // Waits for the QKV tiles holding head h's K and V columns of rows [r0, r1] (block-level).
  auto wait_kv = [&](uint32_t r0, uint32_t r1) {
    return wait_rect(sp, bs, 0, r0, r1, HD + h * D, HD + h * D + D - 1, tile) &&
           wait_rect(sp, bs, 0, r0, r1, 2 * HD + h * D, 2 * HD + h * D + D - 1, tile);
  };
  bool ok = true;
  if (!qkv_done) {
    ok = wait_rect(sp, bs, 0, uint32_t(row0), uint32_t(row0 + q_valid - 1), h * D, h * D + D - 1, tile);
    if (ok && k_end > p.S_cached) {  // this split reads new keys: their rows of the QKV output
      const uint32_t r0 = uint32_t(b * p.S_new + max(k_begin, p.S_cached) - p.S_cached),
                     r1 = uint32_t(b * p.S_new + k_end - 1 - p.S_cached);
      ok = wait_kv(r0, r1);
    }
  }
  // A failed wait: leave, unless the CTA's cluster needs it at its barriers -- then no loads of what
  // was not waited for, and no post (bs.ok is clear).
  if (!ok && !clustered) return;
  stamp(2);
  const int steps = ok ? n_steps : 0;
  if (steps > 0 && !first_cached) load(0, kc, vc);

  // This lane's 8 dims of each query row, pre-scaled so that scores come out in log2 units.
  float q[kRows][8];
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    if (r < q_valid && ok) {
      detail::unpack8<T>(__ldcg(reinterpret_cast<const uint4*>(qkv + uint64_t(row0 + r) * p.qkv_ld + h * D) + l16), q[r]);
#pragma unroll
      for (int i = 0; i < 8; ++i) q[r][i] *= p.scale_log2;
    } else {
#pragma unroll
      for (int i = 0; i < 8; ++i) q[r][i] = 0.f;
    }
  }
  float m[kRows], l[kRows], o[kRows][8];
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    m[r] = -INFINITY;
    l[r] = 0.f;
#pragma unroll
    for (int i = 0; i < 8; ++i) o[r][i] = 0.f;
  }
  const int qpos0 = p.S_cached + q0;  // position of query row 0
  const uint32_t bh = uint32_t(b * p.NH + h);

  for (int st = 0; st < steps; ++st) {
    if (st + 1 < steps && !(st == 0 && second_cached)) load(st + 1, kn, vn);

    float s[kRows][U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      float kf[8];
      detail::unpack8<T>(kc[u], kf);
#pragma unroll
      for (int r = 0; r < kRows; ++r) {
        float acc = q[r][0] * kf[0];
#pragma unroll
        for (int i = 1; i < 8; ++i) acc = fmaf(q[r][i], kf[i], acc);
        s[r][u] = acc;
      }
    }
#pragma unroll
    for (int r = 0; r < kRows; ++r)
#pragma unroll
      for (int u = 0; u < U; ++u)
#pragma unroll
        for (int off = 8; off >= 1; off /= 2) s[r][u] += __shfl_xor_sync(0xffffffffu, s[r][u], off);

    float pr[kRows][U];
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      if (r >= q_valid) continue;
      float mx = m[r];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int kp = k_begin + st * kStep + u * G + grp;
        if (kp >= k_end || (p.causal && kp > qpos0 + r)) s[r][u] = -INFINITY;
        mx = fmaxf(mx, s[r][u]);
      }
      const float m_use = mx == -INFINITY ? 0.f : mx;  // no visible key yet
      const float alpha = mma::fast_exp2(m[r] - m_use);
      m[r] = mx;
      l[r] *= alpha;
#pragma unroll
      for (int i = 0; i < 8; ++i) o[r][i] *= alpha;
#pragma unroll
      for (int u = 0; u < U; ++u) {
        float pv = mma::fast_exp2(s[r][u] - m_use);
        l[r] += pv;  // the normalizer is the softmax's: dropout applies after it
        if (p.drop_threshold != 0) {
          const int kp = k_begin + st * kStep + u * G + grp;
          pv = dropout_bits(p.seed, bh, uint32_t(qpos0 + r), uint32_t(kp)) >= p.drop_threshold ? pv * p.keep_scale : 0.f;
        }
        pr[r][u] = pv;
      }
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      float vf[8];
      detail::unpack8<T>(vc[u], vf);
#pragma unroll
      for (int r = 0; r < kRows; ++r) {
        if (r >= q_valid) continue;
#pragma unroll
        for (int i = 0; i < 8; ++i) o[r][i] = fmaf(pr[r][u], vf[i], o[r][i]);
      }
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      kc[u] = kn[u];
      vc[u] = vn[u];
    }
  }

  // Traces: the key loop's end in the CTA that posts the tile, as its mainloop end (what follows is the merge).
  const uint64_t t_loop = sp.trace != nullptr && tid == 0 ? ptx::globaltimer_ns() : 0;
  stamp(3);
  // The groups' partials, merged in group order (deterministic).
  const int QR = p.q_rows;
  float* o_s = smem_f;                   // [G][QR][128]
  float* ml_s = smem_f + G * QR * D;     // [G][QR][2]
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    if (r >= q_valid) continue;
    float4* dst = reinterpret_cast<float4*>(o_s + (grp * QR + r) * D + l16 * 8);
    dst[0] = make_float4(o[r][0], o[r][1], o[r][2], o[r][3]);
    dst[1] = make_float4(o[r][4], o[r][5], o[r][6], o[r][7]);
    if (l16 == 0) *reinterpret_cast<float2*>(ml_s + (grp * QR + r) * 2) = make_float2(m[r], l[r]);
  }
  __syncthreads();
  const uint32_t tile_lin = uint32_t(y) * uint32_t(p.NH) + uint32_t(h);
  const uint64_t base = (uint64_t(tile_lin) * p.splits + split) * QR;
  T* out = static_cast<T*>(p.o);
  // The cluster merge's inputs in split 0 (decode_smem_floats): [splits][QR][128] O rows, [splits][QR][2].
  float* cl_o = smem_f + decode_cluster_base_floats(kWarps, QR, p.splits);
  float* cl_ml = cl_o + size_t(p.splits) * QR * D;
  // Pushing (remote stores: no round trip) instead of split 0 pulling from each CTA after the barrier:
  // the pulls were dependent loads of ~16 CTAs' shared memory in a row -- with the barriers, 3.4-5.1 us of
  // the decode attention's 4.5-6.5 us after its key loop (traces, bench/results/decode-merge-h100-20261128/).
  const uint32_t cl_o_split0 = clustered ? cluster::map(cluster::smem_addr(cl_o + size_t(split) * QR * D), 0) : 0;
  const uint32_t cl_ml_split0 = clustered ? cluster::map(cluster::smem_addr(cl_ml + size_t(split) * QR * 2), 0) : 0;
  if (clustered) cluster::wait();  // (every CTA of the cluster has started)
  for (int idx = tid; idx < q_valid * (D / 2); idx += kThreads) {
    const int r = idx / (D / 2), d = 2 * (idx % (D / 2));
    float mx = -INFINITY;
#pragma unroll
    for (int g = 0; g < G; ++g) mx = fmaxf(mx, ml_s[(g * QR + r) * 2]);
    const float m_use = mx == -INFINITY ? 0.f : mx;
    float sum = 0.f, ox = 0.f, oy = 0.f;
#pragma unroll
    for (int g = 0; g < G; ++g) {
      const float w = exp2f(ml_s[(g * QR + r) * 2] - m_use);
      sum += w * ml_s[(g * QR + r) * 2 + 1];
      const float2 v = *reinterpret_cast<const float2*>(o_s + (g * QR + r) * D + d);
      ox += w * v.x;
      oy += w * v.y;
    }
    if (p.splits == 1) {
      const float inv = sum > 0.f ? 1.f / sum : 0.f;
      *reinterpret_cast<uint32_t*>(out + uint64_t(row0 + r) * p.o_ld + h * D + d) = mma::Mma<T>::pack(ox * inv, oy * inv);
    } else if (clustered) {
      cluster::st_f32x2(cl_o_split0 + uint32_t(r * D + d) * 4u, make_float2(ox, oy));
      if (d == 0) cluster::st_f32x2(cl_ml_split0 + uint32_t(r) * 8u, make_float2(mx, sum));
    } else {
      *reinterpret_cast<float2*>(p.part_o + (base + r) * D + d) = make_float2(ox, oy);
      if (d == 0) *reinterpret_cast<float2*>(p.part_ml + (base + r) * 2) = make_float2(mx, sum);
    }
  }
  stamp(4);
  bool post_tile = true;
  if (clustered) {
    // Split 0 merges the cluster's partials, now in its own shared memory, in split order (deterministic;
    // the same sums as before the push). Its barrier's release / acquire makes the pushes visible; nothing
    // reads another CTA's shared memory after it, so the others may leave.
    cluster::sync();
    stamp(5);
    post_tile = split == 0;
    if (post_tile) {
      for (int idx = tid; idx < q_valid * (D / 2); idx += kThreads) {
        const int r = idx / (D / 2), d = 2 * (idx % (D / 2));
        // (Unrolled: the loads of 8 splits in flight at once. Rolled, each split's loads and exp2 waited for the
        // last: split 0's merge of 16 splits took ~2.4 us -- phase stamps, bench/results/decode-merge-h100-20261128/.)
        float mx = -INFINITY;
#pragma unroll 8
        for (int sidx = 0; sidx < p.splits; ++sidx) mx = fmaxf(mx, cl_ml[(sidx * QR + r) * 2]);
        const float m_use = mx == -INFINITY ? 0.f : mx;
        float sum = 0.f, ox = 0.f, oy = 0.f;
#pragma unroll 8
        for (int sidx = 0; sidx < p.splits; ++sidx) {
          const float2 ml = *reinterpret_cast<const float2*>(cl_ml + (sidx * QR + r) * 2);
          const float2 v = *reinterpret_cast<const float2*>(cl_o + (size_t(sidx) * QR + r) * D + d);
          const float w = exp2f(ml.x - m_use);
          sum += w * ml.y;
          ox += w * v.x;
          oy += w * v.y;
        }
        const float inv = sum > 0.f ? 1.f / sum : 0.f;
        *reinterpret_cast<uint32_t*>(out + uint64_t(row0 + r) * p.o_ld + h * D + d) = mma::Mma<T>::pack(ox * inv, oy * inv);
      }
    }
  } else if (p.splits > 1) {
    post_tile = detail::arrive_last_split(p, tile_lin, s_last);  // (its barrier: o_s is free after it)
    if (post_tile) detail::merge_split_partials<T>(p, tile_lin, q_valid, row0, h, smem_f, tid, kThreads);
  }

  stamp(6);
  // The KV-cache update: one split copies the new tokens' K and V rows of this tile to their positions
  // (the last one when clustered: split 0 merges meanwhile).
  if (p.write_cache && split == (clustered ? p.splits - 1 : 0)) {
    const bool kv_ready = qkv_done || wait_kv(uint32_t(row0), uint32_t(row0 + q_valid - 1));
    if (kv_ready) detail::copy_new_kv_to_cache<T>(p, b, h, q0, q_valid, tid, kThreads);
  }

  if (post_tile) {
    post(sp, bs, tile);  // (not when a wait failed: bs.ok is clear)
    if (sp.trace != nullptr && tid == 0 && bs.ok) sp.trace[linear(tile, sp.grid)].mainloop_end_ns = t_loop;
  }
  stamp(7);
  end_block(sp, bs);
}

}  // namespace braid::attention
