// Link utilization over time (engine/link_usage.h), worked out by hand on a star: hosts
// g0..g(n-1), each on its own duplex link "g<i>_link" of 1 GB/s per direction and no latency
// to one switch. A transfer g0 -> g1 crosses g0_link_UP and g1_link_DOWN.
#include "engine/link_usage.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "engine/replay.h"
#include "tests/test_util.h"

namespace orrery {
namespace {

constexpr double kBandwidth = 1e9;

ExecutionGraph devices(int n) {
  ExecutionGraph g;
  for (int i = 0; i < n; ++i) {
    std::string name = "g" + std::to_string(i);
    g.devices.push_back({name, name, name, "", {}});
  }
  return g;
}

int compute(ExecutionGraph& g, int device, double seconds, std::vector<int> deps = {}) {
  Op op;
  op.name = "c" + std::to_string(g.ops.size());
  op.device = device;
  op.duration = seconds;
  op.deps = std::move(deps);
  g.ops.push_back(op);
  return static_cast<int>(g.ops.size()) - 1;
}

int transfer(ExecutionGraph& g, int src, int dst, double bytes, std::vector<int> deps = {}) {
  return append_transfer(g, "t" + std::to_string(g.ops.size()), src, {StreamClass::kComm, 0}, src,
                         dst, bytes, "comm", std::move(deps));
}

RunResult run(const ExecutionGraph& g, int hosts, int bins) {
  ReplayOptions opt;
  opt.link_usage_bins = bins;
  return replay_isolated(testing::star_platform(hosts, kBandwidth, 0.0), g, opt);
}

const LinkStats& link(const RunResult& r, const std::string& name) {
  for (const LinkStats& l : r.links)
    if (l.name == name) return l;
  throw std::runtime_error("no link " + name);
}

// What a link's utilization should be in bin j when it ran at `level` over [from, to): the
// level times the part of the bin the interval covers.
double expected(double width, size_t j, double from, double to, double level) {
  const double lo = std::max(from, j * width), hi = std::min(to, (j + 1) * width);
  return hi > lo ? level * (hi - lo) / width : 0.0;
}

// Every link's bins add up to the bytes it carried.
void expect_conserved(const RunResult& r) {
  for (const LinkStats& l : r.links) {
    double sum = 0;
    for (double u : l.utilization) sum += u;
    EXPECT_NEAR(sum * l.bandwidth * r.link_usage_bin_width, l.bytes, 1e-9 * l.bytes) << l.name;
  }
}

TEST(LinkUsage, OneTransferAtFullRateIsOneWhereItRunsAndZeroElsewhere) {
  // 1 ms compute, then 2 MB at 1 GB/s over [1 ms, 3 ms], then 1 ms compute: makespan 4 ms.
  // 256 bins: the narrowest 2^k ns width with 256 bins covering 4 ms is 2^14 ns = 16.384 us,
  // so 245 bins.
  ExecutionGraph g = devices(2);
  int a = compute(g, 0, 1e-3);
  int t = transfer(g, 0, 1, 2e6, {a});
  compute(g, 1, 1e-3, {t});
  RunResult r = run(g, 2, 256);
  ASSERT_NEAR(r.makespan, 4e-3, 1e-12);
  const double w = 16384e-9;
  EXPECT_DOUBLE_EQ(r.link_usage_bin_width, w);
  ASSERT_EQ(r.links.size(), 2u);
  for (const char* name : {"g0_link_UP", "g1_link_DOWN"}) {
    const LinkStats& l = link(r, name);
    ASSERT_EQ(l.utilization.size(), 245u);
    int full = 0;
    for (size_t j = 0; j < l.utilization.size(); ++j) {
      EXPECT_NEAR(l.utilization[j], expected(w, j, 1e-3, 3e-3, 1.0), 1e-9) << name << " bin " << j;
      if (j * w >= 1e-3 && (j + 1) * w <= 3e-3) {
        EXPECT_NEAR(l.utilization[j], 1.0, 1e-9);
        ++full;
      }
    }
    EXPECT_EQ(full, 121);  // bins 62..182 lie inside [1 ms, 3 ms]
  }
  expect_conserved(r);
}

TEST(LinkUsage, TwoFlowsSharingALinkFillIt) {
  // g0 -> g2 and g1 -> g2, 1 MB each, both at once: they share g2_link_DOWN at 0.5 GB/s each
  // and end at 2 ms together. g2's downlink is full; each uplink runs at half.
  ExecutionGraph g = devices(3);
  transfer(g, 0, 2, 1e6);
  transfer(g, 1, 2, 1e6);
  RunResult r = run(g, 3, 256);
  ASSERT_NEAR(r.makespan, 2e-3, 1e-12);
  const double w = r.link_usage_bin_width;
  const LinkStats& down = link(r, "g2_link_DOWN");
  const LinkStats& up = link(r, "g0_link_UP");
  for (size_t j = 0; j < down.utilization.size(); ++j) {
    EXPECT_NEAR(down.utilization[j], expected(w, j, 0, 2e-3, 1.0), 1e-9) << "bin " << j;
    EXPECT_NEAR(up.utilization[j], expected(w, j, 0, 2e-3, 0.5), 1e-9) << "bin " << j;
  }
  expect_conserved(r);
}

TEST(LinkUsage, FollowsARateThatChangesDuringAFlow) {
  // A: g0 -> g2, 3 MB from 0. B: g1 -> g2, 1 MB from 1 ms (after a compute op). A runs alone
  // at 1 GB/s until 1 ms (1 MB), shares g2's downlink at 0.5 GB/s with B until B's 1 MB is
  // done at 3 ms (A has 2 MB done), then alone again until 4 ms. A's uplink: 1, 0.5, 1 — a
  // flow's bytes spread evenly over its life would give 0.75 throughout.
  ExecutionGraph g = devices(3);
  transfer(g, 0, 2, 3e6);
  int c = compute(g, 1, 1e-3);
  transfer(g, 1, 2, 1e6, {c});
  RunResult r = run(g, 3, 256);
  ASSERT_NEAR(r.makespan, 4e-3, 1e-12);
  const double w = r.link_usage_bin_width;
  const LinkStats& a = link(r, "g0_link_UP");
  const LinkStats& b = link(r, "g1_link_UP");
  const LinkStats& down = link(r, "g2_link_DOWN");
  for (size_t j = 0; j < a.utilization.size(); ++j) {
    EXPECT_NEAR(a.utilization[j],
                expected(w, j, 0, 1e-3, 1.0) + expected(w, j, 1e-3, 3e-3, 0.5) +
                    expected(w, j, 3e-3, 4e-3, 1.0),
                1e-9)
        << "bin " << j;
    EXPECT_NEAR(b.utilization[j], expected(w, j, 1e-3, 3e-3, 0.5), 1e-9) << "bin " << j;
    EXPECT_NEAR(down.utilization[j], expected(w, j, 0, 4e-3, 1.0), 1e-9) << "bin " << j;
  }
  expect_conserved(r);
}

TEST(LinkUsage, BinsWidenToFitALongRun) {
  // 1 s compute, 5 GB in 5 s, 1 s compute: 7 s in at most 8 bins. 7 s / 8 = 0.875 s, so the
  // width is 2^30 ns = 1.073741824 s and 7 bins cover the run.
  ExecutionGraph g = devices(2);
  int a = compute(g, 0, 1.0);
  int t = transfer(g, 0, 1, 5e9, {a});
  compute(g, 1, 1.0, {t});
  RunResult r = run(g, 2, 8);
  ASSERT_NEAR(r.makespan, 7.0, 1e-9);
  const double w = 1.073741824;
  EXPECT_DOUBLE_EQ(r.link_usage_bin_width, w);
  const LinkStats& up = link(r, "g0_link_UP");
  ASSERT_EQ(up.utilization.size(), 7u);
  for (size_t j = 0; j < 7; ++j)
    EXPECT_NEAR(up.utilization[j], expected(w, j, 1.0, 6.0, 1.0), 1e-9) << "bin " << j;
  expect_conserved(r);
}

TEST(LinkUsage, CollectiveFlowsAndTransfersAddUpPerLink) {
  // A ring all-reduce (flows) and a transfer over the same uplink: every link's bins hold
  // exactly the bytes the replay accounted to it.
  ExecutionGraph g = devices(4);
  Collective c;
  c.type = CollectiveType::kAllReduce;
  c.algo = CollectiveAlgo::kRing;
  c.ranks = {0, 1, 2, 3};
  c.bytes = 8e6;
  c.chunks = 4;
  append_collective(g, "allreduce", std::move(c), "comm", {});
  transfer(g, 0, 2, 3e6);
  RunResult r = run(g, 4, 100);
  ASSERT_EQ(r.links.size(), 8u);
  for (const LinkStats& l : r.links) {
    EXPECT_GT(l.bytes, 0) << l.name;
    EXPECT_LE(l.utilization.size(), 100u);
    for (double u : l.utilization) EXPECT_LE(u, 1.0 + 1e-9) << l.name;
  }
  expect_conserved(r);
}

TEST(LinkUsage, OffLeavesNoSeries) {
  ExecutionGraph g = devices(2);
  transfer(g, 0, 1, 1e6);
  RunResult r = run(g, 2, 0);
  EXPECT_EQ(r.link_usage_bin_width, 0.0);
  for (const LinkStats& l : r.links) EXPECT_TRUE(l.utilization.empty());
}

}  // namespace
}  // namespace orrery
