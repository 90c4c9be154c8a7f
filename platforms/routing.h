// Routes of a Topology as SimGrid will take them (the rules are in topology.h), for listings,
// pictures and tests, without starting SimGrid.
#pragma once

#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "platforms/topology.h"

namespace orrery {

// One link crossed: from node `from` to node `to`.
struct RouteStep {
  std::string from;
  std::string to;
  TopoHop hop;
};

class RouteFinder {
 public:
  explicit RouteFinder(const Topology& topo);

  // The route from src to dst (host or router names); empty when src == dst. For topologies
  // without explicit routes, SimGrid breaks ties between equally short paths its own way; this
  // takes the first one found. Throws InputError for unknown nodes or when there is no route.
  std::vector<RouteStep> route(const std::string& src, const std::string& dst) const;

  const TopoLink& link(const std::string& name) const;

 private:
  struct Arc {
    std::string to;
    std::vector<TopoHop> hops;
    int cost;  // SimGrid links crossed: SimGrid's Dijkstra weight
  };
  std::vector<RouteStep> expand(const std::vector<TopoHop>& hops) const;
  int cost(const std::vector<TopoHop>& hops) const;

  const Topology& topo_;
  std::unordered_map<std::string, const TopoLink*> links_;
  std::unordered_map<std::string, const TopoEdge*> edge_of_;
  std::map<std::pair<std::string, std::string>, const TopoRoute*> fixed_;
  std::unordered_map<std::string, std::vector<Arc>> arcs_;
};

// Every ordered pair of distinct hosts that has a route, in host order: all pairs of a generated
// platform except those of an NVLS host (role "nvls") with any host but the GPUs that name it in
// their "nvls_host" property (docs/platforms.md, "Routes").
std::vector<std::pair<std::string, std::string>> routed_host_pairs(const Topology& topo);

// Link classes along a route, in order of first appearance.
std::vector<std::string> route_classes(const RouteFinder& finder,
                                       const std::vector<RouteStep>& route);

// How a route between two devices gets there, in the words of `nvidia-smi topo -m`: "NVSwitch",
// "NVLink", "NVLink 2-hop", "PCIe switch", "Root complex", "QPI" or "Network".
std::string route_relation(const RouteFinder& finder, const std::vector<RouteStep>& route);

}  // namespace orrery
