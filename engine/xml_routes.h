// Whether a SimGrid XML platform routes between two hosts, asked without crashing: SimGrid 3.32
// looks a missing route up in a Dijkstra zone by reading past its tables (a segfault), and in a
// Full or Floyd zone returns an empty route, over which bytes would move in no time. The replay
// asks before each new route; `orrery validate` asks for the pairs a workload sends between.
#pragma once

#include <simgrid/s4u.hpp>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "engine/execution_graph.h"
#include "platforms/simgrid_platform.h"

namespace orrery {

class XmlRoutes {
 public:
  // `steps` and `complete` as start_engine gives them for the file (platforms/simgrid_platform.h);
  // `steps` must outlive this.
  XmlRoutes(const std::vector<GraphStep>& steps, bool complete)
      : steps_(steps), complete_(complete) {}

  // True when SimGrid has a route from a to b with at least one link (a host to itself needs
  // none). With the zone's whole graph at hand, reachability over it answers without asking
  // SimGrid; otherwise SimGrid's own route does.
  bool has_route(simgrid::s4u::Host* a, simgrid::s4u::Host* b);

 private:
  const std::vector<GraphStep>& steps_;
  bool complete_;
  std::unordered_map<std::string, std::vector<std::string>> next_;  // steps by source
  std::unordered_map<std::string, std::unordered_set<std::string>> reachable_;  // by source
};

// The hosts `graph`'s devices send between on an XML platform, each pair once: every transfer's
// ends, and for every collective its ring neighbours (both ways) and its first rank to and from
// every other. Device indices.
std::vector<std::pair<int, int>> device_pairs_to_route(const ExecutionGraph& graph);

// "FILE: no route from host A to host B, which the workload sends between (devices X and Y): ..."
std::string no_route_message(const std::string& file, const std::string& from,
                             const std::string& to, const std::string& from_device,
                             const std::string& to_device);

}  // namespace orrery
