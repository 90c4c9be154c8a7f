// build_topology: PlatformSpec -> Topology. One function per part of the machine.
#include <string>

#include "engine/errors.h"
#include "platforms/platform_spec.h"

namespace orrery {
namespace {

std::string num(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

class Builder {
 public:
  explicit Builder(const PlatformSpec& spec) : spec_(spec) { topo_.name = spec.name; }

  Topology build() {
    const auto& s = spec_.server;
    if (s.gpus % s.cpu.sockets != 0)
      throw InputError("platform.server.gpus: " + std::to_string(s.gpus) +
                       " GPUs cannot be split evenly over " + std::to_string(s.cpu.sockets) +
                       " CPU sockets");
    if (s.nvlink.topology != "none")
      throw InputError("platform.server.nvlink.topology: \"" + s.nvlink.topology +
                       "\" is not supported by this build of the platform generator");
    if (spec_.fabric.topology != "switch")
      throw InputError("platform.fabric.topology: \"" + spec_.fabric.topology +
                       "\" is not supported by this build of the platform generator");
    topo_.routers.push_back("fabric_switch");
    for (int n = 0; n < spec_.servers; ++n) add_server(n);
    return topo_;
  }

 private:
  std::string pre(int n) const { return "n" + std::to_string(n) + "_"; }

  void link(const std::string& a, const std::string& b, const std::string& name, double bw,
            double lat, const std::string& cls) {
    topo_.links.push_back({name, bw, lat, true, cls});
    topo_.edges.push_back({a, b, name});
  }

  void add_server(int n) {
    const auto& s = spec_.server;
    const std::string p = pre(n);
    const int sockets = s.cpu.sockets;
    const int gpus_per_socket = s.gpus / sockets;
    const int sw_per_socket = s.pcie.switches_per_socket;

    for (int k = 0; k < sockets; ++k) {
      std::string rc = p + "rc" + std::to_string(k);
      std::string cpu = p + "cpu" + std::to_string(k);
      topo_.routers.push_back(rc);
      TopoHost h{cpu, s.cpu.flops, gpus_per_socket, "cpu", {{"mem_bw", num(s.cpu.mem_bw)}}};
      topo_.hosts.push_back(h);
      link(cpu, rc, cpu + "_mem", s.cpu.mem_bw, 0.0, "memory");
      if (k > 0)
        link(p + "rc0", rc, p + "qpi" + std::to_string(k), s.cpu.qpi_bandwidth, s.cpu.qpi_latency,
             "qpi");
      for (int w = 0; w < sw_per_socket; ++w) {
        std::string sw = p + "sw" + std::to_string(k * sw_per_socket + w);
        topo_.routers.push_back(sw);
        link(rc, sw, sw + "_up", s.pcie.bandwidth, s.pcie.latency, "pcie");
      }
    }
    for (int g = 0; g < s.gpus; ++g) {
      int k = g / gpus_per_socket;
      std::string parent = p + "rc" + std::to_string(k);
      if (sw_per_socket > 0) {
        int w = (g % gpus_per_socket) * sw_per_socket / gpus_per_socket;
        parent = p + "sw" + std::to_string(k * sw_per_socket + w);
      }
      std::string gpu = p + "gpu" + std::to_string(g);
      TopoHost h{gpu,
                 s.gpu.flops,
                 1,
                 "gpu",
                 {{"mem_bw", num(s.gpu.mem_bw)},
                  {"model", s.gpu.model},
                  {"sms", std::to_string(s.gpu.sms)},
                  {"launch_host", p + "cpu" + std::to_string(k)}}};
      topo_.hosts.push_back(h);
      link(gpu, parent, gpu + "_pcie", s.pcie.bandwidth, s.pcie.latency, "pcie");
    }
    add_nics(n);
  }

  void add_nics(int n) {
    const auto& s = spec_.server;
    const std::string p = pre(n);
    const int switches = s.cpu.sockets * s.pcie.switches_per_socket;
    for (int i = 0; i < s.nic.count; ++i) {
      std::string nic = p + "nic" + std::to_string(i);
      std::string parent;
      if (switches > 0) {
        int w = i < static_cast<int>(s.nic.pcie_switch.size()) ? s.nic.pcie_switch[i]
                                                               : i * switches / s.nic.count;
        if (w < 0 || w >= switches)
          throw InputError("platform.server.nic.pcie_switch[" + std::to_string(i) +
                           "]: PCIe switch " + std::to_string(w) +
                           " does not exist (the server has " + std::to_string(switches) + ")");
        parent = p + "sw" + std::to_string(w);
      } else {
        parent = p + "rc" + std::to_string(i * s.cpu.sockets / s.nic.count);
      }
      topo_.routers.push_back(nic);
      link(nic, parent, nic + "_pcie", s.pcie.bandwidth, s.pcie.latency, "pcie");
      // Half the switch latency on each port: a server-to-server path crosses two ports, one
      // switch.
      link(nic, "fabric_switch", nic + "_port", s.nic.bandwidth,
           s.nic.latency + spec_.fabric.latency / 2, spec_.fabric.kind);
    }
  }

  const PlatformSpec& spec_;
  Topology topo_;
};

}  // namespace

Topology build_topology(const PlatformSpec& spec) { return Builder(spec).build(); }

}  // namespace orrery
