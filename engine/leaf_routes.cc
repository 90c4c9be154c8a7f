#include "engine/leaf_routes.h"

#include <algorithm>
#include <simgrid/kernel/routing/NetZoneImpl.hpp>
#include <simgrid/s4u.hpp>

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
  auto id_of = [this](const std::string& n) {
    auto [it, fresh] = id_.try_emplace(n, static_cast<int>(name_.size()));
    if (fresh) name_.push_back(n);
    return it->second;
  };
  id_.reserve(steps.size());
  std::vector<std::pair<int, int>> ends(steps.size());
  for (size_t i = 0; i < steps.size(); ++i) ends[i] = {id_of(steps[i].src), id_of(steps[i].dst)};
  const int n = static_cast<int>(name_.size());
  std::vector<std::vector<int>> out(n), in(n);  // step indices by node
  for (size_t i = 0; i < steps.size(); ++i) {
    out[ends[i].first].push_back(static_cast<int>(i));
    in[ends[i].second].push_back(static_cast<int>(i));
  }
  gateway_.resize(n);
  // Rounds until nothing changes: a node hangs off y once all its other neighbours hang off it.
  for (bool changed = true; changed;) {
    changed = false;
    for (int x = 0; x < n; ++x) {
      if (gateway_[x].node >= 0 || out[x].empty()) continue;
      auto hangs_off_x = [&](int v) { return gateway_[v].node == x; };
      int up = -1, down = -1;
      bool ok = true;
      for (int s : out[x]) {
        const int d = ends[s].second;
        if (d == x || hangs_off_x(d)) continue;
        if (up >= 0) ok = false;
        up = s;
      }
      for (int s : in[x]) {
        const int from = ends[s].first;
        if (from == x || hangs_off_x(from)) continue;
        if (down >= 0) ok = false;
        down = s;
      }
      if (!ok || up < 0 || down < 0 || ends[up].second != ends[down].first) continue;
      // Two nodes that are each other's only way out form a core of two: neither hangs.
      const int y = ends[up].second;
      if (gateway_[y].node == x) continue;
      gateway_[x] = {y, steps[up].links, steps[down].links};
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

void LeafRoutes::chain(int node, std::vector<int>* out) const {
  out->assign(1, node);
  for (int g = gateway_[node].node; g >= 0; g = gateway_[g].node) out->push_back(g);
}

const std::vector<sg4::Link*>& LeafRoutes::top_route(int u, int w) {
  auto [it, fresh] = between_.try_emplace({u, w});
  if (!fresh) return it->second;
  if (by_impl_.empty())
    for (sg4::Link* l : sg4::Engine::get_instance()->get_all_links()) by_impl_[l->get_impl()] = l;
  auto* engine = sg4::Engine::get_instance();
  std::vector<simgrid::kernel::resource::StandardLinkImpl*> impls;
  simgrid::kernel::routing::NetZoneImpl::get_global_route(
      engine->netpoint_by_name(name_[u]), engine->netpoint_by_name(name_[w]), impls, nullptr);
  for (auto* impl : impls) it->second.push_back(by_impl_.at(impl));
  return it->second;
}

bool LeafRoutes::chains(const std::string& a, const std::string& b, bool* across_tops) {
  if (a == b) return false;
  const auto ia = id_.find(a), ib = id_.find(b);
  // A node outside the Dijkstra graph (an endpoint with bypass routes only) is SimGrid's.
  if (ia == id_.end() || ib == id_.end()) return false;
  if (gateway_[ia->second].node < 0 && gateway_[ib->second].node < 0) return false;
  if (!declared_.empty() && declared_.count({a, b})) return false;  // SimGrid takes the bypass
  std::vector<int>& ca = ca_;
  std::vector<int>& cb = cb_;
  chain(ia->second, &ca);
  chain(ib->second, &cb);
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
  *across_tops = !joined && ca.back() != cb.back();
  return true;
}

// SimGrid builds a route from its last step back, putting each step's links in front of the
// rest in reverse, and adds their latencies as it goes: the list reads each step backwards, and
// the latencies add up in the reverse of the list. Same order here, same bits.
void LeafRoutes::chain_names(std::vector<const std::string*>* up,
                             std::vector<const std::string*>* down) const {
  up->clear();
  down->clear();
  for (size_t i = 0; i + 1 < ca_.size(); ++i) {
    const auto& steps = gateway_[ca_[i]].up;
    for (auto it = steps.rbegin(); it != steps.rend(); ++it) up->push_back(&*it);
  }
  for (size_t i = cb_.size() - 1; i-- > 0;) {
    const auto& steps = gateway_[cb_[i]].down;
    for (auto it = steps.rbegin(); it != steps.rend(); ++it) down->push_back(&*it);
  }
}

bool LeafRoutes::route(const std::string& a, const std::string& b, std::vector<sg4::Link*>* links,
                       double* latency) {
  bool across_tops = false;
  if (!chains(a, b, &across_tops)) return false;
  chain_names(&up_, &down_);
  links->clear();
  for (const std::string* name : up_) links->push_back(link(*name));
  if (across_tops)
    for (sg4::Link* l : top_route(ca_.back(), cb_.back())) links->push_back(l);
  for (const std::string* name : down_) links->push_back(link(*name));
  double lat = 0;
  for (auto it = links->rbegin(); it != links->rend(); ++it) lat += (*it)->get_latency();
  *latency = lat;
  return true;
}

bool LeafRoutes::route_names(const std::string& a, const std::string& b,
                             std::vector<const std::string*>* names) {
  bool across_tops = false;
  if (!chains(a, b, &across_tops) || across_tops) return false;  // tops: SimGrid's Dijkstra
  chain_names(names, &down_);
  names->insert(names->end(), down_.begin(), down_.end());
  return true;
}

bool LeafRoutes::one_tree() const {
  int tops = 0;
  for (const Gateway& g : gateway_) tops += g.node < 0;
  return tops == 1;
}

}  // namespace orrery
