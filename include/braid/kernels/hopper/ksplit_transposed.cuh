// The k-split consumers of braid's 64-token transposed tiles (WarpSpecializedTraits::kKSplit; gemm_kernel.cuh
// declares both functions). Included only by those tiles' instantiation units (src/hopper/instances/
// gemm_f16_64x*_t.cu), after epilogue_transposed.cuh.
//
// Why: a 64-token tile is one warpgroup's MMA (atoms of 64 weights x 64 tokens over the tile's weight
// blocks). Issued by one warpgroup alone it ran 564 TFLOP/s on GPT-3's QKV at S = 512 where the same MMAs on
// two warpgroups (128x320-t) ran 693; split by tokens, each warpgroup's n32 MMAs would read every weight block
// from shared memory for half the work. So both warpgroups run the whole tile's MMA, on alternate pipeline
// stages (warpgroup g: k-steps g, g + 2, ...), each into accumulators of its own, and release the stages they
// consumed (the pipeline counts one warpgroup per stage: kStageConsumers).
//
// Then the two partial tiles are summed: warpgroup g keeps the sums of tokens [32 g, 32 g + 32) of the tile
// -- the fragment's groups 4 g .. 4 g + 3 (value i = c2 + 2 r2 + 4 grp + 32 blk: token 8 grp + c2 of the
// thread's first, weight column 8 r2 of it + 64 blk) -- and hands the other half to its peer, one 64-row
// block per round through a 16 KB buffer after the staging panel (thread t's float4 k of direction d at
// [d][k][t]: conflict-free). Each warpgroup then stores its 32 tokens as a 32-row tile through its half of
// the staging panel (store_tile_transposed with kRows = 32, its own barrier, its own TMA store issuer). The
// sum is partial(0) + partial(1) in every run: the same bits in stream order and in any chain.
#pragma once
#include "braid/kernels/hopper/epilogue_transposed.cuh"
#include "braid/kernels/hopper/gemm_kernel.cuh"

