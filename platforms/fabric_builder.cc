// The network between servers: each NIC's port into a switch, and the switches.
//
// "switch": one non-blocking switch, fabric_switch.
// "fat-tree": leaf switches leaf<L> of servers_per_leaf servers each, and a spine layer. ECMP
// spreads flows over all spine switches; one Dijkstra path per leaf pair would instead funnel
// them through a single spine, so the spine layer is one router, `spine`, and each leaf has one
// aggregated uplink leaf<L>_up whose capacity is the leaf's downlink capacity divided by the
// oversubscription ratio. Bisection bandwidth is then (leaves / 2) x uplink capacity, as for
// ideal ECMP; per-flow hashing collisions are not modelled.
// Latency: fabric.latency per switch, split as half on each side of it, so a NIC-switch-NIC path
// costs one switch latency and a NIC-leaf-spine-leaf-NIC path three.
#include <string>

#include "platforms/topology_writer.h"

namespace orrery {

void add_fabric(const PlatformSpec& spec, const std::vector<ServerNodes>& servers, TopoWriter& w) {
  const FabricSpec& f = spec.fabric;
  const NicSpec& nic = spec.server.nic;
  if (nic.count == 0) return;
  std::vector<std::string> leaf_of(servers.size());
  if (f.topology == "switch") {
    w.router("fabric_switch");
    for (auto& leaf : leaf_of) leaf = "fabric_switch";
  } else {
    const int leaves =
        (static_cast<int>(servers.size()) + f.servers_per_leaf - 1) / f.servers_per_leaf;
    for (int l = 0; l < leaves; ++l) w.router("leaf" + std::to_string(l));
    for (size_t n = 0; n < servers.size(); ++n)
      leaf_of[n] = "leaf" + std::to_string(static_cast<int>(n) / f.servers_per_leaf);
    if (leaves > 1) {
      w.router("spine");
      const double uplink = f.servers_per_leaf * nic.count * nic.bandwidth / f.oversubscription;
      for (int l = 0; l < leaves; ++l) {
        const std::string leaf = "leaf" + std::to_string(l);
        w.connect_step(leaf, "spine", {leaf + "_up", uplink, f.latency, true, f.kind});
      }
    }
  }
  for (size_t n = 0; n < servers.size(); ++n)
    for (const auto& name : servers[n].nics)
      w.connect_step(name, leaf_of[n],
                     {name + "_port", nic.bandwidth, nic.latency + f.latency / 2, true, f.kind});
}

}  // namespace orrery
