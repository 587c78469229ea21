// The discrete-event schedule simulator. See simulator.hpp and docs/simulator.md.
#include "sim/simulator.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>
#include <queue>
#include <sstream>
#include <unordered_map>

namespace braid::sim {

const char* dispatch_name(Dispatch d) {
  switch (d) {
    case Dispatch::InOrder: return "inorder";
    case Dispatch::Random: return "random";
    case Dispatch::Adversarial: return "adversarial";
  }
  return "?";
}

Dispatch parse_dispatch(const std::string& s) {
  for (Dispatch d : {Dispatch::InOrder, Dispatch::Random, Dispatch::Adversarial})
    if (s == dispatch_name(d)) return d;
  throw PlanError("unknown dispatch mode '" + s + "' (expected inorder, random or adversarial)");
}

namespace {

constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();

std::string str(Tile t) {
  std::ostringstream o;
  o << "(" << t.x << "," << t.y << "," << t.z << ")";
  return o.str();
}

std::string num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

uint64_t splitmix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

struct WaitItem {
  int pstage;
  uint32_t sem, value;
  Tile wtile;
};

struct Step {
  int pstage = -1;        // -1: no read (a step that only carries waits)
  uint32_t plin = kNone;  // producer tile read (linear index)
  Tile ptile{};
  uint32_t wbegin = 0, wend = 0;  // waits to satisfy before this step
};

enum class BState : uint8_t { Pending, Resident, Done };

struct Block {
  int stage = 0;
  uint32_t index = 0;
  BState state = BState::Pending;
  uint32_t sm = 0, slot = 0, lanes = 1;
  uint64_t mask = 0;        // units held on its SM
  uint32_t k = 0;           // static schedule: tiles taken so far
  // current tile
  bool has_tile = false;
  uint32_t tile_lin = 0;
  Tile tile{};
  std::vector<Step> steps;
  std::vector<WaitItem> waits;
  uint32_t step = 0, wpos = 0;
  double step_dur = 0;
  bool spinning = false;
  double spin_from = 0;
  uint32_t spin_wait = 0;  // index into waits
  bool raced_step = false;
  TileRecord rec;
};

struct StageRt {
  uint32_t units = 1;
  uint32_t blocks = 0, tiles = 0;
  uint32_t next_pending = 0;  // blocks are placed in index order
  uint32_t started = 0, exited = 0, ticket = 0;
  std::vector<uint32_t> count;        // semaphore counts
  std::vector<char> posted;           // per tile (linear)
  std::vector<std::vector<uint32_t>> waiters;  // per semaphore: spinning block ids
  std::vector<uint32_t> pos_of;       // tile linear -> position in the stage's order (lazy)
};

struct Event {
  double time;
  uint64_t seq;
  uint32_t block;
  bool operator>(const Event& o) const { return time != o.time ? time > o.time : seq > o.seq; }
};

struct Sim {
  const Plan& plan;
  const SimConfig& cfg;
  SimResult& res;
  std::vector<StageRt> rt;
  std::vector<Block> blocks;
  std::vector<uint32_t> first_block;  // per stage
  std::vector<uint32_t> sm_free;      // free units per SM
  std::vector<uint64_t> sm_mask;      // used units per SM
  uint32_t U = 1, lane_units = 1;
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> heap;
  uint64_t seq = 0;
  uint64_t rng_state;
  std::vector<std::vector<int>> deps_of;  // consumer stage -> dependency indices
  std::vector<Tile> rbuf, wbuf;
  std::unordered_map<uint32_t, uint32_t> first_of, wat;
  std::vector<std::pair<uint32_t, WaitItem>> att;
  double now = 0;

  Sim(const Plan& p, const SimConfig& c, SimResult& r) : plan(p), cfg(c), res(r), rng_state(c.seed * 0x2545F4914F6CDD1Dull + 7) {}

  uint64_t rng() { return splitmix(rng_state++); }

