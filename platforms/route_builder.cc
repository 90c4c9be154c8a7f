// Routing policy of generated platforms (docs/platforms.md, "Routes").
//
// Inside a server every host pair gets a complete route of its own (Topology::routes):
//  - GPU to GPU over NVLink where the pair has it: through the NVSwitch, over the pair's
//    cube-mesh link, or, for cube-mesh pairs without a link and nonadjacent: nvlink, through the
//    neighbour of both with the most links (NCCL's P2P through an intermediate GPU);
//  - otherwise over the PCIe tree: the unique shortest path over PCIe, root-complex, QPI and
//    memory links that passes through no host other than its two ends.
// Between servers, each host reaches the fabric through one NIC (Topology::route_graph steps
// host -> NIC and back): the NIC closest on PCIe; hosts that tie over several NICs take them in
// turn, so two GPUs under a switch with two NICs get one NIC each (rail alignment).
// A server's NVLS host (nvlink.sharp) is reached from its GPUs only, over the GPU's NVLink into
// the NVSwitch: fixed routes, outside the route graph, so no other host finds a path to it.
#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "platforms/topology_writer.h"

namespace orrery {
namespace {

using Hops = std::vector<TopoHop>;

Hops reversed(const Hops& hops) {
  Hops out(hops.rbegin(), hops.rend());
  for (auto& h : out) h.reverse = !h.reverse;
  return out;
}

// Shortest paths over the PCIe side of the machine, never through a host in the middle.
class PcieGraph {
 public:
  // Names by view into `topo`, which outlives the graph: copies of every edge's and host's
  // names took half a second at 65,536 GPUs.
  explicit PcieGraph(const Topology& topo) {
    static const std::set<std::string> kClasses = {"pcie", "rc-dma", "rc-p2p", "qpi", "memory"};
    std::unordered_map<std::string_view, const TopoLink*> links;
    links.reserve(topo.links.size());
    for (const auto& l : topo.links) links[l.name] = &l;
    for (const auto& e : topo.edges) {
      if (!kClasses.count(links.at(e.link)->link_class)) continue;
      adj_[e.a].push_back({e.b, &e.link, false});
      adj_[e.b].push_back({e.a, &e.link, true});
    }
    hosts_.reserve(topo.hosts.size());
    for (const auto& h : topo.hosts) hosts_.insert(h.name);
  }

  // The hops from src to dst. Throws std::logic_error when none or several are shortest: the
  // generator's shapes must leave no choice to tie-breaking.
  Hops path(const std::string& src, const std::string& dst) const {
    const Tree& t = tree(src);
    auto d = t.dist.find(dst);
    if (d == t.dist.end())
      throw std::logic_error("platform generator: no PCIe path from " + src + " to " + dst);
    if (t.ways.at(dst) != 1)
      throw std::logic_error("platform generator: several shortest PCIe paths from " + src +
                             " to " + dst);
    Hops hops;
    for (std::string v = dst; v != src;) {
      const auto& [u, hop] = t.pred.at(v);
      hops.push_back(hop);
      v = u;
    }
    std::reverse(hops.begin(), hops.end());
    return hops;
  }

  // Forgets the searches made so far (one server's, before the next server's).
  void forget() const { trees_.clear(); }

 private:
  // Breadth-first search from one host over the whole PCIe side it reaches (its own server):
  // each server's hosts ask for paths to dozens of hosts and NICs (an NVL72 rack: 108 hosts and
  // 72 NICs), and one search answers all of them.
  struct Tree {
    std::unordered_map<std::string, int> dist;
    std::unordered_map<std::string, long> ways;
    std::unordered_map<std::string, std::pair<std::string, TopoHop>> pred;
  };

