// Routes of generated platforms: which link classes they cross, which NIC they leave by, that
// no host relays traffic it neither sends nor receives, and that SimGrid routes exactly as
// RouteFinder says (one forked SimGrid per test).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "common/errors.h"
#include "common/yaml_reader.h"
#include "platforms/platform_probe.h"
#include "platforms/platform_spec.h"
#include "platforms/routing.h"
#include "platforms/simgrid_links.h"
#include "tests/topology_lookup.h"

namespace orrery {
namespace {

using testing::preset;

std::vector<std::string> classes(const Topology& t, const std::string& a, const std::string& b) {
  RouteFinder f(t);
  return route_classes(f, f.route(a, b));
}

std::string relation(const Topology& t, const std::string& a, const std::string& b) {
  RouteFinder f(t);
  return route_relation(f, f.route(a, b));
}

using Classes = std::vector<std::string>;

TEST(PlatformRoutes, PcieTestbedPlacements) {
  Topology t = preset("v100-pcie-testbed");
  EXPECT_EQ(classes(t, "n0_gpu0", "n0_gpu1"), (Classes{"pcie"}));
  EXPECT_EQ(relation(t, "n0_gpu0", "n0_gpu1"), "PCIe switch");
  EXPECT_EQ(classes(t, "n0_gpu0", "n0_gpu2"), (Classes{"pcie", "rc-p2p"}));
  EXPECT_EQ(relation(t, "n0_gpu1", "n0_gpu2"), "Root complex");
  EXPECT_EQ(classes(t, "n0_gpu0", "n0_gpu3"), (Classes{"pcie", "rc-dma", "qpi"}));
  EXPECT_EQ(relation(t, "n0_gpu3", "n0_gpu0"), "QPI");
  // Host memory: through the root complex's DMA path; the far socket's over QPI.
  EXPECT_EQ(classes(t, "n0_cpu0", "n0_gpu0"), (Classes{"memory", "rc-dma", "pcie"}));
  EXPECT_EQ(classes(t, "n0_cpu1", "n0_gpu0"), (Classes{"memory", "qpi", "rc-dma", "pcie"}));
}

TEST(PlatformRoutes, NvlinkWhereItExistsPcieOtherwise) {
  Topology dgx1 = preset("dgx1-v100", "servers: 1\n");
  EXPECT_EQ(classes(dgx1, "n0_gpu0", "n0_gpu3"), (Classes{"nvlink"}));
  EXPECT_EQ(relation(dgx1, "n0_gpu0", "n0_gpu4"), "NVLink");
  // 0 and 5 share no link: relayed by a GPU linked to both (NCCL's P2P via an intermediate GPU).
  RouteFinder f(dgx1);
  auto r = f.route("n0_gpu0", "n0_gpu5");
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].to, "n0_gpu1");
  EXPECT_EQ(relation(dgx1, "n0_gpu0", "n0_gpu5"), "NVLink 2-hop");
  // ... or over PCIe, if asked: 0 and 5 sit on different sockets.
  Topology pcie = preset("dgx1-v100", "servers: 1\nserver:\n  nvlink: {nonadjacent: pcie}\n");
  EXPECT_EQ(relation(pcie, "n0_gpu0", "n0_gpu5"), "QPI");
  EXPECT_EQ(relation(pcie, "n0_gpu0", "n0_gpu1"), "NVLink");
  // Host <-> GPU never takes NVLink.
  EXPECT_EQ(classes(dgx1, "n0_cpu1", "n0_gpu7"), (Classes{"memory", "rc-dma", "pcie"}));

  Topology a100 = preset("dgx-a100", "servers: 1\n");
  EXPECT_EQ(relation(a100, "n0_gpu0", "n0_gpu7"), "NVSwitch");
  EXPECT_EQ(classes(a100, "n0_gpu0", "n0_gpu7"), (Classes{"nvlink"}));
  Topology pai = preset("pai-pcie", "servers: 1\n");
  for (const auto& g : {"n0_gpu1", "n0_gpu2", "n0_gpu5"}) {
    Classes c = classes(pai, "n0_gpu0", g);
    EXPECT_EQ(std::count(c.begin(), c.end(), "nvlink"), 0) << g;
  }
}

