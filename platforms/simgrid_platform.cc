#include "platforms/simgrid_platform.h"

#include <cmath>
#include <cstdio>
#include <set>
#include <simgrid/s4u.hpp>
#include <sstream>
#include <unordered_map>

#include "engine/errors.h"

namespace sg4 = simgrid::s4u;

namespace orrery {
namespace {

std::string fmt(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::string xml_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace

void apply_network_config() {
  // CM02 is the plain max-min model; LV08's hidden 13.01x latency and 0.97x bandwidth factors
  // would blur the link classes we calibrate explicitly (ARCHITECTURE.md, fact 4).
  sg4::Engine::set_config("network/model:CM02");
  sg4::Engine::set_config("network/TCP-gamma:0");
  sg4::Engine::set_config("network/crosstraffic:0");
  sg4::Engine::set_config("network/latency-factor:1");
  sg4::Engine::set_config("network/bandwidth-factor:1");
  sg4::Engine::set_config("network/weight-S:0");
}

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
                       fmt(l.bandwidth));
    if (!(l.latency >= 0) || !std::isfinite(l.latency))
      throw InputError(origin + ": link \"" + l.name + "\": latency must be >= 0, got " +
                       fmt(l.latency));
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
}

void build_simgrid_platform(const Topology& topo) {
  check_topology(topo, "platform " + topo.name);
  auto* zone = sg4::create_dijkstra_zone(topo.name.empty() ? "orrery" : topo.name, true);
  std::unordered_map<std::string, simgrid::kernel::routing::NetPoint*> points;
  for (const auto& h : topo.hosts) {
    auto* host = zone->create_host(h.name, h.speed);
    host->set_core_count(h.cores);
    for (const auto& [k, v] : h.properties) host->set_property(k, v);
    host->seal();
    points[h.name] = host->get_netpoint();
  }
  for (const auto& r : topo.routers) points[r] = zone->create_router(r);

  std::unordered_map<std::string, const TopoLink*> spec;
  std::unordered_map<std::string, sg4::Link*> made;
  for (const auto& l : topo.links) {
    sg4::Link* link = l.duplex ? zone->create_split_duplex_link(l.name, l.bandwidth)
                               : zone->create_link(l.name, l.bandwidth);
    link->set_latency(l.latency)->seal();
    made[l.name] = link;
    spec[l.name] = &l;
  }
  for (const auto& e : topo.edges) {
    const auto* l = spec[e.link];
    // Direction UP for a->b; the symmetrical route b->a then takes the DOWN half.
    sg4::LinkInRoute hop = l->duplex
                               ? sg4::LinkInRoute(made[e.link], sg4::LinkInRoute::Direction::UP)
                               : sg4::LinkInRoute(made[e.link]);
    zone->add_route(points[e.a], points[e.b], nullptr, nullptr, {hop}, true);
  }
  // Pure delays (analytical collectives) run here: no links, cores enough never to contend.
  zone->create_host(kTimerHost, kTimerSpeed)->set_core_count(kTimerCores)->seal();
  zone->seal();
}

void load_platform(const PlatformSource& source) {
  auto* engine = sg4::Engine::get_instance();
  if (!source.xml_file.empty()) {
    engine->load_platform(source.xml_file);
  } else {
    build_simgrid_platform(source.topology);
  }
  engine->seal_platform();
}

std::string topology_to_simgrid_xml(const Topology& topo) {
  check_topology(topo, "platform " + topo.name);
  std::ostringstream x;
  x << "<?xml version='1.0'?>\n"
    << "<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
    << "<!-- Generated by Orrery from platform \"" << xml_escape(topo.name) << "\" -->\n"
    << "<platform version=\"4.1\">\n"
    << "  <zone id=\"" << xml_escape(topo.name.empty() ? "orrery" : topo.name)
    << "\" routing=\"DijkstraCache\">\n";
  for (const auto& h : topo.hosts) {
    x << "    <host id=\"" << xml_escape(h.name) << "\" speed=\"" << fmt(h.speed) << "f\" core=\""
      << h.cores << "\"";
    if (h.properties.empty()) {
      x << "/>\n";
      continue;
    }
    x << ">\n";
    for (const auto& [k, v] : h.properties)
      x << "      <prop id=\"" << xml_escape(k) << "\" value=\"" << xml_escape(v) << "\"/>\n";
    x << "    </host>\n";
  }
  for (const auto& r : topo.routers) x << "    <router id=\"" << xml_escape(r) << "\"/>\n";
  for (const auto& l : topo.links)
    x << "    <link id=\"" << xml_escape(l.name) << "\" bandwidth=\"" << fmt(l.bandwidth)
      << "Bps\" latency=\"" << fmt(l.latency) << "s\" sharing_policy=\""
      << (l.duplex ? "SPLITDUPLEX" : "SHARED") << "\"/>\n";
  std::unordered_map<std::string, bool> duplex;
  for (const auto& l : topo.links) duplex[l.name] = l.duplex;
  for (const auto& e : topo.edges) {
    x << "    <route src=\"" << xml_escape(e.a) << "\" dst=\"" << xml_escape(e.b)
      << "\" symmetrical=\"YES\"><link_ctn id=\"" << xml_escape(e.link) << "\"";
    if (duplex[e.link]) x << " direction=\"UP\"";
    x << "/></route>\n";
  }
  x << "    <host id=\"" << kTimerHost << "\" speed=\"" << fmt(kTimerSpeed) << "f\" core=\""
    << kTimerCores << "\"/>\n";
  x << "  </zone>\n</platform>\n";
  return x.str();
}

}  // namespace orrery