  double jitter_factor(int stage, uint32_t lin) const {
    if (cfg.jitter == 0) return 1.0;
    uint64_t h = splitmix(cfg.seed ^ splitmix(uint64_t(stage) << 32 | lin));
    double u = double(h >> 11) * (1.0 / 9007199254740992.0) * 2.0 - 1.0;
    return std::max(0.0, 1.0 + cfg.jitter * u);
  }

  void push(double t, uint32_t b) { heap.push(Event{t, seq++, b}); }

  bool dispatchable(int s) const {
    if (s == 0) return true;
    const StageRt& p = rt[s - 1];
    switch (cfg.ordering) {
      case Ordering::StreamOrder: return p.exited == p.blocks;
      case Ordering::PDL: return p.started == p.blocks;
      case Ordering::WaitKernel: return p.started > 0;
      case Ordering::None: return true;
    }
    return true;
  }

  std::string why_not_dispatchable(int s) const {
    const auto& name = plan.stages[s].name;
    const auto& pname = plan.stages[s - 1].name;
    const StageRt& p = rt[s - 1];
    switch (cfg.ordering) {
      case Ordering::StreamOrder:
        return "under stream order stage '" + name + "' starts only after stage '" + pname + "' completes (" +
               std::to_string(p.exited) + " of " + std::to_string(p.blocks) + " blocks exited)";
      case Ordering::PDL:
        return "under PDL stage '" + name + "' launches only after every block of stage '" + pname + "' started (" +
               std::to_string(p.started) + " of " + std::to_string(p.blocks) + " started)";
      case Ordering::WaitKernel:
        return "under the wait kernel stage '" + name + "' is released only once a block of stage '" + pname +
               "' started (none has)";
      case Ordering::None: break;
    }
    return "";
  }

  uint32_t value_of(int pstage, Tile w) const {
    if (cfg.value_override) return cfg.value_override(pstage, w);
    const auto& p = plan.stages[pstage];
    return p.policy.value(w, p.grid);
  }

  uint32_t sem_of(int pstage, Tile t) const {
    const auto& p = plan.stages[pstage];
    return p.policy.sem(t, p.grid);
  }

  // ---- setup ----------------------------------------------------------------------------------
  void setup() {
    const size_t S = plan.stages.size();
    uint32_t maxocc = 1;
    for (const auto& s : plan.stages) {
      BRAID_REQUIRE(s.occupancy >= 1 && s.occupancy <= 64, "stage '" + s.name + "': occupancy must be 1..64");
      U = std::lcm(U, s.occupancy);
      BRAID_REQUIRE(U <= 64, "simulator: the least common multiple of the stages' occupancies exceeds 64");
      maxocc = std::max(maxocc, s.occupancy);
    }
    lane_units = U / maxocc;
    res.lanes_per_sm = maxocc;
    sm_free.assign(cfg.sms, U);
    sm_mask.assign(cfg.sms, 0);
    rt.resize(S);
    deps_of.resize(S);
    for (size_t d = 0; d < plan.deps.size(); ++d) deps_of[plan.deps[d].consumer].push_back(int(d));
    res.stages.resize(S);
    for (size_t i = 0; i < S; ++i) {
      const auto& s = plan.stages[i];
      auto& r = rt[i];
      r.units = U / s.occupancy;
      r.blocks = s.blocks();
      r.tiles = s.tiles();
      r.posted.assign(r.tiles, 0);
      if (s.policy.enabled()) {
        r.count.assign(s.policy.num_sems(s.grid), 0);
        r.waiters.resize(r.count.size());
      }
      first_block.push_back(uint32_t(blocks.size()));
      for (uint32_t b = 0; b < r.blocks; ++b) {
        Block blk;
        blk.stage = int(i);
        blk.index = b;
        blocks.push_back(std::move(blk));
      }
      auto& st = res.stages[i];
      st.name = s.name;
      st.tiles = r.tiles;
      st.blocks = r.blocks;
      st.waves = waves(s, cfg.sms);
    }
  }

