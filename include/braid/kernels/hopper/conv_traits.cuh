// braid's Hopper convolution: the GEMM kernel (gemm_kernel.cuh) with an implicit-GEMM A operand.
//
//   Y[n, h, w, k] = act(bias[k] + sum_{r, s, c} X[n, h + r - pad, w + s - pad, c] * Wt[k, r, s, c])
//   X, Y NHWC, Wt KRSC (fp16 or bf16), fp32 accumulation, stride 1, same padding.
//
// As a GEMM: M = N*H*W output pixels (row m = (n*H + h)*W + w), N = K filters, K = R*S*C. The A
// tile of a k-step is loaded by a TMA im2col load (CUTLASS's sm90 implicit-GEMM collective: zero
// fill at the image borders by the TMA unit); B is the filter, K-major. The reduction walks
// (C/64, S, R) with channel blocks fastest, so k-tile k reads channels [64 (k mod C/64), +64) at
// filter tap (r, s) = (k / (C/64 * S), k / (C/64) mod S).
//
// Tile synchronization (Conv2DTileSync, conv2d.hpp): when X is another stage's output, the producer
// warp waits, before a k-tile's A load, for the producer tiles covering the rows of the tile's whole
// R x S window (pixels m0 - pad*W - pad .. m1 + pad*W + pad, clamped) and the k-tile's channel block.
// The window is the union over the taps: a tile waits for its last tap's rows already at its first
// tap, which costs little (the channel blocks of all taps are the same columns) and keeps the
// waited set equal to what the Plan's Conv2DWindow dependency declares.
#pragma once
#include "braid/kernels/hopper/gemm_kernel.cuh"
#include "cute/atom/copy_traits_sm90_im2col.hpp"
#include "cutlass/conv/collective/detail.hpp"
#include "cutlass/conv/convnd_problem_shape.hpp"
#include "cutlass/conv/detail.hpp"
#include "cutlass/util/packed_stride.hpp"

namespace braid::hopper {

using Conv2dProblem = cutlass::conv::ConvProblemShape<cutlass::conv::Operator::kFprop, 2>;

// The mainloop: CUTLASS's sm90 GEMM collective for K-major A and B (its pipeline, shared-memory
// layouts and wgmma loop) with A loaded by a TMA im2col view of X instead of a tiled view.
// (CUTLASS 4.2's own implicit-GEMM collective does not compile here: its filter TMA type composes a
// static tile onto the dynamic (C, S, R) mode. The filter needs no such view: KRSC is a plain
// [K, R*S*C] K-major matrix whose columns run in the im2col reduction order, C fastest, then S, R.)
// ClusterM = 2: clusters of two CTAs on vertically adjacent tiles (the same filters), each loading
// half of the filter tile for both (TMA multicast; GemmConfig::multicast, as the GEMM's -mc2).
// CtasPerSm = 2: the pipeline sized for two CTAs per SM (WarpSpecializedTraits).
template <class Element, int TileM, int TileN, bool Staged, int ClusterM = 1, int CtasPerSm = 1>
struct ConvMainloop : GemmMainloop<Element, TileM, TileN, Staged, cutlass::layout::ColumnMajor, ClusterM, false, CtasPerSm> {
  using Base = GemmMainloop<Element, TileM, TileN, Staged, cutlass::layout::ColumnMajor, ClusterM, false, CtasPerSm>;
  using TileShape = typename Base::TileShape;
  using SmemLayoutA = typename Base::SmemLayoutA;
  using SmemLayoutB = typename Base::SmemLayoutB;
  using TensorStorage = typename Base::TensorStorage;
  using MainloopPipeline = typename Base::MainloopPipeline;
  using PipelineState = typename Base::PipelineState;
  using StrideA = cute::Stride<cute::Stride<int64_t, int64_t, int64_t>, cute::_1>;  // ((w, h, n), c)

  template <class TensorA>
  static auto make_tma_a(const TensorA& tensor_a, const Conv2dProblem& problem) {
    using namespace cute;
    namespace cd = cutlass::conv::collective::detail;
    auto lower_corner_whd = cd::compute_lower_corner_whd(problem);
    auto upper_corner_whd = cd::compute_upper_corner_whd(problem);
    auto lower_srt = cd::compute_lower_srt(problem);
    cute::array<int32_t, 2> stride_srt{};
    for (int i = 0; i < 2; ++i) stride_srt[i] = problem.dilation[1 - i];
    return make_im2col_tma_copy(SM90_TMA_LOAD_IM2COL{}, tensor_a, SmemLayoutA{}(_, _, _0{}),
                                product_each(shape(SmemLayoutA{}(_, _, _0{}))), _1{}, shape(lower_corner_whd),
                                shape(upper_corner_whd), cute::reverse(shape(problem.lower_padding)),
                                cute::reverse(shape(problem.upper_padding)),
                                cute::reverse(shape(problem.traversal_stride)), shape(lower_srt), shape(stride_srt));
  }
  using TensorShapeA = decltype(cute::make_shape(cute::take<0, 3>(Conv2dProblem::TensorExtent{}), int(0)));
  using TmaA = decltype(make_tma_a(cute::make_tensor(cute::make_gmem_ptr(static_cast<const Element*>(nullptr)),
                                                     cute::make_layout(TensorShapeA{}, StrideA{})),
                                   Conv2dProblem{}));
  using TmaB = typename Base::Params::TMA_B;

