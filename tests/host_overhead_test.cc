// Host overheads (the DLRM performance model Algorithm 1) on a hand-worked example, first as the
// algorithm, then as launch ops in an ExecutionGraph replayed on SimGrid: both must start every
// kernel at max(GPU free, CPU launch).
//
// Overheads T1 = 2, T2 = 1, T3 = 1, T4 = 4, T5 = 0 us; four single-kernel ops of 10, 1, 1 and
// 20 us. Algorithm 1 (gap 0):
//   op1: cpu 2 +1 = 3; kernel at max(0, 3+2) = 5, ends 15 (GPU-bound from here); cpu 7, +1 = 8
//   op2: cpu 10, 11; kernel at max(15, 13) = 15 (waits for the GPU), ends 16; cpu 15, 16
//   op3: cpu 18, 19; kernel at max(16, 21) = 21 (waits for the launch), ends 22; cpu 23, 24
//   op4: cpu 26, 27; kernel at max(22, 29) = 29, ends 49; cpu 31, 32
//   total max(32, 49) = 49 us.
// With Algorithm 1's GPU gap of 1 us: starts 5, 16, 21, 29 and ends 15, 17, 22, 49.
#include "models/host_overhead.h"

#include <gtest/gtest.h>

#include "engine/graph_check.h"
#include "engine/replay.h"
#include "models/single_device.h"