  // ---- dispatch -------------------------------------------------------------------------------
  int pick_sm(uint32_t need) const {
    int best = -1;
    for (uint32_t m = 0; m < cfg.sms; ++m) {
      if (sm_free[m] < need) continue;
      if (cfg.placement == Placement::LowestIndex) return int(m);
      if (best < 0 || sm_free[m] > sm_free[best]) best = int(m);
    }
    return best;
  }

  uint64_t alloc_units(uint32_t m, uint32_t need) {
    const uint64_t used = sm_mask[m];
    const uint64_t run = need >= 64 ? ~0ull : ((1ull << need) - 1);
    for (uint32_t p = 0; p + need <= U; p += need)  // an aligned contiguous run if there is one
      if (!(used & (run << p))) return run << p;
    uint64_t m2 = 0;
    for (uint32_t b = 0, got = 0; b < U && got < need; ++b)
      if (!(used & (1ull << b))) m2 |= 1ull << b, ++got;
    return m2;
  }

  void dispatch() {
    for (;;) {
      uint32_t maxfree = 0;
      for (uint32_t f : sm_free) maxfree = std::max(maxfree, f);
      std::vector<int> cand;
      for (size_t s = 0; s < rt.size(); ++s)
        if (rt[s].next_pending < rt[s].blocks && rt[s].units <= maxfree && dispatchable(int(s)))
          cand.push_back(int(s));
      if (cand.empty()) return;
      int s;
      switch (cfg.dispatch) {
        case Dispatch::InOrder: s = cand.front(); break;
        case Dispatch::Adversarial: s = cand.back(); break;
        default: s = cand[rng() % cand.size()]; break;
      }
      StageRt& r = rt[s];
      const uint32_t bid = first_block[s] + r.next_pending++;
      Block& b = blocks[bid];
      const int m = pick_sm(r.units);
      b.sm = uint32_t(m);
      b.mask = alloc_units(b.sm, r.units);
      sm_mask[m] |= b.mask;
      sm_free[m] -= r.units;
      b.slot = uint32_t(__builtin_ctzll(b.mask)) / lane_units;
      b.lanes = std::max<uint32_t>(1, r.units / lane_units);
      b.state = BState::Resident;
      ++r.started;
      auto& st = res.stages[s];
      if (st.first_start < 0) st.first_start = now;
      take_tile(bid);
    }
  }

  // ---- blocks ---------------------------------------------------------------------------------
  void exit_block(uint32_t bid) {
    Block& b = blocks[bid];
    b.state = BState::Done;
    b.has_tile = false;
    sm_mask[b.sm] &= ~b.mask;
    sm_free[b.sm] += rt[b.stage].units;
    ++rt[b.stage].exited;
  }

  void build_steps(Block& b) {
    b.steps.clear();
    b.waits.clear();
    att.clear();  // (step index, wait)
    const bool sync = cfg.ordering != Ordering::StreamOrder;
    for (int di : deps_of[b.stage]) {
      const Dependency& d = plan.deps[di];
      rbuf.clear();
      wbuf.clear();
      d.reads(b.tile, rbuf);
      const uint32_t first = uint32_t(b.steps.size());
      for (Tile r : rbuf) {
        Step s;
        s.pstage = d.producer;
        s.ptile = r;
        s.plin = linear(r, plan.stages[d.producer].grid);
        b.steps.push_back(s);
      }
      if (!sync) continue;
      if (d.waits) d.waits(b.tile, wbuf); else wbuf = rbuf;
      if (wbuf.empty()) continue;
      if (b.steps.size() == first) b.steps.push_back(Step{});  // waits but no reads: a step that only waits
      // first read step of each semaphore of this dependency
      first_of.clear();
      for (uint32_t i = first; i < b.steps.size(); ++i)
        if (b.steps[i].pstage >= 0) first_of.emplace(sem_of(d.producer, b.steps[i].ptile), i);
      wat.clear();
      for (Tile w : wbuf) {
        WaitItem wi{d.producer, sem_of(d.producer, w), value_of(d.producer, w), w};
        auto [it, fresh] = wat.emplace(wi.sem, uint32_t(att.size()));
        if (!fresh) {  // the same semaphore again: one wait, for the largest value
          att[it->second].second.value = std::max(att[it->second].second.value, wi.value);
          continue;
        }
        // before the first read of a tile of this semaphore, else before the dependency's first step
        auto f = first_of.find(wi.sem);
        att.emplace_back(f == first_of.end() ? first : f->second, wi);
      }
    }
    if (b.steps.empty()) b.steps.push_back(Step{});
    std::stable_sort(att.begin(), att.end(), [](const auto& a, const auto& c) { return a.first < c.first; });
    size_t j = 0;
    for (uint32_t i = 0; i < b.steps.size(); ++i) {
      b.steps[i].wbegin = uint32_t(b.waits.size());
      while (j < att.size() && att[j].first == i) b.waits.push_back(att[j++].second);
      b.steps[i].wend = uint32_t(b.waits.size());
    }
  }

