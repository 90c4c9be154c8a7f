// PlatformSpec: the hardware a user describes once and sweeps. Built from a preset
// (platforms/presets/*.yaml, embedded in the binary) with the scenario's keys merged on top, so
// every bandwidth, latency, count and model is a key a scenario or a sweep can override.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "platforms/topology.h"

namespace orrery {

struct GpuSpec {
  std::string model = "V100";
  double flops = 15.7e12;  // peak flop/s used as the SimGrid host speed
  double mem_bw = 900e9;   // bytes/s, for the roofline
  int sms = 80;
};

struct PcieSpec {
  double bandwidth = 15.75e9;   // bytes/s per direction of an x16 link
  double latency = 1e-6;        // seconds per hop
  int switches_per_socket = 1;  // 0: GPUs hang directly off the CPU root complex
  // Peer-to-peer traffic that turns inside a root complex (no PCIe switch on the path) is
  // forwarded by the CPU at this rate; 0 means no limit beyond the links.
  double root_complex_p2p_bandwidth = 0;
};

struct CpuSpec {
  int sockets = 1;
  double flops = 1e11;            // per core (one host thread per GPU)
  double mem_bw = 100e9;          // host memory bandwidth, bytes/s
  double qpi_bandwidth = 19.2e9;  // socket interconnect, bytes/s per direction
  double qpi_latency = 1e-6;
};

struct NvlinkSpec {
  std::string topology = "none";  // "none", "cube-mesh" (DGX-1), "nvswitch"
  double bandwidth = 25e9;        // bytes/s per link per direction
  double latency = 1e-6;
  int links_per_gpu = 6;  // nvswitch: links from each GPU into the switch fabric
};

struct NicSpec {
  int count = 1;
  double bandwidth = 25e9 / 8;  // bytes/s per direction
  double latency = 1e-6;
  std::vector<int> pcie_switch;  // PCIe switch index of each NIC (default: spread evenly)
};

struct ServerSpec {
  int gpus = 8;
  GpuSpec gpu;
  CpuSpec cpu;
  PcieSpec pcie;
  NvlinkSpec nvlink;
  NicSpec nic;
};

struct FabricSpec {
  std::string kind = "ethernet";    // "ethernet" or "infiniband": the link class
  std::string topology = "switch";  // "switch" (one switch) or "fat-tree" (leaf/spine)
  double latency = 1e-6;            // per switch hop
  int servers_per_leaf = 16;        // fat-tree only
  double oversubscription = 1.0;    // fat-tree only: leaf downlink / uplink capacity
};

struct PlatformSpec {
  std::string name;
  std::string description;
  std::vector<std::string> sources;  // where the numbers come from
  int servers = 1;
  ServerSpec server;
  FabricSpec fabric;
};

// Names of the built-in presets, sorted.
std::vector<std::string> platform_preset_names();
// The preset's YAML text; throws InputError for an unknown name, listing the known ones.
const std::string& platform_preset_yaml(const std::string& name);

// Reads a platform mapping: `preset: NAME` (optional) and any keys of the preset's tree, which
// replace the preset's values. Unknown keys and bad values are InputErrors naming the key.
PlatformSpec parse_platform_spec(const YAML::Node& node, const std::string& origin,
                                 const std::string& key_path = "platform");

// The SimGrid-ready graph of the platform. Host names: n<S>_gpu<G>, n<S>_cpu<K>; the GPUs are
// listed in server-major order. Throws InputError for specs the interconnect cannot hold.
Topology build_topology(const PlatformSpec& spec);

// The GPU host names of a topology built by build_topology, in order.
std::vector<std::string> gpu_hosts(const Topology& topo);
// Host name of the CPU thread that launches kernels for `gpu_host` (its socket's CPU).
std::string launch_host_of(const Topology& topo, const std::string& gpu_host);

}  // namespace orrery