  struct Params {
    TmaA tma_load_a;
    TmaB tma_load_b;
    uint32_t tma_transaction_bytes = Base::TmaTransactionBytes;
  };

  // X [N, H, W, C] and the filters as a [K, R*S*C] matrix (stride 1 in the reduction).
  static Params to_underlying_arguments(const Conv2dProblem& problem, const Element* x, const Element* wt) {
    using namespace cute;
    auto dA = cutlass::make_cute_packed_stride(StrideA{}, problem.stride_A, cutlass::conv::Operator::kFprop);
    Tensor tensor_a = make_tensor(make_gmem_ptr(x), make_layout(problem.get_shape_A(), dA));
    const int n = problem.shape_B[0];
    const int k = problem.shape_B[1] * problem.shape_B[2] * problem.shape_B[3];
    typename Base::StrideB dB = cutlass::make_cute_packed_stride(typename Base::StrideB{}, make_shape(n, k, 1));
    Tensor tensor_b = make_tensor(make_gmem_ptr(wt), make_layout(make_shape(n, k, 1), dB));
    Params p{make_tma_a(tensor_a, problem),
             make_tma_copy_B_sm90(typename Base::GmemTiledCopyB{}, tensor_b, SmemLayoutB{}(_, _, Int<0>{}), TileShape{},
                                  Shape<Int<ClusterM>, _1, _1>{}),
             Base::TmaTransactionBytes};
    return p;
  }

  static __device__ __forceinline__ void prefetch_tma_descriptors(const Params& p) {
    cute::prefetch_tma_descriptor(p.tma_load_a.get_tma_descriptor());
    cute::prefetch_tma_descriptor(p.tma_load_b.get_tma_descriptor());
  }

  // (BLK_M, BLK_K, m, k) over (pixels, (C, S, R)) and (BLK_N, BLK_K, n, k) over (filters, R*S*C): the
  // same k index walks both in the same order.
  __device__ __forceinline__ auto load_init(const Conv2dProblem& problem, const Params& p) const {
    using namespace cute;
    using X = Underscore;
    auto [M, N, K, L] = cutlass::conv::detail::get_linearized_problem_shape_MNKL(problem);
    Tensor mA_mk = p.tma_load_a.get_tma_tensor(make_shape(M, K));
    Tensor mB_nkl = p.tma_load_b.get_tma_tensor(make_shape(N, int(size(K)), 1));
    Tensor gA_mk = local_tile(mA_mk, TileShape{}, make_coord(_, _, _), Step<_1, X, _1>{});
    Tensor gB_nkl = local_tile(mB_nkl, TileShape{}, make_coord(_, _, _), Step<X, _1, _1>{});
    return make_tuple(gA_mk, gB_nkl(_, _, _, _, 0));
  }