  void take_tile(uint32_t bid) {
    Block& b = blocks[bid];
    const auto& spec = plan.stages[b.stage];
    StageRt& r = rt[b.stage];
    uint32_t i;
    if (spec.dynamic_order) {
      i = r.ticket < r.tiles ? r.ticket++ : kNone;
    } else {
      const uint64_t v = uint64_t(b.index) + uint64_t(b.k) * r.blocks;
      i = v < r.tiles ? uint32_t(v) : kNone;
      ++b.k;
    }
    if (i == kNone) return exit_block(bid);
    b.has_tile = true;
    b.tile = spec.tile_at(i);
    b.tile_lin = linear(b.tile, spec.grid);
    build_steps(b);
    b.step = 0;
    b.wpos = b.steps[0].wbegin;
    b.raced_step = false;
    b.step_dur = spec.tile_time * jitter_factor(b.stage, b.tile_lin) / double(b.steps.size());
    b.rec = TileRecord{};
    b.rec.stage = b.stage;
    b.rec.tile = b.tile;
    b.rec.block = b.index;
    b.rec.sm = b.sm;
    b.rec.slot = b.slot;
    b.rec.lanes = b.lanes;
    b.rec.dispatch = now;
    b.rec.start = -1;
    advance(bid);
  }

  bool wait_ok(const WaitItem& w) const { return rt[w.pstage].count[w.sem] >= w.value; }

  bool step_ready(const Block& b, uint32_t i) const {
    const Step& s = b.steps[i];
    for (uint32_t w = s.wbegin; w < s.wend; ++w)
      if (!wait_ok(b.waits[w])) return false;
    return s.pstage < 0 || rt[s.pstage].posted[s.plin];
  }

  void report_race(const Block& b, const Step& s) {
    ++res.race_count;
    if (res.races.size() >= cfg.max_races) return;
    RaceReport rr;
    rr.consumer_stage = b.stage;
    rr.consumer_tile = b.tile;
    rr.producer_stage = s.pstage;
    rr.producer_tile = s.ptile;
    const auto& ps = plan.stages[s.pstage];
    const bool has_sem = ps.policy.enabled();
    rr.sem = has_sem ? sem_of(s.pstage, s.ptile) : 0;
    rr.seen = has_sem ? rt[s.pstage].count[rr.sem] : 0;
    rr.needed = has_sem ? ps.policy.value(s.ptile, ps.grid) : 0;
    rr.time = now;
    for (const auto& w : b.waits)
      if (w.pstage == s.pstage && w.sem == rr.sem) rr.value = std::max(rr.value, w.value);
    std::ostringstream o;
    o << "race at t=" << num(now) << ": stage '" << plan.stages[b.stage].name << "' tile " << str(b.tile)
      << " reads stage '" << ps.name << "' tile " << str(s.ptile) << ", which has not posted yet; ";
    if (cfg.ordering == Ordering::StreamOrder)
      o << "stream order should have finished it first";
    else if (rr.value)
      o << "its wait on semaphore " << rr.sem << " was satisfied at value " << rr.value << " (seen " << rr.seen
        << ") but " << rr.needed << " tiles post to that semaphore: the policy/value misses this dependency";
    else
      o << "it never waited on semaphore " << rr.sem << " (seen " << rr.seen << " of " << rr.needed
        << "): the waits do not cover this read";
    rr.message = o.str();
    res.races.push_back(std::move(rr));
  }

