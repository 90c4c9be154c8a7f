#include "platforms/routing.h"

#include <algorithm>
#include <queue>
#include <set>

#include "common/errors.h"
#include "platforms/simgrid_links.h"

namespace orrery {

RouteFinder::RouteFinder(const Topology& topo) : topo_(topo) {
  for (const auto& l : topo.links) links_[l.name] = &l;
  for (const auto& e : topo.edges) edge_of_.emplace(e.link, &e);
  for (const auto& r : topo.routes) fixed_[{r.src, r.dst}] = &r;
  if (topo.routes.empty() && topo.route_graph.empty()) {
    for (const auto& e : topo.edges) {
      arcs_[e.a].push_back({e.b, {{e.link, false}}, 0});
      arcs_[e.b].push_back({e.a, {{e.link, true}}, 0});
    }
  } else {
    for (const auto& s : topo.route_graph) arcs_[s.src].push_back({s.dst, s.hops, 0});
  }
  for (auto& [node, arcs] : arcs_)
    for (auto& a : arcs) a.cost = cost(a.hops);
}

const TopoLink& RouteFinder::link(const std::string& name) const {
  auto it = links_.find(name);
  if (it == links_.end()) throw InputError("platform " + topo_.name + ": no link \"" + name + "\"");
  return *it->second;
}

int RouteFinder::cost(const std::vector<TopoHop>& hops) const {
  int c = 0;
  for (const auto& h : hops) c += static_cast<int>(simgrid_hop(link(h.link), h.reverse).size());
  return c;
}

std::vector<RouteStep> RouteFinder::expand(const std::vector<TopoHop>& hops) const {
  std::vector<RouteStep> out;
  for (const auto& h : hops) {
    const TopoEdge* e = edge_of_.at(h.link);
    out.push_back({h.reverse ? e->b : e->a, h.reverse ? e->a : e->b, h});
  }
  return out;
}

std::vector<RouteStep> RouteFinder::route(const std::string& src, const std::string& dst) const {
  std::set<std::string> nodes(topo_.routers.begin(), topo_.routers.end());
  for (const auto& h : topo_.hosts) nodes.insert(h.name);
  for (const auto* n : {&src, &dst})
    if (!nodes.count(*n))
      throw InputError("platform " + topo_.name + " has no host or router \"" + *n + "\"");
  if (src == dst) return {};
  auto fixed = fixed_.find({src, dst});
  if (fixed != fixed_.end()) return expand(fixed->second->hops);

  // Dijkstra with SimGrid's weights; ties go to the arc listed first.
  std::map<std::string, int> dist{{src, 0}};
  std::map<std::string, std::pair<std::string, const Arc*>> pred;
  using Item = std::pair<int, std::string>;
  std::priority_queue<Item, std::vector<Item>, std::greater<>> queue;
  queue.push({0, src});
  while (!queue.empty()) {
    auto [d, u] = queue.top();
    queue.pop();
    if (d > dist[u] || u == dst) continue;
    auto it = arcs_.find(u);
    if (it == arcs_.end()) continue;
    for (const auto& a : it->second) {
      auto known = dist.find(a.to);
      if (known == dist.end() || d + a.cost < known->second) {
        dist[a.to] = d + a.cost;
        pred[a.to] = {u, &a};
        queue.push({d + a.cost, a.to});
      }
    }
  }
  if (!dist.count(dst))
    throw InputError("platform " + topo_.name + ": no route from " + src + " to " + dst);
  std::vector<const Arc*> arcs;
  for (std::string v = dst; v != src; v = pred[v].first) arcs.push_back(pred[v].second);
  std::reverse(arcs.begin(), arcs.end());
  std::vector<TopoHop> hops;
  for (const auto* a : arcs) hops.insert(hops.end(), a->hops.begin(), a->hops.end());
  return expand(hops);
}

std::vector<std::pair<std::string, std::string>> routed_host_pairs(const Topology& topo) {
  auto served = [](const TopoHost& nvls, const TopoHost& other) {
    auto it = other.properties.find(kNvlsHostProperty);
    return it != other.properties.end() && it->second == nvls.name;
  };
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& a : topo.hosts)
    for (const auto& b : topo.hosts) {
      if (a.name == b.name) continue;
      if (a.role == "nvls" && !served(a, b)) continue;
      if (b.role == "nvls" && !served(b, a)) continue;
      out.push_back({a.name, b.name});
    }
  return out;
}

std::vector<std::string> route_classes(const RouteFinder& finder,
                                       const std::vector<RouteStep>& route) {
  std::vector<std::string> out;
  for (const auto& s : route) {
    const std::string& c = finder.link(s.hop.link).link_class;
    if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
  }
  return out;
}

std::string route_relation(const RouteFinder& finder, const std::vector<RouteStep>& route) {
  auto classes = route_classes(finder, route);
  auto has = [&](const char* c) {
    return std::find(classes.begin(), classes.end(), c) != classes.end();
  };
  if (has("ethernet") || has("roce") || has("infiniband")) return "Network";
  if (has("nvlink")) {
    int nvlinks = 0;
    bool via_switch = false;
    for (const auto& s : route) {
      if (finder.link(s.hop.link).link_class != "nvlink") continue;
      ++nvlinks;
      via_switch = via_switch || s.to.find("nvswitch") != std::string::npos;
    }
    if (via_switch) return "NVSwitch";
    return nvlinks == 1 ? "NVLink" : "NVLink 2-hop";
  }
  if (has("qpi")) return "QPI";
  if (has("rc-p2p") || has("rc-dma")) return "Root complex";
  return "PCIe switch";
}

}  // namespace orrery