  // The wgmma loop is the GEMM collective's (it reads only shared memory, not its Params).
  template <class FrgTensorC>
  __device__ __forceinline__ void mma(MainloopPipeline pipeline, PipelineState read, FrgTensorC& accum, int k_tiles,
                                      int thread_idx, TensorStorage& smem, const Params&) {
    Base::mma(pipeline, read, accum, k_tiles, thread_idx, smem, typename Base::Params{});
  }
};

// Segmented = false: whole tiles only, no split-K fixup compiled in (WarpSpecializedTraits).
template <class Element_, int TileM, int TileN, bool Staged = stages_epilogue_by_default(TileM, TileN), bool Segmented = true,
          int ClusterM = 1, int CtasPerSm = 1>
struct ConvTraits
    : WarpSpecializedTraits<Element_, TileM, TileN, ConvMainloop<Element_, TileM, TileN, Staged, ClusterM, CtasPerSm>,
                            Staged, ClusterM, false, Segmented, CtasPerSm> {
  using Base = WarpSpecializedTraits<Element_, TileM, TileN, ConvMainloop<Element_, TileM, TileN, Staged, ClusterM, CtasPerSm>,
                                     Staged, ClusterM, false, Segmented, CtasPerSm>;
  using Mainloop = typename Base::Mainloop;
  static constexpr bool kBias = true;
  struct Params : Base::ParamsBase {
    Conv2dProblem problem;  // the TMA im2col view's shape (load_init)
    int img_w = 0;          // image width W, filter padding, input channels C: the rows and columns
    int pad = 0;            // of the producer's output that a k-tile reads
    int channels = 0;
    FastDiv channel_blocks;  // C / 64, the k-tiles of one filter tap (a_col_end's divisor, set with channels)
  };

  static __device__ __forceinline__ auto load_tensors(Mainloop& mainloop, const Params& p) {
    return mainloop.load_init(p.problem, p.mainloop);
  }
  // The pixels under row-tile y's whole filter window (Conv2DWindow::row_tiles, flattened index).
  static __device__ __forceinline__ void a_rows(const Params& p, uint32_t y, uint32_t& r0, uint32_t& r1) {
    const int64_t halo = int64_t(p.pad) * p.img_w + p.pad;
    const int64_t m0 = int64_t(y) * TileM, m1 = min(m0 + TileM, int64_t(p.M)) - 1;
    r0 = uint32_t(max(m0 - halo, int64_t(0)));
    r1 = uint32_t(min(m1 + halo, int64_t(p.M) - 1));
  }
  // k-tile k reads channel block k mod (C/64) (a column block of the producer's output).
  static __device__ __forceinline__ uint32_t a_col_end(const Params& p, int k) {
    return (p.channel_blocks.mod(uint32_t(k)) + 1) * kTileK - 1;
  }
  // The producer's walk over A's k-tiles (see WarpSpecializedTraits::a_cursor): the TMA im2col
  // coordinate (c, w, h, n; filter offsets w, h) of each k-tile, kept in registers and stepped with adds.
  // CuTe's view re-derives it at every copy from the row tile's linear pixel index (two FastDivmod
  // divisions for (w, h, n)) and the k coordinate -- ~70 SASS instructions per k-tile in the thread that
  // issues the loads, twice a GEMM's (bench/sass_producer_kstep.py). Here the view is evaluated once per
  // unit: at the unit's first k-tile and one step along each k sub-mode (channel block, filter column,
  // filter row), so the steps are whatever the view says they are.
  struct Im2colACursor {
    int32_t c, w, h, n;        // the current k-tile's coordinate: channel, the tile's first pixel
    int32_t off_w, off_h;      // and the filter tap's offsets
    int32_t c_first, off_w_first, dc, dw, dh;  // channel / offsets at channel block 0, column 0; steps
    int32_t cb, cb_count, s, s_count;          // channel block within the tap, filter column
    template <class TmaA, class Dst>
    __device__ __forceinline__ void load(const TmaA& tma, uint64_t& bar, Dst&& dst) const {
      cute::SM90_TMA_LOAD_IM2COL_4D::copy(tma.get_tma_descriptor(), &bar, cute::raw_pointer_cast(dst.data()), c, w, h, n,
                                          uint16_t(off_w), uint16_t(off_h));
    }
    __device__ __forceinline__ void operator++() {
      c += dc;
      if (++cb == cb_count) {
        cb = 0;
        c = c_first;
        off_w += dw;
        if (++s == s_count) {
          s = 0;
          off_w = off_w_first;
          off_h += dh;
        }
      }
    }
  };
  template <class TensorA>
  static __device__ __forceinline__ Im2colACursor a_cursor(const TensorA& tAgA, int k) {
    using namespace cute;
    const auto shape_k = shape<3>(tAgA);  // (C/64, S, R)
    static_assert(rank(decltype(shape_k){}) == 3, "A's k-mode is (channel block, filter column, filter row)");
    // The TMA coordinate (c, (w, h), n, (off_w, off_h)) of k coordinate kc, as the copy reads it.
    auto at = [&](auto kc) { return flatten(tAgA(_, _, _, kc)(Int<0>{})); };
    const auto o = at(make_coord(0, 0, 0));
    const auto oc = at(make_coord(1, 0, 0));
    const auto os = at(make_coord(0, 1, 0));
    const auto orr = at(make_coord(0, 0, 1));
    const auto kc = idx2crd(k, shape_k);
    Im2colACursor a;
    a.dc = int32_t(get<0>(oc)) - int32_t(get<0>(o));
    a.dw = int32_t(get<4>(os)) - int32_t(get<4>(o));
    a.dh = int32_t(get<5>(orr)) - int32_t(get<5>(o));
    a.cb = int32_t(get<0>(kc));
    a.s = int32_t(get<1>(kc));
    a.cb_count = int32_t(get<0>(shape_k));
    a.s_count = int32_t(get<1>(shape_k));
    a.c_first = int32_t(get<0>(o));
    a.off_w_first = int32_t(get<4>(o));
    a.c = a.c_first + a.cb * a.dc;
    a.w = int32_t(get<1>(o));
    a.h = int32_t(get<2>(o));
    a.n = int32_t(get<3>(o));
    a.off_w = a.off_w_first + a.s * a.dw;
    a.off_h = int32_t(get<5>(o)) + int32_t(get<2>(kc)) * a.dh;
    return a;
  }
  // Channel blocks cycle once per tap: a unit may read any of them, from its first k-tile on.
  static __device__ __forceinline__ uint32_t a_first_col(const Params&, int) { return 0; }
  static __device__ __forceinline__ uint32_t a_last_col(const Params& p, int) { return uint32_t(p.channels) - 1; }
};

}  // namespace braid::hopper
