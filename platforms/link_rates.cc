#include "platforms/link_rates.h"

#include <stdexcept>

namespace orrery {
namespace {

// Ethernet framing every frame pays on the wire: header 14, FCS 4, preamble and start-of-frame
// delimiter 8, and the 12-byte inter-frame gap the sender must leave idle (IEEE 802.3).
constexpr int kEthernetFraming = 14 + 4 + 8 + 12;
constexpr int kIpv4Header = 20;
// InfiniBand transport header and invariant CRC, in both InfiniBand and RoCEv2 packets.
constexpr int kBth = 12;
constexpr int kIcrc = 4;

}  // namespace

int default_nic_mtu(const std::string& fabric_kind) {
  if (fabric_kind == "infiniband" || fabric_kind == "roce") return 4096;
  if (fabric_kind == "ethernet") return 1500;
  throw std::logic_error("default_nic_mtu: unknown fabric kind \"" + fabric_kind + "\"");
}

NicWireFormat nic_wire_format(const std::string& fabric_kind, int mtu) {
  NicWireFormat w;
  w.mtu = mtu > 0 ? mtu : default_nic_mtu(fabric_kind);
  if (fabric_kind == "infiniband") {
    // Local route header 8, BTH, ICRC, and the variant CRC 2 recomputed at every hop; no GRH
    // inside one subnet (InfiniBand Architecture Specification, Vol. 1, ch. 5 and 7).
    w.payload = w.mtu;
    w.overhead = 8 + kBth + kIcrc + 2;
  } else if (fabric_kind == "roce") {
    // RoCEv2 puts the InfiniBand transport in UDP/IPv4 over Ethernet (InfiniBand Architecture
    // Specification, Annex A17); the RDMA path MTU counts payload only.
    w.payload = w.mtu;
    w.overhead = kEthernetFraming + kIpv4Header + 8 + kBth + kIcrc;
  } else if (fabric_kind == "ethernet") {
    // TCP with the timestamp option Linux enables by default (RFC 7323): 20 + 12 bytes.
    const int tcp = 20 + 12;
    w.payload = w.mtu - kIpv4Header - tcp;
    w.overhead = kEthernetFraming + kIpv4Header + tcp;
  } else {
    throw std::logic_error("nic_wire_format: unknown fabric kind \"" + fabric_kind + "\"");
  }
  if (w.payload <= 0)
    throw std::logic_error("nic_wire_format: MTU " + std::to_string(w.mtu) +
                           " leaves no payload on " + fabric_kind);
  return w;
}

NicWireFormat nic_wire_format(const PlatformSpec& spec) {
  return nic_wire_format(spec.fabric.kind, spec.server.nic.mtu);
}

double nic_data_rate(const PlatformSpec& spec) {
  return spec.server.nic.bandwidth * nic_wire_format(spec).efficiency();
}

double nvlink_data_rate(const NvlinkSpec& nvlink) { return nvlink.bandwidth * nvlink.efficiency; }

}  // namespace orrery
