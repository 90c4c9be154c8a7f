// One server's CPUs, host memory, root complexes, PCIe tree and the PCIe side of its NICs.
//
// Shape (names below carry the server prefix n<S>_):
//   cpu<K> --memory-- rc<K> --rc-dma-- rp<J> --pcie-- sw<W> --pcie-- gpu<G> / nic<I>
//   rc<K> --qpi-- rc<L>                    (sockets K < L)
//   rp<J> --rc-p2p-- rp<M>                 (two root ports of one socket)
// A root port (rp) serves one PCIe switch, or one GPU or NIC attached without a switch. Traffic
// between two root ports of a socket turns inside the root complex through an rc-p2p link (its
// forwarding limit); traffic to host memory takes the rc-dma link (its read efficiency); traffic
// to the other socket crosses QPI. Switches with nothing under them are left out.
#include <algorithm>
#include <string>
#include <vector>

#include "common/units.h"
#include "platforms/topology_writer.h"

namespace orrery {
namespace {

// A PCIe link as the data sees it: posted writes at write_efficiency in both directions.
// Reads are answered by the root complex, so their efficiency lives on the rc-dma link.
TopoLink pcie_link(const PcieSpec& p, const std::string& name) {
  TopoLink l;
  l.name = name;
  l.bandwidth = p.bandwidth * p.write_efficiency;
  l.latency = p.latency;
  l.link_class = "pcie";
  l.duplex_overhead = p.duplex_overhead;
  return l;
}

// Socket and switch (-1: none) of every GPU and NIC.
struct Placement {
  std::vector<int> gpu_socket, gpu_switch, nic_socket, nic_switch;
};

Placement place(const ServerSpec& s) {
  const int sockets = s.cpu.sockets, per = s.pcie.switches_per_socket, switches = sockets * per;
  Placement pl;
  for (int g = 0; g < s.gpus; ++g) {
    int sw = -1, socket = 0;
    if (!s.pcie.gpu_switch.empty()) {
      sw = s.pcie.gpu_switch[g];
      socket = sw / per;
    } else if (s.gpus < sockets) {
      socket = g;  // one GPU per socket, on its first switch
      if (per > 0) sw = socket * per;
    } else {
      const int per_socket = s.gpus / sockets;
      socket = g / per_socket;
      if (per > 0) sw = socket * per + (g % per_socket) * per / per_socket;
    }
    pl.gpu_socket.push_back(socket);
    pl.gpu_switch.push_back(sw);
  }
  for (int i = 0; i < s.nic.count; ++i) {
    int sw = -1, socket = 0;
    if (i < static_cast<int>(s.nic.pcie_switch.size())) {
      sw = s.nic.pcie_switch[i];
    } else if (per > 0) {
      sw = i * switches / s.nic.count;
    }
    socket = sw >= 0 ? sw / per : i * sockets / s.nic.count;
    pl.nic_socket.push_back(socket);
    pl.nic_switch.push_back(sw);
  }
  return pl;
}

class ServerBuilder {
 public:
  ServerBuilder(const PlatformSpec& spec, int index, TopoWriter& w)
      : s_(server_spec(spec, index)),
        sharp_fabric_(spec.fabric.sharp),
        w_(w),
        pl_(place(server_spec(spec, index))) {
    out_.index = index;
    out_.group = server_group_of(spec, index);
    out_.prefix = "n" + std::to_string(index) + "_";
    out_.nvlink_topology = s_.nvlink.topology;
    out_.nvlink_nonadjacent = s_.nvlink.nonadjacent;
  }

  ServerNodes build() {
    add_sockets();
    add_switches();
    add_gpus();
    add_nics();
    add_root_complex_p2p();
    return out_;
  }

 private:
  std::string name(const std::string& what, int i) const {
    return out_.prefix + what + std::to_string(i);
  }

  void add_sockets() {
    const CpuSpec& c = s_.cpu;
    std::vector<int> gpus_on(c.sockets, 0);
    for (int socket : pl_.gpu_socket) ++gpus_on[socket];
    for (int k = 0; k < c.sockets; ++k) {
      const std::string cpu = name("cpu", k), rc = name("rc", k);
      // One core per GPU the socket launches kernels for: each GPU gets its own host thread.
      w_.host({cpu,
               c.flops,
               std::max(1, gpus_on[k]),
               "cpu",
               {{"mem_bw", format_exact(c.mem_bw)},
                {"model", c.model},
                {"server", std::to_string(out_.index)},
                {"socket", std::to_string(k)}}});
      out_.cpus.push_back(cpu);
      w_.router(rc);
      // DRAM bandwidth is shared by reads and writes: one half-duplex link.
      TopoLink mem{cpu + "_mem", c.mem_bw, 0.0, false, "memory"};
      w_.connect(cpu, rc, mem);
    }
    out_.root_complex = name("rc", 0);
    for (int k = 0; k < c.sockets; ++k)
      for (int l = k + 1; l < c.sockets; ++l) {
        TopoLink q{
            out_.prefix + "qpi" + (c.sockets == 2 ? "" : std::to_string(k) + std::to_string(l)),
            c.qpi_bandwidth, c.qpi_latency, true, "qpi"};
        q.duplex_overhead = c.qpi_duplex_overhead;
        w_.connect(name("rc", k), name("rc", l), q);
      }
    ports_.resize(c.sockets);
  }