  void advance(uint32_t bid) {
    Block& b = blocks[bid];
    auto& st = res.stages[b.stage];
    const uint32_t n = uint32_t(b.steps.size());
    if (b.step == n) return complete_tile(bid);
    const Step& s = b.steps[b.step];
    for (; b.wpos < s.wend; ++b.wpos) {
      const WaitItem& w = b.waits[b.wpos];
      if (!wait_ok(w)) {
        b.spinning = true;
        b.spin_from = now;
        b.spin_wait = b.wpos;
        rt[w.pstage].waiters[w.sem].push_back(bid);
        return;
      }
    }
    if (cfg.check_reads && s.pstage >= 0 && !rt[s.pstage].posted[s.plin]) report_race(b, s);
    uint32_t j = b.step + 1;
    while (j < n && step_ready(b, j)) ++j;
    if (b.rec.start < 0) b.rec.start = now;
    const double d = b.step_dur * double(j - b.step);
    st.compute += d;
    b.step = j;
    b.wpos = j < n ? b.steps[j].wbegin : 0;
    push(now + d, bid);
  }

  void resume(uint32_t bid) {
    Block& b = blocks[bid];
    b.spinning = false;
    const double sp = now - b.spin_from;
    b.rec.spin += sp;
    if (sp > 0) b.rec.spins.emplace_back(b.spin_from, now);
    res.stages[b.stage].spin += sp;
    res.spin_time += sp;
    advance(bid);
  }

  void complete_tile(uint32_t bid) {
    Block& b = blocks[bid];
    const auto& spec = plan.stages[b.stage];
    StageRt& r = rt[b.stage];
    r.posted[b.tile_lin] = 1;
    if (spec.policy.enabled()) {
      const uint32_t k = spec.policy.sem(b.tile, spec.grid);
      const uint32_t c = ++r.count[k];
      auto& wl = r.waiters[k];
      size_t keep = 0;
      for (size_t i = 0; i < wl.size(); ++i) {
        const Block& w = blocks[wl[i]];
        if (c >= w.waits[w.spin_wait].value) push(now, wl[i]);
        else wl[keep++] = wl[i];
      }
      wl.resize(keep);
    }
    auto& st = res.stages[b.stage];
    ++st.tiles_done;
    st.last_end = std::max(st.last_end, now);
    b.rec.end = now;
    if (b.rec.start < 0) b.rec.start = now;
    if (cfg.record_trace) res.trace.push_back(std::move(b.rec));
    b.has_tile = false;
    take_tile(bid);
  }

  void handle(uint32_t bid) {
    Block& b = blocks[bid];
    if (b.spinning) resume(bid); else advance(bid);
  }

  // ---- deadlock report ------------------------------------------------------------------------
  uint32_t position_of(int s, uint32_t lin) {
    StageRt& r = rt[s];
    if (r.pos_of.empty()) {
      r.pos_of.assign(r.tiles, 0);
      const auto& spec = plan.stages[s];
      for (uint32_t i = 0; i < r.tiles; ++i) r.pos_of[linear(spec.tile_at(i), spec.grid)] = i;
    }
    return r.pos_of[lin];
  }

  std::string where(const Block& b) const {
    return "SM " + std::to_string(b.sm) + " slot " + std::to_string(b.slot);
  }

  std::string wait_text(const Block& b) const {
    const WaitItem& w = b.waits[b.spin_wait];
    return "semaphore " + std::to_string(w.sem) + " of stage '" + plan.stages[w.pstage].name + "' (at " +
           std::to_string(rt[w.pstage].count[w.sem]) + ", needs " + std::to_string(w.value) + ")";
  }

