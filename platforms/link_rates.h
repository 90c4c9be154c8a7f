// Achievable data rates of the NVLink and NIC link classes: the share of the signalling rate a
// spec gives that carries payload. The topology builders give SimGrid links these rates, so
// flows, analytical collectives and `orrery platform bench` all see them. PCIe has its own
// measured efficiencies (PcieSpec). The arithmetic and its sources are in docs/platforms.md,
// "Achievable bandwidth".
#pragma once

#include <string>

#include "platforms/platform_spec.h"

namespace orrery {

// One full packet of a NIC's fabric kind (FabricSpec::kind), in bytes.
struct NicWireFormat {
  int mtu = 0;       // as the fabric counts it (see default_nic_mtu)
  int payload = 0;   // data carried
  int overhead = 0;  // everything else on the wire: headers, CRCs, framing, inter-frame gap
  // payload / (payload + overhead): the share of the line rate that carries data.
  double efficiency() const { return static_cast<double>(payload) / (payload + overhead); }
};

// The MTU each fabric kind uses unless `server.nic.mtu` says otherwise: 4096 for infiniband and
// roce (the InfiniBand path MTU: payload bytes after the transport header), 1500 for ethernet
// (the IP MTU, which counts the IP and TCP headers). Throws std::logic_error for other kinds.
int default_nic_mtu(const std::string& fabric_kind);

// The packet of `fabric_kind` with this MTU (0: default_nic_mtu). The caller checks the MTU
// first (check_platform_spec); a payload of zero or less is a std::logic_error.
//   infiniband: LRH 8 + BTH 12 + ICRC 4 + VCRC 2 = 26 B per packet, payload = MTU;
//   roce (RoCEv2): Ethernet 14 + FCS 4 + preamble/SFD 8 + inter-frame gap 12 + IPv4 20 +
//     UDP 8 + BTH 12 + ICRC 4 = 82 B, payload = MTU;
//   ethernet (TCP/IP): Ethernet framing 38 + IPv4 20 + TCP 20 + TCP timestamps 12 = 90 B,
//     payload = MTU - 52 (the IP MTU holds the IP and TCP headers).
NicWireFormat nic_wire_format(const std::string& fabric_kind, int mtu);

// The spec's NIC packet: nic_wire_format(fabric.kind, server.nic.mtu).
NicWireFormat nic_wire_format(const PlatformSpec& spec);

// Bytes/s of data one NIC port carries per direction: nic.bandwidth x the wire efficiency.
double nic_data_rate(const PlatformSpec& spec);

// Bytes/s of data one NVLink carries per direction: nvlink.bandwidth x nvlink.efficiency.
double nvlink_data_rate(const NvlinkSpec& nvlink);

}  // namespace orrery
