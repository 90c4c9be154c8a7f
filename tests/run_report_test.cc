// results/run_report.h: the rows `orrery run` prints and the Python module returns, from a
// hand-built RunResult whose numbers are worked out below.
#include "results/run_report.h"

#include <gtest/gtest.h>

#include <iterator>

namespace orrery {
namespace {

// Two GPUs and a CPU that ran no op (it only feeds input): means are over the two GPUs.
//   gpu0: compute 6, comm 2, h2d 1, d2h 0.5, host 0.25, idle 4, exposed 1, memory-bound 3
//   gpu1: compute 8, comm 4, h2d 0, d2h 0.5, host 0.75, idle 2, exposed 0, memory-bound 1
// Iteration 10 s: compute (6+8)/2 = 7 (70%), memory-bound 2 (20%), idle 3 (30%), comm 3 (30%),
// exposed 0.5 (5%), copies (1.5+0.5)/2 = 1 (10%), host 0.5 (5%).
RunResult two_gpus() {
  RunResult r;
  r.makespan = 10;
  DeviceStats g0{"gpu0", {6, 2, 1, 0.5, 0.25}, 4, 1, 3, 10};
  DeviceStats g1{"gpu1", {8, 4, 0, 0.5, 0.75}, 2, 0, 1, 12};
  DeviceStats cpu{"cpu", {0, 0, 0, 0, 0}, 10, 0, 0, 0};
  r.devices = {g0, g1, cpu};
  // Busy at full bandwidth: a 2 s (20%), b 5 s (50%), c 1 s (10%).
  r.links = {{"a", 1e9, 1e-6, 2e9, "pcie"}, {"b", 1e9, 1e-6, 5e9, "pcie"}, {"c", 2e9, 0, 2e9, ""}};
  return r;
}

TEST(RunReport, TimeSharesInPrintedOrderWithHandComputedMeans) {
  const RunResult r = two_gpus();
  const RunReport report = make_run_report(r);
  struct Want {
    const char* column;
    bool compute_stream;
    bool part_of_previous;
    double seconds;
    double percent;
  };
  const Want want[] = {
      {"compute_s", true, false, 7, 70},       {"memory_bound_s", true, true, 2, 20},
      {"idle_s", true, false, 3, 30},          {"comm_s", false, false, 3, 30},
      {"exposed_comm_s", false, true, 0.5, 5}, {"io_s", false, false, 1, 10},
      {"host_s", false, false, 0.5, 5}};
  ASSERT_EQ(report.time_shares.size(), std::size(want));
  for (size_t i = 0; i < std::size(want); ++i) {
    const TimeShare& t = report.time_shares[i];
    EXPECT_EQ(t.column, want[i].column);
    EXPECT_EQ(t.compute_stream, want[i].compute_stream) << t.column;
    EXPECT_EQ(t.part_of_previous, want[i].part_of_previous) << t.column;
    EXPECT_DOUBLE_EQ(t.seconds, want[i].seconds) << t.column;
    EXPECT_DOUBLE_EQ(t.percent, want[i].percent) << t.column;
  }
  EXPECT_EQ(report.time_shares[2].label, "idle (waiting for data, launches, peers)");
}

TEST(RunReport, DevicesLinksAndTraffic) {
  const RunResult r = two_gpus();
  const RunReport report = make_run_report(r);
  ASSERT_EQ(report.devices.size(), 3u);
  EXPECT_EQ(report.devices[0].name, "gpu0");
  EXPECT_DOUBLE_EQ(report.devices[0].copies_s, 1.5);
  EXPECT_DOUBLE_EQ(report.devices[1].comm_s, 4);
  EXPECT_DOUBLE_EQ(report.devices[2].idle_s, 10);
  ASSERT_EQ(report.links.size(), 3u);
  EXPECT_EQ(report.links[0].link->name, "b");  // busiest first
  EXPECT_EQ(report.links[1].link->name, "a");
  EXPECT_EQ(report.links[2].link->name, "c");
  EXPECT_DOUBLE_EQ(report.links[0].busy_s, 5);
  EXPECT_DOUBLE_EQ(report.links[0].busy_percent, 50);
  EXPECT_DOUBLE_EQ(report.traffic_by_link_class.at("pcie"), 7e9);
  EXPECT_DOUBLE_EQ(report.traffic_by_link_class.at("(unclassified)"), 2e9);
}

TEST(RunReport, EmptyRunHasNoDivisionByZero) {
  const RunReport report = make_run_report(RunResult{});
  for (const TimeShare& t : report.time_shares) EXPECT_EQ(t.percent, 0.0) << t.column;
  EXPECT_TRUE(report.links.empty());
  EXPECT_TRUE(report.traffic_by_link_class.empty());
}

TEST(RunReport, DeviceLine) {
  const DeviceSpec v100 = device_spec("V100");
  EXPECT_EQ(device_line(v100, false),
            "V100-SXM2; op times as given by the workload (no device prices them)");
  EXPECT_EQ(device_line(v100, true), "V100-SXM2 (prices every op)");
  DeviceSpec faster = v100;
  faster.fp32 *= 2;
  faster.overridden = changed_fields(v100, faster);
  EXPECT_EQ(device_line(faster, true), "V100-SXM2 with fp32 changed (prices every op)");
}

}  // namespace
}  // namespace orrery
