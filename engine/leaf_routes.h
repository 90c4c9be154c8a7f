// Routes between hosts found from the routes of the routers they hang off.
//
// SimGrid's Dijkstra zone computes, for each new source, paths to every node of the platform
// and keeps them (one vector of all nodes per source): looking routes up from every GPU of a
// 16,384-GPU cluster took minutes and 3 GiB. A node x hangs off a node y when one step leads
// from x to y and one back, and every other step out of or into x leads to or comes from a node
// that hangs off x: a GPU on its NVSwitch by one link hangs off the switch, and the switch, if
// its only other link is its uplink, off the switch above. SimGrid's Dijkstra from a pops a, then
// the chain a hangs from, up to the top node r of its tree, and from r on exactly what a
// Dijkstra from r pops, in the same order (every cost shifted by the chain's, ties broken by
// the same node ids); the nodes hanging beside the chain relax nothing outside their own tree.
// The only way into b is down its own chain. So SimGrid's route a -> b is a's chain up, its
// route between the two tops, and b's chain down, link for link and latency bit for bit; or,
// in one tree, up to the lowest common node and down: found from one source per top node
// instead of one per host. tests/leaf_routes_test.cc compares every pair with SimGrid's own.
//
// The steps come from the Topology of a generated platform, or from the route graph SimGrid
// built while loading an XML platform of one Dijkstra zone (platforms/simgrid_xml_load.h). A
// pair with a route of its own (Topology::routes, a SimGrid bypass route) is left to SimGrid,
// which takes the bypass.
#pragma once

#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "platforms/simgrid_platform.h"
#include "platforms/topology.h"

namespace simgrid::s4u {
class Link;
}

namespace orrery {

class LeafRoutes {
 public:
  // Reads the topology's steps; the SimGrid platform must be built from `topo` before route().
  explicit LeafRoutes(const Topology& topo);
  // The steps of one Dijkstra zone's route graph as SimGrid holds them; `bypassed`: host pairs
  // with bypass routes.
  LeafRoutes(const std::vector<GraphStep>& steps,
             std::set<std::pair<std::string, std::string>> bypassed);

  // The route from host a to host b, links in SimGrid's order and their latencies summed as
  // SimGrid sums them; false when neither hangs off anything (the caller asks SimGrid).
  bool route(const std::string& a, const std::string& b, std::vector<simgrid::s4u::Link*>* links,
             double* latency);

  // The same route as SimGrid link names, in SimGrid's order, without SimGrid: false also where
  // the route would cross between two tops (one_tree() says that never happens).
  bool route_names(const std::string& a, const std::string& b,
                   std::vector<const std::string*>* names);

  // Whether the graph is one tree of hanging nodes under a single top: every route is then a
  // chain up and a chain down, found without SimGrid's Dijkstra.
  bool one_tree() const;

 private:
  // Nodes by id (their order of first appearance in the steps): a 16,384-GPU platform has a
  // million steps, and string-keyed maps over them took a tenth of its replay.
  struct Gateway {
    int node = -1;                      // what this node hangs off, -1 for nothing
    std::vector<std::string> up, down;  // SimGrid link names of the steps to it and back
  };
  const std::vector<simgrid::s4u::Link*>& top_route(int u, int w);
  // The chains of a and b (ca_, cb_) trimmed to where they meet; `across_tops` when they do not
  // meet and SimGrid's route between their tops joins them. False when SimGrid must answer
  // (neither hangs, a bypass route, a node outside the graph).
  bool chains(const std::string& a, const std::string& b, bool* across_tops);
  // The link names up ca_ and down cb_, in SimGrid's order.
  void chain_names(std::vector<const std::string*>* up,
                   std::vector<const std::string*>* down) const;
  simgrid::s4u::Link* link(const std::string& name);
  void chain(int node, std::vector<int>* out) const;  // node, its gateway, ... its top

  std::unordered_map<std::string, int> id_;                 // the nodes of the Dijkstra graph
  std::vector<std::string> name_;                           // by id
  std::vector<Gateway> gateway_;                            // by id
  std::set<std::pair<std::string, std::string>> declared_;  // pairs with bypass routes
  std::map<std::pair<int, int>, std::vector<simgrid::s4u::Link*>> between_;
  std::unordered_map<std::string, simgrid::s4u::Link*> by_name_;
  std::unordered_map<const void*, simgrid::s4u::Link*> by_impl_;
  std::vector<int> ca_, cb_;                   // scratch of route()
  std::vector<const std::string*> up_, down_;  // scratch of route() and route_names()
};

}  // namespace orrery
