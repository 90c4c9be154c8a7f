// PlatformSpec: the hardware a user describes once and sweeps. Built from a preset
// (platforms/presets/*.yaml, embedded in the binary) with the scenario's keys merged on top, so
// every bandwidth, latency, count and model is a key a scenario or a sweep can override.
// The YAML reference, with the meaning and source of every key, is docs/platforms.md.
#pragma once

#include <yaml-cpp/yaml.h>

#include <functional>
#include <string>
#include <vector>

#include "platforms/device_spec.h"
#include "platforms/topology.h"

namespace orrery {

struct PcieSpec {
  double bandwidth = 15.75e9;  // bytes/s per direction of one link (raw signalling rate)
  double latency = 1e-6;       // seconds per link
  // Share of `bandwidth` that carries data: posted writes (device -> host DMA, peer-to-peer) and
  // reads answered with completions (host -> device DMA). 1: bandwidth is the data rate.
  double write_efficiency = 1.0;
  double read_efficiency = 1.0;
  // See TopoLink::duplex_overhead; 0: the two directions never slow each other.
  double duplex_overhead = 0.0;
  int switches_per_socket = 1;  // 0: GPUs and NICs hang directly off CPU root ports
  // PCIe switch index of each GPU (switches are numbered socket-major); empty: spread evenly.
  std::vector<int> gpu_switch;
  // Peer-to-peer traffic between two root ports of one socket is forwarded by the root complex
  // at this rate per direction; 0 means no limit beyond the PCIe links.
  double root_complex_p2p_bandwidth = 0;
};

struct CpuSpec {
  std::string model = "Xeon";
  int sockets = 1;
  double flops = 1e11;            // per core (one host thread per GPU)
  double mem_bw = 100e9;          // host memory bandwidth per socket, reads and writes together
  double qpi_bandwidth = 19.2e9;  // socket interconnect, bytes/s per direction
  double qpi_latency = 1e-6;
  double qpi_duplex_overhead = 0.0;  // see TopoLink::duplex_overhead
};

struct NvlinkSpec {
  // "none", "cube-mesh" (DGX-1), "nvswitch", "bridge" (PCIe cards paired by NVLink bridges:
  // GPUs 0-1, 2-3, ...; the pairs reach each other over PCIe)
  std::string topology = "none";
  double bandwidth = 25e9;  // bytes/s per link per direction: the signalling rate
  // Share of `bandwidth` that carries data (platforms/link_rates.h). 0.8 unless a preset says
  // otherwise: NCCL prices an NVLink 2 or 3 link at 20 of its 25 GB/s, and its maintainer puts
  // application-level NVLink bandwidth at about 80% of the line rate (docs/platforms.md).
  double efficiency = 0.8;
  double latency = 1e-6;
  // Links leaving each GPU. nvswitch: all go to the switch fabric. bridge: all to its pair.
  // cube-mesh: 4 (one link to
  // each of 4 neighbours, DGX-1 P100) or 6 (two of the neighbours get a second link, DGX-1V).
  int links_per_gpu = 6;
  // cube-mesh pairs without a direct link: "nvlink" relays through a GPU adjacent to both (as
  // NCCL's P2P transport does, path type NVB), "pcie" takes the PCIe tree.
  std::string nonadjacent = "nvlink";
  // NVLink SHARP (NVSwitch gen 3 and later reduce in the switch): nvswitch only. Adds a host
  // <server prefix>nvls, the switch's reduction endpoint, and names it in every GPU's host
  // property "nvls_host".
  bool sharp = false;
};

struct NicSpec {
  std::string model = "NIC";
  int count = 1;
  double bandwidth = 25e9 / 8;  // bytes/s per direction: the line rate
  double latency = 1e-6;
  std::vector<int> pcie_switch;  // PCIe switch index of each NIC (default: spread evenly)
  // Largest packet as the fabric kind counts it (platforms/link_rates.h); 0: the kind's default,
  // 4096 for infiniband and roce, 1500 for ethernet. Sets the share of `bandwidth` that is data.
  int mtu = 0;
};

struct ServerSpec {
  int gpus = 8;
  // The GPU of every server: the one device description that the platform (SimGrid host speed =
  // gpu.fp32), the cost models and every header and result file use (platforms/device_spec.h).
  // Without a `gpu` key: V100-SXM2.
  DeviceSpec gpu = default_gpu();
  CpuSpec cpu;
  PcieSpec pcie;
  NvlinkSpec nvlink;
  NicSpec nic;
  // The per-collective launch cost of this server's GPUs, host and NCCL as measured: what a
  // ring LL collective costs beyond its steps (NCCL's tuner assumes 6.6 us; its other
  // protocols' and algorithms' base latencies move by the same difference). 0: the tuner's.
  // Every GPU host carries it as the property "nccl_launch".
  double nccl_launch = 0;
};

struct FabricSpec {
  // "ethernet" (TCP/IP), "roce" (RoCEv2) or "infiniband": the link class of NIC ports and
  // switch links, and the packet format that sets the NICs' data rate (link_rates.h).
  std::string kind = "ethernet";
  // "switch" (one switch), "fat-tree" (leaves and spine, all NICs of a server on its leaf) or
  // "rail-optimized" (NIC k of every server on rail switch k, rail switches joined by a spine).
  std::string topology = "switch";
  double latency = 1e-6;  // per switch traversed
  // fat-tree: servers under one leaf switch. rail-optimized: servers in one scalable unit, whose
  // NIC k share one rail switch.
  int servers_per_leaf = 16;
  double oversubscription = 1.0;  // fat-tree, rail-optimized: leaf downlink / uplink capacity
  // SHARP (in-network reduction in InfiniBand switches): infiniband only. Adds a host
  // "fabric_sharp" at the top of the fabric and names it in every GPU's host property
  // "collnet_host".
  bool sharp = false;
};

// Servers of one kind among servers of several on one fabric (V100, A100 and H100 servers).
struct ServerGroup {
  int servers = 1;
  ServerSpec server;
};

struct PlatformSpec {
  std::string name;
  std::string description;
  std::vector<std::string> sources;  // where the numbers come from
  int servers = 1;
  // Every server's, or with server_groups the first group's.
  ServerSpec server;
  // A mixed cluster (`server_groups`): consecutive servers by group, in order, `servers` in
  // all. Each group's server is `server` with the group's keys (gpu, cpu, pcie, nvlink)
  // replacing its values; GPU count and NICs are the platform's, the same in every server.
  // Empty: every server is `server`.
  std::vector<ServerGroup> server_groups;
  FabricSpec fabric;
};

// Server n's spec (0 <= n < spec.servers).
const ServerSpec& server_spec(const PlatformSpec& spec, int n);
// Index into spec.server_groups of server n; 0 without groups.
int server_group_of(const PlatformSpec& spec, int n);

// Names of the built-in presets, sorted.
std::vector<std::string> platform_preset_names();
// The preset's YAML text; throws InputError for an unknown name, listing the known ones.
const std::string& platform_preset_yaml(const std::string& name);

// Reads a platform mapping: `preset: NAME` (optional) and any keys of the preset's tree, which
// replace the preset's values. Unknown keys and bad values are InputErrors naming the file,
// line and key; so are combinations the hardware cannot have (check_platform_spec).
PlatformSpec parse_platform_spec(const YAML::Node& node, const std::string& origin,
                                 const std::string& key_path = "platform");

// Called with the dotted key (relative to the platform mapping, e.g. "server.nvlink.topology")
// and what is wrong with it; must throw.
using SpecComplaint = std::function<void(const std::string& key, const std::string& message)>;
// Checks what single keys cannot: GPU counts the NVLink topology cannot hold, GPUs or NICs on
// PCIe switches that do not exist, several servers without NICs...
void check_platform_spec(const PlatformSpec& spec, const SpecComplaint& complain);

// The memory the platform will take once built (hosts, links, explicit routes, their SimGrid
// side), from the spec's counts alone. See common/size_guard.h.
struct SizeEstimate;
SizeEstimate estimate_platform_size(const PlatformSpec& spec);

// The SimGrid-ready graph of the platform, with its routes (routing policy in
// docs/platforms.md). Host names: n<S>_gpu<G>, n<S>_cpu<K>, and the in-network reduction
// endpoints n<S>_nvls (nvlink.sharp, role "nvls") and fabric_sharp (fabric.sharp, role
// "collnet"), reachable from GPUs only; the GPUs are listed in server-major order. Throws
// InputError for specs the interconnect cannot hold and for platforms over the process's size
// limits (estimate_platform_size), before building anything.
Topology build_topology(const PlatformSpec& spec);

// The GPU host names of a topology built by build_topology, in order.
std::vector<std::string> gpu_hosts(const Topology& topo);
// Host name of the CPU thread that launches kernels for `gpu_host` (its socket's CPU).
std::string launch_host_of(const Topology& topo, const std::string& gpu_host);

}  // namespace orrery