  // Why producer tile `lin` of stage `s` has not posted.
  std::string why_not_posted(int s, uint32_t lin) {
    const auto& spec = plan.stages[s];
    const StageRt& r = rt[s];
    for (const Block& b : blocks)
      if (b.stage == s && b.state == BState::Resident && b.has_tile && b.tile_lin == lin)
        return b.spinning ? "running on " + where(b) + " but itself spinning on " + wait_text(b)
                          : "running on " + where(b);
    const Block* owner = nullptr;
    if (!spec.dynamic_order) {
      owner = &blocks[first_block[s] + position_of(s, lin) % r.blocks];
      if (owner->state == BState::Resident) {
        const Block& o = *owner;
        return "its persistent block " + std::to_string(o.index) + " on " + where(o) + " must first finish tile " +
               str(o.tile) + (o.spinning ? ", which is spinning on " + wait_text(o) : "");
      }
    } else if (r.next_pending == r.blocks) {
      return "not handed out yet: every block of stage '" + spec.name + "' is resident and busy";
    }
    // its block (or any block, for a dynamic order) has not been placed
    if (!dispatchable(s)) return "its block was never placed: " + why_not_dispatchable(s);
    return "its block was never placed: stage '" + spec.name + "' may dispatch, but no SM has room for a block "
           "of it (it needs 1/" + std::to_string(spec.occupancy) + " of an SM; the slots are held by the blocks above)";
  }

  void deadlock_report() {
    res.deadlock = true;
    DeadlockReport& d = res.deadlock_info;
    d.time = now;
    std::vector<uint32_t> per_stage_spin(rt.size(), 0), per_stage_res(rt.size(), 0);
    for (const Block& b : blocks) {
      if (b.state == BState::Pending) ++d.pending_blocks;
      if (b.state == BState::Resident) ++per_stage_res[b.stage];
      if (b.state != BState::Resident || !b.spinning) continue;
      ++per_stage_spin[b.stage];
      const WaitItem& w = b.waits[b.spin_wait];
      SpinningBlock sb;
      sb.stage = b.stage;
      sb.tile = b.tile;
      sb.block = b.index;
      sb.sm = b.sm;
      sb.slot = b.slot;
      sb.producer_stage = w.pstage;
      sb.sem = w.sem;
      sb.count = rt[w.pstage].count[w.sem];
      sb.value = w.value;
      const auto& ps = plan.stages[w.pstage];
      for (uint32_t i = 0; i < rt[w.pstage].tiles; ++i) {
        Tile t = delinear(i, ps.grid);
        if (ps.policy.sem(t, ps.grid) == w.sem && !rt[w.pstage].posted[i]) sb.missing.push_back(t);
      }
      d.spinning.push_back(std::move(sb));
    }
    uint32_t free_units = 0, full_sms = 0;
    for (uint32_t f : sm_free) free_units += f, full_sms += (f == 0);
    std::ostringstream o;
    o << "deadlock at t=" << num(now) << " under " << ordering_name(cfg.ordering) << " ordering, "
      << dispatch_name(cfg.dispatch) << " dispatch: " << d.spinning.size() << " resident blocks spin and "
      << d.pending_blocks << " blocks were never placed; no event can fire.\n";
    if (d.spinning.empty()) {
      o << "  (no block spins: a stage can never be dispatched)\n";
      res.deadlock_info.message = o.str();
      return;
    }
    // Summary of the cycle.
    o << "cycle:\n  1. spinning blocks hold slots:";
    bool first = true;
    for (size_t s = 0; s < rt.size(); ++s)
      if (per_stage_spin[s])
        o << (first ? " " : ", ") << per_stage_spin[s] << " of stage '" << plan.stages[s].name << "'", first = false;
    o << " (" << full_sms << " of " << cfg.sms << " SMs full, " << free_units << "/" << U
      << "-SM units free)\n";
    // The producer tiles they need, and why those cannot run.
    std::vector<std::pair<int, uint32_t>> shown;
    o << "  2. the producer tiles they wait for cannot run:\n";
    size_t lines = 0;
    for (const auto& sb : d.spinning) {
      if (sb.missing.empty()) {
        const std::string key = "v" + std::to_string(sb.producer_stage) + ":" + std::to_string(sb.sem);
        if (lines < 6) {
          o << "     semaphore " << sb.sem << " of stage '" << plan.stages[sb.producer_stage].name
            << "' has all its tiles posted (" << sb.count << ") but stage '" << plan.stages[sb.stage].name
            << "' tile " << str(sb.tile) << " waits for " << sb.value << ": that value can never be reached\n";
          ++lines;
        }
        continue;
      }
      const Tile t = sb.missing.front();
      const uint32_t lin = linear(t, plan.stages[sb.producer_stage].grid);
      if (std::find(shown.begin(), shown.end(), std::make_pair(sb.producer_stage, lin)) != shown.end()) continue;
      shown.emplace_back(sb.producer_stage, lin);
      if (lines < 6) {
        o << "     stage '" << plan.stages[sb.producer_stage].name << "' tile " << str(t) << " (needed by '"
          << plan.stages[sb.stage].name << "' tile " << str(sb.tile) << " on SM " << sb.sm << " via semaphore "
          << sb.sem << ", at " << sb.count << " of " << sb.value << "): " << why_not_posted(sb.producer_stage, lin)
          << "\n";
      }
      ++lines;
    }
    if (lines > 6) o << "     ... and " << (lines - 6) << " more\n";
    o << "  3. a slot frees only when a spinning block finishes its tile, which needs those producer tiles: "
         "no progress is possible.\n";
    o << "spinning blocks (" << std::min<size_t>(d.spinning.size(), 8) << " of " << d.spinning.size() << "):\n";
    for (size_t i = 0; i < d.spinning.size() && i < 8; ++i) {
      const auto& sb = d.spinning[i];
      o << "  stage '" << plan.stages[sb.stage].name << "' tile " << str(sb.tile) << " block " << sb.block << " on SM "
        << sb.sm << " slot " << sb.slot << " spins on semaphore " << sb.sem << " of stage '"
        << plan.stages[sb.producer_stage].name << "' (" << sb.count << " of " << sb.value << "); missing tiles:";
      for (size_t k = 0; k < sb.missing.size() && k < 4; ++k) o << " " << str(sb.missing[k]);
      if (sb.missing.size() > 4) o << " ... (" << sb.missing.size() << ")";
      o << "\n";
    }
    d.message = o.str();
  }

