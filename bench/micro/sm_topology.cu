// Microbenchmark: how fast can each SM pull bytes out of the L2, alone and beside others, and which
// SMs share what? The question behind it (docs/hopper-conv.md): the deep convolution layers (512x7)
// run the same k-loop in every CTA, yet their CTAs finish up to ~20% apart ("idle at the end" in the
// unit traces, 2-3 us of a 13-14 us span). If the rate an SM receives bytes at depends on where it
// sits -- on the other SM of its TPC being busy, or on how many SMs of its GPC are -- a schedule can
// place work by SM; if not, the spread is elsewhere.
//
// Two parts:
//  1. Topology. Clusters of N CTAs always share a GPC: launching as many clusters as fit, repeatedly,
//     and merging the SM ids seen together gives the GPCs (union-find). TPCs are taken as SM ids
//     (2t, 2t+1) -- printed, not assumed below.
//  2. Per-SM L2 read rate. One CTA per SM (the dynamic shared memory leaves room for one), each reads
//     its %smid and leaves at once unless that SM is in the run's set; the others stream an
//     L2-resident buffer through a ring of TMA bulk copies (16 KB each, 8 in flight, the GEMM's way of
//     loading) and record their bytes per ns. Sets: one SM; both SMs of one TPC; one SM per TPC; all
//     SMs; one GPC; and "as launched" -- the first K CTAs of a K-CTA grid wherever the hardware puts
//     them (K = 40, 80, 120: the deep convolution's CTA counts).
//   build: cmake target braid-micro-sm-topology;  run: braid-micro-sm-topology [MB per SM]
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "braid/core/sync_ptx.cuh"
#include "braid/kernels/common/tma_sm90.cuh"

namespace {

#define CHECK(x)                                                                                  \
  do {                                                                                            \
    cudaError_t e_ = (x);                                                                         \
    if (e_ != cudaSuccess) {                                                                      \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));    \
      std::exit(1);                                                                               \
    }                                                                                             \
  } while (0)

using braid::ptx::globaltimer_ns;
using braid::ptx::smid;

// Part 1: every CTA records its SM and holds it for hold_ns, so that the launch's clusters are all
// resident at once (and land on different SMs from one launch to the next).
__global__ void where_kernel(uint32_t* smids, uint64_t hold_ns) {
  extern __shared__ uint8_t hold_smem[];  // (sized for one CTA per SM)
  if (threadIdx.x == 0) {
    smids[blockIdx.x] = smid();
    const uint64_t t0 = globaltimer_ns();
    while (globaltimer_ns() - t0 < hold_ns) {
    }
  }
}

constexpr int kStages = 8;
constexpr uint32_t kChunk = 16384;

struct StreamRecord {
  uint64_t t0, t1, bytes;
  uint32_t smid, active;
};

// Part 2: CTA b on SM s streams `chunks` chunks of the buffer if selected[s] (or, with selected ==
// nullptr, if b < first_k), from a per-CTA offset, through kStages bulk copies in flight.
__global__ void stream_kernel(const uint8_t* buf, uint32_t buf_chunks, uint32_t chunks, const uint8_t* selected,
                              uint32_t first_k, StreamRecord* out) {
  extern __shared__ __align__(1024) uint8_t smem[];
  __shared__ uint64_t full[kStages];
  const uint32_t s = smid();
  const bool active = selected != nullptr ? selected[s] != 0 : blockIdx.x < first_k;
  if (threadIdx.x != 0) return;
  StreamRecord r{};
  r.smid = s;
  r.active = active;
  if (!active) {
    out[blockIdx.x] = r;
    return;
  }
  for (int i = 0; i < kStages; ++i) braid::tma::init(&full[i], 1);
  braid::tma::fence_init();
  const uint32_t dst0 = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  uint32_t c = (blockIdx.x * 2654435761u) % buf_chunks;
  r.t0 = globaltimer_ns();
  for (uint32_t i = 0; i < chunks; ++i) {
    const int st = int(i % kStages);
    if (i >= kStages) braid::tma::wait(&full[st], ((i / kStages) - 1) & 1u);
    braid::tma::arrive_expect_tx(&full[st], kChunk);
    asm volatile(
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
            dst0 + uint32_t(st) * kChunk),
        "l"(buf + size_t(c) * kChunk), "r"(kChunk), "r"(static_cast<uint32_t>(__cvta_generic_to_shared(&full[st])))
        : "memory");
    c = c + 7 >= buf_chunks ? (c + 7) % buf_chunks : c + 7;
  }
  for (uint32_t i = chunks > kStages ? chunks - kStages : 0; i < chunks; ++i)
    braid::tma::wait(&full[i % kStages], (i / kStages) & 1u);
  r.t1 = globaltimer_ns();
  r.bytes = uint64_t(chunks) * kChunk;
  out[blockIdx.x] = r;
}

