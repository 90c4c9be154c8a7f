// Routes between leaf hosts found from their routers' routes are SimGrid's own, link for link
// and latency bit for bit, on a platform with equal-cost paths (two spines) and multi-link
// steps (links with duplex overhead), and hosts that are not leaves are left to SimGrid. This
// process owns its one SimGrid engine.
#include "engine/leaf_routes.h"

#include <gtest/gtest.h>

#include <string>

#include "platforms/simgrid_platform.h"
#include "tests/leaf_routes_check.h"

namespace orrery {
namespace {

// 4 servers of 4 GPUs on an NVSwitch each (1 us links, some with duplex overhead), every
// NVSwitch on both spines (2 us: equal-cost paths), a fifth server on one spine only (a chain
// of two), and a CPU host on two switches (it hangs off nothing).
Topology two_spines() {
  Topology t;
  t.name = "spines";
  t.routers = {"spine0", "spine1"};
  for (int s = 0; s < 4; ++s) {
    const std::string sw = "n" + std::to_string(s) + "_nvswitch";
    t.routers.push_back(sw);
    for (int p = 0; p < 2; ++p) {
      const std::string name = sw + "_up" + std::to_string(p);
      t.links.push_back({name, 50e9, 2e-6, true, "ethernet"});
      t.edges.push_back({sw, "spine" + std::to_string(p), name});
    }
    for (int g = 0; g < 4; ++g) {
      const std::string h = "n" + std::to_string(s) + "_gpu" + std::to_string(g);
      t.hosts.push_back({h, 1e12, 1, "gpu", {}});
      TopoLink l{h + "_link", 300e9, 1e-6 * (1 + g), true, "nvlink"};
      if (g % 2) l.duplex_overhead = 0.1;
      t.links.push_back(l);
      t.edges.push_back({h, sw, l.name});
    }
  }
  // Server 4 on spine 0 alone: its switch hangs off the spine, its GPUs off the switch.
  t.routers.push_back("n4_nvswitch");
  t.links.push_back({"n4_up", 25e9, 2e-6, true, "ethernet"});
  t.edges.push_back({"n4_nvswitch", "spine0", "n4_up"});
  for (int g = 0; g < 4; ++g) {
    const std::string h = "n4_gpu" + std::to_string(g);
    t.hosts.push_back({h, 1e12, 1, "gpu", {}});
    t.links.push_back({h + "_link", 300e9, 0.5e-6 * (1 + g), true, "nvlink"});
    t.edges.push_back({h, "n4_nvswitch", h + "_link"});
  }
  t.hosts.push_back({"cpu", 1e10, 1, "cpu", {}});
  t.links.push_back({"cpu_a", 10e9, 3e-6, true, "pcie"});
  t.links.push_back({"cpu_b", 10e9, 3e-6, true, "pcie"});
  t.edges.push_back({"cpu", "n0_nvswitch", "cpu_a"});
  t.edges.push_back({"cpu", "n1_nvswitch", "cpu_b"});
  return t;
}

TEST(LeafRoutes, EveryPairIsSimGridsOwnRoute) {
  PlatformSource p;
  p.topology = two_spines();
  auto engine = start_engine(p);
  const testing::LeafRouteCount count = testing::compare_leaf_routes_with_simgrid(p.topology);
  // 20 GPUs hang off their switch: every pair of distinct hosts but none from a host to itself.
  EXPECT_EQ(count.found, 21 * 20);
  EXPECT_EQ(count.refused, 21);
}

}  // namespace
}  // namespace orrery
