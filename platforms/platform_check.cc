// check_platform_spec: the constraints that involve several keys at once.
#include <string>

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

}  // namespace

void check_platform_spec(const PlatformSpec& spec, const SpecComplaint& complain) {
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
