// braid schedule simulator (CPU only): a discrete-event model of how the blocks of the stages of a
// Plan are dispatched onto SMs, wait on producer semaphores and post their own, under one of the
// stage orderings (stream order, PDL, wait kernel, none). It predicts makespan / utilization and
// finds, without a GPU, the two ways tile synchronization goes wrong:
//   - a race: a consumer reads a producer tile that has not posted although its wait was satisfied
//     (a policy or value that misses a dependency);
//   - a deadlock: spinning consumer blocks hold the slots the producer tiles they wait for need.
// See docs/simulator.md for the model, its assumptions and what it does not model.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "braid/plan/plan.hpp"

namespace braid::sim {

// Which dispatchable stage the block scheduler serves first when a slot is free.
enum class Dispatch : uint8_t {
  InOrder = 0,  // lowest launched stage first (what the hardware does with ordered launches)
  Random,       // a random dispatchable stage (seeded)
  Adversarial,  // highest stage first: consumers before producers, the worst legal interleaving
};
const char* dispatch_name(Dispatch d);
Dispatch parse_dispatch(const std::string& s);  // "inorder" | "random" | "adversarial"; throws PlanError

// Which SM a block goes to, among those with room for it.
enum class Placement : uint8_t {
  BreadthFirst = 0,  // the SM with the most free room, lowest index on ties (hardware round-robin)
  LowestIndex,       // the lowest-index SM with room (packs SMs)
};

struct SimConfig {
  uint32_t sms = 132;
  Ordering ordering = Ordering::PDL;
  Dispatch dispatch = Dispatch::InOrder;
  Placement placement = Placement::BreadthFirst;
  uint64_t seed = 1;
  // Relative per-tile duration noise: a tile takes tile_time * (1 + jitter * u), u uniform in
  // [-1, 1], drawn from (seed, stage, tile) so it does not depend on the dispatch order.
  double jitter = 0.0;
  bool check_reads = true;   // report reads of producer tiles that have not posted (races)
  bool validate_plan = true; // call Plan::validate() first (throws PlanError on a bad plan)
  bool record_trace = true;  // fill SimResult::trace
  // Semaphore value a consumer waits for before reading producer tile `tile` of stage `stage`
  // (default: the producer policy's value). Tests use it to model a broken policy.
  std::function<uint32_t(int stage, Tile tile)> value_override;
  size_t max_races = 16;     // race reports kept (all are counted)
};

// One tile computed by one block.
struct TileRecord {
  int stage = 0;
  Tile tile{};
  uint32_t block = 0;
  uint32_t sm = 0;
  uint32_t slot = 0;      // first lane of the SM the block occupies (lanes = SimResult::lanes_per_sm)
  uint32_t lanes = 1;     // lanes it occupies (a block of a lower-occupancy stage takes more)
  double dispatch = 0;    // the block was placed on the SM (persistent blocks: when it took this tile)
  double start = 0;       // first compute of this tile (after the initial spin, if any)
  double end = 0;         // the tile posted
  double spin = 0;        // total time spent spinning on this tile
  std::vector<std::pair<double, double>> spins;  // spin intervals [from, to)
};

struct StageStats {
  std::string name;
  uint32_t tiles = 0, blocks = 0;
  double waves = 0;          // blocks / (sms * occupancy)
  double first_start = -1;   // first block placed
  double last_end = -1;      // last tile posted
  double compute = 0;        // block-time computing
  double spin = 0;           // block-time spinning
  uint32_t tiles_done = 0;
};

struct RaceReport {
  int consumer_stage = 0, producer_stage = 0;
  Tile consumer_tile{}, producer_tile{};
  uint32_t sem = 0;
  uint32_t seen = 0;     // the semaphore's count when the read happened
  uint32_t value = 0;    // the value the consumer waited for (0: it did not wait on this semaphore)
  uint32_t needed = 0;   // posts the semaphore gets from all its tiles (the correct value)
  double time = 0;
  std::string message;
};

struct SpinningBlock {
  int stage = 0;
  Tile tile{};
  uint32_t block = 0, sm = 0, slot = 0;
  int producer_stage = 0;
  uint32_t sem = 0, count = 0, value = 0;
  std::vector<Tile> missing;  // producer tiles of that semaphore that have not posted
};

struct DeadlockReport {
  double time = 0;
  std::vector<SpinningBlock> spinning;
  uint32_t pending_blocks = 0;  // blocks never placed
  std::string message;          // the cycle, in words
};

struct SimResult {
  uint32_t sms = 0;
  uint32_t lanes_per_sm = 1;  // = the largest occupancy among the stages
  Ordering ordering = Ordering::PDL;
  Dispatch dispatch = Dispatch::InOrder;
  double makespan = 0;
  double utilization = 0;     // SM-time computing / (sms * makespan)
  double spin_fraction = 0;   // SM-time spinning / (sms * makespan)
  double spin_time = 0;       // block-time spinning (sum over blocks)
  std::vector<StageStats> stages;
  std::vector<TileRecord> trace;
  uint64_t events = 0;

  std::vector<RaceReport> races;  // the first SimConfig::max_races
  uint64_t race_count = 0;
  bool deadlock = false;
  DeadlockReport deadlock_info;

  bool ok() const { return race_count == 0 && !deadlock; }
  std::string error_text() const;  // empty when ok()
};

SimResult simulate(const Plan& plan, const SimConfig& cfg);

// `plan` with each stage's tile time set from that stage's measured time alone: stage_us[i] / its waves of blocks
// (ceil(tiles / blocks()): a persistent stage's CTAs each take that many tiles at most), for every stage with
// stage_us[i] > 0 (others keep theirs). The workloads' plans carry tile times proportional to K, which ignore that two
// stages' tiles differ in size; a measured time does not (braid-bench-mlp simulates its chains this way). Throws
// PlanError unless stage_us has one entry per stage.
Plan with_measured_stage_times(Plan plan, const std::vector<double>& stage_us);

// ---- compare: stream order vs variants --------------------------------------------------------
struct Variant {
  std::string name;
  Plan plan;
  Ordering ordering = Ordering::PDL;
};

struct CompareRow {
  std::string name;
  Ordering ordering = Ordering::StreamOrder;
  std::vector<double> waves;  // per stage
  double makespan = 0, utilization = 0, spin_fraction = 0;
  double speedup = 1;         // stream-order makespan / this makespan
  bool ok = true;
  bool deadlock = false;
  uint64_t races = 0;
  std::string error;          // first line of the race / deadlock report
};

// Row 0 simulates `baseline` under stream order (cfg.ordering ignored); then one row per variant
// under its own ordering, with cfg's other settings. `results`, if given, receives every SimResult.
std::vector<CompareRow> compare(const Plan& baseline, const std::vector<Variant>& variants, const SimConfig& cfg,
                                std::vector<SimResult>* results = nullptr);
std::string format_table(const std::vector<CompareRow>& rows);

}  // namespace braid::sim
