// Regressions found while validating the replay against hand computations.
#include <gtest/gtest.h>

#include "engine/replay.h"
#include "platforms/platform_spec.h"

namespace orrery {
namespace {

TEST(ReplayRegression, ConcurrentFlowsRespectEveryLinkOfTheirRoute) {
  // Three 38.5 MB host -> GPU copies on a pai-nvlink server: GPUs 0 and 1 share a PCIe switch
  // (10 GB/s uplink: 5 GB/s each, 7.7 ms), GPU 2 has its switch to itself (10 GB/s, 3.85 ms).
  // SimGrid 3.32's lazy network update finished GPU 2's copy in 0.33 ms (117 GB/s, the memory
  // link's leftover); apply_network_config() selects full updates.
  Topology t = build_topology(parse_platform_spec(YAML::Load("{preset: pai-nvlink}"), "test"));
  ExecutionGraph g;
  g.devices.push_back({"n0_cpu0", "n0_cpu0", "n0_cpu0", "", {}});
  for (int i = 0; i < 3; ++i) {
    std::string h = "n0_gpu" + std::to_string(i);
    g.devices.push_back({h, h, h, "", {}});
    Op op;
    op.name = "copy" + std::to_string(i);
    op.device = 1 + i;
    op.stream = {StreamClass::kCopyH2D, 0};
    op.kind = OpKind::kTransfer;
    op.src = 0;
    op.dst = 1 + i;
    op.transfer_bytes = 38.5e6;
    g.ops.push_back(op);
  }
  PlatformSource p;
  p.topology = t;
  RunResult r = replay_isolated(p, g, ReplayOptions{});
  // Route latency: 2 x 1 us of PCIe hops (memory and root-complex links have none).
  EXPECT_NEAR(r.timeline[0].end, 2e-6 + 2 * 38.5e6 / 10e9, 1e-7);
  EXPECT_NEAR(r.timeline[1].end, 2e-6 + 2 * 38.5e6 / 10e9, 1e-7);
  EXPECT_NEAR(r.timeline[2].end, 2e-6 + 38.5e6 / 10e9, 1e-7);
}

}  // namespace
}  // namespace orrery