  const Tree& tree(const std::string& src) const {
    auto it = trees_.find(src);
    if (it != trees_.end()) return it->second;
    Tree t;
    t.dist[src] = 0;
    t.ways[src] = 1;
    std::vector<std::string> frontier{src};
    while (!frontier.empty()) {
      std::vector<std::string> next;
      for (const auto& u : frontier) {
        if (u != src && hosts_.count(u)) continue;  // hosts are ends, never transit
        auto adj = adj_.find(u);
        if (adj == adj_.end()) continue;
        const int du = t.dist[u];
        const long wu = t.ways[u];
        for (const Adjacent& a : adj->second) {
          const std::string v(a.node);
          const TopoHop hop{*a.link, a.reverse};
          auto d = t.dist.find(v);
          if (d == t.dist.end()) {
            t.dist[v] = du + 1;
            t.ways[v] = wu;
            t.pred[v] = {u, hop};
            next.push_back(v);
          } else if (d->second == du + 1) {
            t.ways[v] += wu;
          }
        }
      }
      frontier.swap(next);
    }
    return trees_.emplace(src, std::move(t)).first->second;
  }

  mutable std::unordered_map<std::string, Tree> trees_;
  struct Adjacent {
    std::string_view node;
    const std::string* link;
    bool reverse;
  };
  std::unordered_map<std::string_view, std::vector<Adjacent>> adj_;
  std::unordered_set<std::string_view> hosts_;
};

class ServerRouter {
 public:
  ServerRouter(const ServerNodes& s, const PcieGraph& pcie) : s_(s), pcie_(pcie) {}

  Hops between(const std::string& a, const std::string& b) const {
    int ga = gpu_index(a), gb = gpu_index(b);
    if (ga >= 0 && gb >= 0) {
      if (s_.nvlink_topology == "nvswitch") return {{a + "_nvlink", false}, {b + "_nvlink", true}};
      if (s_.nvlink_topology == "bridge" && linked(ga, gb)) return {nvlink_hop(ga, gb)};
      if (s_.nvlink_topology == "cube-mesh") {
        if (linked(ga, gb)) return {nvlink_hop(ga, gb)};
        if (s_.nvlink_nonadjacent == "nvlink") {
          int relay = best_relay(ga, gb);
          if (relay >= 0) return {nvlink_hop(ga, relay), nvlink_hop(relay, gb)};
        }
      }
    }
    return pcie_.path(a, b);
  }

  // Each host's NIC for traffic leaving the server (see the file comment).
  std::map<std::string, std::string> nic_assignment(const std::vector<std::string>& hosts) const {
    std::map<std::string, std::string> out;
    std::map<std::vector<int>, int> turns;  // hosts seen so far per set of equally close NICs
    for (const auto& h : hosts) {
      std::vector<int> closest;
      size_t best = SIZE_MAX;
      for (size_t i = 0; i < s_.nics.size(); ++i) {
        size_t d = pcie_.path(h, s_.nics[i]).size();
        if (d < best) closest.clear();
        if (d <= best) {
          best = d;
          closest.push_back(static_cast<int>(i));
        }
      }
      int turn = turns[closest]++;
      out[h] = s_.nics[closest[turn % closest.size()]];
    }
    return out;
  }

 private:
  int gpu_index(const std::string& host) const {
    auto it = std::find(s_.gpus.begin(), s_.gpus.end(), host);
    return it == s_.gpus.end() ? -1 : static_cast<int>(it - s_.gpus.begin());
  }
  bool linked(int a, int b) const {
    return s_.nvlink_pairs.count({std::min(a, b), std::max(a, b)}) > 0;
  }
  int links(int a, int b) const {
    auto it = s_.nvlink_pairs.find({std::min(a, b), std::max(a, b)});
    return it == s_.nvlink_pairs.end() ? 0 : it->second.second;
  }
  TopoHop nvlink_hop(int from, int to) const {
    return {s_.nvlink_pairs.at({std::min(from, to), std::max(from, to)}).first, from > to};
  }
  // The GPU linked to both with the widest narrower link; the lowest index on ties.
  int best_relay(int a, int b) const {
    int best = -1, best_links = 0;
    for (int w = 0; w < static_cast<int>(s_.gpus.size()); ++w) {
      int l = std::min(links(a, w), links(w, b));
      if (w != a && w != b && l > best_links) {
        best = w;
        best_links = l;
      }
    }
    return best;
  }