namespace orrery {
namespace {

constexpr double us = 1e-6;

HostOverheads example_overheads(double gap) {
  HostOverheads ov;
  ov.t1 = 2 * us;
  ov.t2 = 1 * us;
  ov.t3 = 1 * us;
  ov.t4 = 4 * us;
  ov.t5 = 0;
  ov.gap = gap;
  return ov;
}

const std::vector<double> kKernels = {10 * us, 1 * us, 1 * us, 20 * us};

TEST(HostCriticalPath, Algorithm1HandExample) {
  std::vector<std::vector<double>> ops;
  for (double k : kKernels) ops.push_back({k});
  CriticalPath p = host_critical_path(ops, example_overheads(0));
  ASSERT_EQ(p.kernel_start.size(), 4u);
  EXPECT_NEAR(p.kernel_start[0], 5 * us, 1e-12);
  EXPECT_NEAR(p.kernel_start[1], 15 * us, 1e-12);  // GPU was busy: waits for the GPU
  EXPECT_NEAR(p.kernel_start[2], 21 * us, 1e-12);  // GPU idle: waits for the launch
  EXPECT_NEAR(p.kernel_start[3], 29 * us, 1e-12);
  EXPECT_NEAR(p.cpu_s, 32 * us, 1e-12);
  EXPECT_NEAR(p.gpu_s, 49 * us, 1e-12);
  EXPECT_NEAR(p.total_s, 49 * us, 1e-12);

  CriticalPath g = host_critical_path(ops, example_overheads(1 * us));
  EXPECT_NEAR(g.kernel_start[1], 16 * us, 1e-12);
  EXPECT_NEAR(g.total_s, 49 * us, 1e-12);
}

TEST(HostCriticalPath, OpsWithoutKernelsAndMultiKernelOps) {
  // T1 = 2, T5 = 3, T4 = 4, T2 = T3 = 0. Op A has no kernels: cpu 2 + 3 = 5. Op B has kernels
  // of 1 and 1 us: cpu 7; k1 at max(0, 9) = 9 -> 10; cpu 11, +T5 14; k2 at max(10, 16) = 16
  // -> 17; cpu 18. Total 18: CPU-bound.
  HostOverheads ov;
  ov.t1 = 2 * us;
  ov.t2 = ov.t3 = 0;
  ov.t4 = 4 * us;
  ov.t5 = 3 * us;
  ov.gap = 0;
  CriticalPath p = host_critical_path({{}, {1 * us, 1 * us}}, ov);
  ASSERT_EQ(p.kernel_start.size(), 2u);
  EXPECT_NEAR(p.kernel_start[0], 9 * us, 1e-12);
  EXPECT_NEAR(p.kernel_start[1], 16 * us, 1e-12);
  EXPECT_NEAR(p.total_s, 18 * us, 1e-12);
  EXPECT_NEAR(p.cpu_s, 18 * us, 1e-12);
}

ModelGraph chain_of(size_t n) {
  ModelGraph g;
  g.name = "chain";
  for (size_t i = 0; i < n; ++i) {
    ModelOp op;
    op.name = "k" + std::to_string(i + 1);
    op.type = "relu";
    if (i > 0) op.deps = {static_cast<int>(i) - 1};
    g.ops.push_back(op);
  }
  return g;
}

Topology gpu_and_cpu() {
  Topology t;
  t.name = "one-gpu";
  t.hosts = {{"gpu0", 1e12, 1, "gpu", {}}, {"cpu0", 1e10, 1, "cpu", {}}};
  t.links = {{"pcie", 16e9, 1e-6, true, "pcie"}};
  t.edges = {{"gpu0", "cpu0", "pcie"}};
  return t;
}

TEST(LaunchOps, GraphHasOneLaunchPerKernelChainedOnTheHost) {
  ExecutionGraph g = single_device_graph(chain_of(4), kKernels, {"gpu0", "gpu0", "cpu0"},
                                         {true, example_overheads(0)});
  check_graph(g, "test");
  ASSERT_EQ(g.ops.size(), 9u);  // 4 kernels, 4 launches, 1 tail
  EXPECT_EQ(g.devices[0].launch_host, "cpu0");
  const Op& l1 = g.ops[4];
  const Op& l2 = g.ops[5];
  EXPECT_EQ(l1.name, "launch:k1");
  EXPECT_EQ(l1.stream.cls, StreamClass::kHost);
  EXPECT_NEAR(l1.duration, 5 * us, 1e-15);  // T1 + T2 + T4/2
  EXPECT_NEAR(l2.duration, 8 * us, 1e-15);  // T1 + T2 + T3 + T4
  EXPECT_EQ(l2.deps, std::vector<int>{4});
  EXPECT_EQ(g.ops[1].deps, (std::vector<int>{0, 5}));  // k2: its model dep and its launch
  EXPECT_NEAR(g.ops[8].duration, 3 * us, 1e-15);       // tail: T4/2 + T3
  EXPECT_EQ(g.ops[1].phase, "forward");

  ExecutionGraph none =
      single_device_graph(chain_of(4), kKernels, {"gpu0", "", ""}, {false, example_overheads(0)});
  EXPECT_EQ(none.ops.size(), 4u);
  EXPECT_EQ(none.devices[0].launch_host, "gpu0");
}

RunResult replay_example(double gap) {
  ExecutionGraph g = single_device_graph(chain_of(4), kKernels, {"gpu0", "gpu0", "cpu0"},
                                         {true, example_overheads(gap)});
  PlatformSource p;
  p.topology = gpu_and_cpu();
  return replay_isolated(p, g, ReplayOptions{});
}

TEST(LaunchOps, ReplayStartsKernelsAtMaxOfGpuFreeAndLaunch) {
  RunResult r = replay_example(0);
  ASSERT_EQ(r.timeline.size(), 9u);
  EXPECT_NEAR(r.timeline[0].start, 5 * us, 1e-12);
  EXPECT_NEAR(r.timeline[1].start, 15 * us, 1e-12);
  EXPECT_NEAR(r.timeline[2].start, 21 * us, 1e-12);
  EXPECT_NEAR(r.timeline[3].start, 29 * us, 1e-12);
  EXPECT_NEAR(r.timeline[3].end, 49 * us, 1e-12);
  EXPECT_NEAR(r.timeline[8].end, 32 * us, 1e-12);  // the host thread ends at 32 us
  EXPECT_NEAR(r.makespan, 49 * us, 1e-12);
  // The GPU is idle 5 (before k1) + 5 (k2 -> k3) + 7 (k3 -> k4) = 17 us of the 49.
  EXPECT_NEAR(r.devices[0].idle, 17 * us, 1e-12);
}

TEST(LaunchOps, ReplayMatchesAlgorithm1WithTheGpuGap) {
  RunResult r = replay_example(1 * us);
  std::vector<std::vector<double>> ops;
  for (double k : kKernels) ops.push_back({k});
  CriticalPath p = host_critical_path(ops, example_overheads(1 * us));
  // The kernel carries the gap, so its replayed end is what Algorithm 1 predicts.
  for (int i = 0; i < 4; ++i)
    EXPECT_NEAR(r.timeline[i].end, p.kernel_start[i] + kKernels[i], 1e-12) << i;
  EXPECT_NEAR(r.makespan, p.total_s, 1e-12);
  EXPECT_NEAR(r.timeline[8].end, p.cpu_s, 1e-12);
}

TEST(LaunchOps, CpuBoundChainTakesTheHostTime) {
  // 10 kernels of 1 us behind 18 us launches each (T1 8 + T4 10, the paper's defaults without
  // the gap): the host bounds the step at 8 + 5 + 9 * 18 + 5 = 180 us; the GPU is mostly idle.
  HostOverheads ov;
  ov.gap = 0;
  std::vector<double> d(10, 1 * us);
  ExecutionGraph g = single_device_graph(chain_of(10), d, {"gpu0", "gpu0", "cpu0"}, {true, ov});
  PlatformSource p;
  p.topology = gpu_and_cpu();
  RunResult r = replay_isolated(p, g, ReplayOptions{});
  EXPECT_NEAR(r.makespan, 180 * us, 1e-12);
  std::vector<std::vector<double>> ops(10, std::vector<double>{1 * us});
  EXPECT_NEAR(host_critical_path(ops, ov).total_s, 180 * us, 1e-12);
}

TEST(LaunchOps, RejectsBadIndicesAndTransfers) {
  ExecutionGraph g;
  g.devices.push_back({"gpu0", "gpu0", "cpu0", "", {}});
  Op t;
  t.name = "x";
  t.device = 0;
  t.kind = OpKind::kTransfer;
  g.ops.push_back(t);
  EXPECT_THROW(add_launch_ops(g, {0}, HostOverheads{}), std::invalid_argument);
  EXPECT_THROW(add_launch_ops(g, {3}, HostOverheads{}), std::invalid_argument);
}

}  // namespace
}  // namespace orrery
