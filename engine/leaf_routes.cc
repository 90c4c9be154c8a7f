#include "engine/leaf_routes.h"

#include <algorithm>
#include <simgrid/kernel/routing/NetZoneImpl.hpp>
#include <simgrid/s4u.hpp>
#include <unordered_set>

#include "platforms/simgrid_links.h"

namespace sg4 = simgrid::s4u;

namespace orrery {

namespace {

// The Dijkstra graph's steps, as build_simgrid_platform adds them.
std::vector<GraphStep> steps_of(const Topology& topo) {
  std::vector<TopoRoute> graph = topo.route_graph;
  if (graph.empty())
    for (const auto& e : topo.edges) {
      graph.push_back({e.a, e.b, {{e.link, false}}});
      graph.push_back({e.b, e.a, {{e.link, true}}});
    }
  std::unordered_map<std::string, const TopoLink*> spec;
  for (const auto& l : topo.links) spec[l.name] = &l;
  std::vector<GraphStep> steps;
  for (const auto& g : graph) {
    GraphStep s{g.src, g.dst, {}};
    for (const auto& h : g.hops)
      for (auto& n : simgrid_hop(*spec.at(h.link), h.reverse)) s.links.push_back(std::move(n));
    steps.push_back(std::move(s));
  }
  return steps;
}

std::set<std::pair<std::string, std::string>> bypassed_of(const Topology& topo) {
  std::set<std::pair<std::string, std::string>> out;
  for (const auto& r : topo.routes) out.insert({r.src, r.dst});
  return out;
}

}  // namespace

LeafRoutes::LeafRoutes(const Topology& topo) : LeafRoutes(steps_of(topo), bypassed_of(topo)) {}

LeafRoutes::LeafRoutes(const std::vector<GraphStep>& steps,
                       std::set<std::pair<std::string, std::string>> bypassed)
    : declared_(std::move(bypassed)) {
  std::unordered_map<std::string, std::vector<const GraphStep*>> out, in;
  for (const auto& s : steps) {
    out[s.src].push_back(&s);
    in[s.dst].push_back(&s);
    in_graph_.insert(s.src);
    in_graph_.insert(s.dst);
  }
  // Rounds until nothing changes: a node hangs off y once all its other neighbours hang off it.
  for (bool changed = true; changed;) {
    changed = false;
    for (const auto& [x, leaving] : out) {
      if (gateway_.count(x)) continue;
      auto hangs_off_x = [&](const std::string& n) {
        auto g = gateway_.find(n);
        return g != gateway_.end() && g->second.node == x;
      };
      const GraphStep* up = nullptr;
      bool ok = true;
      for (const GraphStep* s : leaving) {
        if (s->dst == x || hangs_off_x(s->dst)) continue;
        if (up) ok = false;
        up = s;
      }
      const GraphStep* down = nullptr;
      for (const GraphStep* s : in[x]) {
        if (s->src == x || hangs_off_x(s->src)) continue;
        if (down) ok = false;
        down = s;
      }
      if (!ok || !up || !down || up->dst != down->src) continue;
      // Two nodes that are each other's only way out form a core of two: neither hangs.
      auto back = gateway_.find(up->dst);
      if (back != gateway_.end() && back->second.node == x) continue;
      gateway_[x] = {up->dst, up->links, down->links};
      changed = true;
    }
  }
}

sg4::Link* LeafRoutes::link(const std::string& name) {
  auto it = by_name_.find(name);
  if (it != by_name_.end()) return it->second;
  sg4::Link* l = sg4::Link::by_name(name);
  by_name_.emplace(name, l);
  return l;
}

std::vector<std::string> LeafRoutes::chain(const std::string& node) const {
  std::vector<std::string> c{node};
  for (auto g = gateway_.find(node); g != gateway_.end(); g = gateway_.find(g->second.node))
    c.push_back(g->second.node);
  return c;
}

const std::vector<sg4::Link*>& LeafRoutes::top_route(const std::string& u, const std::string& w) {
  auto [it, fresh] = between_.try_emplace({u, w});
  if (!fresh) return it->second;
  if (by_impl_.empty())
    for (sg4::Link* l : sg4::Engine::get_instance()->get_all_links()) by_impl_[l->get_impl()] = l;
  auto* engine = sg4::Engine::get_instance();
  std::vector<simgrid::kernel::resource::StandardLinkImpl*> impls;
  simgrid::kernel::routing::NetZoneImpl::get_global_route(
      engine->netpoint_by_name(u), engine->netpoint_by_name(w), impls, nullptr);
  for (auto* impl : impls) it->second.push_back(by_impl_.at(impl));
  return it->second;
}

bool LeafRoutes::route(const std::string& a, const std::string& b, std::vector<sg4::Link*>* links,
                       double* latency) {
  if (a == b || (!gateway_.count(a) && !gateway_.count(b))) return false;
  if (!declared_.empty() && declared_.count({a, b})) return false;  // SimGrid takes the bypass
  std::vector<std::string> ca = chain(a), cb = chain(b);
  // In one tree: meet at the lowest common node, dropping the shared tops of both chains.
  bool joined = false;
  while (!ca.empty() && !cb.empty() && ca.back() == cb.back()) {
    if (ca.size() >= 2 && cb.size() >= 2 && ca[ca.size() - 2] == cb[cb.size() - 2]) {
      ca.pop_back();
      cb.pop_back();
      continue;
    }
    joined = true;
    break;
  }
  // A node outside the Dijkstra graph (an endpoint with bypass routes only) is SimGrid's.
  if (!joined && (!in_graph_.count(ca.back()) || !in_graph_.count(cb.back()))) return false;
  // SimGrid builds a route from its last step back, putting each step's links in front of the
  // rest in reverse, and adds their latencies as it goes: the list reads each step backwards,
  // and the latencies add up in the reverse of the list. Same order here, same bits.
  links->clear();
  for (size_t i = 0; i + 1 < ca.size(); ++i) {
    const auto& up = gateway_.at(ca[i]).up;
    for (auto it = up.rbegin(); it != up.rend(); ++it) links->push_back(link(*it));
  }
  if (!joined && ca.back() != cb.back())
    for (sg4::Link* l : top_route(ca.back(), cb.back())) links->push_back(l);
  for (size_t i = cb.size() - 1; i-- > 0;) {
    const auto& down = gateway_.at(cb[i]).down;
    for (auto it = down.rbegin(); it != down.rend(); ++it) links->push_back(link(*it));
  }
  double lat = 0;
  for (auto it = links->rbegin(); it != links->rend(); ++it) lat += (*it)->get_latency();
  *latency = lat;
  return true;
}

}  // namespace orrery
