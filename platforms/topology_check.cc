// check_topology: a Topology SimGrid will accept, or an InputError naming what is wrong.
#include <cmath>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_set>

#include "common/errors.h"
#include "common/units.h"
#include "platforms/simgrid_platform.h"

namespace orrery {
namespace {

// Names by view into the topology, which outlives the check: a 16,384-GPU platform has half a
// million names, and sets of string copies took a tenth of loading it.
using Names = std::unordered_set<std::string_view>;

struct PairHash {
  size_t operator()(const std::pair<std::string_view, std::string_view>& p) const {
    const size_t a = std::hash<std::string_view>{}(p.first);
    return a ^
           (std::hash<std::string_view>{}(p.second) + 0x9e3779b97f4a7c15ULL + (a << 6) + (a >> 2));
  }
};

void check_routes(const std::vector<TopoRoute>& routes, const char* what, const Names& nodes,
                  const Names& links, const std::string& origin) {
  std::unordered_set<std::pair<std::string_view, std::string_view>, PairHash> seen;
  seen.reserve(routes.size());
  for (const auto& r : routes) {
    auto fail = [&](const std::string& why) {
      throw InputError(origin + ": " + what + " " + r.src + " -> " + r.dst + " " + why);
    };
    for (const auto* end : {&r.src, &r.dst})
      if (!nodes.count(*end)) fail("names unknown node \"" + *end + "\"");
    if (r.src == r.dst) fail("goes nowhere");
    if (r.hops.empty()) fail("crosses no link");
    for (const auto& h : r.hops)
      if (!links.count(h.link)) fail("uses unknown link \"" + h.link + "\"");
    if (!seen.insert({r.src, r.dst}).second) fail("is given twice");
  }
}

}  // namespace

void check_topology(const Topology& topo, const std::string& origin) {
  Names nodes;
  nodes.reserve(topo.hosts.size() + topo.routers.size());
  for (const auto& h : topo.hosts) {
    if (h.name.empty()) throw InputError(origin + ": a host has an empty name");
    if (!nodes.insert(h.name).second)
      throw InputError(origin + ": duplicate host or router name \"" + h.name + "\"");
    if (!(h.speed > 0) || !std::isfinite(h.speed))
      throw InputError(origin + ": host \"" + h.name + "\": speed must be a positive number");
    if (h.cores < 1)
      throw InputError(origin + ": host \"" + h.name + "\": cores must be at least 1");
  }
  for (const auto& r : topo.routers)
    if (!nodes.insert(r).second)
      throw InputError(origin + ": duplicate host or router name \"" + r + "\"");
  Names links;
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
