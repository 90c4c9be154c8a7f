// Achievable link rates (platforms/link_rates.h): each fabric kind's packet worked out by hand,
// and the NVLink and NIC links of generated platforms carrying signalling rate x share, in the
// topology, in SimGrid and in `orrery platform show`.
#include "platforms/link_rates.h"

#include <gtest/gtest.h>

#include "common/yaml_reader.h"
#include "platforms/platform_describe.h"
#include "platforms/platform_probe.h"
#include "platforms/routing.h"

namespace orrery {
namespace {

PlatformSpec spec_of(const std::string& yaml) {
  return parse_platform_spec(load_yaml_text(yaml, "t.yaml"), "t.yaml", "platform");
}

double link_bandwidth(const Topology& t, const std::string& name) {
  for (const auto& l : t.links)
    if (l.name == name) return l.bandwidth;
  ADD_FAILURE() << "no link " << name;
  return 0;
}

TEST(LinkRates, InfinibandPacket) {
  // LRH 8 + BTH 12 + ICRC 4 + VCRC 2 = 26 bytes around a 4096-byte payload: 4096 / 4122.
  NicWireFormat w = nic_wire_format("infiniband", 0);
  EXPECT_EQ(w.mtu, 4096);
  EXPECT_EQ(w.payload, 4096);
  EXPECT_EQ(w.overhead, 26);
  EXPECT_NEAR(w.efficiency(), 0.9936923823, 1e-10);
  // A 2048-byte path MTU pays the same headers on half the data: 2048 / 2074.
  EXPECT_NEAR(nic_wire_format("infiniband", 2048).efficiency(), 0.9874638380, 1e-10);
}

TEST(LinkRates, RocePacket) {
  // Ethernet header 14 + FCS 4 + preamble/SFD 8 + inter-frame gap 12 + IPv4 20 + UDP 8 + BTH 12
  // + ICRC 4 = 82 bytes around the 4096-byte RDMA payload: 4096 / 4178.
  NicWireFormat w = nic_wire_format("roce", 0);
  EXPECT_EQ(w.mtu, 4096);
  EXPECT_EQ(w.payload, 4096);
  EXPECT_EQ(w.overhead, 82);
  EXPECT_NEAR(w.efficiency(), 0.9803733844, 1e-10);
  // Without jumbo frames on the switches: 1024 / 1106.
  EXPECT_NEAR(nic_wire_format("roce", 1024).efficiency(), 0.9258589512, 1e-10);
}

TEST(LinkRates, TcpOverEthernetPacket) {
  // The 1500-byte IP MTU holds IPv4 20 + TCP 20 + timestamps 12, so 1448 bytes of data; the wire
  // adds header 14 + FCS 4 + preamble/SFD 8 + gap 12: 1448 / 1538.
  NicWireFormat w = nic_wire_format("ethernet", 0);
  EXPECT_EQ(w.mtu, 1500);
  EXPECT_EQ(w.payload, 1448);
  EXPECT_EQ(w.overhead, 90);
  EXPECT_NEAR(w.efficiency(), 0.9414824447, 1e-10);
  // Jumbo frames: 8948 / 9038.
  EXPECT_NEAR(nic_wire_format("ethernet", 9000).efficiency(), 0.9900420447, 1e-10);
}

TEST(LinkRates, SpecRatesAndDefaults) {
  // A hand-written platform: 25 Gb/s Ethernet and the documented NVLink default, 0.8.
  PlatformSpec s = spec_of("servers: 1\n");
  EXPECT_DOUBLE_EQ(s.server.nvlink.efficiency, 0.8);
  EXPECT_EQ(s.server.nic.mtu, 0);
  EXPECT_NEAR(nic_data_rate(s), 25e9 / 8 * 1448 / 1538, 1);
  EXPECT_DOUBLE_EQ(nvlink_data_rate(s.server.nvlink), 20e9);
  PlatformSpec ndr = spec_of("preset: dgx-h100\n");
  EXPECT_NEAR(nic_data_rate(ndr), 50e9 * 4096 / 4122, 1);
  EXPECT_NEAR(nvlink_data_rate(ndr.server.nvlink), 20.6e9, 1);
  PlatformSpec jumbo = spec_of("preset: pai-pcie\nserver: {nic: {mtu: 9000}}\n");
  EXPECT_NEAR(nic_data_rate(jumbo), 25e9 / 8 * 8948 / 9038, 1);
}

TEST(LinkRates, NvlinkLinksCarryTheAchievableRate) {
  // NVSwitch: a GPU's links bundled, 12 x 25 GB/s x 0.8 on A100, 18 x 25 GB/s x 0.824 on H100.
  Topology a100 = build_topology(spec_of("preset: dgx-a100\nservers: 1\n"));
  EXPECT_DOUBLE_EQ(link_bandwidth(a100, "n0_gpu0_nvlink"), 12 * 25e9 * 0.8);
  Topology h100 = build_topology(spec_of("preset: dgx-h100\nservers: 1\n"));
  EXPECT_NEAR(link_bandwidth(h100, "n0_gpu7_nvlink"), 370.8e9, 1);
  // Cube mesh: one link (0-1) or two (0-3) of 25 GB/s at 0.8.
  Topology dgx1 = build_topology(spec_of("preset: dgx1-v100\nservers: 1\n"));
  EXPECT_DOUBLE_EQ(link_bandwidth(dgx1, "n0_nvl0_1"), 20e9);
  EXPECT_DOUBLE_EQ(link_bandwidth(dgx1, "n0_nvl0_3"), 40e9);
  // The share is a key like any other.
  Topology raw =
      build_topology(spec_of("preset: dgx-a100\nservers: 1\nserver: {nvlink: {efficiency: 1}}\n"));
  EXPECT_DOUBLE_EQ(link_bandwidth(raw, "n0_gpu0_nvlink"), 300e9);
}

TEST(LinkRates, NicPortsAndUplinksCarryTheAchievableRate) {
  const double hdr = 25e9 * 4096 / 4122;
  Topology a100 = build_topology(spec_of("preset: dgx-a100\nservers: 4\n"));
  EXPECT_NEAR(link_bandwidth(a100, "n3_nic5_port"), hdr, 1e-3);
  // A leaf of 2 servers x 8 NICs, 1:1: its uplink carries all their data.
  EXPECT_NEAR(link_bandwidth(a100, "leaf1_up"), 2 * 8 * hdr, 1e-2);
  Topology roce = build_topology(spec_of("preset: hgx-h100-roce\nservers: 2\n"));
  EXPECT_NEAR(link_bandwidth(roce, "n1_nic0_port"), 25e9 * 4096 / 4178, 1e-3);
  Topology pai = build_topology(spec_of("preset: pai-pcie\nservers: 2\n"));
  EXPECT_NEAR(link_bandwidth(pai, "n0_nic0_port"), 25e9 / 8 * 1448 / 1538, 1e-3);
  // PCIe keeps its own measured efficiencies: the NIC's PCIe link is not touched.
  EXPECT_NEAR(link_bandwidth(a100, "n0_nic0_pcie"), 31.508e9 * 0.8364, 1e-3);
}

TEST(LinkRates, SimgridLinksHaveTheAchievableRate) {
  PlatformSource p;
  p.topology = build_topology(spec_of("preset: dgx-h100\nservers: 2\n"));
  PlatformProbe probe = probe_platform(p, {});
  std::map<std::string, double> bw;
  for (const auto& l : probe.links) bw[l.name] = l.bandwidth;
  EXPECT_NEAR(bw.at("n0_gpu0_nvlink_UP"), 18 * 25e9 * 0.824, 1);
  EXPECT_NEAR(bw.at("n0_gpu0_nvlink_DOWN"), 18 * 25e9 * 0.824, 1);
  EXPECT_NEAR(bw.at("n1_nic3_port_UP"), 50e9 * 4096 / 4122, 1);
}

TEST(LinkRates, ShowPrintsSignallingAndAchievableRates) {
  const std::string h100 = describe_spec(spec_of("preset: dgx-h100\n"));
  EXPECT_NE(h100.find("450 GB/s signalling, 370.8 GB/s achievable (efficiency 0.824)"),
            std::string::npos)
      << h100;
  EXPECT_NE(h100.find("50 GB/s line rate, 49.68 GB/s achievable"), std::string::npos) << h100;
  EXPECT_NE(h100.find("4096 B data + 26 B"), std::string::npos) << h100;
  const std::string pai = describe_spec(spec_of("preset: pai-pcie\n"));
  EXPECT_NE(pai.find("1448 B data + 90 B"), std::string::npos) << pai;
  // The link listing gives the rates the links carry.
  const std::string links =
      describe_links(build_topology(spec_of("preset: dgx-a100\nservers: 1\n")));
  EXPECT_NE(links.find("240 GB/s"), std::string::npos) << links;
}

}  // namespace
}  // namespace orrery
