// The autotuner's decisions with fake candidates: fastest passing candidate wins, failing checks are
// never chosen, the baseline stays unless beaten by more than the noise margin, choices are cached
// and reused, and a cached name that is no longer offered is searched again.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "braid/tune/autotuner.hpp"

using namespace braid::tune;

namespace {

struct Counter {
  int timed = 0;
};

Candidate fake(const std::string& name, double us, bool ok, Counter* c = nullptr) {
  return Candidate{name, [ok] { return ok; }, [us, c] {
                     if (c) ++c->timed;
                     return us;
                   }};
}

std::string temp_path(const char* tag) {
  std::string p = std::string(BRAID_BINARY_DIR) + "/autotuner-" + tag + ".tsv";
  std::remove(p.c_str());
  return p;
}

}  // namespace

TEST(Autotuner, PicksFastestPassingCandidate) {
  Autotuner t(Options{});
  auto ch = t.tune("k", fake("stream", 100, true), {fake("a", 90, true), fake("b", 70, false), fake("c", 80, true)});
  EXPECT_EQ(ch.best, "c");  // b is faster but wrong
  EXPECT_DOUBLE_EQ(ch.best_us, 80);
  EXPECT_DOUBLE_EQ(ch.baseline_us, 100);
  EXPECT_NEAR(ch.speedup(), 1.25, 1e-12);
  ASSERT_EQ(ch.timings.size(), 4u);
  EXPECT_DOUBLE_EQ(ch.timings[2].second, -1);  // b failed its check and was not timed
}

TEST(Autotuner, FallsBackToBaselineWithinNoise) {
  Autotuner t(Options{"", 0.02});
  auto ch = t.tune("k", fake("stream", 100, true), {fake("a", 99, true)});
  EXPECT_EQ(ch.best, "stream");
  ch = t.tune("k2", fake("stream", 100, true), {fake("a", 97, true)});
  EXPECT_EQ(ch.best, "a");
  ch = t.tune("k3", fake("stream", 100, true), {fake("a", 50, false)});
  EXPECT_EQ(ch.best, "stream");
}

// A GPU that slows down while the search runs (each timing 2 us slower than the one before): timed once each, in order,
// the fastest candidate -- tried last -- looks no better than the baseline; round-robin in alternating directions
// gives every candidate the same median drift, and the truly fastest wins.
TEST(Autotuner, RoundsCancelDriftBetweenCandidates) {
  auto drifting = [](const std::string& name, double us, int* calls) {
    return Candidate{name, [] { return true; }, [us, calls] { return us + 2.0 * (*calls)++; }};
  };
  int calls = 0;
  Autotuner once(Options{});
  auto ch = once.tune("k", drifting("stream", 100, &calls), {drifting("a", 99, &calls), drifting("b", 97, &calls)});
  EXPECT_EQ(ch.best, "stream");  // a: 99 + 2 = 101, b: 97 + 4 = 101 -- the drift, not the kernels
  EXPECT_EQ(calls, 3);
  calls = 0;
  Options o;
  o.rounds = 4;
  Autotuner rr(o);
  ch = rr.tune("k", drifting("stream", 100, &calls), {drifting("a", 99, &calls), drifting("b", 97, &calls)});
  EXPECT_EQ(calls, 12);
  EXPECT_EQ(ch.best, "b");
  // Calls 0-11 in the order stream a b | b a stream | stream a b | b a stream: each candidate's calls have the median
  // index 5.5, so every median carries the same 11 us of drift.
  EXPECT_DOUBLE_EQ(ch.best_us, 97 + 11);
  EXPECT_DOUBLE_EQ(ch.baseline_us, 100 + 11);
  ASSERT_EQ(ch.timings.size(), 3u);
  EXPECT_DOUBLE_EQ(ch.timings[1].second, 99 + 11);
}

// Failing candidates are checked but never timed, with rounds too.
TEST(Autotuner, FailedChecksAreNotTimedInRounds) {
  Counter c;
  Options o;
  o.rounds = 3;
  Autotuner t(o);
  auto ch = t.tune("k", fake("stream", 100, true), {fake("bad", 10, false, &c), fake("ok", 80, true)});
  EXPECT_EQ(c.timed, 0);
  EXPECT_EQ(ch.best, "ok");
  EXPECT_DOUBLE_EQ(ch.timings[1].second, -1);
}

TEST(Autotuner, BaselineMustPass) {
  Autotuner t(Options{});
  EXPECT_THROW(t.tune("k", fake("stream", 100, false), {fake("a", 50, true)}), std::runtime_error);
}

TEST(Autotuner, CachesChoicesAcrossInstances) {
  const std::string path = temp_path("cache");
  Counter c;
  {
    Autotuner t(Options{path});
    auto ch = t.tune("mlp T=512", fake("stream", 100, true, &c), {fake("rowsync-pdl", 80, true, &c)});
    EXPECT_EQ(ch.best, "rowsync-pdl");
    EXPECT_FALSE(ch.from_cache);
    EXPECT_EQ(c.timed, 2);
  }
  {
    Autotuner t(Options{path});
    auto ch = t.tune("mlp T=512", fake("stream", 100, true, &c), {fake("rowsync-pdl", 80, true, &c)});
    EXPECT_TRUE(ch.from_cache);
    EXPECT_EQ(ch.best, "rowsync-pdl");
    EXPECT_DOUBLE_EQ(ch.best_us, 80);
    EXPECT_EQ(c.timed, 2);  // nothing re-timed
    // A cached winner that is no longer offered triggers a new search.
    ch = t.tune("mlp T=512", fake("stream", 100, true, &c), {fake("tilesync-pdl", 90, true, &c)});
    EXPECT_FALSE(ch.from_cache);
    EXPECT_EQ(ch.best, "tilesync-pdl");
  }
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  EXPECT_NE(s.str().find("mlp T=512\ttilesync-pdl\t90\t100"), std::string::npos) << s.str();
}

TEST(Autotuner, ProgressAndMalformedCache) {
  std::ostringstream log;
  Options o;
  o.progress = &log;
  Autotuner t(o);
  t.tune("k", fake("stream", 100, true), {fake("a", 90, true), fake("b", 1, false)});
  EXPECT_NE(log.str().find("[1/3] k stream: "), std::string::npos) << log.str();
  EXPECT_NE(log.str().find("[3/3] k b: check FAILED"), std::string::npos) << log.str();
  std::ostringstream rlog;
  Options ro;
  ro.progress = &rlog;
  ro.rounds = 2;
  Autotuner rt(ro);
  rt.tune("k", fake("stream", 100, true), {fake("a", 90, true)});
  EXPECT_NE(rlog.str().find("round 2/2, 2/2: k stream 100 us"), std::string::npos) << rlog.str();  // backward in round 2
  EXPECT_NE(rlog.str().find("[2/2] k a: "), std::string::npos) << rlog.str();
  const std::string path = temp_path("bad");
  std::ofstream(path) << "only-one-field\n";
  EXPECT_THROW(Autotuner(Options{path}), std::runtime_error);
}
