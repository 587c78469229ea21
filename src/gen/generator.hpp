// braid::gen -- the generator: checker, candidate policies, tile orders, Spec -> braid::Plan, and
// the emitted C++ header (cuSyncGen's four jobs).
//
//   Spec spec = load_spec("examples/specs/gpt3-mlp.spec", {{"T", 1024}});
//   Analysis a = analyze(spec);                 // checks everything; throws braid::PlanError
//   a.candidates[a.find("g1")]                  // TileSync, RowSync
//   braid::Plan plan = to_plan(a, {.policy = {{"g1", "RowSync"}}});
//   std::string hpp = emit_header(a, {});
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "braid/plan/plan.hpp"
#include "gen/dsl.hpp"

namespace braid::gen {

// A candidate output policy of a producer grid, with a readable name ("TileSync", "RowSync",
// "Strided(s12,n3)", "Group(x:all,y:3)") and an identifier-safe one ("Strided_s12_n3").
struct Candidate {
  std::string name;
  std::string ident;
  GroupPolicy policy;
};

// Names a grouping the way candidates are named; also picks the kind (TileSync / RowSync /
// StridedSync / Generic) from the grouping.
Candidate name_policy(GroupPolicy p);

// How the producer tiles a consumer tile needs spread along one producer dimension.
struct DimSpread {
  bool varies = false;  // some consumer tile needs more than one value along this dimension
  uint32_t stride = 1;  // gcd of the distances between needed values (all consumer tiles)
  uint32_t count = 1;   // most values one consumer tile needs, in units of stride
  bool whole = false;   // stride 1 and count covers the whole dimension
  DimGroup group() const { return varies ? DimGroup{stride, whole ? 0u : count} : DimGroup{}; }
};

struct CompiledDep;  // the evaluator of one dependency (internal)

struct StageInfo {
  std::string name;
  Grid grid;
  uint32_t occupancy = 1;
  double tile_time = 1.0;
  uint32_t block_count = 0;
  std::optional<GroupPolicy> policy_override;  // from the spec's `policy` setting
  int line = 0;
};

struct DepInfo {
  int consumer = -1, producer = -1;  // stage indices
  std::string text;                  // "g2(x, y) <- g1(i, y) for i in 0..g1.x"
  int line = 0;
  DimSpread spread[3];               // per producer dimension
  std::vector<Candidate> candidates; // cross product over dimensions of {per tile, per group}
  uint64_t total_reads = 0;          // producer tiles read over all consumer tiles
  uint32_t max_reads = 0;            // most producer tiles one consumer tile reads
  std::shared_ptr<const CompiledDep> fn;
  std::string label() const;         // "dep #i 'text' (line n)"
};

struct Analysis {
  Spec spec;  // the spec analyzed (parameter overrides applied)
  std::string spec_name;
  std::vector<std::pair<std::string, int64_t>> params;  // evaluated, declaration order
  std::vector<StageInfo> stages;                          // launch order
  std::vector<DepInfo> deps;
  // Per stage: the candidate output policies (empty for a stage nobody depends on). Per dimension
  // the union over the stage's consumer dependencies of {per tile, per group}, crossed over the
  // dimensions; TileSync is always first.
  std::vector<std::vector<Candidate>> candidates;
  // Per stage: the generated tile order (table[i] = row-major linear index of the i-th tile).
  std::vector<std::vector<uint32_t>> orders;
  std::vector<std::string> order_notes;  // per stage: how its order was built (one line)
  // Consumer tiles that depend on nothing (not an error).
  std::vector<std::string> warnings;

  int find(const std::string& stage) const;  // -1 when absent
  // Producer tiles consumer tile `c` of dependency `dep` reads, in ForAll order.
  void reads(int dep, Tile c, std::vector<Tile>& out) const;
};

// Evaluates the spec (parameters, grids, settings), checks every dependency for every consumer
// tile, and computes candidates and orders. Throws braid::PlanError naming the parameter / grid /
// dependency / consumer tile / producer tile at fault.
Analysis analyze(const Spec& spec);

struct PlanOptions {
  // Producer grid -> chosen candidate, by name ("RowSync"), identifier ("Strided_s12_n3") or index
  // ("1"). Unlisted producers use the spec's `policy` setting, else candidate 0 (TileSync).
  // Stages that nobody depends on get NoSync (they never post).
  std::map<std::string, std::string> policy;
  bool generated_orders = true;  // Table orders from Analysis::orders; false: row-major
  bool dynamic_order = true;     // tiles handed out by an atomic ticket
};

// The policy a producer gets under `opt` (throws PlanError for an unknown candidate).
Candidate chosen_policy(const Analysis& a, int stage, const PlanOptions& opt);

braid::Plan to_plan(const Analysis& a, const PlanOptions& opt = {});
braid::Plan to_plan(const Spec& spec, const PlanOptions& opt = {});

struct GenOptions {
  PlanOptions plan;
  uint32_t sms = 132;  // for the W/T advice
};

// A self-contained C++ header (needs braid's include/ on the include path): per grid its extent,
// order table and settings; per producer its candidate policies; per dependency a host/device
// function enumerating the producer tiles; the W/T advice. Deterministic.
std::string emit_header(const Analysis& a, const GenOptions& opt = {});
std::string emit_header(const Spec& spec, const GenOptions& opt = {});

// Human-readable report: grids, tiles, waves, dependencies with candidates, W/T advice, warnings.
std::string summary(const Analysis& a, const GenOptions& opt = {});

}  // namespace braid::gen