  // A new root port of `socket`, linked to its root complex's memory side.
  std::string root_port(int socket) {
    const PcieSpec& p = s_.pcie;
    const std::string rp = name("rp", next_port_++);
    w_.router(rp);
    TopoLink dma{rp + "_dma", p.bandwidth * p.write_efficiency, 0.0, true, "rc-dma"};
    dma.reverse_bandwidth = p.bandwidth * p.read_efficiency;  // host memory -> device: reads
    w_.connect(rp, name("rc", socket), dma);
    ports_[socket].push_back(rp);
    return rp;
  }

  void add_switches() {
    const int per = s_.pcie.switches_per_socket;
    std::vector<bool> used(s_.cpu.sockets * per, false);
    for (int sw : pl_.gpu_switch)
      if (sw >= 0) used[sw] = true;
    for (int sw : pl_.nic_switch)
      if (sw >= 0) used[sw] = true;
    for (size_t sw = 0; sw < used.size(); ++sw) {
      if (!used[sw]) continue;
      const std::string name_sw = name("sw", static_cast<int>(sw));
      w_.router(name_sw);
      w_.connect(name_sw, root_port(static_cast<int>(sw) / per),
                 pcie_link(s_.pcie, name_sw + "_up"));
    }
  }

  std::string parent(int sw, int socket) { return sw >= 0 ? name("sw", sw) : root_port(socket); }

  void add_gpus() {
    const DeviceSpec& g = s_.gpu;
    for (int i = 0; i < s_.gpus; ++i) {
      const std::string gpu = name("gpu", i);
      TopoHost host{gpu,
                    g.fp32,
                    1,
                    "gpu",
                    {{"mem_bw", format_exact(g.mem_bw)},
                     {"model", g.name},
                     {"sms", std::to_string(g.sms)},
                     {"server", std::to_string(out_.index)},
                     {"socket", std::to_string(pl_.gpu_socket[i])},
                     {"launch_host", name("cpu", pl_.gpu_socket[i])}}};
      // The endpoints themselves are added with the NVSwitch and the fabric.
      if (s_.nvlink.sharp) host.properties[kNvlsHostProperty] = nvls_host_name(out_.prefix);
      if (s_.nccl_launch > 0) host.properties[kNcclLaunchProperty] = format_exact(s_.nccl_launch);
      if (g.compute_capability > 0)
        host.properties[kComputeCapabilityProperty] = format_exact(g.compute_capability);
      if (sharp_fabric_) host.properties[kCollnetHostProperty] = kSharpHost;
      w_.host(std::move(host));
      out_.gpus.push_back(gpu);
      w_.connect(gpu, parent(pl_.gpu_switch[i], pl_.gpu_socket[i]),
                 pcie_link(s_.pcie, gpu + "_pcie"));
    }
  }

  void add_nics() {
    for (int i = 0; i < s_.nic.count; ++i) {
      const std::string nic = name("nic", i);
      w_.router(nic);
      out_.nics.push_back(nic);
      w_.connect(nic, parent(pl_.nic_switch[i], pl_.nic_socket[i]),
                 pcie_link(s_.pcie, nic + "_pcie"));
    }
  }

  void add_root_complex_p2p() {
    const PcieSpec& p = s_.pcie;
    // 0 means "no limit beyond the PCIe links": forward at the links' own rate.
    const double bw = p.root_complex_p2p_bandwidth > 0 ? p.root_complex_p2p_bandwidth
                                                       : p.bandwidth * p.write_efficiency;
    for (const auto& ports : ports_)
      for (size_t a = 0; a < ports.size(); ++a)
        for (size_t b = a + 1; b < ports.size(); ++b) {
          TopoLink l{ports[a] + "_" + ports[b].substr(out_.prefix.size()) + "_p2p", bw, 0.0, true,
                     "rc-p2p"};
          l.duplex_overhead = p.duplex_overhead;  // forwarded traffic is PCIe traffic
          w_.connect(ports[a], ports[b], l);
        }
  }

  const ServerSpec& s_;
  const bool sharp_fabric_;
  TopoWriter& w_;
  Placement pl_;
  ServerNodes out_;
  int next_port_ = 0;
  std::vector<std::vector<std::string>> ports_;  // root ports of each socket
};

}  // namespace

ServerNodes add_server(const PlatformSpec& spec, int index, TopoWriter& w) {
  return ServerBuilder(spec, index, w).build();
}

}  // namespace orrery