  const ServerNodes& s_;
  const PcieGraph& pcie_;
};

// The routes one server adds (routes inside it, and steps of the route graph to its NICs).
struct ServerRoutes {
  std::string prefix;
  std::vector<TopoRoute> routes, graph;
  bool local = true;  // every name in them carries the prefix
};

// `name` with the server prefix `from` swapped for `to` (the caller checked it starts so).
std::string swap_prefix(const std::string& name, const std::string& from, const std::string& to) {
  return to + name.substr(from.size());
}

bool all_local(const std::vector<TopoRoute>& routes, const std::string& prefix) {
  auto local = [&](const std::string& n) { return n.compare(0, prefix.size(), prefix) == 0; };
  for (const auto& r : routes) {
    if (!local(r.src) || !local(r.dst)) return false;
    for (const auto& h : r.hops)
      if (!local(h.link)) return false;
  }
  return true;
}

void append_swapped(const std::vector<TopoRoute>& from, const std::string& a, const std::string& b,
                    std::vector<TopoRoute>* to) {
  for (const auto& r : from) {
    TopoRoute c{swap_prefix(r.src, a, b), swap_prefix(r.dst, a, b), {}};
    c.hops.reserve(r.hops.size());
    for (const auto& h : r.hops) c.hops.push_back({swap_prefix(h.link, a, b), h.reverse});
    to->push_back(std::move(c));
  }
}

}  // namespace

void add_server_routes(const std::vector<ServerNodes>& servers, Topology& topo) {
  PcieGraph pcie(topo);
  // The servers of one group are built alike but for their name prefix, and so are their
  // routes: the first server's paths serve the others with the prefix swapped (a 16,384-GPU
  // platform searched the same PCIe paths 2,048 times). A server whose routes name anything
  // outside it is searched for itself.
  std::map<int, ServerRoutes> first_of_group;
  for (const auto& s : servers) {
    auto known = first_of_group.find(s.group);
    if (known != first_of_group.end() && known->second.local) {
      const ServerRoutes& t = known->second;
      append_swapped(t.routes, t.prefix, s.prefix, &topo.routes);
      append_swapped(t.graph, t.prefix, s.prefix, &topo.route_graph);
      continue;
    }
    const size_t routes0 = topo.routes.size(), graph0 = topo.route_graph.size();
    pcie.forget();
    ServerRouter router(s, pcie);
    std::vector<std::string> hosts = s.gpus;
    hosts.insert(hosts.end(), s.cpus.begin(), s.cpus.end());
    for (const auto& a : hosts)
      for (const auto& b : hosts)
        if (a != b) topo.routes.push_back({a, b, router.between(a, b)});
    if (!s.nvls.empty())
      for (const auto& g : s.gpus) {
        const Hops to_switch = {{g + "_nvlink", false}, {s.nvls_link, true}};
        topo.routes.push_back({g, s.nvls, to_switch});
        topo.routes.push_back({s.nvls, g, reversed(to_switch)});
      }
    // Every host joins the route graph, even without NICs: SimGrid's Dijkstra routing gives
    // only the nodes of its graph a loopback route.
    std::map<std::string, std::string> exit;
    if (s.nics.empty()) {
      for (const auto& h : hosts) exit[h] = s.root_complex;
    } else {
      exit = router.nic_assignment(hosts);
    }
    for (const auto& h : hosts) {
      Hops out = pcie.path(h, exit[h]);
      topo.route_graph.push_back({h, exit[h], out});
      topo.route_graph.push_back({exit[h], h, reversed(out)});
    }
    if (known == first_of_group.end()) {
      ServerRoutes t;
      t.prefix = s.prefix;
      t.routes.assign(topo.routes.begin() + routes0, topo.routes.end());
      t.graph.assign(topo.route_graph.begin() + graph0, topo.route_graph.end());
      t.local = all_local(t.routes, s.prefix) && all_local(t.graph, s.prefix);
      first_of_group.emplace(s.group, std::move(t));
    }
  }
}

}  // namespace orrery
