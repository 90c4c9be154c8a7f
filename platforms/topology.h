// Topology: a platform as an explicit graph of hosts, routers and links. Presets and YAML
// descriptions (platform_spec.h) generate one; simgrid_platform.h turns it into a SimGrid
// platform or a SimGrid XML file. Plain data.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace orrery {

struct TopoHost {
  std::string name;
  double speed = 1e9;  // flop/s of one core: a GPU's effective throughput, a CPU thread's speed
  int cores = 1;
  std::string role;  // "gpu", "cpu", "nic"...: used by listings and breakdowns
  std::map<std::string, std::string> properties;  // e.g. "mem_bw" (bytes/s) for the roofline
};

struct TopoLink {
  std::string name;
  double bandwidth = 0.0;  // bytes/s, per direction when duplex
  double latency = 0.0;    // seconds
  bool duplex = true;      // full duplex: separate capacity per direction (SimGrid SPLITDUPLEX)
  std::string link_class;  // "pcie", "nvlink", "qpi", "ethernet", "infiniband", "nic"...
};

// An edge joins two nodes (host or router names) through one link. Routes are shortest paths
// (fewest hops, ties broken deterministically) over these edges.
struct TopoEdge {
  std::string a;
  std::string b;
  std::string link;
};

struct Topology {
  std::string name;
  std::vector<TopoHost> hosts;
  std::vector<std::string> routers;
  std::vector<TopoLink> links;
  std::vector<TopoEdge> edges;
};

}  // namespace orrery
