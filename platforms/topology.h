// Topology: a platform as an explicit graph of hosts, routers and links, plus (for generated
// platforms) the routes between them. Presets and YAML descriptions (platform_spec.h) generate
// one; simgrid_platform.h turns it into a SimGrid platform or a SimGrid XML file. Plain data.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace orrery {

// Host properties of a GPU that name its in-network reduction endpoints, present only when the
// platform has them: the NVSwitch's NVLS endpoint of its server (nvlink.sharp) and the fabric's
// SHARP endpoint (fabric.sharp). Both are hosts a GPU sends to and receives from like any peer;
// their links never limit a GPU's own.
inline constexpr const char* kNvlsHostProperty = "nvls_host";
// A GPU host's measured collective launch cost in seconds (ServerSpec::nccl_launch).
inline constexpr const char* kNcclLaunchProperty = "nccl_launch";
// A GPU host's compute capability (DeviceSpec::compute_capability, e.g. "9"), when known: NCCL's
// tuner sets NVLS channels and efficiencies by GPU generation.
inline constexpr const char* kComputeCapabilityProperty = "compute_capability";
inline constexpr const char* kCollnetHostProperty = "collnet_host";
// Their names in generated platforms: one NVLS host per server, one SHARP host per fabric.
inline std::string nvls_host_name(const std::string& server_prefix) {
  return server_prefix + "nvls";
}
inline constexpr const char* kSharpHost = "fabric_sharp";

struct TopoHost {
  std::string name;
  double speed = 1e9;  // flop/s of one core: a GPU's effective throughput, a CPU thread's speed
  int cores = 1;
  // "gpu", "cpu", "nvls", "collnet"...: used by listings and breakdowns
  std::string role;
  std::map<std::string, std::string> properties;  // e.g. "mem_bw" (bytes/s) for the roofline
};

struct TopoLink {
  std::string name;
  double bandwidth = 0.0;  // bytes/s; when duplex, of the UP direction (its edge's a -> b)
  double latency = 0.0;    // seconds
  bool duplex = true;      // full duplex: separate capacity per direction
  // "pcie", "nvlink", "qpi", "ethernet", "roce", "infiniband", "nvswitch", "sharp"...
  std::string link_class;

  // Duplex links only.
  // Capacity of the DOWN direction (b -> a); 0 means the same as `bandwidth`.
  double reverse_bandwidth = 0.0;
  // Share of the opposite direction's data rate that each direction spends on link-level
  // acknowledgements and flow control (PCIe DLLPs, coherence messages): both directions
  // together then carry at most (up + down) / (1 + duplex_overhead). 0: independent directions.
  double duplex_overhead = 0.0;

  double down_bandwidth() const { return reverse_bandwidth > 0 ? reverse_bandwidth : bandwidth; }
};

// An edge joins two nodes (host or router names) through one link; a -> b is the link's UP
// direction. Without explicit routes (below), routes are shortest paths over these edges.
struct TopoEdge {
  std::string a;
  std::string b;
  std::string link;
};

// One link crossed in one direction: forward (a -> b of its edge, UP) or reverse (DOWN).
struct TopoHop {
  std::string link;
  bool reverse = false;
};

struct TopoRoute {
  std::string src;
  std::string dst;
  std::vector<TopoHop> hops;
};

struct Topology {
  std::string name;
  std::vector<TopoHost> hosts;
  std::vector<std::string> routers;
  std::vector<TopoLink> links;
  std::vector<TopoEdge> edges;

  // Routing. When both lists are empty, a route is a shortest path (fewest links) over `edges`
  // in either direction. Otherwise `edges` only describe the hardware and:
  //  - `routes` are complete host-to-host routes, used as they are (SimGrid bypass routes);
  //  - `route_graph` is a directed graph of multi-link steps; a host pair without an entry in
  //    `routes` takes the shortest chain of steps (SimGrid Dijkstra routing over them).
  std::vector<TopoRoute> routes;
  std::vector<TopoRoute> route_graph;
};

}  // namespace orrery
