// The network between servers: each NIC's port into a switch, and the switches. Every fabric
// link carries the NICs' achievable data rate (platforms/link_rates.h), not their line rate.
//
// "switch": one non-blocking switch, fabric_switch.
// "fat-tree": leaf switches leaf<L> of servers_per_leaf servers each, and a spine layer. ECMP
// spreads flows over all spine switches; one Dijkstra path per leaf pair would instead funnel
// them through a single spine, so the spine layer is one router, `spine`, and each leaf has one
// aggregated uplink leaf<L>_up whose capacity is the leaf's downlink capacity divided by the
// oversubscription ratio. Bisection bandwidth is then (leaves / 2) x uplink capacity, as for
// ideal ECMP; per-flow hashing collisions are not modelled.
// "rail-optimized" (NVIDIA DGX SuperPOD): servers come in scalable units of servers_per_leaf;
// in each unit, NIC k of every server plugs into rail switch k, rail<K> (rail<K>_su<U> when
// there are several units). Rail switches have aggregated uplinks to the spine, as leaves do.
// NICs of one rail and unit talk through one switch; anything else crosses the spine.
// Latency: fabric.latency per switch, split as half on each side of it, so a NIC-switch-NIC path
// costs one switch latency and a NIC-leaf-spine-leaf-NIC path three.
//
// SHARP (fabric.sharp): the switches' aggregation is a host, fabric_sharp, on the top of the
// fabric (the switch, the spine, or the only leaf or rail) through a link of class "sharp" that
// never binds: a GPU's flow to it is limited by the GPU's NIC, as on an inter-server route.
#include <algorithm>
#include <string>

#include "common/input_limits.h"
#include "platforms/link_rates.h"
#include "platforms/topology_writer.h"

namespace orrery {
namespace {

// The spine and the aggregated uplinks of `switches`, each serving servers_per_leaf servers'
// NICs (`nics_per_server` of them each). Returns the top of the fabric.
std::string add_spine(const std::vector<std::string>& switches, int nics_per_server, double port,
                      const FabricSpec& f, TopoWriter& w) {
  if (switches.size() == 1) return switches.front();
  w.router("spine");
  const double uplink = f.servers_per_leaf * nics_per_server * port / f.oversubscription;
  for (const auto& sw : switches)
    w.connect_step(sw, "spine", {sw + "_up", uplink, f.latency, true, f.kind});
  return "spine";
}

}  // namespace

void add_fabric(const PlatformSpec& spec, const std::vector<ServerNodes>& servers, TopoWriter& w) {
  const FabricSpec& f = spec.fabric;
  const NicSpec& nic = spec.server.nic;
  if (nic.count == 0) return;
  const double port = nic_data_rate(spec);
  // switch_of[n][i]: the switch NIC i of server n plugs into.
  std::vector<std::vector<std::string>> switch_of(servers.size());
  std::string top;
  if (f.topology == "switch") {
    w.router("fabric_switch");
    for (auto& s : switch_of) s.assign(nic.count, "fabric_switch");
    top = "fabric_switch";
  } else {
    const int units =
        (static_cast<int>(servers.size()) + f.servers_per_leaf - 1) / f.servers_per_leaf;
    const bool rails = f.topology == "rail-optimized";
    auto leaf = [&](int unit, int rail) {
      if (!rails) return "leaf" + std::to_string(unit);
      return "rail" + std::to_string(rail) + (units > 1 ? "_su" + std::to_string(unit) : "");
    };
    std::vector<std::string> leaves;
    for (int u = 0; u < units; ++u)
      for (int k = 0; k < (rails ? nic.count : 1); ++k) leaves.push_back(leaf(u, k));
    for (const auto& l : leaves) w.router(l);
    for (size_t n = 0; n < servers.size(); ++n)
      for (int i = 0; i < nic.count; ++i)
        switch_of[n].push_back(leaf(static_cast<int>(n) / f.servers_per_leaf, rails ? i : 0));
    // A fat-tree leaf serves all of a server's NICs, a rail switch one of them.
    top = add_spine(leaves, rails ? 1 : nic.count, port, f, w);
  }
  for (size_t n = 0; n < servers.size(); ++n)
    for (size_t i = 0; i < servers[n].nics.size(); ++i) {
      const std::string& name = servers[n].nics[i];
      w.connect_step(name, switch_of[n][i],
                     {name + "_port", port, nic.latency + f.latency / 2, true, f.kind});
    }
  if (f.sharp) {
    w.host({kSharpHost, 1e9, 1, "collnet", {}});  // speed unused: nothing computes on it
    const double all_ports = 2.0 * static_cast<double>(servers.size()) * nic.count * port;
    w.connect_step(kSharpHost, top,
                   {std::string(kSharpHost) + "_link", std::min(all_ports, limits::kBandwidth.hi),
                    0.0, true, "sharp"});
  }
}

}  // namespace orrery
