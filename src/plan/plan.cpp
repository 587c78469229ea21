#include "braid/plan/plan.hpp"

#include <algorithm>
#include <set>
#include <sstream>

namespace braid {

const char* ordering_name(Ordering o) {
  switch (o) {
    case Ordering::StreamOrder: return "stream";
    case Ordering::PDL: return "pdl";
    case Ordering::WaitKernel: return "wait-kernel";
    case Ordering::None: return "none";
  }
  return "?";
}

Ordering parse_ordering(const std::string& s) {
  for (Ordering o : {Ordering::StreamOrder, Ordering::PDL, Ordering::WaitKernel, Ordering::None})
    if (s == ordering_name(o)) return o;
  throw PlanError("unknown ordering '" + s + "' (expected stream, pdl, wait-kernel or none)");
}

static std::string str(Tile t) {
  std::ostringstream o;
  o << "(" << t.x << "," << t.y << "," << t.z << ")";
  return o.str();
}

int Plan::find(const std::string& n) const {
  for (size_t i = 0; i < stages.size(); ++i)
    if (stages[i].name == n) return int(i);
  return -1;
}

int Plan::add_stage(StageSpec s) {
  stages.push_back(std::move(s));
  return int(stages.size()) - 1;
}

void Plan::add_dep(int consumer, int producer, TileListFn reads, TileListFn waits) {
  deps.push_back(Dependency{consumer, producer, std::move(reads), std::move(waits)});
}

std::vector<int> Plan::producers_of(int stage) const {
  std::vector<int> r;
  for (const auto& d : deps)
    if (d.consumer == stage && std::find(r.begin(), r.end(), d.producer) == r.end()) r.push_back(d.producer);
  return r;
}

void Plan::validate() const {
  BRAID_REQUIRE(!stages.empty(), "plan '" + name + "' has no stages");
  std::set<std::string> names;
  for (const auto& s : stages) {
    BRAID_REQUIRE(!s.name.empty(), "a stage has no name");
    BRAID_REQUIRE(names.insert(s.name).second, "duplicate stage name '" + s.name + "'");
    BRAID_REQUIRE(s.grid.x > 0 && s.grid.y > 0 && s.grid.z > 0,
                  "stage '" + s.name + "' has an empty grid " + str(s.grid) + ": every dimension must be >= 1");
    BRAID_REQUIRE(num_tiles(s.grid) < (uint64_t(1) << 31), "stage '" + s.name + "' has too many tiles");
    BRAID_REQUIRE(s.occupancy >= 1, "stage '" + s.name + "' has occupancy 0");
    BRAID_REQUIRE(s.tile_time >= 0, "stage '" + s.name + "' has a negative tile time");
    for (int d = 0; d < 3; ++d)
      BRAID_REQUIRE(s.policy.dim[d].stride >= 1, "stage '" + s.name + "' policy has stride 0");
    if (s.order.kind == OrderKind::Table) {
      BRAID_REQUIRE(s.order_table.size() == s.tiles(),
                    "stage '" + s.name + "': order table has " + std::to_string(s.order_table.size()) +
                        " entries for " + std::to_string(s.tiles()) + " tiles");
      std::vector<char> seen(s.tiles(), 0);
      for (size_t i = 0; i < s.order_table.size(); ++i) {
        uint32_t v = s.order_table[i];
        BRAID_REQUIRE(v < s.tiles(), "stage '" + s.name + "': order table entry " + std::to_string(i) + " = " +
                                         std::to_string(v) + " is not a tile index");
        BRAID_REQUIRE(!seen[v], "stage '" + s.name + "': order table is not a bijection (tile " +
                                    std::to_string(v) + " appears twice)");
        seen[v] = 1;
      }
    }
    // Policy self-consistency: every tile maps to a semaphore in range, and value(t) equals the
    // number of tiles mapped to that semaphore (so a wait for value(t) means "all of them").
    if (s.policy.enabled()) {
      const uint32_t n = s.policy.num_sems(s.grid);
      std::vector<uint32_t> count(n, 0);
      for (uint32_t i = 0; i < s.tiles(); ++i) {
        Tile t = delinear(i, s.grid);
        uint32_t k = s.policy.sem(t, s.grid);
        BRAID_REQUIRE(k < n, "stage '" + s.name + "': policy " + describe(s.policy) + " maps tile " + str(t) +
                                 " to semaphore " + std::to_string(k) + " of only " + std::to_string(n));
        ++count[k];
      }
      for (uint32_t i = 0; i < s.tiles(); ++i) {
        Tile t = delinear(i, s.grid);
        BRAID_REQUIRE(count[s.policy.sem(t, s.grid)] == s.policy.value(t, s.grid),
                      "stage '" + s.name + "': policy " + describe(s.policy) + " gives tile " + str(t) +
                          " value " + std::to_string(s.policy.value(t, s.grid)) + " but its semaphore has " +
                          std::to_string(count[s.policy.sem(t, s.grid)]) + " tiles");
      }
    }
  }
  std::vector<Tile> reads, waits;
  for (const auto& d : deps) {
    BRAID_REQUIRE(d.consumer >= 0 && d.consumer < int(stages.size()) && d.producer >= 0 &&
                      d.producer < int(stages.size()),
                  "a dependency names a stage that does not exist");
    const auto& c = stages[d.consumer];
    const auto& p = stages[d.producer];
    const std::string dn = "dependency " + c.name + " <- " + p.name;
    BRAID_REQUIRE(d.producer < d.consumer, dn + ": the producer must be launched before the consumer "
                                                "(stages are listed in launch order; cycles are not allowed)");
    BRAID_REQUIRE(p.policy.enabled(), dn + ": producer '" + p.name + "' has policy NoSync, so it never posts");
    BRAID_REQUIRE(bool(d.reads), dn + ": no read function");
    for (uint32_t i = 0; i < c.tiles(); ++i) {
      Tile ct = delinear(i, c.grid);
      reads.clear();
      waits.clear();
      d.reads(ct, reads);
      if (d.waits) d.waits(ct, waits); else waits = reads;
      std::set<uint32_t> waited;
      for (Tile w : waits) {
        BRAID_REQUIRE(contains(p.grid, w), dn + ": consumer tile " + str(ct) + " waits on producer tile " +
                                               str(w) + ", outside the producer grid " + str(p.grid));
        waited.insert(p.policy.sem(w, p.grid));
      }
      for (Tile r : reads) {
        BRAID_REQUIRE(contains(p.grid, r), dn + ": consumer tile " + str(ct) + " reads producer tile " + str(r) +
                                               ", outside the producer grid " + str(p.grid));
        uint32_t k = p.policy.sem(r, p.grid);
        if (!waited.count(k)) {
          std::ostringstream o;
          o << dn << ": consumer tile " << str(ct) << " reads producer tile " << str(r) << " (semaphore " << k
            << " under " << describe(p.policy) << ") but waits only on semaphores {";
          bool first = true;
          for (uint32_t w : waited) { o << (first ? "" : ",") << w; first = false; }
          o << "}: the policy does not cover this dependency";
          throw PlanError(o.str());
        }
      }
    }
  }
}

double waves(const StageSpec& s, uint32_t sms) {
  return double(s.blocks()) / double(uint64_t(sms) * s.occupancy);
}

OptimizationAdvice advise(const Plan& plan, uint32_t sms) {
  OptimizationAdvice a;
  // W: without stage ordering, consumer blocks may be dispatched before producer blocks and spin.
  // That deadlocks only if spinning consumers can leave no SM with room for a producer block. Work in
  // capacity units (L = lcm of occupancies; a block of stage s takes L / occupancy_s). An SM can no
  // longer host the largest producer block once more than L - L/occ_p units are used; with consumer
  // blocks of at least u units that takes b = floor((L - L/occ_p) / u) + 1 of them. So C spinning
  // consumer blocks can block at most floor(C / b_min) SMs, and W is safe when that is < sms.
  // (With one occupancy everywhere this is "consumer blocks < one wave".) Mixed occupancies matter:
  // a 2-per-SM consumer spread one block per SM blocks every SM for a 1-per-SM producer.
  auto gcd = [](uint64_t x, uint64_t y) { while (y) { uint64_t t = x % y; x = y; y = t; } return x; };
  uint64_t L = 1;
  for (const auto& s : plan.stages) L = L / gcd(L, s.occupancy) * s.occupancy;
  std::vector<char> is_consumer(plan.stages.size(), 0), is_producer(plan.stages.size(), 0);
  for (const auto& d : plan.deps) {
    if (d.consumer >= 0 && d.consumer < int(plan.stages.size())) is_consumer[d.consumer] = 1;
    if (d.producer >= 0 && d.producer < int(plan.stages.size())) is_producer[d.producer] = 1;
  }
  uint64_t producer_units = 0, consumer_blocks = 0, b_min = ~uint64_t(0);
  double all_waves = 0;
  for (size_t i = 0; i < plan.stages.size(); ++i) {
    const auto& s = plan.stages[i];
    all_waves += waves(s, sms);
    if (is_producer[i]) producer_units = std::max<uint64_t>(producer_units, L / s.occupancy);
  }
  for (size_t i = 0; i < plan.stages.size(); ++i) {
    if (!is_consumer[i]) continue;
    const auto& s = plan.stages[i];
    consumer_blocks += s.blocks();
    const uint64_t u = L / s.occupancy;
    b_min = std::min<uint64_t>(b_min, (L - producer_units) / u + 1);
  }
  const uint64_t blockable = consumer_blocks ? consumer_blocks / b_min : 0;
  a.W = blockable < sms;
  a.T = all_waves <= 2.0;
  std::ostringstream o;
  o << consumer_blocks << " consumer blocks can make " << blockable << " of " << sms
    << " SMs unable to host a producer block (W needs fewer than all); all stages take " << all_waves
    << " waves (T needs <= 2)";
  a.why = o.str();
  return a;
}

}  // namespace braid
