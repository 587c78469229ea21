// braid::hopper::GemmOp: the Hopper GEMM behind a plain (non-template) interface, so that tools and
// workloads compile without CUTLASS. The kernels themselves are instantiated in src/hopper/*.cu.
//
//   hopper::GemmOp g;
//   if (auto why = g.prepare({DType::F16, A, B, D, M, N, K, Activation::GeLU}, {128, 1, 0}); !why.empty()) ...
//   g.run(stream);                                      // plain, stream-ordered
//   chain.set_launcher(i, [&](const LaunchCtx& c) { g.launch(c); });   // a stage of a braid::Chain
#pragma once
#include <cuda_runtime.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "braid/core/stage.cuh"
#include "braid/kernels/hopper/gemm_config.hpp"
#include "braid/kernels/hopper/work_schedule.hpp"

namespace braid {
struct LaunchCtx;
}

namespace braid::hopper {

struct GemmArgs {
  DType dtype = DType::F16;
  const void* A = nullptr;  // [M, K] row-major
  const void* B = nullptr;  // [K, N] row-major (SwiGLU: packed, see gemm_config.hpp)
  void* D = nullptr;        // [M, Nout] row-major
  int M = 0, N = 0, K = 0;
  Activation act = Activation::None;
  // D's width where it is not N (N / 2 with SwiGLU): a SwiGLU B padded to whole tile blocks,
  // N = swiglu_packed_cols(n_out, GemmConfig::swiglu_block()). 0: derived.
  int n_out = 0;
  // Rows of A that may be read (>= M; 0: M): the rows past M of an allocation padded for the purpose. The loads of
  // A's last row tile then stay inside the tensor map instead of crossing its edge, and a TMA box that crosses the
  // edge is slow (its bounds-checked zero fill): on an H200 the 64x128 GEMM read LLaMA's W1 in 38.8 us at M = 1 and
  // 27.5 us at M = 64 (bench/results/padded-rows-h200-20261129/). Rows past M only feed output rows past M, which
  // are never stored (each output row is the product of its own row of A), so D is the same whatever they hold.
  int a_rows = 0;
  int out_cols() const { return n_out > 0 ? n_out : act == Activation::SwiGLU ? N / 2 : N; }
  int a_rows_read() const { return a_rows > M ? a_rows : M; }
};

// What a concrete kernel instantiation provides (GEMM or convolution, one per element type x tile).
class KernelBase {
 public:
  virtual ~KernelBase() = default;
  virtual void launch(cudaStream_t s, bool pdl, int ctas, const StageParams& sp) = 0;
  virtual size_t smem_bytes() const = 0;
  // Clusters of `size` CTAs that fit on the GPU at once; 0 when this kernel cannot exchange split-K
  // partials in clusters of that size (GemmConfig::dsmem_reduce).
  virtual int max_active_clusters(int size) const = 0;
  // Split-K 2 in clusters: whether the pair exchange runs any number of rounds of units (staged
  // epilogues: the peer's share goes into the staging buffer); otherwise, as for every larger cluster,
  // each segment needs its own CTA (the partials stay in the idle pipeline buffers).
  virtual bool cluster_pairs_in_rounds() const { return false; }
  // CTAs per cluster sharing B through TMA multicast (GemmConfig::multicast); 1 = none.
  virtual int multicast() const { return 1; }
  // Persistent CTAs resident per SM (GemmConfig::ctas_per_sm, as the occupancy calculator confirms).
  virtual int ctas_per_sm() const { return 1; }
  // Whether the two consumer warpgroups take alternate tiles (GemmConfig::pingpong).
  virtual bool pingpong() const { return false; }
  // Whether the kernel carries the split-K / stream-K fixup (whole-tile instantiations do not).
  virtual bool segmented() const { return true; }
  // Whether the kernel computes D^T = B^T A^T (GemmConfig::transposed).
  virtual bool transposed() const { return false; }
  // Diagnostic per-unit records (UnitTrace) on the next launches; false where the kernel has none.
  virtual bool set_unit_trace(UnitTrace* /*records*/, uint32_t /*stride*/) { return false; }
};

class GemmKernelBase : public KernelBase {
 public:
  // Builds the kernel parameters (TMA descriptors) for the problem and its work schedule; workspace
  // pointers may be null when no tile is cut into segments.
  virtual void set_problem(const GemmArgs& a, const WorkSchedule& sched, void* partials,
                           unsigned long long* arrivals) = 0;
};

// The instantiation for (dtype, tile_m, tile_n, staged epilogue, multicast cluster size)
// (src/hopper/instances/*.cu); nullptr when there is none. Every tile has its default store
// (stages_epilogue_by_default); the other store only where it was measured to matter (fp16 128x128
// direct); B multicast in pairs only for the fp16 128-row tiles (the large-T MLP GEMMs).
// Pingpong warpgroups (GemmConfig::pingpong): fp16 and bf16 128x128, direct stores.
// segmented: the schedule cuts tiles into segments (split-K, stream-K), so the kernel needs the fixup;
// the plain tiles come both ways (the whole-tile instantiation holds fewer registers), pingpong
// without, multicast with. transposed (GemmConfig::transposed): fp16, the tiles and multicast cluster
// sizes of is_transposed_tile, whole tiles only.
std::unique_ptr<GemmKernelBase> make_gemm_kernel(DType dtype, int tile_m, int tile_n, bool staged, int multicast = 1,
                                                 bool pingpong = false, bool segmented = true, bool transposed = false);

// One prepared problem on braid's persistent Hopper kernel: its tile grid, work schedule (GemmConfig),
// split-K/stream-K workspace, and the launch, plain or as a stage of a braid::Chain. GemmOp and
// ConvOp (conv_op.hpp) are this with their own problem checks and kernel parameters.
class PersistentOp {
 public:
  PersistentOp();
  ~PersistentOp();
  PersistentOp(PersistentOp&&) noexcept;
  PersistentOp& operator=(PersistentOp&&) noexcept;

