// Simulator property tests: random chains of 2-3 stages with random grids, dependency shapes, tile
// orders, persistent/dynamic blocks and every applicable policy. Correct policies never race; the
// orderings that promise progress never deadlock; in-order dispatch does not depend on the seed.
#include <gtest/gtest.h>

#include <numeric>
#include <sstream>

#include "sim/simulator.hpp"

using namespace braid;
using namespace braid::sim;

namespace {

struct Rng {
  uint64_t s;
  uint32_t operator()(uint32_t n) {  // uniform-ish in [0, n)
    s += 0x9e3779b97f4a7c15ull;
    uint64_t x = s;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return uint32_t((x ^ (x >> 31)) % n);
  }
};

enum Shape { FullRow, Single, Column, Strided, Window3, kNumShapes };
const char* shape_name(int s) {
  const char* n[] = {"full-row", "single", "column", "strided", "window3"};
  return n[s];
}

struct DepShape {
  int shape = Single;
  Grid cons;
  TileListFn reads;
  uint32_t stride = 0, n = 0;
};

DepShape make_shape(Rng& r, Grid P, int shape) {
  DepShape d;
  d.shape = shape;
  if (shape == Strided) {  // needs P.x = stride * n with n >= 2
    uint32_t n = 0;
    for (uint32_t c : {2u, 3u, 4u})
      if (P.x % c == 0 && P.x / c >= 1 && (n == 0 || r(2))) n = c;
    if (!n) d.shape = shape = Single;
    else d.n = n, d.stride = P.x / n;
  }
  switch (shape) {
    case FullRow:
      d.cons = {1 + r(20), P.y, 1};
      d.reads = [P](Tile c, std::vector<Tile>& o) {
        for (uint32_t k = 0; k < P.x; ++k) o.push_back({k, c.y, 0});
      };
      break;
    case Column:
      d.cons = {P.x, 1 + r(20), 1};
      d.reads = [P](Tile c, std::vector<Tile>& o) {
        for (uint32_t k = 0; k < P.y; ++k) o.push_back({c.x, k, 0});
      };
      break;
    case Strided: {
      d.cons = {d.stride, P.y, 1};
      const uint32_t s = d.stride, n = d.n;
      d.reads = [s, n](Tile c, std::vector<Tile>& o) {
        for (uint32_t j = 0; j < n; ++j) o.push_back({c.x + j * s, c.y, 0});
      };
      break;
    }
    case Window3:
      d.cons = {1 + r(20), P.y, 1};
      d.reads = [P](Tile c, std::vector<Tile>& o) {
        for (uint32_t y = c.y ? c.y - 1 : 0; y <= c.y + 1 && y < P.y; ++y)
          for (uint32_t k = 0; k < P.x; ++k) o.push_back({k, y, 0});
      };
      break;
    default:
      d.cons = P;
      d.reads = [](Tile c, std::vector<Tile>& o) { o.push_back(c); };
  }
  return d;
}

// Policies that can serve a producer of grid P (all are correct: consumers wait on every semaphore
// they read, for the whole group).
std::vector<GroupPolicy> policies_for(Grid P, const DepShape& d, Rng& r) {
  std::vector<GroupPolicy> v{TileSync(), RowSync()};
  if (d.shape == Strided) v.push_back(StridedSync(d.stride, d.n));
  else if (P.x >= 4) v.push_back(StridedSync(1 + r(P.x / 2), 2));
  if (P.x >= 2) v.push_back(GenericPolicy({1, 2 + r(3)}, {}));      // group of N along x
  if (P.y >= 2) v.push_back(GenericPolicy({}, {1, 2 + r(2)}));      // group of N along y
  return v;
}

struct RandomChain {
  int stages = 2;
  Grid grid[3];
  DepShape dep[3];      // dep[i]: stage i reads stage i-1
  bool fan_in = false;  // stage 2 also reads stage 0
  uint32_t occ[3] = {1, 1, 1};
  bool uniform_occ = true;
  double time[3];
  OrderKind order[3];
  std::vector<uint32_t> table[3];
  bool dynamic[3];
  uint32_t block_count[3];
  GroupPolicy mid_policy;  // stage 1's policy when it is a producer
  std::string text;

