// Comparing LeafRoutes with SimGrid's own route lookup over every host pair of a platform, for
// the leaf-route tests (the platform must be running in this process).
#pragma once

#include <gtest/gtest.h>

#include <simgrid/s4u.hpp>
#include <vector>

#include "engine/leaf_routes.h"
#include "platforms/topology.h"

namespace orrery::testing {

struct LeafRouteCount {
  int found = 0;    // pairs LeafRoutes answered, each equal to SimGrid's route
  int refused = 0;  // pairs left to SimGrid
};

// Every ordered pair of `topo`'s hosts through LeafRoutes; each route found must be SimGrid's,
// link for link and latency bit for bit. Stops at the first pair that differs (a failure).
inline LeafRouteCount compare_leaf_routes_with_simgrid(const Topology& topo) {
  namespace sg4 = simgrid::s4u;
  LeafRoutes leaves(topo);
  LeafRouteCount count;
  for (const auto& a : topo.hosts)
    for (const auto& b : topo.hosts) {
      std::vector<sg4::Link*> mine;
      double my_latency = -1;
      if (!leaves.route(a.name, b.name, &mine, &my_latency)) {
        ++count.refused;
        continue;
      }
      ++count.found;
      std::vector<sg4::Link*> theirs;
      double latency = 0;
      sg4::Host::by_name(a.name)->route_to(sg4::Host::by_name(b.name), theirs, &latency);
      if (mine != theirs || my_latency != latency) {
        ADD_FAILURE() << a.name << " -> " << b.name << ": " << mine.size() << " links, latency "
                      << my_latency << " here; SimGrid " << theirs.size() << " links, latency "
                      << latency;
        return count;
      }
    }
  return count;
}

}  // namespace orrery::testing
