// The fabric between servers (platforms/fabric_builder.cc): rail-optimized routes (one switch
// within a rail, the spine between rails), and the SHARP endpoint fabric_sharp that exists only
// when fabric.sharp asks for it, with its host properties and routes in the topology and in
// SimGrid, and flows to it limited by the sender's NIC.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "common/errors.h"
#include "common/yaml_reader.h"
#include "engine/replay.h"
#include "platforms/platform_probe.h"
#include "platforms/platform_spec.h"
#include "platforms/routing.h"
#include "platforms/simgrid_links.h"
#include "tests/concurrent_transfers.h"
#include "tests/test_util.h"
#include "tests/topology_lookup.h"

namespace orrery {
namespace {

using testing::preset;

// The nodes a route visits, ends included.
std::vector<std::string> nodes(const Topology& t, const std::string& a, const std::string& b) {
  RouteFinder f(t);
  auto r = f.route(a, b);
  std::vector<std::string> out{a};
  for (const auto& s : r) out.push_back(s.to);
  return out;
}

double route_latency(const Topology& t, const std::string& a, const std::string& b) {
  RouteFinder f(t);
  double l = 0;
  for (const auto& s : f.route(a, b)) l += f.link(s.hop.link).latency;
  return l;
}

using testing::find_host;
using testing::find_link;

using Nodes = std::vector<std::string>;

TEST(FabricBuilder, RailOptimizedSameRailCrossesOneSwitch) {
  Topology t = preset("dgx-h100", "servers: 2\n");
  for (int k = 0; k < 8; ++k)
    EXPECT_NE(std::find(t.routers.begin(), t.routers.end(), "rail" + std::to_string(k)),
              t.routers.end());
  // GPU i leaves by NIC i, which sits on rail i: GPU 3 to GPU 3 of the other server turns in
  // rail switch 3.
  EXPECT_EQ(nodes(t, "n0_gpu3", "n1_gpu3"),
            (Nodes{"n0_gpu3", "n0_sw1", "n0_nic3", "rail3", "n1_nic3", "n1_sw1", "n1_gpu3"}));
  // Latency: two PCIe links each side (1 us each), two NIC ends (0.6 us) and one switch (0.13 us,
  // half on each port).
  EXPECT_NEAR(route_latency(t, "n0_gpu3", "n1_gpu3"), 4e-6 + 2 * 0.6e-6 + 0.13e-6, 1e-12);
}

TEST(FabricBuilder, RailOptimizedBetweenRailsCrossesTheSpine) {
  Topology t = preset("dgx-h100", "servers: 2\n");
  EXPECT_EQ(nodes(t, "n0_gpu0", "n1_gpu5"), (Nodes{"n0_gpu0", "n0_sw0", "n0_nic0", "rail0", "spine",
                                                   "rail5", "n1_nic5", "n1_sw2", "n1_gpu5"}));
  // Three switches: rail 0, the spine, rail 5.
  EXPECT_NEAR(route_latency(t, "n0_gpu0", "n1_gpu5"), 4e-6 + 2 * 0.6e-6 + 3 * 0.13e-6, 1e-12);
  // Rail uplinks: a unit of 32 servers' NIC k, 1:1.
  ASSERT_NE(find_link(t, "rail5_up"), nullptr);
  EXPECT_NEAR(find_link(t, "rail5_up")->bandwidth, 32 * 50e9 * 4096 / 4122, 1e-2);
}

TEST(FabricBuilder, RailOptimizedUnitsShareTheSpine) {
  // Units of 2 servers: servers 0-1 share rail switches rail<K>_su0, server 2 is in unit 1.
  Topology t = preset("dgx-h100", "servers: 3\nfabric: {servers_per_leaf: 2}\n");
  EXPECT_EQ(nodes(t, "n0_gpu1", "n1_gpu1"),
            (Nodes{"n0_gpu1", "n0_sw0", "n0_nic1", "rail1_su0", "n1_nic1", "n1_sw0", "n1_gpu1"}));
  EXPECT_EQ(nodes(t, "n0_gpu1", "n2_gpu1"),
            (Nodes{"n0_gpu1", "n0_sw0", "n0_nic1", "rail1_su0", "spine", "rail1_su1", "n2_nic1",
                   "n2_sw0", "n2_gpu1"}));
}

TEST(FabricBuilder, RailOptimizedRoutesAreSimgridsRoutes) {
  Topology t = preset("dgx-h100", "servers: 2\n");
  const std::vector<std::pair<std::string, std::string>> pairs = {
      {"n0_gpu3", "n1_gpu3"}, {"n0_gpu0", "n1_gpu5"}, {"n1_cpu1", "n0_gpu2"}};
  PlatformSource p;
  p.topology = t;
  PlatformProbe probe = probe_platform(p, pairs);
  RouteFinder f(t);
  for (const auto& got : probe.routes) {
    std::vector<std::string> want;
    for (const auto& s : f.route(got.src, got.dst))
      for (const auto& name : simgrid_hop(f.link(s.hop.link), s.hop.reverse)) want.push_back(name);
    std::vector<std::string> have = got.links;
    std::sort(want.begin(), want.end());
    std::sort(have.begin(), have.end());
    EXPECT_EQ(have, want) << got.src << " -> " << got.dst;
  }
}

TEST(FabricBuilder, SharpHostOnlyWhenAskedFor) {
  for (const char* name : {"dgx-a100", "dgx-h100", "dgx1-v100"}) {
    Topology t = preset(name, "servers: 2\n");
    EXPECT_EQ(find_host(t, "fabric_sharp"), nullptr) << name;
    for (const auto& h : t.hosts) EXPECT_EQ(h.properties.count("collnet_host"), 0u) << h.name;
    for (const auto& l : t.links) EXPECT_NE(l.link_class, "sharp") << l.name;
  }
}

TEST(FabricBuilder, SharpHostSitsOnTheTopOfTheFabric) {
  Topology t = preset("dgx-h100", "servers: 2\nfabric: {sharp: true}\n");
  const TopoHost* sharp = find_host(t, "fabric_sharp");
  ASSERT_NE(sharp, nullptr);
  EXPECT_EQ(sharp->role, "collnet");
  for (const auto& h : t.hosts) {
    if (h.role != "gpu") {
      EXPECT_EQ(h.properties.count("collnet_host"), 0u) << h.name;
      continue;
    }
    EXPECT_EQ(h.properties.at("collnet_host"), "fabric_sharp") << h.name;
  }
  const TopoLink* l = find_link(t, "fabric_sharp_link");
  ASSERT_NE(l, nullptr);
  EXPECT_EQ(l->link_class, "sharp");
  EXPECT_EQ(l->latency, 0);
  // Twice every NIC port of the cluster: never the bottleneck.
  EXPECT_NEAR(l->bandwidth, 2 * 2 * 8 * 50e9 * 4096 / 4122, 1);
  // Each GPU gets there through its own NIC and rail, then the spine.
  EXPECT_EQ(nodes(t, "n1_gpu6", "fabric_sharp"),
            (Nodes{"n1_gpu6", "n1_sw3", "n1_nic6", "rail6", "spine", "fabric_sharp"}));
  EXPECT_EQ(nodes(t, "fabric_sharp", "n0_gpu1"),
            (Nodes{"fabric_sharp", "spine", "rail1", "n0_nic1", "n0_sw0", "n0_gpu1"}));
  RouteFinder f(t);
  EXPECT_EQ(route_relation(f, f.route("n0_gpu0", "fabric_sharp")), "Network");

  // One switch, or a fat-tree of a single leaf: the top is that switch.
  Topology one = preset("dgx-a100", "servers: 2\nfabric: {sharp: true, topology: switch}\n");
  EXPECT_EQ(nodes(one, "n0_gpu0", "fabric_sharp"),
            (Nodes{"n0_gpu0", "n0_sw0", "n0_nic0", "fabric_switch", "fabric_sharp"}));
  Topology leaf = preset("dgx-a100", "servers: 2\nfabric: {sharp: true}\n");
  EXPECT_EQ(nodes(leaf, "n1_gpu2", "fabric_sharp"),
            (Nodes{"n1_gpu2", "n1_sw1", "n1_nic2", "leaf0", "fabric_sharp"}));
  Topology tree = preset("dgx-a100", "servers: 4\nfabric: {sharp: true}\n");
  EXPECT_EQ(nodes(tree, "n3_gpu0", "fabric_sharp"),
            (Nodes{"n3_gpu0", "n3_sw0", "n3_nic0", "leaf1", "spine", "fabric_sharp"}));
}

TEST(FabricBuilder, SharpReachesSimgridAndItsXml) {
  Topology t = preset("dgx-a100", "servers: 2\nfabric: {sharp: true}\n");
  PlatformSource generated;
  generated.topology = t;
  PlatformSource xml;
  xml.xml_file = testing::make_temp_dir("sharp") + "/platform.xml";
  testing::write_file(xml.xml_file, topology_to_simgrid_xml(t));
  for (const auto* source : {&generated, &xml}) {
    PlatformProbe p = probe_platform(*source, {{"n1_gpu7", "fabric_sharp"}});
    EXPECT_EQ(p.properties.at("n1_gpu7").at("collnet_host"), "fabric_sharp");
    EXPECT_TRUE(std::binary_search(p.hosts.begin(), p.hosts.end(), "fabric_sharp"));
    ASSERT_EQ(p.routes.size(), 1u);
    const auto& links = p.routes[0].links;
    EXPECT_NE(std::find(links.begin(), links.end(), "n1_nic7_port_UP"), links.end());
    EXPECT_NE(std::find(links.begin(), links.end(), "fabric_sharp_link_DOWN"), links.end());
  }
}

// Seconds until every flow of `bytes` (all started at once, each on its own stream) is done.
double makespan(const Topology& t, const std::vector<std::pair<std::string, std::string>>& flows,
                double bytes) {
  PlatformSource p;
  p.topology = t;
  return replay_isolated(p, testing::concurrent_transfers(flows, bytes), ReplayOptions{}).makespan;
}

TEST(FabricBuilder, FlowsToSharpAreLimitedByEachGpusNic) {
  // All 16 GPUs of two DGX H100 send 1 GB to the SHARP endpoint at once. Each has a NIC and a
  // rail of its own and the spine is 1:1, so each flow runs at its NDR port's data rate; the
  // latency is the route's: 2 PCIe links, one NIC end, rail half + uplink + (0 to the endpoint).
  Topology t = preset("dgx-h100", "servers: 2\nfabric: {sharp: true}\n");
  std::vector<std::pair<std::string, std::string>> flows;
  for (int s = 0; s < 2; ++s)
    for (int g = 0; g < 8; ++g)
      flows.push_back({"n" + std::to_string(s) + "_gpu" + std::to_string(g), "fabric_sharp"});
  const double port = 50e9 * 4096 / 4122;
  const double latency = 2e-6 + 0.6e-6 + 0.13e-6 / 2 + 0.13e-6;
  EXPECT_NEAR(makespan(t, flows, 1e9), latency + 1e9 / port, 1e-9);
}

}  // namespace
}  // namespace orrery
