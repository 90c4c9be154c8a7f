#include "platforms/platform_describe.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <limits>
#include <map>
#include <sstream>
#include <tuple>

#include "common/units.h"
#include "platforms/link_rates.h"
#include "platforms/routing.h"

namespace orrery {
namespace {

std::string pad(std::string s, size_t width) {
  if (s.size() < width) s.resize(width, ' ');
  return s;
}

// "n0_gpu3" -> "gpu", "leaf2" -> "leaf", "n1_rp0_rp1_p2p" -> "rp": the kind a generated name
// starts with once its server prefix is gone.
std::string kind_of(const std::string& name) {
  std::string rest = name;
  if (rest.size() > 1 && rest[0] == 'n' && std::isdigit(static_cast<unsigned char>(rest[1]))) {
    auto us = rest.find('_');
    if (us != std::string::npos) rest = rest.substr(us + 1);
  }
  size_t end = 0;
  while (end < rest.size() && std::isalpha(static_cast<unsigned char>(rest[end]))) ++end;
  return end == 0 ? rest : rest.substr(0, end);
}

}  // namespace

std::string describe_spec(const PlatformSpec& s) {
  std::ostringstream o;
  const ServerSpec& v = s.server;
  char share[32];
  o << "platform " << s.name;
  if (!s.description.empty()) o << ": " << s.description;
  o << "\n";
  auto server_lines = [&](int servers, const ServerSpec& k, const std::string& indent) {
    o << indent << servers << " server(s) x " << k.gpus << " " << k.gpu.name << ", "
      << k.cpu.sockets << " x " << k.cpu.model << ", PCIe " << format_bandwidth(k.pcie.bandwidth)
      << "\n";
    // Signalling rates are what datasheets print; links carry the achievable ones
    // (link_rates.h).
    if (k.nvlink.topology != "none") {
      std::snprintf(share, sizeof share, "%.4g", k.nvlink.efficiency);
      o << indent << "NVLink " << k.nvlink.topology << ": " << k.nvlink.links_per_gpu << " links x "
        << format_bandwidth(k.nvlink.bandwidth)
        << " per GPU = " << format_bandwidth(k.nvlink.links_per_gpu * k.nvlink.bandwidth)
        << " signalling, " << format_bandwidth(k.nvlink.links_per_gpu * nvlink_data_rate(k.nvlink))
        << " achievable (efficiency " << share << ")";
      if (k.nvlink.sharp) o << "; NVLink SHARP: host " << nvls_host_name("n<S>_");
      o << "\n";
    }
  };
  if (s.server_groups.empty()) {
    server_lines(s.servers, v, "  ");
  } else {
    o << "  " << s.servers << " servers in " << s.server_groups.size() << " groups:\n";
    int first = 0;
    for (const ServerGroup& g : s.server_groups) {
      o << "  - n" << first << (g.servers > 1 ? "-n" + std::to_string(first + g.servers - 1) : "")
        << ":\n";
      server_lines(g.servers, g.server, "    ");
      first += g.servers;
    }
  }
  if (v.nic.count == 0) {
    o << "  no NICs\n";
  } else {
    const NicWireFormat wire = nic_wire_format(s);
    std::snprintf(share, sizeof share, "%.4f", wire.efficiency());
    o << "  NICs: " << v.nic.count << " x " << v.nic.model << ", "
      << format_bandwidth(v.nic.bandwidth) << " line rate, " << format_bandwidth(nic_data_rate(s))
      << " achievable (" << s.fabric.kind << " packets of " << wire.payload << " B data + "
      << wire.overhead << " B = " << share << ")\n";
    o << "  fabric: " << s.fabric.kind << " " << s.fabric.topology;
    if (s.fabric.topology == "fat-tree")
      o << " (" << s.fabric.servers_per_leaf << " servers per leaf, " << s.fabric.oversubscription
        << ":1)";
    if (s.fabric.topology == "rail-optimized")
      o << " (" << v.nic.count << " rails, " << s.fabric.servers_per_leaf << " servers per unit, "
        << s.fabric.oversubscription << ":1)";
    if (s.fabric.sharp) o << "; SHARP: host " << kSharpHost;
    o << "\n";
  }
  if (!s.sources.empty()) {
    o << "sources:\n";
    for (const auto& src : s.sources) o << "  - " << src << "\n";
  }
  return o.str();
}

std::string describe_nodes(const Topology& topo) {
  std::map<std::string, std::pair<int, std::string>> hosts;  // role/model -> count, first
  for (const auto& h : topo.hosts) {
    auto model = h.properties.find("model");
    std::string key = h.role + (model == h.properties.end() ? "" : " " + model->second);
    auto& e = hosts[key];
    if (e.first++ == 0) e.second = h.name;
  }
  std::map<std::string, std::pair<int, std::string>> routers;
  for (const auto& r : topo.routers) {
    auto& e = routers[kind_of(r)];
    if (e.first++ == 0) e.second = r;
  }
  std::ostringstream o;
  o << "hosts (" << topo.hosts.size() << "):\n";
  for (const auto& [key, e] : hosts)
    o << "  " << pad(key, 24) << pad(std::to_string(e.first), 6) << "e.g. " << e.second << "\n";
  o << "routers (" << topo.routers.size() << "):\n";
  for (const auto& [key, e] : routers)
    o << "  " << pad(key, 24) << pad(std::to_string(e.first), 6) << "e.g. " << e.second << "\n";
  return o.str();
}

std::string describe_links(const Topology& topo) {
  using Key = std::tuple<std::string, double, double, double, double, bool>;
  std::map<Key, std::pair<int, std::string>> groups;
  for (const auto& l : topo.links) {
    Key k{l.link_class, l.bandwidth,       l.duplex ? l.down_bandwidth() : 0.0,
          l.latency,    l.duplex_overhead, l.duplex};
    auto& e = groups[k];
    if (e.first++ == 0) e.second = l.name;
  }
  std::ostringstream o;
  o << "links by class (" << topo.links.size() << "):\n  " << pad("class", 12) << pad("count", 7)
    << pad("up", 13) << pad("down", 13) << pad("latency", 10) << pad("overhead", 10) << "e.g.\n";
  for (const auto& [k, e] : groups) {
    const auto& [cls, up, down, lat, overhead, duplex] = k;
    char ov[16];
    std::snprintf(ov, sizeof ov, "%.4g", overhead);
    o << "  " << pad(cls, 12) << pad(std::to_string(e.first), 7) << pad(format_bandwidth(up), 13)
      << pad(duplex ? format_bandwidth(down) : "(shared)", 13) << pad(format_time(lat), 10)
      << pad(overhead > 0 ? ov : "-", 10) << e.second << "\n";
  }
  return o.str();
}

std::string describe_route(const Topology& topo, const std::string& a, const std::string& b) {
  RouteFinder finder(topo);
  auto route = finder.route(a, b);
  std::ostringstream o;
  o << "route " << a << " -> " << b << " (" << route_relation(finder, route) << ", " << route.size()
    << " links):\n";
  double bottleneck = std::numeric_limits<double>::infinity(), latency = 0;
  for (const auto& s : route) {
    const TopoLink& l = finder.link(s.hop.link);
    double bw = s.hop.reverse ? l.down_bandwidth() : l.bandwidth;
    bottleneck = std::min(bottleneck, bw);
    latency += l.latency;
    o << "  " << pad(s.from + " -> " + s.to, 34) << pad(l.name, 26) << pad(l.link_class, 12)
      << pad(format_bandwidth(bw), 13) << format_time(l.latency) << "\n";
  }
  o << "  bottleneck " << format_bandwidth(bottleneck) << ", latency " << format_time(latency)
    << "\n";
  return o.str();
}

}  // namespace orrery