  Plan build(GroupPolicy p0) const {
    Plan plan;
    plan.name = "random";
    for (int i = 0; i < stages; ++i) {
      StageSpec s;
      s.name = "s" + std::to_string(i);
      s.grid = grid[i];
      s.tile_time = time[i];
      s.occupancy = occ[i];
      s.order.kind = order[i];
      s.order_table = table[i];
      s.dynamic_order = dynamic[i];
      s.block_count = block_count[i];
      s.policy = i == 0 ? p0 : (i == 1 ? mid_policy : TileSync());
      plan.add_stage(s);
    }
    for (int i = 1; i < stages; ++i) plan.add_dep(i, i - 1, dep[i].reads);
    if (fan_in) {
      const Grid P = grid[0];
      plan.add_dep(2, 0, [P](Tile c, std::vector<Tile>& o) {
        o.push_back({c.x % P.x, c.y % P.y, 0});
        o.push_back({(c.x + 1) % P.x, (c.y + 1) % P.y, 0});
      });
    }
    return plan;
  }
};

RandomChain random_chain(Rng& r) {
  RandomChain c;
  c.stages = 2 + r(2);
  c.grid[0] = {1 + r(20), 1 + r(20), 1};
  std::ostringstream o;
  o << "s0 " << c.grid[0].x << "x" << c.grid[0].y;
  for (int i = 1; i < c.stages; ++i) {
    c.dep[i] = make_shape(r, c.grid[i - 1], int(r(kNumShapes)));
    c.grid[i] = c.dep[i].cons;
    o << " -" << shape_name(c.dep[i].shape) << "-> s" << i << " " << c.grid[i].x << "x" << c.grid[i].y;
  }
  c.fan_in = c.stages == 3 && r(2);
  if (c.fan_in) o << " (+ fan-in s0->s2)";
  c.uniform_occ = r(2);
  const uint32_t u = 1 + r(2);
  for (int i = 0; i < c.stages; ++i) {
    c.occ[i] = c.uniform_occ ? u : 1 + r(2);
    c.time[i] = double(1 + r(8));
    c.order[i] = OrderKind(r(3));
    const uint32_t tiles = uint32_t(num_tiles(c.grid[i]));
    if (c.order[i] == OrderKind::Table) {
      c.table[i].resize(tiles);
      std::iota(c.table[i].begin(), c.table[i].end(), 0u);
      for (uint32_t k = tiles; k > 1; --k) std::swap(c.table[i][k - 1], c.table[i][r(k)]);
    }
    c.dynamic[i] = r(2);
    c.block_count[i] = r(4) == 0 ? 1 + r(tiles) : 0;  // sometimes persistent
    o << " | s" << i << ": occ " << c.occ[i] << " t " << c.time[i] << " order " << order_kind_name(c.order[i])
      << (c.dynamic[i] ? " dynamic" : " static") << " blocks " << (c.block_count[i] ? c.block_count[i] : tiles);
  }
  c.mid_policy = r(2) ? TileSync() : RowSync();
  c.text = o.str();
  return c;
}

SimConfig config(uint32_t sms, Ordering o, Dispatch d, uint64_t seed, double jitter) {
  SimConfig c;
  c.sms = sms;
  c.ordering = o;
  c.dispatch = d;
  c.seed = seed;
  c.jitter = jitter;
  c.validate_plan = false;  // validated once per plan below
  return c;
}

}  // namespace

