// Comparing LeafRoutes with SimGrid's own route lookup over every host pair of a platform, for
// the leaf-route tests (the platform must be running in this process).
#pragma once

#include <gtest/gtest.h>

#include <simgrid/s4u.hpp>
#include <string>
#include <vector>

#include "engine/leaf_routes.h"
#include "platforms/topology.h"

namespace orrery::testing {

struct LeafRouteCount {
  int found = 0;    // pairs LeafRoutes answered, each equal to SimGrid's route
  int refused = 0;  // pairs left to SimGrid
};

// Every ordered pair of `hosts` through `leaves`; each route found must be SimGrid's, link for
// link and latency bit for bit. Stops at the first pair that differs (a failure).
inline LeafRouteCount compare_leaf_routes_with_simgrid(LeafRoutes& leaves,
                                                       const std::vector<std::string>& hosts) {
  namespace sg4 = simgrid::s4u;
  LeafRouteCount count;
  for (const auto& a : hosts)
    for (const auto& b : hosts) {
      std::vector<sg4::Link*> mine;
      double my_latency = -1;
      if (!leaves.route(a, b, &mine, &my_latency)) {
        ++count.refused;
        continue;
      }
      ++count.found;
      std::vector<sg4::Link*> theirs;
      double latency = 0;
      sg4::Host::by_name(a)->route_to(sg4::Host::by_name(b), theirs, &latency);
      if (mine != theirs || my_latency != latency) {
        ADD_FAILURE() << a << " -> " << b << ": " << mine.size() << " links, latency " << my_latency
                      << " here; SimGrid " << theirs.size() << " links, latency " << latency;
        return count;
      }
    }
  return count;
}

// The same for a generated platform, its leaf routes read from its topology.
inline LeafRouteCount compare_leaf_routes_with_simgrid(const Topology& topo) {
  LeafRoutes leaves(topo);
  std::vector<std::string> hosts;
  for (const auto& h : topo.hosts) hosts.push_back(h.name);
  return compare_leaf_routes_with_simgrid(leaves, hosts);
}

}  // namespace orrery::testing
