// check_topology: a Topology SimGrid will accept, or an InputError naming what is wrong.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "common/errors.h"
#include "common/units.h"
#include "platforms/simgrid_platform.h"

namespace orrery {
namespace {

// Names by view into the topology, which outlives the check: a 16,384-GPU platform has half a
// million names, and sets of string copies took a tenth of loading it. Nodes with an id each.
using Nodes = std::unordered_map<std::string_view, int>;
using Links = std::unordered_set<std::string_view>;

void check_routes(const std::vector<TopoRoute>& routes, const char* what, const Nodes& nodes,
                  const Links& links, const std::string& origin) {
  auto fail = [&](const TopoRoute& r, const std::string& why) {
    throw InputError(origin + ": " + what + " " + r.src + " -> " + r.dst + " " + why);
  };
  // Each route's ends as one key, sorted afterwards to find one given twice: a million routes
  // at 65,536 GPUs, where a hash set of name pairs allocated one node each.
  std::vector<uint64_t> ends;
  ends.reserve(routes.size());
  for (const auto& r : routes) {
    auto src = nodes.find(r.src), dst = nodes.find(r.dst);
    if (src == nodes.end()) fail(r, "names unknown node \"" + r.src + "\"");
    if (dst == nodes.end()) fail(r, "names unknown node \"" + r.dst + "\"");
    if (r.src == r.dst) fail(r, "goes nowhere");
    if (r.hops.empty()) fail(r, "crosses no link");
    for (const auto& h : r.hops)
      if (!links.count(h.link)) fail(r, "uses unknown link \"" + h.link + "\"");
    ends.push_back(static_cast<uint64_t>(src->second) << 32 | static_cast<uint32_t>(dst->second));
  }
  std::vector<uint64_t> sorted = ends;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end()) return;
  // Name the first route that repeats one before it.
  std::unordered_set<uint64_t> seen;
  for (size_t k = 0; k < routes.size(); ++k)
    if (!seen.insert(ends[k]).second) fail(routes[k], "is given twice");
}

}  // namespace

void check_topology(const Topology& topo, const std::string& origin) {
  Nodes nodes;
  nodes.reserve(topo.hosts.size() + topo.routers.size());
  for (const auto& h : topo.hosts) {
    if (h.name.empty()) throw InputError(origin + ": a host has an empty name");
    if (!nodes.emplace(h.name, static_cast<int>(nodes.size())).second)
      throw InputError(origin + ": duplicate host or router name \"" + h.name + "\"");
    if (!(h.speed > 0) || !std::isfinite(h.speed))
      throw InputError(origin + ": host \"" + h.name + "\": speed must be a positive number");
    if (h.cores < 1)
      throw InputError(origin + ": host \"" + h.name + "\": cores must be at least 1");
  }
  for (const auto& r : topo.routers)
    if (!nodes.emplace(r, static_cast<int>(nodes.size())).second)
      throw InputError(origin + ": duplicate host or router name \"" + r + "\"");
  Links links;
  links.reserve(topo.links.size());
  for (const auto& l : topo.links) {
    if (!links.insert(l.name).second)
      throw InputError(origin + ": duplicate link name \"" + l.name + "\"");
    if (!(l.bandwidth > 0) || !std::isfinite(l.bandwidth))
      throw InputError(origin + ": link \"" + l.name + "\": bandwidth must be positive, got " +
                       format_exact(l.bandwidth));
    if (!(l.reverse_bandwidth >= 0) || !std::isfinite(l.reverse_bandwidth))
      throw InputError(origin + ": link \"" + l.name +
                       "\": reverse bandwidth must be positive (or 0: same as bandwidth), got " +
                       format_exact(l.reverse_bandwidth));
    if (!(l.latency >= 0) || !std::isfinite(l.latency))
      throw InputError(origin + ": link \"" + l.name + "\": latency must be >= 0, got " +
                       format_exact(l.latency));
    if (!(l.duplex_overhead >= 0 && l.duplex_overhead < 1))
      throw InputError(origin + ": link \"" + l.name +
                       "\": duplex overhead must be in [0, 1), got " +
                       format_exact(l.duplex_overhead));
  }
  for (const auto& e : topo.edges) {
    for (const auto* end : {&e.a, &e.b})
      if (!nodes.count(*end))
        throw InputError(origin + ": edge over link \"" + e.link + "\" names unknown node \"" +
                         *end + "\"");
    if (!links.count(e.link))
      throw InputError(origin + ": edge " + e.a + " - " + e.b + " uses unknown link \"" + e.link +
                       "\"");
  }
  check_routes(topo.routes, "route", nodes, links, origin);
  check_routes(topo.route_graph, "route step", nodes, links, origin);
}

}  // namespace orrery
