// check_platform_spec: the constraints that involve several keys at once.
#include <string>

#include "common/input_limits.h"
#include "platforms/platform_spec.h"

namespace orrery {
namespace {

std::string str(int v) { return std::to_string(v); }

void check_indices(const std::vector<int>& list, int switches, const std::string& key,
                   const std::string& what, const SpecComplaint& complain) {
  for (size_t i = 0; i < list.size(); ++i) {
    if (switches == 0)
      complain(key, "the server has no PCIe switches (server.pcie.switches_per_socket is 0), so " +
                        what + " " + str(static_cast<int>(i)) + " cannot sit on switch " +
                        str(list[i]));
    if (list[i] >= switches)
      complain(key, what + " " + str(static_cast<int>(i)) + " is on PCIe switch " + str(list[i]) +
                        ", which does not exist (the server has " + str(switches) +
                        " switches, numbered 0 to " + str(switches - 1) + ")");
  }
}

// Every number of the spec within its accepted range (common/input_limits.h), before any of
// them is multiplied: `bandwidth: 1e-300Bps` or `gpus: 1000000000` stop here, named.
void check_ranges(const PlatformSpec& spec, const SpecComplaint& complain) {
  const ServerSpec& s = spec.server;
  auto in = [&](const std::string& key, double v, const Range& r) {
    if (!r.contains(v)) complain(key, out_of_range(v, r));
  };
  in("servers", spec.servers, limits::kServers);
  in("server.gpus", s.gpus, limits::kGpusPerServer);
  // Both within range, so the product fits a double exactly and an int below.
  const double gpus = static_cast<double>(spec.servers) * s.gpus;
  if (!limits::kGpus.contains(gpus))
    complain("servers", std::to_string(spec.servers) + " servers of " + str(s.gpus) +
                            " GPUs make " + format_quantity(gpus, Quantity::kCount) +
                            " GPUs, over the accepted range, " + limits::kGpus.text());
  in("server.gpu.fp32", s.gpu.fp32, limits::kFlopRate);
  in("server.gpu.mem_bw", s.gpu.mem_bw, limits::kBandwidth);
  in("server.gpu.sms", s.gpu.sms, limits::kSms);
  in("server.cpu.sockets", s.cpu.sockets, limits::kPerServerParts);
  in("server.cpu.flops", s.cpu.flops, limits::kFlopRate);
  in("server.cpu.mem_bw", s.cpu.mem_bw, limits::kBandwidth);
  in("server.cpu.qpi_bandwidth", s.cpu.qpi_bandwidth, limits::kBandwidth);
  in("server.cpu.qpi_latency", s.cpu.qpi_latency, limits::kLatency);
  in("server.pcie.bandwidth", s.pcie.bandwidth, limits::kBandwidth);
  in("server.pcie.latency", s.pcie.latency, limits::kLatency);
  in("server.pcie.switches_per_socket", s.pcie.switches_per_socket, limits::kPerServerParts);
  if (s.pcie.root_complex_p2p_bandwidth != 0)  // 0: no limit
    in("server.pcie.root_complex_p2p_bandwidth", s.pcie.root_complex_p2p_bandwidth,
       limits::kBandwidth);
  in("server.nvlink.bandwidth", s.nvlink.bandwidth, limits::kBandwidth);
  in("server.nvlink.latency", s.nvlink.latency, limits::kLatency);
  in("server.nvlink.links_per_gpu", s.nvlink.links_per_gpu, limits::kPerServerParts);
  in("server.nic.count", s.nic.count, limits::kPerServerParts);
  in("server.nic.bandwidth", s.nic.bandwidth, limits::kBandwidth);
  in("server.nic.latency", s.nic.latency, limits::kLatency);
  in("fabric.latency", spec.fabric.latency, limits::kLatency);
  in("fabric.servers_per_leaf", spec.fabric.servers_per_leaf, limits::kServers);
  in("fabric.oversubscription", spec.fabric.oversubscription, limits::kOversubscription);
  // Ratios: NaN passes the parser's comparisons, so test them here as well.
  const std::pair<const char*, double> shares[] = {
      {"server.pcie.write_efficiency", s.pcie.write_efficiency},
      {"server.pcie.read_efficiency", s.pcie.read_efficiency},
      {"server.pcie.duplex_overhead", s.pcie.duplex_overhead},
      {"server.cpu.qpi_duplex_overhead", s.cpu.qpi_duplex_overhead}};
  for (const auto& [key, v] : shares)
    if (!(v >= 0 && v <= 1))
      complain(key, "must be a share between 0 and 1, got " + std::to_string(v));
  if (!(s.nvlink.efficiency > 0 && s.nvlink.efficiency <= 1))
    complain("server.nvlink.efficiency",
             "must be a share in (0, 1], got " + std::to_string(s.nvlink.efficiency));
}

// The MTUs a fabric kind can carry: InfiniBand path MTUs (RoCE negotiates the same ones), and
// for TCP/IP the IP MTUs from IPv4's minimum datagram every host accepts to jumbo frames.
void check_mtu(const PlatformSpec& spec, const SpecComplaint& complain) {
  const int mtu = spec.server.nic.mtu;
  if (mtu == 0) return;  // the kind's default
  const std::string& kind = spec.fabric.kind;
  if (kind == "ethernet") {
    if (mtu < 576 || mtu > 9216)
      complain("server.nic.mtu", "an Ethernet IP MTU is between 576 and 9216 bytes, got " +
                                     str(mtu) + " (fabric.kind: ethernet)");
  } else if (mtu != 256 && mtu != 512 && mtu != 1024 && mtu != 2048 && mtu != 4096) {
    complain("server.nic.mtu",
             "an InfiniBand path MTU is 256, 512, 1024, 2048 or 4096 bytes, got " + str(mtu) +
                 " (fabric.kind: " + kind + ")");
  }
}

// In-network reduction needs the hardware that does it.
void check_sharp(const PlatformSpec& spec, const SpecComplaint& complain) {
  const ServerSpec& s = spec.server;
  if (s.nvlink.sharp && s.nvlink.topology != "nvswitch")
    complain("server.nvlink.sharp",
             "NVLink SHARP reduces inside an NVSwitch, but server.nvlink.topology is " +
                 s.nvlink.topology + " (set it to nvswitch, or sharp to false)");
  if (spec.fabric.sharp && spec.fabric.kind != "infiniband")
    complain("fabric.sharp", "SHARP reduces inside InfiniBand switches, but fabric.kind is " +
                                 spec.fabric.kind + " (set it to infiniband, or sharp to false)");
  if (spec.fabric.sharp && s.nic.count == 0)
    complain("fabric.sharp",
             "SHARP reduces inside the fabric, which GPUs reach through NICs: server.nic.count "
             "is 0");
}

// Rail k of a rail-optimized fabric is NIC k of every server; the GPUs must share the rails
// evenly, or the fabric is rail-optimized in name only.
void check_rails(const PlatformSpec& spec, const SpecComplaint& complain) {
  if (spec.fabric.topology != "rail-optimized") return;
  const int gpus = spec.server.gpus, nics = spec.server.nic.count;
  if (nics == 0) {
    complain("server.nic.count",
             "a rail-optimized fabric (fabric.topology: rail-optimized) joins NIC k of every "
             "server to rail switch k, but the server has no NICs");
    return;
  }
  if (gpus % nics != 0 && nics % gpus != 0) {
    std::string even;
    for (int d = 1; d <= gpus; ++d)
      if (gpus % d == 0) even += (even.empty() ? "" : ", ") + str(d);
    complain("server.nic.count",
             "a rail-optimized fabric (fabric.topology: rail-optimized) has one rail per NIC, "
             "and " +
                 str(gpus) + " GPUs cannot share " + str(nics) + " rails evenly (use " + even +
                 " NICs or a multiple of " + str(gpus) + ", or fabric.topology: fat-tree)");
  }
}

void check_one_kind(const PlatformSpec& spec, const SpecComplaint& complain) {
  check_ranges(spec, complain);
  const ServerSpec& s = spec.server;
  const int switches = s.cpu.sockets * s.pcie.switches_per_socket;

  // The NVLink shape first: it explains a wrong GPU count better than the socket split does.
  if (s.nvlink.topology == "bridge" && s.gpus % 2 != 0)
    complain("server.gpus", "NVLink bridges (server.nvlink.topology: bridge) pair the GPUs, got " +
                                str(s.gpus) + " GPUs");
  if (s.nvlink.topology == "cube-mesh") {
    if (s.gpus != 8)
      complain("server.gpus",
               "an NVLink hybrid cube mesh (server.nvlink.topology: cube-mesh) "
               "connects exactly 8 GPUs, got " +
                   str(s.gpus));
    if (s.nvlink.links_per_gpu != 4 && s.nvlink.links_per_gpu != 6)
      complain("server.nvlink.links_per_gpu",
               "a hybrid cube mesh gives each GPU 4 links (DGX-1 P100) or 6 (DGX-1 V100), got " +
                   str(s.nvlink.links_per_gpu));
  }

  if (s.pcie.gpu_switch.empty()) {
    // Fewer GPUs than sockets (one GPU of a DGX) sit one per socket from the first.
    if (s.gpus % s.cpu.sockets != 0 && s.gpus > s.cpu.sockets)
      complain("server.gpus", str(s.gpus) + " GPUs cannot be split evenly over " +
                                  str(s.cpu.sockets) +
                                  " CPU sockets (or place them with server.pcie.gpu_switch)");
  } else {
    if (static_cast<int>(s.pcie.gpu_switch.size()) != s.gpus)
      complain("server.pcie.gpu_switch",
               "lists " + str(static_cast<int>(s.pcie.gpu_switch.size())) +
                   " switches but the server has " + str(s.gpus) + " GPUs (server.gpus)");
    check_indices(s.pcie.gpu_switch, switches, "server.pcie.gpu_switch", "GPU", complain);
  }

  if (static_cast<int>(s.nic.pcie_switch.size()) > s.nic.count)
    complain("server.nic.pcie_switch", "places " + str(static_cast<int>(s.nic.pcie_switch.size())) +
                                           " NICs but the server has " + str(s.nic.count) +
                                           " (server.nic.count)");
  check_indices(s.nic.pcie_switch, switches, "server.nic.pcie_switch", "NIC", complain);

  if (spec.servers > 1 && s.nic.count == 0)
    complain("server.nic.count",
             str(spec.servers) + " servers need at least one NIC each to reach each other");

  check_mtu(spec, complain);
  check_sharp(spec, complain);
  check_rails(spec, complain);
}

}  // namespace

void check_platform_spec(const PlatformSpec& spec, const SpecComplaint& complain) {
  check_one_kind(spec, complain);
  // A mixed cluster: every group's server as if all servers were of its kind.
  int servers = 0;
  for (size_t i = 0; i < spec.server_groups.size(); ++i) {
    const ServerGroup& g = spec.server_groups[i];
    const std::string where = "server_groups[" + str(static_cast<int>(i)) + "]";
    if (g.servers < 1) complain(where, "must hold at least one server");
    if (g.server.gpus != spec.server.gpus || g.server.nic.count != spec.server.nic.count ||
        g.server.nic.bandwidth != spec.server.nic.bandwidth)
      complain(where, "GPU count and NICs are the platform's, the same in every server");
    servers += g.servers;
    PlatformSpec one = spec;
    one.server = g.server;
    one.server_groups.clear();
    check_one_kind(one, [&](const std::string& key, const std::string& message) {
      complain(where + "." + key, message);
    });
  }
  if (!spec.server_groups.empty() && servers != spec.servers)
    complain("servers",
             "is " + str(spec.servers) + " but the server_groups add up to " + str(servers));
}

}  // namespace orrery