  // ---- run ------------------------------------------------------------------------------------
  void run() {
    setup();
    dispatch();
    while (!heap.empty()) {
      now = heap.top().time;
      while (!heap.empty() && heap.top().time == now) {
        const uint32_t bid = heap.top().block;
        heap.pop();
        ++res.events;
        handle(bid);
      }
      dispatch();
    }
    bool all_done = true;
    for (const Block& b : blocks) all_done &= b.state == BState::Done;
    if (!all_done) deadlock_report();
    double ms = 0, comp = 0, spin = 0;
    for (size_t s = 0; s < rt.size(); ++s) {
      ms = std::max(ms, res.stages[s].last_end);
      comp += res.stages[s].compute / plan.stages[s].occupancy;
      spin += res.stages[s].spin / plan.stages[s].occupancy;
    }
    if (res.deadlock) {
      ms = std::max(ms, now);
      // account the spin of blocks still spinning up to the deadlock
      for (const Block& b : blocks)
        if (b.state == BState::Resident && b.spinning) spin += (now - b.spin_from) / plan.stages[b.stage].occupancy;
    }
    res.makespan = ms;
    if (ms > 0) {
      res.utilization = comp / (double(cfg.sms) * ms);
      res.spin_fraction = spin / (double(cfg.sms) * ms);
    }
  }
};

}  // namespace

std::string SimResult::error_text() const {
  std::string s;
  for (const auto& r : races) s += r.message + "\n";
  if (race_count > races.size()) s += "... " + std::to_string(race_count - races.size()) + " more races\n";
  if (deadlock) s += deadlock_info.message;
  return s;
}

SimResult simulate(const Plan& plan, const SimConfig& cfg) {
  BRAID_REQUIRE(cfg.sms >= 1, "simulator: sms must be >= 1");
  BRAID_REQUIRE(cfg.jitter >= 0 && std::isfinite(cfg.jitter), "simulator: jitter must be >= 0");
  if (cfg.validate_plan) plan.validate();
  SimResult res;
  res.sms = cfg.sms;
  res.ordering = cfg.ordering;
  res.dispatch = cfg.dispatch;
  Sim sim(plan, cfg, res);
  sim.run();
  return res;
}

// ---- compare -----------------------------------------------------------------------------------
static CompareRow row_of(const std::string& name, Ordering o, const Plan& p, const SimResult& r) {
  CompareRow row;
  row.name = name;
  row.ordering = o;
  for (const auto& s : r.stages) row.waves.push_back(s.waves);
  (void)p;
  row.makespan = r.makespan;
  row.utilization = r.utilization;
  row.spin_fraction = r.spin_fraction;
  row.ok = r.ok();
  row.deadlock = r.deadlock;
  row.races = r.race_count;
  if (!row.ok) {
    std::string e = r.error_text();
    row.error = e.substr(0, e.find('\n'));
  }
  return row;
}

std::vector<CompareRow> compare(const Plan& baseline, const std::vector<Variant>& variants, const SimConfig& cfg,
                                std::vector<SimResult>* results) {
  std::vector<CompareRow> rows;
  SimConfig c = cfg;
  c.ordering = Ordering::StreamOrder;
  SimResult base = simulate(baseline, c);
  rows.push_back(row_of("stream", Ordering::StreamOrder, baseline, base));
  if (results) results->push_back(std::move(base));
  const double ref = rows[0].makespan;
  for (const auto& v : variants) {
    c.ordering = v.ordering;
    SimResult r = simulate(v.plan, c);
    CompareRow row = row_of(v.name, v.ordering, v.plan, r);
    row.speedup = (row.ok && row.makespan > 0) ? ref / row.makespan : 0;
    rows.push_back(std::move(row));
    if (results) results->push_back(std::move(r));
  }
  return rows;
}

std::string format_table(const std::vector<CompareRow>& rows) {
  std::ostringstream o;
  char buf[512];
  std::snprintf(buf, sizeof buf, "%-28s %-12s %-16s %12s %7s %7s %8s  %s\n", "variant", "ordering", "waves",
                "makespan", "util", "spin", "speedup", "status");
  o << buf;
  for (const auto& r : rows) {
    std::string w;
    for (size_t i = 0; i < r.waves.size(); ++i) {
      char b[32];
      std::snprintf(b, sizeof b, "%s%.2f", i ? "+" : "", r.waves[i]);
      w += b;
    }
    std::string status = r.ok ? "ok" : "";
    if (r.deadlock) status += "DEADLOCK";
    if (r.races) status += std::string(status.empty() ? "" : ", ") + std::to_string(r.races) + " RACES";
    std::snprintf(buf, sizeof buf, "%-28s %-12s %-16s %12.6g %6.1f%% %6.1f%% %7.3fx  %s\n", r.name.c_str(),
                  ordering_name(r.ordering), w.c_str(), r.makespan, 100 * r.utilization, 100 * r.spin_fraction,
                  r.speedup, status.c_str());
    o << buf;
  }
  return o.str();
}

Plan with_measured_stage_times(Plan plan, const std::vector<double>& stage_us) {
  BRAID_REQUIRE(stage_us.size() == plan.stages.size(),
                "with_measured_stage_times: " + std::to_string(stage_us.size()) + " times for " +
                    std::to_string(plan.stages.size()) + " stages");
  for (size_t i = 0; i < plan.stages.size(); ++i) {
    if (!(stage_us[i] > 0)) continue;
    StageSpec& s = plan.stages[i];
    const uint32_t blocks = s.blocks() > 0 ? s.blocks() : 1;
    s.tile_time = stage_us[i] / double((s.tiles() + blocks - 1) / blocks);
  }
  return plan;
}

}  // namespace braid::sim
