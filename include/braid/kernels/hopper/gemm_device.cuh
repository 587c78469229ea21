// The device layer of braid's Hopper GEMM for one element type and tile width: builds the kernel
// parameters (CUTLASS collective arguments -> params, i.e. the TMA descriptors) and launches.
// Included only by the instantiation units in src/hopper/ (conv_device.cuh builds on it).
#pragma once
#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "braid/kernels/hopper/gemm_kernel.cuh"
#include "braid/kernels/hopper/gemm_op.hpp"
#include "cutlass/util/packed_stride.hpp"

namespace braid::hopper {

// Opts the kernel of `Traits` in to the dynamic shared memory its pipeline needs (over the 48 KB default).
// BRAID_SMEM_CARVEOUT=<percent> (an experiment switch): also set the kernel's preferred L1/shared
// carveout, so that every instantiation asks the SM for the same configuration.
template <class Traits, int kForm = kFormGeneral>
void reserve_kernel_smem(const char* what) {
  cudaError_t e = cudaFuncSetAttribute(hopper_gemm_kernel<Traits, kForm>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       int(Traits::kSmemBytes));
  if (e != cudaSuccess)
    throw std::runtime_error(std::string(what) + ": cannot reserve shared memory: " + cudaGetErrorString(e));
  // Two CTAs per SM need the whole unified L1/shared array as shared memory.
  const char* c = std::getenv("BRAID_SMEM_CARVEOUT");
  if (c || Traits::kCtasPerSm > 1) {
    e = cudaFuncSetAttribute(hopper_gemm_kernel<Traits, kForm>, cudaFuncAttributePreferredSharedMemoryCarveout,
                             c ? std::atoi(c) : int(cudaSharedmemCarveoutMaxShared));
    if (e != cudaSuccess)
      throw std::runtime_error(std::string(what) + ": cannot set the shared memory carveout: " + cudaGetErrorString(e));
  }
}

// CTAs of the kernel of `Traits` that are resident on one SM at once (its launch bounds and shared
// memory as the occupancy calculator sees them; at most Traits::kCtasPerSm, at least 1).
template <class Traits>
int resident_ctas_per_sm() {
  int n = 0;
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, hopper_gemm_kernel<Traits>, Traits::kThreads,
                                                    Traits::kSmemBytes) != cudaSuccess) {
    (void)cudaGetLastError();
    return 1;
  }
  return std::max(1, std::min(n, Traits::kCtasPerSm));
}

// Clusters of `size` CTAs of the kernel of `Traits` that are resident on the GPU at once (0 if none or
// the query fails).
template <class Traits>
int resident_clusters(int size) {
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(unsigned(size));
  cfg.blockDim = dim3(Traits::kThreads);
  cfg.dynamicSmemBytes = Traits::kSmemBytes;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim = {unsigned(size), 1, 1};
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  int n = 0;
  if (cudaOccupancyMaxActiveClusters(&n, hopper_gemm_kernel<Traits>, &cfg) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return n;
}

// Placement clusters (placement_cluster_size(), gemm_op.hpp): launch a kernel that uses no cluster
// feature in clusters anyway, only for where the hardware then puts its CTAs. A grid of fewer
// CTAs than SMs, launched plainly, lands unevenly over the GPCs (an H100 put 14 of 80 CTAs on one GPC
// and 9-10 on the others), and an SM's rate of reading the L2 falls with the busy SMs of its GPC
// (bench/micro/sm_topology.cu: ~1.1 TB/s per GPC); as clusters of 4 they land 8-12 per GPC (a deep
// conv's k-steps: 0.18-0.19 us on the crowded GPC before, 0.13-0.15 everywhere after; docs/hopper-conv.md,
// "Where the CTAs land"). Used where every CTA still fits at once
// as such clusters; 1 (none) otherwise. The launch is padded to whole clusters: the CTAs past the
// schedule's walk no units (WorkSchedule::begin) and only count themselves done.
template <class Traits>
unsigned placement_cluster(int ctas) {
  const int v = placement_cluster_size();
  const unsigned asked = (v == 2 || v == 4 || v == 8) ? unsigned(v) : 1u;
  if (asked <= 1 || Traits::kCtasPerSm != 1) return 1;
  static int fits[9] = {-1, -1, -1, -1, -1, -1, -1, -1, -1};  // clusters of `asked` resident at once
  int& fit = fits[asked];
  if (fit < 0) fit = resident_clusters<Traits>(int(asked));
  const int padded = (ctas + int(asked) - 1) / int(asked) * int(asked);
  return padded <= fit * int(asked) ? asked : 1u;
}

// One persistent launch of the kernel of `Traits` in form `kForm` (PDL attribute when asked).
template <class Traits, int kForm = kFormGeneral>
void launch_kernel_persistent(typename Traits::Params& params, cudaStream_t s, bool pdl, int ctas,
                              const StageParams& sp, const char* what) {
  params.sp = sp;
  // Early weights (hopper_gemm_kernel) only where there is a primary grid to overlap: a PDL launch. (Without
  // PDL the first stages' activations would only queue behind their weights; BRAID_EARLY_WEIGHTS=0: never.)
  if (!sp.has(kSync) && !(pdl && early_weights_enabled())) params.sp.flags &= ~uint32_t(kWeightsFirst);
  params.groups = tile_groups(sp.grid, params.sched.group);
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(unsigned(ctas));
  cfg.blockDim = dim3(Traits::kThreads);
  cfg.dynamicSmemBytes = Traits::kSmemBytes;
  cfg.stream = s;
  cudaLaunchAttribute attr[2];
  unsigned n = 0;
  if (pdl) {
    attr[n].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[n++].val.programmaticStreamSerializationAllowed = 1;
  }
  // Clusters: split-K through distributed shared memory (a tile's segments), or B multicast (a group
  // of vertically adjacent tiles). Consecutive blocks along x form a cluster (PersistentScheduler).
  unsigned cluster = Traits::kMulticast > 1 ? unsigned(Traits::kMulticast) : params.sched.cluster;
  if (cluster <= 1) {
    cluster = placement_cluster<Traits>(ctas);
    if (cluster > 1) {
      ctas = (ctas + int(cluster) - 1) / int(cluster) * int(cluster);
      cfg.gridDim = dim3(unsigned(ctas));
      note_placement_cluster_launch();
    }
  }
  if (cluster > 1) {
    if (ctas % int(cluster) != 0)
      throw std::logic_error(std::string(what) + ": " + std::to_string(ctas) + " CTAs are not whole clusters of " +
                             std::to_string(cluster));
    attr[n].id = cudaLaunchAttributeClusterDimension;
    attr[n++].val.clusterDim = {cluster, 1, 1};
  }
  cfg.attrs = attr;
  cfg.numAttrs = n;
  const cudaError_t e = cudaLaunchKernelEx(&cfg, hopper_gemm_kernel<Traits, kForm>, params);
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + " launch: " + cudaGetErrorString(e));
}