TEST(PlatformRoutes, BetweenServersGpuPcieNicFabricNicPcieGpu) {
  Topology t = preset("dgx-a100", "servers: 2\n");
  RouteFinder f(t);
  auto r = f.route("n0_gpu1", "n1_gpu6");
  std::vector<std::string> nodes;
  for (const auto& s : r) nodes.push_back(s.from);
  nodes.push_back(r.back().to);
  // GPU 1 shares switch 0 with NICs 0 and 1 and takes the second; GPU 6 takes NIC 6.
  EXPECT_EQ(nodes, (std::vector<std::string>{"n0_gpu1", "n0_sw0", "n0_nic1", "leaf0", "n1_nic6",
                                             "n1_sw3", "n1_gpu6"}));
  EXPECT_EQ(classes(t, "n0_gpu1", "n1_gpu6"), (Classes{"pcie", "infiniband"}));
  EXPECT_EQ(relation(t, "n0_gpu0", "n1_gpu0"), "Network");
  // Across leaves: through the spine (dgx-h100's own fabric is rail-optimized).
  Topology tree =
      preset("dgx-h100", "servers: 2\nfabric: {topology: fat-tree, servers_per_leaf: 1}\n");
  RouteFinder g(tree);
  std::set<std::string> crossed;
  for (const auto& s : g.route("n0_gpu0", "n1_gpu0")) crossed.insert(s.to);
  EXPECT_TRUE(crossed.count("spine"));
  EXPECT_TRUE(crossed.count("leaf0") && crossed.count("leaf1"));
}

TEST(PlatformRoutes, EveryGpuHasItsOwnNicOnDgxAndSharesOnDgx1) {
  auto nic_of = [](const Topology& t, const std::string& gpu) {
    RouteFinder f(t);
    for (const auto& s : f.route(gpu, "n1_cpu0"))
      if (s.to.find("nic") != std::string::npos) return s.to;
    return std::string();
  };
  Topology a100 = preset("dgx-a100", "servers: 2\n");
  for (int g = 0; g < 8; ++g)
    EXPECT_EQ(nic_of(a100, "n0_gpu" + std::to_string(g)), "n0_nic" + std::to_string(g));
  Topology dgx1 = preset("dgx1-v100", "servers: 2\n");
  for (int g = 0; g < 8; ++g)
    EXPECT_EQ(nic_of(dgx1, "n0_gpu" + std::to_string(g)), "n0_nic" + std::to_string(g / 2));
}

// Intermediate nodes of every host-to-host route: no host, except the relay GPU of a cube-mesh
// pair without a link of its own, entered and left over NVLink.
void expect_no_stray_relays(const Topology& t) {
  std::set<std::string> hosts;
  for (const auto& h : t.hosts) hosts.insert(h.name);
  RouteFinder f(t);
  for (const auto& [a, b] : routed_host_pairs(t)) {
    auto r = f.route(a, b);
    ASSERT_FALSE(r.empty()) << a << " -> " << b;
    EXPECT_EQ(r.front().from, a);
    EXPECT_EQ(r.back().to, b);
    for (size_t i = 0; i + 1 < r.size(); ++i) {
      if (!hosts.count(r[i].to)) continue;
      EXPECT_EQ(f.link(r[i].hop.link).link_class, "nvlink") << a << " -> " << b;
      EXPECT_EQ(f.link(r[i + 1].hop.link).link_class, "nvlink") << a << " -> " << b;
    }
  }
}

TEST(PlatformRoutes, HostsRelayNothingButCubeMeshNvlink) {
  for (const auto& name : platform_preset_names())
    expect_no_stray_relays(preset(name, "servers: 2\nserver: {nic: {count: 2}}\n"));
  // The in-network reduction endpoints relay nothing either.
  expect_no_stray_relays(preset("dgx-h100", "servers: 2\nfabric: {sharp: true}\n"));
}

