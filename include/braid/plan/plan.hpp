// The plan: a stage graph as data. spec (DSL / text) -> Plan -> {simulator, runtime, emitted header}.
//
// A Plan lists stages in launch order (a topological order of the dependency graph) and the tile
// dependencies between them. A dependency says, for each consumer tile, which producer tiles it
// reads (`reads`, in the order the consumer reads them), and optionally which producer tiles'
// semaphores it actually waits on (`waits`, default: the same tiles). Plan::validate() checks the
// whole thing on the host and throws PlanError naming the offending stage / tile / dependency.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "braid/core/error.hpp"
#include "braid/core/types.hpp"
#include "braid/order/tile_order.hpp"
#include "braid/policy/policy.hpp"

namespace braid {

// How the launches of dependent stages are ordered.
enum class Ordering : uint8_t {
  StreamOrder = 0,  // baseline: one stream, no tile sync, each kernel waits for the previous one
  PDL,              // one stream, Programmatic Dependent Launch; producers trigger at their start
  WaitKernel,       // a stream per stage; a one-thread wait kernel releases a consumer once its
                    // producer's first block started (the paper's mechanism)
  None,             // a stream per stage, no ordering at all (optimization W: only when safe)
};
const char* ordering_name(Ordering o);
Ordering parse_ordering(const std::string& s);  // throws PlanError

struct StageSpec {
  std::string name;
  Grid grid{1, 1, 1};                  // tiles per dimension
  GroupPolicy policy = TileSync();     // how this stage's tiles post (its output policy)
  TileOrder order = RowMajorOrder();   // order.table is ignored here; see order_table
  std::vector<uint32_t> order_table;   // for OrderKind::Table: a permutation of [0, tiles)
  bool dynamic_order = false;          // tiles handed out by an atomic ticket (else block index)
  uint32_t occupancy = 1;              // resident blocks per SM (simulator, W/T analysis)
  double tile_time = 1.0;              // simulator: time to compute one tile (any unit)
  uint32_t block_count = 0;            // blocks launched; 0 = one per tile (persistent kernels: #SMs)

  uint32_t tiles() const { return uint32_t(num_tiles(grid)); }
  uint32_t blocks() const { return block_count ? block_count : tiles(); }
  // The i-th tile of this stage's schedule (uses order_table for Table orders).
  Tile tile_at(uint32_t i) const {
    TileOrder o = order;
    if (o.kind == OrderKind::Table) o.table = order_table.data();
    return o.at(i, grid);
  }
};

using TileListFn = std::function<void(Tile consumer, std::vector<Tile>& producer_tiles)>;

struct Dependency {
  int consumer = -1, producer = -1;  // indices into Plan::stages
  TileListFn reads;                  // producer tiles read by a consumer tile, in read order
  TileListFn waits;                  // producer tiles whose semaphores it waits on (empty = reads)
};

struct Plan {
  std::string name;
  std::vector<StageSpec> stages;  // launch order
  std::vector<Dependency> deps;

  int find(const std::string& stage_name) const;  // -1 when absent
  int add_stage(StageSpec s);
  void add_dep(int consumer, int producer, TileListFn reads, TileListFn waits = {});
  std::vector<int> producers_of(int stage) const;

  // Throws PlanError on: empty/zero grids, duplicate names, a dependency on an unknown stage or on
  // a stage launched later (no cycles), producer tiles out of the producer's grid, a consumer tile
  // that reads a producer tile whose semaphore it does not wait on (policy does not cover the
  // dependency), an order table that is not a permutation, a dependency on a NoSync producer.
  void validate() const;
};

// Which of the paper's optimizations apply on a device with `sms` multiprocessors.
struct OptimizationAdvice {
  bool W = false;  // no wait kernel / no stage ordering needed: consumers can never take every slot
  bool T = false;  // custom tile order unnecessary: all tiles of the chain fit in two waves
  std::string why;
};
OptimizationAdvice advise(const Plan& plan, uint32_t sms);

// Number of waves a stage takes alone on `sms` multiprocessors.
double waves(const StageSpec& s, uint32_t sms);

}  // namespace braid
