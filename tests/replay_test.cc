// Hand-computed replay cases: every expectation below is worked out from the op durations,
// link bandwidths and latencies in the test (network factors are 1, see apply_network_config).
#include "engine/replay.h"

#include <gtest/gtest.h>

#include "common/errors.h"

namespace orrery {
namespace {

constexpr double kGpuSpeed = 1e12;

// Hosts named in `hosts` hang off router "sw" through their own duplex link "<host>_link".
Topology star(const std::vector<std::string>& hosts, double bw, double lat) {
  Topology t;
  t.name = "star";
  t.routers.push_back("sw");
  for (const auto& h : hosts) {
    t.hosts.push_back({h, kGpuSpeed, 1, "gpu", {}});
    t.links.push_back({h + "_link", bw, lat, true, "test"});
    t.edges.push_back({h, "sw", h + "_link"});
  }
  return t;
}

ExecutionGraph devices(int n) {
  ExecutionGraph g;
  for (int i = 0; i < n; ++i) {
    std::string name = "g" + std::to_string(i);
    g.devices.push_back({name, name, name, "", {}});
  }
  return g;
}

int add_compute(ExecutionGraph& g, const std::string& name, int dev, double dur,
                std::vector<int> deps = {}, Stream s = {}) {
  Op op;
  op.name = name;
  op.device = dev;
  op.stream = s;
  op.duration = dur;
  op.deps = std::move(deps);
  g.ops.push_back(op);
  return static_cast<int>(g.ops.size()) - 1;
}

int add_transfer(ExecutionGraph& g, const std::string& name, int src, int dst, double bytes,
                 std::vector<int> deps = {}, Stream s = {StreamClass::kComm, 0}) {
  return append_transfer(g, name, src, s, src, dst, bytes, "", std::move(deps));
}

RunResult run(const Topology& t, const ExecutionGraph& g) {
  PlatformSource p;
  p.topology = t;
  return replay_isolated(p, g, ReplayOptions{});
}

TEST(Replay, ChainOnOneGpuSumsDurations) {
  auto g = devices(1);
  int a = add_compute(g, "a", 0, 1e-3);
  int b = add_compute(g, "b", 0, 2e-3, {a});
  add_compute(g, "c", 0, 3e-3, {b});
  auto r = run(star({"g0"}, 1e9, 0), g);
  EXPECT_NEAR(r.makespan, 6e-3, 1e-12);
  EXPECT_NEAR(r.devices[0].busy[0], 6e-3, 1e-12);
  EXPECT_NEAR(r.devices[0].idle, 0.0, 1e-12);
  EXPECT_EQ(r.activities, 3);
  ASSERT_EQ(r.timeline.size(), 3u);
  EXPECT_NEAR(r.timeline[2].start, 3e-3, 1e-12);
}

TEST(Replay, IndependentGpusTakeTheMax) {
  auto g = devices(2);
  add_compute(g, "a", 0, 5e-3);
  add_compute(g, "b", 1, 7e-3);
  auto r = run(star({"g0", "g1"}, 1e9, 0), g);
  EXPECT_NEAR(r.makespan, 7e-3, 1e-12);
  EXPECT_NEAR(r.devices[0].idle, 2e-3, 1e-12);
}

TEST(Replay, OneTransferIsLatencyPlusBytesOverBandwidth) {
  // Direct link g0 - g1: 10 GB/s, 5 us. 100 MB -> 5e-6 + 1e8 / 1e10 = 0.010005 s.
  Topology t;
  t.name = "pair";
  t.hosts = {{"g0", kGpuSpeed, 1, "gpu", {}}, {"g1", kGpuSpeed, 1, "gpu", {}}};
  t.links = {{"l", 1e10, 5e-6, true, "test"}};
  t.edges = {{"g0", "g1", "l"}};
  auto g = devices(2);
  add_transfer(g, "x", 0, 1, 1e8);
  auto r = run(t, g);
  EXPECT_NEAR(r.makespan, 5e-6 + 1e-2, 1e-9);
  ASSERT_EQ(r.links.size(), 1u);
  EXPECT_EQ(r.links[0].name, "l_UP");
  EXPECT_DOUBLE_EQ(r.links[0].bytes, 1e8);
}

TEST(Replay, TwoTransfersShareOneLinkAtHalfBandwidth) {
  // g0 and g1 both send 50 MB to g2. They share g2's down-link (1 GB/s, 1 us), each getting
  // 0.5 GB/s: both end at 2 us of latency + 5e7 / 5e8 = 0.1 s.
  auto g = devices(3);
  add_transfer(g, "x", 0, 2, 5e7);
  add_transfer(g, "y", 1, 2, 5e7);
  auto r = run(star({"g0", "g1", "g2"}, 1e9, 1e-6), g);
  EXPECT_NEAR(r.timeline[0].end, 2e-6 + 0.1, 1e-9);
  EXPECT_NEAR(r.timeline[1].end, 2e-6 + 0.1, 1e-9);
}

TEST(Replay, FullDuplexLinksCarryBothDirectionsAtFullRate) {
  // g0 -> g1 and g1 -> g0 at once over duplex links: no sharing, each 2 us + 1e8 / 1e9.
  auto g = devices(2);
  add_transfer(g, "x", 0, 1, 1e8);
  add_transfer(g, "y", 1, 0, 1e8);
  auto r = run(star({"g0", "g1"}, 1e9, 1e-6), g);
  EXPECT_NEAR(r.makespan, 2e-6 + 0.1, 1e-9);
}

TEST(Replay, DiamondWaitsForTheSlowerBranch) {
  // a(1 ms) -> {b(2 ms) on g1, c(3 ms) on g2} -> d(1 ms): 1 + 3 + 1 = 5 ms.
  auto g = devices(3);
  int a = add_compute(g, "a", 0, 1e-3);
  int b = add_compute(g, "b", 1, 2e-3, {a});
  int c = add_compute(g, "c", 2, 3e-3, {a});
  add_compute(g, "d", 0, 1e-3, {b, c});
  auto r = run(star({"g0", "g1", "g2"}, 1e9, 0), g);
  EXPECT_NEAR(r.makespan, 5e-3, 1e-12);
  EXPECT_NEAR(r.timeline[3].start, 4e-3, 1e-12);
}

TEST(Replay, ComputeAndCommStreamsOverlapOnOneGpu) {
  // 10 ms of compute and a 10 ms transfer (1e7 B at 1 GB/s, no latency) start together on g0.
  auto g = devices(2);
  add_compute(g, "k", 0, 1e-2);
  add_transfer(g, "x", 0, 1, 1e7);
  auto r = run(star({"g0", "g1"}, 1e9, 0), g);
  EXPECT_NEAR(r.makespan, 1e-2, 1e-9);
  EXPECT_NEAR(r.devices[0].busy[static_cast<int>(StreamClass::kComm)], 1e-2, 1e-9);
}

TEST(Replay, StreamIsFifoInOrderOfReadiness) {
  // g0 runs a (3 ms). c becomes ready at 1 ms (after p on g1), b at 2 ms (after q on g2); c is
  // listed before b but became ready first, so it runs first: c [3, 4], b [4, 5].
  auto g = devices(3);
  add_compute(g, "a", 0, 3e-3);
  int p = add_compute(g, "p", 1, 1e-3);
  int q = add_compute(g, "q", 2, 2e-3);
  int b = add_compute(g, "b", 0, 1e-3, {q});
  int c = add_compute(g, "c", 0, 1e-3, {p});
  auto r = run(star({"g0", "g1", "g2"}, 1e9, 0), g);
  EXPECT_NEAR(r.timeline[c].start, 3e-3, 1e-12);
  EXPECT_NEAR(r.timeline[b].start, 4e-3, 1e-12);
  EXPECT_NEAR(r.makespan, 5e-3, 1e-12);
}

TEST(Replay, TwoQueuesOfOneClassRunConcurrently) {
  // Transfers on comm:0 and comm:1 of g0 overlap; on one queue they would serialize.
  auto g = devices(2);
  add_transfer(g, "x", 0, 1, 1e7, {}, {StreamClass::kComm, 0});
  add_transfer(g, "y", 0, 1, 1e7, {}, {StreamClass::kComm, 1});
  auto r = run(star({"g0", "g1"}, 1e9, 0), g);
  EXPECT_NEAR(r.makespan, 2e-2, 1e-9);  // shared link: both at half rate, end together
  EXPECT_NEAR(r.timeline[0].end, r.timeline[1].end, 1e-12);
}

TEST(Replay, FlopsOnlyOpsRunAtHostSpeed) {
  auto g = devices(1);
  Op op;
  op.name = "gemm";
  op.device = 0;
  op.flops = 2e12;  // 2 s at 1 Tflop/s
  g.ops.push_back(op);
  auto r = run(star({"g0"}, 1e9, 0), g);
  EXPECT_NEAR(r.makespan, 2.0, 1e-9);
}

TEST(Replay, UnknownHostIsAnInputError) {
  auto g = devices(1);
  g.devices[0].host = "nowhere";
  add_compute(g, "a", 0, 1e-3);
  try {
    run(star({"g0"}, 1e9, 0), g);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("nowhere"), std::string::npos);
  }
}

// The InputError message of replaying `g` under a simulated-time limit, or "" when it ends.
std::string limit_error(const Topology& t, const ExecutionGraph& g, double limit) {
  PlatformSource p;
  p.topology = t;
  ReplayOptions opt;
  opt.max_simulated_seconds = limit;
  try {
    replay_isolated(p, g, opt);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(Replay, StopsAtTheSimulatedTimeLimitNamingIt) {
  // Three one-day ops in a chain end at 3 days; a limit of 1 day stops during the second.
  auto g = devices(1);
  int a = add_compute(g, "day1", 0, 86400);
  int b = add_compute(g, "day2", 0, 86400, {a});
  add_compute(g, "day3", 0, 86400, {b});
  std::string msg = limit_error(star({"g0"}, 1e9, 0), g, 1.5 * 86400);
  EXPECT_NE(msg.find("passed the limit of 129600 s (1.5 days) of simulated time"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("2 of 3 ops unfinished (running: \"day2\")"), std::string::npos) << msg;
  EXPECT_NE(msg.find("--max-simulated-time"), std::string::npos) << msg;
  // Under a limit past its end the same graph runs to 3 days.
  EXPECT_EQ(limit_error(star({"g0"}, 1e9, 0), g, 4 * 86400), "");
}

TEST(Replay, ASlowLinkHitsTheDefaultLimitInsteadOfSpinning) {
  // 1 TB over 1 KB/s is 1e9 s of simulated time (31 years): the default 30-day limit stops it.
  auto g = devices(2);
  add_transfer(g, "send", 0, 1, 1e12);
  std::string msg =
      limit_error(star({"g0", "g1"}, 1e3, 0), g, ReplayOptions{}.max_simulated_seconds);
  EXPECT_NE(msg.find("limit of 2592000 s (30 days)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("running: \"send\""), std::string::npos) << msg;
}

TEST(Replay, DefaultLimitComesFromTheProcessLimits) {
  RunLimits saved = run_limits();
  run_limits().max_simulated_seconds = 3600;
  EXPECT_EQ(ReplayOptions{}.max_simulated_seconds, 3600);
  run_limits() = saved;
  EXPECT_EQ(ReplayOptions{}.max_simulated_seconds, 30 * 86400.0);
}

}  // namespace
}  // namespace orrery