// Clusters of `size` CTAs of the kernel of `Traits` that fit on the GPU at once (0 when none, or when
// the kernel does not run as such clusters: it neither reduces split-K partials through distributed
// shared memory in clusters of `size` nor multicasts B to `size` CTAs).
template <class Traits>
int max_active_clusters(int size) {
  const bool runs_as = Traits::kMulticast > 1 ? size == Traits::kMulticast
                                              : (Traits::kClusterExchange && size == 2) ||
                                                    (Traits::kClusterReduce && size >= 2 && size <= 8);
  return runs_as ? resident_clusters<Traits>(size) : 0;
}

// The lean and synced forms (gemm_config.hpp, "The forms of braid's GEMM kernels") of the kernel of `Traits` for
// the activations kActs: reserve() opts each in to the shared memory it needs; launch() launches the one of p.act
// when the launch fits a lean form (launch_fits_lean_form) or a synced one (launch_fits_synced_form) -- false when
// it fits neither or no form is p.act's, and the caller launches the general form.
template <class Traits, Activation... kActs>
struct LeanForms {
  static void reserve(const char* what) {
    (reserve_kernel_smem<Traits, lean_form(kActs)>(what), ...);
    (reserve_kernel_smem<Traits, synced_form(kActs)>(what), ...);
  }
  static bool launch(typename Traits::Params& p, cudaStream_t s, bool pdl, int ctas, const StageParams& sp,
                     const char* what) {
    if (launch_fits_lean_form(sp, p.unit_trace)) {
      const bool launched =
          ((p.act == kActs && (launch_kernel_persistent<Traits, lean_form(kActs)>(p, s, pdl, ctas, sp, what), true)) || ...);
      if (launched) note_lean_form_launch();
      return launched;
    }
    if (!launch_fits_synced_form(sp, p.unit_trace)) return false;
    const bool launched =
        ((p.act == kActs && (launch_kernel_persistent<Traits, synced_form(kActs)>(p, s, pdl, ctas, sp, what), true)) || ...);
    if (launched) note_synced_form_launch();
    return launched;
  }
};

// Per-unit trace records for the next launches of a kernel with these parameters (KernelBase::set_unit_trace).
template <class Params>
bool set_unit_trace(Params& params, UnitTrace* records, uint32_t stride) {
  params.unit_trace = records;
  params.unit_trace_stride = stride;
  return true;
}

template <class Element, int TileM, int TileN, bool Staged = stages_epilogue_by_default(TileM, TileN), int ClusterM = 1,
          bool Pingpong = false, bool Segmented = true, bool Transposed = false>
