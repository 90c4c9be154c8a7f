// Routes found from the routers' routes (engine/leaf_routes.h) on a generated preset, with its
// route graph, PCIe tree, NICs and leaf/spine fabric: every pair SimGrid's own. This process
// owns its one SimGrid engine.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "platforms/platform_spec.h"
#include "platforms/simgrid_platform.h"
#include "tests/leaf_routes_check.h"

namespace orrery {
namespace {

TEST(LeafRoutesPreset, EveryPairOfAFabricPresetIsSimGridsOwnRoute) {
  PlatformSource p;
  p.topology = build_topology(
      parse_platform_spec(YAML::Load("{preset: hgx-h100-roce, servers: 6}"), "test"));
  auto engine = start_engine(p);
  const int found = testing::compare_leaf_routes_with_simgrid(p.topology).found;
  // Most pairs: all but a host to itself, the pairs with routes of their own, and the in-network
  // reduction endpoints outside the Dijkstra graph (3,000 of 66 x 66 when written).
  EXPECT_GT(found, static_cast<int>(p.topology.hosts.size() * p.topology.hosts.size() / 2));
}

}  // namespace
}  // namespace orrery