struct UnionFind {
  std::vector<int> p;
  explicit UnionFind(int n) : p(n) { std::iota(p.begin(), p.end(), 0); }
  int find(int x) { return p[x] == x ? x : p[x] = find(p[x]); }
  void join(int a, int b) { p[find(a)] = find(b); }
};

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

}  // namespace

int main(int argc, char** argv) {
  const double mb_per_sm = argc > 1 ? std::atof(argv[1]) : 8.0;
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));
  const int sms = prop.multiProcessorCount;
  std::printf("%s: %d SMs\n", prop.name, sms);

  // ---- part 1: GPCs from clusters ---------------------------------------------------------------
  const int smem = 200 * 1024;  // one CTA per SM
  CHECK(cudaFuncSetAttribute(where_kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  CHECK(cudaFuncSetAttribute(where_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  UnionFind uf(sms);
  std::vector<int> seen(sms, 0);
  uint32_t* d_smids = nullptr;
  CHECK(cudaMalloc(&d_smids, sizeof(uint32_t) * 4096));
  // Two passes: one CTA per SM (a cluster's CTAs on distinct SMs), then many per SM (clusters placed
  // more freely: SMs a one-per-SM cluster never reaches may still share one with others).
  for (int pass = 0; pass < 2; ++pass)
  for (int cs : {16, 8, 4, 2}) {
    cudaLaunchConfig_t cfg = {};
    cfg.blockDim = dim3(32);
    cfg.dynamicSmemBytes = pass == 0 ? smem : 0;
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim = {unsigned(cs), 1, 1};
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    cfg.gridDim = dim3(unsigned(cs));
    int fit = 0;
    if (cudaOccupancyMaxActiveClusters(&fit, where_kernel, &cfg) != cudaSuccess || fit == 0) {
      (void)cudaGetLastError();
      continue;
    }
    for (int rep = 0; rep < 40; ++rep) {
      // fewer clusters than fit, varying, so that they land differently
      const int n = std::max(1, fit - rep % std::max(1, (fit + 1) / 2));
      cfg.gridDim = dim3(unsigned(n * cs));
      CHECK(cudaLaunchKernelEx(&cfg, where_kernel, d_smids, uint64_t(20000)));
      CHECK(cudaDeviceSynchronize());
      std::vector<uint32_t> h(size_t(n) * cs);
      CHECK(cudaMemcpy(h.data(), d_smids, h.size() * sizeof(uint32_t), cudaMemcpyDeviceToHost));
      for (int c = 0; c < n; ++c)
        for (int i = 0; i < cs; ++i) {
          const int a = int(h[size_t(c) * cs]), b = int(h[size_t(c) * cs + i]);
          if (a < sms && b < sms) {
            uf.join(a, b);
            seen[a] = seen[b] = 1;
          }
        }
    }
    std::printf("clusters of %d (%s): %d fit at once\n", cs, pass == 0 ? "one CTA per SM" : "several per SM", fit);
  }
  std::map<int, std::vector<int>> gpc_of_root;
  for (int s = 0; s < sms; ++s)
    if (seen[s]) gpc_of_root[uf.find(s)].push_back(s);
  std::vector<int> gpc(sms, -1);
  std::vector<std::vector<int>> gpcs;
  for (auto& [root, v] : gpc_of_root) {
    for (int s : v) gpc[s] = int(gpcs.size());
    gpcs.push_back(v);
  }
  std::printf("GPCs found (SMs seen together in one cluster, merged): %zu\n", gpcs.size());
  for (size_t g = 0; g < gpcs.size(); ++g) {
    std::printf("  GPC %zu (%zu SMs):", g, gpcs[g].size());
    for (int s : gpcs[g]) std::printf(" %d", s);
    std::printf("\n");
  }
  int tpc_split = 0;
  for (int s = 0; s + 1 < sms; s += 2)
    if (gpc[s] != gpc[s + 1]) ++tpc_split;
  std::printf("SM pairs (2t, 2t+1) in different GPCs: %d (0: consistent with TPC = SM id / 2)\n", tpc_split);

  // ---- part 2: per-SM L2 read rate ----------------------------------------------------------------
  const uint32_t buf_chunks = 1024;  // 16 MB: L2-resident
  uint8_t* buf = nullptr;
  CHECK(cudaMalloc(&buf, size_t(buf_chunks) * kChunk));
  CHECK(cudaMemset(buf, 1, size_t(buf_chunks) * kChunk));
  uint8_t* d_sel = nullptr;
  CHECK(cudaMalloc(&d_sel, size_t(sms)));
  StreamRecord* d_rec = nullptr;
  CHECK(cudaMalloc(&d_rec, sizeof(StreamRecord) * size_t(sms)));
  CHECK(cudaFuncSetAttribute(stream_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  const uint32_t chunks = uint32_t(mb_per_sm * 1048576.0 / kChunk);

  CHECK(cudaFuncSetAttribute(stream_kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  auto run = [&](const std::string& name, const std::vector<int>* set, int first_k, int cs = 1) {
    if (set) {
      std::vector<uint8_t> sel(size_t(sms), 0);
      for (int s : *set) sel[size_t(s)] = 1;
      CHECK(cudaMemcpy(d_sel, sel.data(), sel.size(), cudaMemcpyHostToDevice));
    }
    const int grid = set ? sms : first_k;
    
    // three runs; keep the last (the first warms the L2 with the buffer)
    for (int rep = 0; rep < 3; ++rep) {
      cudaLaunchConfig_t cfg = {};
      cfg.gridDim = dim3(unsigned(grid));
      cfg.blockDim = dim3(32);
      cfg.dynamicSmemBytes = smem;
      cudaLaunchAttribute attr[1];
      attr[0].id = cudaLaunchAttributeClusterDimension;
      attr[0].val.clusterDim = {unsigned(cs), 1, 1};
      cfg.attrs = attr;
      cfg.numAttrs = cs > 1 ? 1 : 0;
      CHECK(cudaLaunchKernelEx(&cfg, stream_kernel, static_cast<const uint8_t*>(buf), buf_chunks, chunks,
                               static_cast<const uint8_t*>(set ? d_sel : nullptr), uint32_t(first_k), d_rec));
      CHECK(cudaDeviceSynchronize());
    }
    std::vector<StreamRecord> h(static_cast<size_t>(grid));
    CHECK(cudaMemcpy(h.data(), d_rec, h.size() * sizeof(StreamRecord), cudaMemcpyDeviceToHost));
    std::vector<double> rate;
    uint64_t t0 = UINT64_MAX, t1 = 0, bytes = 0;
    std::map<int, std::vector<double>> by_gpc;
    std::set<int> active_sms;
    for (const auto& r : h)
      if (r.active) active_sms.insert(int(r.smid));
    std::vector<double> paired, alone;
    for (const auto& r : h) {
      if (!r.active) continue;
      const double bpn = double(r.bytes) / double(r.t1 - r.t0);
      rate.push_back(bpn);
      by_gpc[r.smid < uint32_t(sms) ? gpc[r.smid] : -1].push_back(bpn);
      (active_sms.count(int(r.smid ^ 1u)) ? paired : alone).push_back(bpn);
      t0 = std::min(t0, r.t0);
      t1 = std::max(t1, r.t1);
      bytes += r.bytes;
    }
    if (rate.empty()) return;
    std::printf("%-22s SMs %3zu  B/ns per SM: min %6.1f median %6.1f max %6.1f | TPC partner busy %3zu (median %6.1f), "
                "alone %3zu (median %6.1f) | all %5.2f TB/s\n",
                name.c_str(), rate.size(), *std::min_element(rate.begin(), rate.end()), median(rate),
                *std::max_element(rate.begin(), rate.end()), paired.size(), median(paired), alone.size(),
                median(alone), double(bytes) / double(t1 - t0) * 1e-3);
    std::printf("%-22s per GPC (SMs busy: median B/ns):", "");
    for (auto& [g, v] : by_gpc) std::printf("  %d: %zu x %.0f", g, v.size(), median(v));
    std::printf("\n");
  };

  std::vector<int> one = {0}, tpc = {0, 1}, even, all;
  for (int s = 0; s < sms; ++s) {
    all.push_back(s);
    if (s % 2 == 0) even.push_back(s);
  }
  run("one SM", &one, 0);
  run("one TPC (2 SMs)", &tpc, 0);
  if (!gpcs.empty()) {
    run("one GPC", &gpcs[0], 0);
    std::vector<int> gpc_even;
    for (int s : gpcs[0])
      if (s % 2 == 0) gpc_even.push_back(s);
    run("one GPC, 1 SM per TPC", &gpc_even, 0);
  }
  run("1 SM per TPC", &even, 0);
  run("all SMs", &all, 0);
  for (int k : {40, 56, 80, 96, 120, 132}) run("as launched, " + std::to_string(k) + " CTAs", nullptr, k);
  // The same CTA counts launched as clusters (placed a cluster at a time, within one GPC), and K SMs
  // chosen GPC by GPC in turn (the most even spread over the GPCs found above).
  for (int cs : {2, 4, 8})
    for (int k : {40, 80, 120}) run("clusters of " + std::to_string(cs) + ", " + std::to_string(k), nullptr, k, cs);
  for (int k : {40, 56, 80, 96, 120}) {
    std::vector<int> pick;
    std::vector<size_t> next(gpcs.size(), 0);
    while (int(pick.size()) < k) {
      bool any = false;
      for (size_t g = 0; g < gpcs.size() && int(pick.size()) < k; ++g)
        if (next[g] < gpcs[g].size()) {
          // even SM ids first within a GPC (one SM per TPC before both)
          std::vector<int> order = gpcs[g];
          std::stable_sort(order.begin(), order.end(), [](int a, int b) { return (a % 2) < (b % 2); });
          pick.push_back(order[next[g]++]);
          any = true;
        }
      if (!any) break;
    }
    run("GPC-balanced, " + std::to_string(k), &pick, 0);
  }
  // Where the hardware puts the first K CTAs of a grid: their SM ids, in block order.
  {
    stream_kernel<<<80, 32, smem>>>(buf, buf_chunks, 1, nullptr, 80u, d_rec);
    CHECK(cudaDeviceSynchronize());
    std::vector<StreamRecord> h(80);
    CHECK(cudaMemcpy(h.data(), d_rec, h.size() * sizeof(StreamRecord), cudaMemcpyDeviceToHost));
    std::printf("80-CTA grid, SM of each block:");
    for (const auto& r : h) std::printf(" %u", r.smid);
    std::printf("\n");
  }
  return 0;
}