  // The output tile grid and tile shape as braid sees them (x: column tiles of D, y: row tiles).
  Grid grid() const;
  TileShape tile() const;
  int units() const;  // work units (whole tiles and tile segments)
  const WorkSchedule& schedule() const;
  int ctas() const;   // persistent CTAs launched
  size_t smem_bytes() const;  // the kernel's dynamic shared memory per CTA
  const GemmConfig& config() const;

  // As a stage of a braid::Chain: ctx.params must describe this op's grid and tile shape.
  void launch(const LaunchCtx& ctx) const;
  // Plain launch (no tile sync); pdl: launch as a programmatic dependent (the kernel then waits for
  // its primary grid before loading). trigger: let the next kernel launch early (PDL). (Traced runs:
  // as a stage of a Chain with ChainOptions::trace.)
  void run(cudaStream_t s, bool pdl = false, bool trigger = false) const;
  // A diagnostic: one standalone run recording every work unit (UnitTrace, work_schedule.hpp) into
  // `records` (device memory, ctas() * max_units_per_cta() of them, zeroed first). Throws where the
  // kernel does not record units (convolutions).
  void run_unit_trace(cudaStream_t s, UnitTrace* records) const;
  int max_units_per_cta() const;
  // The same into a device buffer of its own, downloaded: ctas() * max_units_per_cta() records.
  // `before` (optional) is enqueued just before the traced run (e.g. an L2 eviction, another kernel).
  std::vector<UnitTrace> trace_units(cudaStream_t s, const std::function<void()>& before = {}) const;

  // The checks every problem shares: split count, CTA count, decomposition, order. "" when fine.
  static std::string check_schedule(const GemmConfig& c, int k_tiles);

  struct Work;  // opaque: schedule, workspace, kernel

 protected:
  // Builds the work schedule (k_tiles k-steps per tile) and its workspace for `kernel`. The caller
  // then sets the kernel's problem with schedule() and workspace().
  void build(std::unique_ptr<KernelBase> kernel, Grid grid, TileShape tile, uint32_t k_tiles, const GemmConfig& c,
             const char* what);
  void* partials() const;
  unsigned long long* arrivals() const;
  KernelBase& kernel() const;

 private:
  std::unique_ptr<Work> work_;
};

class GemmOp : public PersistentOp {
 public:
  // Checks the problem and the configuration, builds the kernel parameters and the split-K workspace.
  // Returns an empty string, or why it cannot run (nothing is launched then).
  std::string prepare(const GemmArgs& args, const GemmConfig& config);
  static std::string can_implement(const GemmArgs& args, const GemmConfig& config);
  const GemmArgs& args() const { return args_; }
  std::string name() const;

 private:
  GemmArgs args_;
};

// Placement clusters for the persistent kernels (launch_kernel_persistent): 1 = plain launches, or 2 / 4 /
// 8 = launch a kernel that uses no cluster feature in clusters of that size anyway, for where the
// hardware then puts its CTAs (gemm_device.cuh, placement_cluster). Process-wide, 4 unless the
// environment variable BRAID_PLACEMENT_CLUSTER says otherwise at the first launch; set_placement_cluster
// changes it at any time (tests, A/B runs).
int placement_cluster_size();
void set_placement_cluster(int size);
long placement_cluster_launches();  // launches made as placement clusters so far (tests)
void note_placement_cluster_launch();

// Early weights (hopper_gemm_kernel): a launch without tile sync whose B is never produced (kWeightsFirst, the
// chains' optimization R) has its producer load the weights of its first pipeline stages before it waits for
// the primary grid (PDL), while the other threads wait at the start as before. Process-wide, on unless the
// environment variable BRAID_EARLY_WEIGHTS=0 says otherwise at the first launch; set_early_weights changes it
// (A/B runs).
bool early_weights_enabled();
void set_early_weights(bool on);

// The GEMM kernels' lean forms (gemm_config.hpp, "The forms of braid's GEMM kernels"): a whole-tile GEMM
// launched without tile sync, dynamic order or traces runs the form of its activation that has none of
// those paths. Process-wide, on unless the environment variable BRAID_KERNEL_FORM=general says otherwise
// at the first launch; set_lean_forms changes it at any time (tests compare the forms' bits, A/B runs).
bool lean_forms_enabled();
void set_lean_forms(bool on);
long lean_form_launches();  // launches made in a lean form so far (tests)
void note_lean_form_launch();
// Whether a launch with these parameters may take a lean form: it waits for no tile and posts none, walks
// a static order and records no traces (and the lean forms are on).
inline bool launch_fits_lean_form(const StageParams& sp, const void* unit_trace = nullptr) {
  return lean_forms_enabled() && !sp.has(kSync) && !sp.has(kDynamicOrder) && !sp.has(kMarkStarted) &&
         sp.trace == nullptr && unit_trace == nullptr;
}
// The synced forms (whole-tile GEMM and conv kernels): a launch with tile sync that walks a static order and
// records no traces runs the form of its activation without the dynamic dispatch, the traces and the other
// activations (on and off with the lean forms).
long synced_form_launches();  // launches made in a synced form so far (tests)
void note_synced_form_launch();
inline bool launch_fits_synced_form(const StageParams& sp, const void* unit_trace = nullptr) {
  return lean_forms_enabled() && !sp.has(kDynamicOrder) && sp.trace == nullptr && unit_trace == nullptr;
}

}  // namespace braid::hopper
