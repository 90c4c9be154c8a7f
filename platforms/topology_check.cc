// check_topology: a Topology SimGrid will accept, or an InputError naming what is wrong.
#include <cmath>
#include <set>
#include <string>

#include "common/errors.h"
#include "common/units.h"
#include "platforms/simgrid_platform.h"

namespace orrery {
namespace {

void check_routes(const std::vector<TopoRoute>& routes, const char* what,
                  const std::set<std::string>& nodes, const std::set<std::string>& links,
                  const std::string& origin) {
  std::set<std::pair<std::string, std::string>> seen;
  for (const auto& r : routes) {
    const std::string name = std::string(what) + " " + r.src + " -> " + r.dst;
    for (const auto* end : {&r.src, &r.dst})
      if (!nodes.count(*end))
        throw InputError(origin + ": " + name + " names unknown node \"" + *end + "\"");
    if (r.src == r.dst) throw InputError(origin + ": " + name + " goes nowhere");
    if (r.hops.empty()) throw InputError(origin + ": " + name + " crosses no link");
    for (const auto& h : r.hops)
      if (!links.count(h.link))
        throw InputError(origin + ": " + name + " uses unknown link \"" + h.link + "\"");
    if (!seen.insert({r.src, r.dst}).second)
      throw InputError(origin + ": " + name + " is given twice");
  }
}

}  // namespace

void check_topology(const Topology& topo, const std::string& origin) {
  std::set<std::string> nodes;
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
  std::set<std::string> links;
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
