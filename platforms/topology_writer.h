// Internal to the platform generator (build_topology): the pieces that add one part of the
// machine each, and the small writer they share.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "platforms/platform_spec.h"

namespace orrery {

class TopoWriter {
 public:
  explicit TopoWriter(Topology* topo) : topo_(topo) {}

  void host(TopoHost h) { topo_->hosts.push_back(std::move(h)); }
  void router(const std::string& name) { topo_->routers.push_back(name); }
  // Adds `link` between a and b; a -> b is its UP direction.
  void connect(const std::string& a, const std::string& b, TopoLink link) {
    topo_->edges.push_back({a, b, link.name});
    topo_->links.push_back(std::move(link));
  }
  // As connect, and the link is also a step of the route graph in both directions.
  void connect_step(const std::string& a, const std::string& b, TopoLink link) {
    topo_->route_graph.push_back({a, b, {{link.name, false}}});
    topo_->route_graph.push_back({b, a, {{link.name, true}}});
    connect(a, b, std::move(link));
  }
  Topology& topo() { return *topo_; }

 private:
  Topology* topo_;
};

// What the route builder needs to know about one server.
struct ServerNodes {
  int index = 0;
  int group = 0;                   // server_group_of: a group's servers differ in their prefix only
  std::string prefix;              // "n<index>_"
  std::vector<std::string> gpus;   // host names, in GPU order
  std::vector<std::string> cpus;   // host names, one per socket
  std::vector<std::string> nics;   // router names, in NIC order
  std::string root_complex;        // a router every host reaches (for NIC-less servers)
  std::string nvlink_topology;     // spec.server.nvlink.topology
  std::string nvlink_nonadjacent;  // spec.server.nvlink.nonadjacent
  std::string nvswitch;            // router name, when nvlink_topology is nvswitch
  std::string nvls;                // NVLS host and its link to the NVSwitch (nvlink.sharp)
  std::string nvls_link;
  // Cube mesh: the link joining GPUs i < j, and how many NVLinks it bundles.
  std::map<std::pair<int, int>, std::pair<std::string, int>> nvlink_pairs;
};

// CPUs, memory, root complexes, the PCIe tree, the NICs' PCIe side (server_builder.cc).
ServerNodes add_server(const PlatformSpec& spec, int index, TopoWriter& w);
// NVLink cube mesh or NVSwitch of one server, and its NVLS host (nvlink_builder.cc).
void add_nvlink(const PlatformSpec& spec, ServerNodes& server, TopoWriter& w);
// NIC ports, the switches between servers and the SHARP host (fabric_builder.cc).
void add_fabric(const PlatformSpec& spec, const std::vector<ServerNodes>& servers, TopoWriter& w);
// Host-to-host routes inside each server and host-to-NIC steps (route_builder.cc).
void add_server_routes(const std::vector<ServerNodes>& servers, Topology& topo);

// The cube-mesh adjacency of DGX-1: GPU pairs (i < j) and their link counts.
std::map<std::pair<int, int>, int> cube_mesh_pairs(int links_per_gpu);

}  // namespace orrery