TEST(SimProperty, CorrectPoliciesNeverRaceAndProgressOrderingsNeverDeadlock) {
  Rng r{2024};
  int sims = 0, w_plans = 0;
  for (int iter = 0; iter < 70; ++iter) {
    const RandomChain c = random_chain(r);
    for (const GroupPolicy& pol : policies_for(c.grid[0], c.dep[1], r)) {
      const Plan p = c.build(pol);
      ASSERT_NO_THROW(p.validate()) << c.text << " policy " << describe(pol);
      const uint32_t sms = 1 + r(24);
      const double jitter = r(2) ? 0.0 : 0.3;
      const uint64_t seed = r(1000);
      const std::string what = c.text + " | policy " + describe(pol) + " | " + std::to_string(sms) + " SMs";
      struct Case { Ordering o; Dispatch d; bool needs_uniform; };
      const Case cases[] = {
          {Ordering::StreamOrder, Dispatch::InOrder, false}, {Ordering::StreamOrder, Dispatch::Adversarial, false},
          {Ordering::PDL, Dispatch::InOrder, false},         {Ordering::PDL, Dispatch::Random, false},
          {Ordering::PDL, Dispatch::Adversarial, false},     {Ordering::WaitKernel, Dispatch::InOrder, true},
          {Ordering::None, Dispatch::InOrder, true},
      };
      for (const Case& k : cases) {
        if (k.needs_uniform && !c.uniform_occ) continue;
        SimResult res = simulate(p, config(sms, k.o, k.d, seed, jitter));
        ++sims;
        ASSERT_TRUE(res.ok()) << what << " | " << ordering_name(k.o) << " " << dispatch_name(k.d) << "\n"
                              << res.error_text();
        uint32_t done = 0, total = 0;
        for (size_t s = 0; s < res.stages.size(); ++s) done += res.stages[s].tiles_done, total += p.stages[s].tiles();
        ASSERT_EQ(done, total) << what;
        ASSERT_EQ(res.trace.size(), total) << what;
        ASSERT_GT(res.makespan, 0) << what;
        ASSERT_LE(res.utilization, 1.0 + 1e-9) << what;
      }
      // In-order dispatch without jitter is deterministic and ignores the seed.
      for (Ordering o : {Ordering::PDL, Ordering::StreamOrder}) {
        SimResult a = simulate(p, config(sms, o, Dispatch::InOrder, 1, 0));
        SimResult b = simulate(p, config(sms, o, Dispatch::InOrder, 987654321, 0));
        sims += 2;
        ASSERT_EQ(a.makespan, b.makespan) << what;
        ASSERT_EQ(a.trace.size(), b.trace.size()) << what;
        for (size_t i = 0; i < a.trace.size(); ++i) {
          ASSERT_EQ(a.trace[i].tile, b.trace[i].tile) << what;
          ASSERT_EQ(a.trace[i].sm, b.trace[i].sm) << what;
          ASSERT_EQ(a.trace[i].end, b.trace[i].end) << what;
        }
        // stream order: no spinning, and stages never overlap
        if (o == Ordering::StreamOrder) {
          ASSERT_EQ(a.spin_time, 0) << what;
          for (size_t s = 1; s < a.stages.size(); ++s) ASSERT_GE(a.stages[s].first_start, a.stages[s - 1].last_end);
        }
      }
      // advise().W (consumers take under one wave): no ordering at all is safe, even consumers first.
      if (c.uniform_occ) {
        uint32_t consumer_blocks = 0;
        for (int s = 1; s < c.stages; ++s) consumer_blocks += p.stages[s].blocks();
        const uint32_t wsms = consumer_blocks / c.occ[0] + 1 + r(3);
        ASSERT_TRUE(advise(p, wsms).W) << what;
        ++w_plans;
        for (Ordering o : {Ordering::None, Ordering::WaitKernel})
          for (Dispatch d : {Dispatch::Adversarial, Dispatch::Random}) {
            SimResult res = simulate(p, config(wsms, o, d, seed, jitter));
            ++sims;
            ASSERT_TRUE(res.ok()) << what << " | W with " << wsms << " SMs, " << ordering_name(o) << " "
                                  << dispatch_name(d) << "\n" << res.error_text();
          }
      }
    }
  }
  EXPECT_GT(sims, 1000);
  EXPECT_GT(w_plans, 50);
}

// The converse: a consumer with at least a full wave of blocks, dispatched first without ordering,
// always deadlocks (every slot ends up spinning on a producer tile that cannot be placed).
TEST(SimProperty, ConsumersFirstWithAFullWaveAlwaysDeadlock) {
  Rng r{7};
  for (int iter = 0; iter < 40; ++iter) {
    const Grid P{1 + r(12), 1 + r(12), 1};
    const DepShape d = make_shape(r, P, int(r(kNumShapes)));
    Plan p;
    StageSpec a, b;
    a.name = "prod";
    a.grid = P;
    b.name = "cons";
    b.grid = d.cons;
    p.add_stage(a);
    p.add_stage(b);
    p.add_dep(1, 0, d.reads);
    const uint32_t sms = 1 + r(b.tiles());  // consumer blocks >= one full wave
    SimResult res = simulate(p, config(sms, Ordering::None, Dispatch::Adversarial, 1, 0));
    ASSERT_TRUE(res.deadlock) << shape_name(d.shape) << " " << P.x << "x" << P.y << " on " << sms << " SMs";
    EXPECT_EQ(res.deadlock_info.spinning.size(), sms);
    EXPECT_NE(res.deadlock_info.message.find("cycle"), std::string::npos);
  }
}
