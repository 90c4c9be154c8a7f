// Routes found from the routers' routes (engine/leaf_routes.h) on a generated preset, with its
// route graph, PCIe tree, NICs and leaf/spine fabric: every pair SimGrid's own. This process
// owns its one SimGrid engine.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <simgrid/s4u.hpp>
#include <string>
#include <vector>

#include "engine/leaf_routes.h"
#include "platforms/platform_spec.h"
#include "platforms/simgrid_platform.h"

namespace orrery {
namespace {

namespace sg4 = simgrid::s4u;

TEST(LeafRoutesPreset, EveryPairOfAFabricPresetIsSimGridsOwnRoute) {
  PlatformSource p;
  p.topology = build_topology(
      parse_platform_spec(YAML::Load("{preset: hgx-h100-roce, servers: 6}"), "test"));
  auto engine = start_engine(p);
  LeafRoutes leaves(p.topology);
  int found = 0;
  for (const auto& a : p.topology.hosts)
    for (const auto& b : p.topology.hosts) {
      std::vector<sg4::Link*> mine;
      double my_latency = -1;
      if (!leaves.route(a.name, b.name, &mine, &my_latency)) continue;
      ++found;
      std::vector<sg4::Link*> theirs;
      double latency = 0;
      sg4::Host::by_name(a.name)->route_to(sg4::Host::by_name(b.name), theirs, &latency);
      ASSERT_EQ(mine, theirs) << a.name << " -> " << b.name;
      ASSERT_EQ(my_latency, latency) << a.name << " -> " << b.name;
    }
  // Most pairs: all but a host to itself, the pairs with routes of their own, and the in-network
  // reduction endpoints outside the Dijkstra graph (3,000 of 66 x 66 when written).
  EXPECT_GT(found, static_cast<int>(p.topology.hosts.size() * p.topology.hosts.size() / 2));
}

}  // namespace
}  // namespace orrery
