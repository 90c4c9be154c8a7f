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
    if (!(v >= 0 && v <= 1)) complain(key, "must be a share between 0 and 1, got " + std::to_string(v));
}

}  // namespace

void check_platform_spec(const PlatformSpec& spec, const SpecComplaint& complain) {
  check_ranges(spec, complain);
  const ServerSpec& s = spec.server;
  const int switches = s.cpu.sockets * s.pcie.switches_per_socket;

  // The NVLink shape first: it explains a wrong GPU count better than the socket split does.
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
    if (s.gpus % s.cpu.sockets != 0)
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
}

}  // namespace orrery