// SimGrid's own route for every host pair that has one equals RouteFinder's, link for link.
void expect_simgrid_agrees(const Topology& t) {
  std::vector<std::pair<std::string, std::string>> pairs = routed_host_pairs(t);
  PlatformSource source;
  source.topology = t;
  PlatformProbe probe = probe_platform(source, pairs);
  RouteFinder f(t);
  ASSERT_EQ(probe.routes.size(), pairs.size());
  for (const auto& got : probe.routes) {
    std::vector<std::string> want;
    double latency = 0;
    for (const auto& s : f.route(got.src, got.dst)) {
      const TopoLink& l = f.link(s.hop.link);
      for (const auto& n : simgrid_hop(l, s.hop.reverse)) want.push_back(n);
      latency += l.latency;
    }
    std::vector<std::string> have = got.links;
    std::sort(want.begin(), want.end());
    std::sort(have.begin(), have.end());
    EXPECT_EQ(have, want) << t.name << ": " << got.src << " -> " << got.dst;
    EXPECT_NEAR(got.latency, latency, 1e-15) << got.src << " -> " << got.dst;
  }
}

TEST(PlatformRoutes, SimgridAgreesOnPcieServers) {
  expect_simgrid_agrees(preset("v100-pcie-testbed"));
  expect_simgrid_agrees(preset("azure-v100-ib"));
  expect_simgrid_agrees(preset("pai-pcie", "servers: 2\n"));
}

TEST(PlatformRoutes, SimgridAgreesOnNvlinkServers) {
  expect_simgrid_agrees(preset("dgx1-v100", "servers: 2\nfabric: {servers_per_leaf: 1}\n"));
  expect_simgrid_agrees(preset("dgx-a100", "servers: 3\nfabric: {servers_per_leaf: 2}\n"));
  expect_simgrid_agrees(preset("pai-nvlink", "servers: 2\n"));
}

// The new presets as two-server clusters, with both in-network reduction endpoints on where the
// hardware has them; the only pairs without a route are those no NVLS host serves.
TEST(PlatformRoutes, SimgridAgreesOnTwoServerClustersOfTheNewPresets) {
  Topology h100 = preset("dgx-h100", "servers: 2\nfabric: {sharp: true}\n");
  // 23 hosts: 2 x (8 GPUs, 2 CPUs, 1 NVLS) and fabric_sharp. Each NVLS host has no route to or
  // from the 14 hosts that are not its server's GPUs; the two NVLS hosts' pair counts twice.
  EXPECT_EQ(routed_host_pairs(h100).size(), 23u * 22 - (2 * 2 * 14 - 2));
  expect_simgrid_agrees(h100);
  expect_simgrid_agrees(preset("dgx2-v100", "servers: 2\n"));
  expect_simgrid_agrees(preset("hgx-h100-roce", "servers: 2\n"));
  expect_simgrid_agrees(preset("pcie-direct-server", "servers: 2\n"));
}

// The routes inside a server and to its NICs, with its prefix swapped for "n_".
std::vector<std::string> server_routes(const Topology& t, const std::string& prefix) {
  std::vector<std::string> out;
  auto unprefixed = [&](const std::string& n) { return "n_" + n.substr(prefix.size()); };
  for (const auto* list : {&t.routes, &t.route_graph})
    for (const TopoRoute& r : *list) {
      if (r.src.rfind(prefix, 0) != 0 || r.dst.rfind(prefix, 0) != 0) continue;
      std::string line = unprefixed(r.src) + " -> " + unprefixed(r.dst) + ":";
      for (const auto& h : r.hops) line += " " + unprefixed(h.link) + (h.reverse ? "'" : "");
      out.push_back(line);
    }
  return out;
}

TEST(PlatformRoutes, ServersOfAGroupTakeTheFirstOnesRoutesAsSearched) {
  // Two groups of one spec: servers 0 and 1 are each the first of their group and have their
  // paths searched; server 2 takes server 1's routes with its prefix. All three alike.
  for (const char* server : {"dgx-a100", "dgx1-v100", "dgx-h100", "hgx-h100-roce"}) {
    SCOPED_TRACE(server);
    const Topology t = preset(server, "servers: 3\nserver_groups: [{servers: 1}, {servers: 2}]\n");
    const auto searched = server_routes(t, "n0_");
    EXPECT_GT(searched.size(), 90u);
    EXPECT_EQ(server_routes(t, "n1_"), searched);
    EXPECT_EQ(server_routes(t, "n2_"), searched);
  }
}

TEST(PlatformRoutes, UnknownDeviceIsAnInputError) {
  Topology t = preset("v100-pcie-testbed");
  RouteFinder f(t);
  EXPECT_THROW(f.route("n0_gpu0", "n0_gpu9"), InputError);
}

}  // namespace
}  // namespace orrery