class GemmKernel final : public GemmKernelBase {
 public:
  using Traits = GemmTraits<Element, TileM, TileN, Staged, ClusterM, Pingpong, Segmented, Transposed>;
  using Mainloop = typename Traits::Mainloop;
  // The lean and synced forms (one of each per GEMM activation) of the whole-tile instantiations: what the
  // chains run without tile sync, and with it. (Not for the segmented ones: their split-K paths would stay in
  // any form.)
  static constexpr bool kHasLeanForms = !Traits::kSegmented;
  using Lean = LeanForms<Traits, Activation::None, Activation::GeLU, Activation::SwiGLU>;

  GemmKernel() {
    reserve_kernel_smem<Traits>("hopper gemm");
    if constexpr (kHasLeanForms) Lean::reserve("hopper gemm (lean form)");
  }

  void set_problem(const GemmArgs& a, const WorkSchedule& sched, void* partials,
                   unsigned long long* arrivals) override {
    using namespace cute;
    typename Mainloop::Arguments ma{};
    // A's tensor map spans a_rows_read() rows (GemmArgs::a_rows: padding keeps the last row tile's boxes in
    // bounds); M, which bounds the tiles and the stores, stays params_.M.
    if constexpr (Transposed) {  // D^T[N, M] = B^T[N, K] . A^T[K, M]: the collective's A is B's memory, its B is A's
      ma.ptr_A = reinterpret_cast<const Element*>(a.B);
      ma.ptr_B = reinterpret_cast<const Element*>(a.A);
      ma.dA = cutlass::make_cute_packed_stride(typename Mainloop::StrideA{}, make_shape(a.N, a.K, 1));
      ma.dB = cutlass::make_cute_packed_stride(typename Mainloop::StrideB{}, make_shape(a.a_rows_read(), a.K, 1));
      params_.mainloop = Mainloop::to_underlying_arguments(make_shape(a.N, a.a_rows_read(), a.K, 1), ma, nullptr);
    } else {
      ma.ptr_A = reinterpret_cast<const Element*>(a.A);
      ma.ptr_B = reinterpret_cast<const Element*>(a.B);
      ma.dA = cutlass::make_cute_packed_stride(typename Mainloop::StrideA{}, make_shape(a.a_rows_read(), a.K, 1));
      ma.dB = cutlass::make_cute_packed_stride(typename Mainloop::StrideB{}, make_shape(a.N, a.K, 1));
      params_.mainloop = Mainloop::to_underlying_arguments(make_shape(a.a_rows_read(), a.N, a.K, 1), ma, nullptr);
    }
    params_.M = a.M;
    params_.N = a.N;
    params_.K = a.K;
    params_.n_out = a.out_cols();
    params_.D = reinterpret_cast<Element*>(a.D);
    params_.bias = nullptr;
    params_.residual = nullptr;
    params_.act = a.act;
    params_.sched = sched;
    params_.partials = reinterpret_cast<float4*>(partials);
    params_.arrivals = arrivals;
    Traits::set_output_map(params_, a.act == Activation::SwiGLU ? TileN / 2 : TileN);
  }

  void launch(cudaStream_t s, bool pdl, int ctas, const StageParams& sp) override {
    if constexpr (kHasLeanForms)
      if (Lean::launch(params_, s, pdl, ctas, sp, "hopper gemm (lean form)")) return;
    launch_kernel_persistent<Traits>(params_, s, pdl, ctas, sp, "hopper gemm");
  }

  size_t smem_bytes() const override { return Traits::kSmemBytes; }
  int max_active_clusters(int size) const override { return hopper::max_active_clusters<Traits>(size); }
  bool cluster_pairs_in_rounds() const override { return !cluster_pulls<Traits>(2); }
  int multicast() const override { return Traits::kMulticast; }
  bool pingpong() const override { return Traits::kPingpong; }
  bool segmented() const override { return Traits::kSegmented; }
  bool transposed() const override { return Traits::kTransposed; }
  bool set_unit_trace(UnitTrace* records, uint32_t stride) override { return hopper::set_unit_trace(params_, records, stride); }

 private:
  typename Traits::Params params_{};
};

// The two instantiations of one tile: with the split-K / stream-K fixup (segmented schedules) and
// without (whole tiles: fewer registers held, see WarpSpecializedTraits).
template <class Element, int TileM, int TileN, bool Staged = stages_epilogue_by_default(TileM, TileN)>
std::unique_ptr<GemmKernelBase> make_gemm_kernel_pair(bool segmented) {
  if (segmented) return std::make_unique<GemmKernel<Element, TileM, TileN, Staged, 1, false, true>>();
  return std::make_unique<GemmKernel<Element, TileM, TileN, Staged, 1, false, false>>();
}

}  // namespace braid::hopper