namespace braid::hopper::detail {

// Named barriers of the k-split epilogue (ids the transposed kernels leave free: gemm_kernel.cuh).
constexpr uint32_t kKSplitExchangeBarrier = 9;  // both warpgroups (256 threads)
constexpr uint32_t ksplit_store_barrier(int wg) { return wg == 0 ? 10u : 13u; }  // one warpgroup's store (128 threads)

template <class Traits, class Accum>
__device__ __forceinline__ void mma_ksplit(typename Traits::Pipeline& pipeline, typename Traits::PipelineState read,
                                           Accum& accum, int k_count, int wg, typename Traits::SharedStorage& smem,
                                           const StageParams& sp, Tile tile) {
  using namespace cute;
  using Mainloop = typename Traits::Mainloop;
  Tensor sA = make_tensor(make_smem_ptr(smem.tensors.smem_A.data()), typename Mainloop::SmemLayoutA{});
  Tensor sB = make_tensor(make_smem_ptr(smem.tensors.smem_B.data()), typename Mainloop::SmemLayoutB{});
  typename Traits::TiledMma tiled_mma;
  auto thr = tiled_mma.get_slice(0);  // (the A/B partitions of a one-warpgroup MMA: the same for all 128 threads)
  Tensor tCrA = thr.make_fragment_A(thr.partition_A(sA));  // (MMA, MMA_M, MMA_K, PIPE) descriptors
  Tensor tCrB = thr.make_fragment_B(thr.partition_B(sB));
  tiled_mma.accumulate_ = GMMA::ScaleOut::One;
  warpgroup_fence_operand(accum);
  CUTLASS_PRAGMA_UNROLL
  for (int i = 0; i < size(accum); ++i) accum(i) = 0.0f;  // (a warpgroup with no k-step stores zeros' share)
  warpgroup_fence_operand(accum);
  read.advance(uint32_t(wg));
  // This warpgroup's first stage, bounded (barrier_wait.cuh), as the other kernels' consumers wait on a unit's first.
  if (wg < k_count)
    bounded_barrier_wait([&] { return pipeline.consumer_try_wait(read) == cutlass::BarrierStatus::WaitDone; }, sp,
                         kSitePipelineFull, uint32_t(read.index()), read.phase(), tile);
  // Each warpgroup holds only the stage it computes on: its MMAs are waited for before the next k-step's
  // (the other warpgroup's keep the tensor pipe busy meanwhile), and the stage goes back at once. Holding
  // one stage in flight as well, as the collective's loop does (warpgroup_wait<1>), the two warpgroups held
  // all four stages and the producer could load nothing ahead: 33% slower (same call as the one-warpgroup
  // kernel; bench/results/wide-transposed-h100-20261127/).
  CUTLASS_PRAGMA_NO_UNROLL
  for (int k = wg; k < k_count; k += 2) {
    auto token = pipeline.consumer_try_wait(read);
    pipeline.consumer_wait(read, token);
    const int s = read.index();
    warpgroup_fence_operand(accum);
    warpgroup_arrive();
    cute::gemm(tiled_mma, tCrA(_, _, _, s), tCrB(_, _, _, s), accum);
    warpgroup_commit_batch();
    warpgroup_wait<0>();
    warpgroup_fence_operand(accum);
    pipeline.consumer_release(read);
    read.advance(2);
  }
}

template <class Traits, class Accum, class Params>
__device__ __forceinline__ void store_tile_ksplit(Accum& accum, const Params& p, int m0, int n0_out, int t,
                                                  typename Traits::SharedStorage& smem, bool publish) {
  using namespace cute;
  using Element = typename Traits::Element;
  constexpr int kMmaM = Traits::kMmaM;  // the tile's weight columns
  constexpr int kBlocks = kMmaM / 64;
  static_assert(Traits::kTileM == 64 && AccumShape<Accum>::kGroups == 8 && AccumShape<Accum>::kBlocks == kBlocks,
                "k-split: a one-warpgroup fragment of 64 tokens (8 groups of 8) per 64-row block");
  const int wg = t / 128, tw = t % 128;
  // The fragment of this warpgroup's 32 tokens: the layout of a 64 x 32 atom over the same weight blocks
  // (thread -> (weight, token) of its first value as the 64 x 64 atom's; groups 0-3).
  using HalfMma = decltype(make_tiled_mma(
      GMMA::ss_op_selector<Element, Element, float, Shape<_64, _32, _64>, GMMA::Major::MN, GMMA::Major::K>()));
  HalfMma half_mma;
  auto thr = half_mma.get_thread_slice(tw);
  Tensor coord = thr.partition_C(make_identity_tensor(make_shape(Int<kMmaM>{}, Int<32>{})));
  float4* xbuf = reinterpret_cast<float4*>(smem.staging + 64 * 64);
  float4* give = xbuf + (wg * 4) * 128 + tw;               // [wg][k][thread]: the peer's half of a block
  const float4* take = xbuf + ((wg ^ 1) * 4) * 128 + tw;  // the peer's partial of this warpgroup's half
  // The sums go to the first half of each block's values (groups 0-3) in either warpgroup, so that every
  // index is a constant: selecting between two registers, not indexing the fragment by wg (local memory).
#pragma unroll
  for (int b = 0; b < kBlocks; ++b) {
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const int i = 32 * b + 4 * k;  // (i + 16: the second half)
      give[k * 128] = wg == 0 ? make_float4(accum(i + 16), accum(i + 17), accum(i + 18), accum(i + 19))
                              : make_float4(accum(i), accum(i + 1), accum(i + 2), accum(i + 3));
    }
    ptx::named_barrier_sync(kKSplitExchangeBarrier, 256);
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const float4 v = take[k * 128];
      const int i = 32 * b + 4 * k;
      // (one rounded addition of the two partials: commutative, so the same bits whichever warpgroup sums)
      accum(i) = (wg == 0 ? accum(i) : accum(i + 16)) + v.x;
      accum(i + 1) = (wg == 0 ? accum(i + 1) : accum(i + 17)) + v.y;
      accum(i + 2) = (wg == 0 ? accum(i + 2) : accum(i + 18)) + v.z;
      accum(i + 3) = (wg == 0 ? accum(i + 3) : accum(i + 19)) + v.w;
    }
    ptx::named_barrier_sync(kKSplitExchangeBarrier, 256);  // read before the next round's writes
  }
  // The sums as a 64 x 32 atom's fragment over the blocks: values ((c2, r2, grp), blk) at c2 + 2 r2 + 4 grp + 32 blk
  // of the accumulators (partition_fragment_C's compact column-major storage).
  static_assert(decltype(cosize(accum.layout()))::value == decltype(size(accum))::value, "compact accumulators");
  Tensor half = make_tensor(accum.data(), Layout<Shape<Shape<_2, _2, _4>, Int<kBlocks>, _1>, Stride<Stride<_1, _2, _4>, _32, _0>>{});
  static_assert(AccumShape<decltype(half)>::kGroups == 4 && AccumShape<decltype(half)>::kBlocks == kBlocks, "");
  if (m0 + 32 * wg < p.M)  // (a ragged last tile: warpgroup 1 may hold no token of D)
    store_tile_transposed<32, Traits::kTileN>(half, coord, p, m0 + 32 * wg, n0_out, smem.staging + wg * 32 * 64, tw,
                                              128, ksplit_store_barrier(wg), publish);
}

}  // namespace braid::hopper::detail
