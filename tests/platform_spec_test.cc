// Platform YAML: presets load, keys override, and bad input fails with the file, line and key.
#include "platforms/platform_spec.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "common/errors.h"
#include "common/yaml_reader.h"
#include "engine/replay.h"
#include "platforms/routing.h"
#include "platforms/simgrid_platform.h"

namespace orrery {
namespace {

PlatformSpec parse(const std::string& yaml) {
  return parse_platform_spec(load_yaml_text(yaml, "p.yaml"), "p.yaml", "platform");
}

std::string error_of(const std::string& yaml) {
  try {
    parse(yaml);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// The nodes of the route from a to b, ends included.
std::vector<std::string> describe_route_nodes(const Topology& t, const std::string& a,
                                              const std::string& b) {
  RouteFinder f(t);
  std::vector<std::string> out{a};
  for (const auto& s : f.route(a, b)) out.push_back(s.to);
  return out;
}

#define EXPECT_HAS(text, part) EXPECT_NE((text).find(part), std::string::npos) << (text)

TEST(PlatformSpec, EveryPresetParsesAndBuilds) {
  const std::vector<std::string> expected = {
      "azure-v100-ib", "cpu-host",           "dgx-a100",         "dgx-b200",
      "dgx-b300",      "dgx-h100",           "dgx-h200",         "dgx1-v100",
      "dgx2-v100",     "ethernet-cluster",   "gb200-nvl72",      "gb300-nvl72",
      "hgx-h100-roce", "pai-nvlink",         "pai-pcie",         "pcie-direct-server",
      "pcie-server",   "pcie-switch-server", "v100-pcie-testbed"};
  EXPECT_EQ(platform_preset_names(), expected);
  for (const auto& name : platform_preset_names()) {
    PlatformSpec spec = parse("preset: " + name + "\n");
    EXPECT_EQ(spec.name, name);
    EXPECT_FALSE(spec.description.empty()) << name;
    EXPECT_FALSE(spec.sources.empty()) << name;
    Topology t = build_topology(spec);
    EXPECT_EQ(gpu_hosts(t).size(), static_cast<size_t>(spec.servers * spec.server.gpus)) << name;
  }
}

TEST(PlatformSpec, PresetNumbersComeThrough) {
  PlatformSpec a100 = parse("preset: dgx-a100\n");
  EXPECT_EQ(a100.server.nvlink.topology, "nvswitch");
  EXPECT_EQ(a100.server.nvlink.links_per_gpu, 12);
  EXPECT_DOUBLE_EQ(a100.server.nic.bandwidth, 200e9 / 8);
  EXPECT_EQ(a100.fabric.topology, "fat-tree");
  PlatformSpec pai = parse("preset: pai-nvlink\n");
  EXPECT_DOUBLE_EQ(pai.server.pcie.bandwidth, 10e9);
  EXPECT_DOUBLE_EQ(pai.server.nvlink.bandwidth, 50e9);
  EXPECT_DOUBLE_EQ(pai.server.nic.bandwidth, 25e9 / 8);
  EXPECT_EQ(pai.server.gpus, 8);
}

// The GPUs, NICs and PCIe switches each new preset's description claims, in the built platform.
TEST(PlatformSpec, NewPresetsHaveWhatTheyClaim) {
  struct Claim {
    const char* preset;
    const char* gpu;
    int gpus, nics, pcie_switches;
    const char* kind;
    const char* topology;
    bool nvls;
  };
  const Claim claims[] = {
      {"dgx2-v100", "V100-SXM3-32GB", 16, 8, 8, "infiniband", "fat-tree", false},
      {"dgx-h100", "H100-SXM5", 8, 8, 4, "infiniband", "rail-optimized", true},
      {"dgx-h200", "H200-SXM", 8, 8, 4, "infiniband", "rail-optimized", true},
      {"hgx-h100-roce", "H100-SXM5", 8, 8, 4, "roce", "fat-tree", true},
      {"dgx-b300", "B300", 8, 8, 4, "roce", "rail-optimized", true},
      {"pcie-switch-server", "A100-PCIe-80GB", 8, 4, 4, "infiniband", "fat-tree", false},
      {"pcie-direct-server", "A100-PCIe-80GB", 8, 2, 0, "infiniband", "fat-tree", false}};
  for (const auto& c : claims) {
    PlatformSpec s = parse(std::string("preset: ") + c.preset + "\nservers: 1\n");
    EXPECT_EQ(s.server.gpu.name, c.gpu) << c.preset;
    EXPECT_EQ(s.fabric.kind, c.kind) << c.preset;
    EXPECT_EQ(s.fabric.topology, c.topology) << c.preset;
    EXPECT_EQ(s.server.nvlink.sharp, c.nvls) << c.preset;
    EXPECT_FALSE(s.fabric.sharp) << c.preset;
    Topology t = build_topology(s);
    int nics = 0, switches = 0, nvls = 0;
    for (const auto& r : t.routers) {
      nics += r.find("_nic") != std::string::npos;
      switches += r.find("_sw") != std::string::npos;
    }
    for (const auto& h : t.hosts) nvls += h.role == "nvls";
    EXPECT_EQ(static_cast<int>(gpu_hosts(t).size()), c.gpus) << c.preset;
    EXPECT_EQ(nics, c.nics) << c.preset;
    EXPECT_EQ(switches, c.pcie_switches) << c.preset;
    EXPECT_EQ(nvls, c.nvls ? 1 : 0) << c.preset;
  }
  // The NVLink shares each generation's preset states.
  EXPECT_DOUBLE_EQ(parse("preset: dgx1-v100\n").server.nvlink.efficiency, 0.8);
  EXPECT_DOUBLE_EQ(parse("preset: dgx2-v100\n").server.nvlink.efficiency, 0.8);
  EXPECT_DOUBLE_EQ(parse("preset: dgx-a100\n").server.nvlink.efficiency, 0.8);
  EXPECT_DOUBLE_EQ(parse("preset: dgx-h100\n").server.nvlink.efficiency, 0.824);
  EXPECT_DOUBLE_EQ(parse("preset: dgx-h200\n").server.nvlink.efficiency, 0.824);
  // The DGX-2's 16 GPUs pair up on its 8 switches, each pair with its NIC.
  Topology dgx2 = build_topology(parse("preset: dgx2-v100\nservers: 1\n"));
  EXPECT_EQ(describe_route_nodes(dgx2, "n0_gpu9", "n0_nic4"),
            (std::vector<std::string>{"n0_gpu9", "n0_sw4", "n0_nic4"}));
}

TEST(PlatformSpec, KeysOverrideThePreset) {
  PlatformSpec s = parse(
      "preset: dgx-h100\nservers: 3\nserver:\n  nic: {count: 4, bandwidth: 200Gbps}\n"
      "fabric: {oversubscription: 2}\n");
  EXPECT_EQ(s.servers, 3);
  EXPECT_EQ(s.server.nic.count, 4);
  EXPECT_DOUBLE_EQ(s.server.nic.bandwidth, 25e9);
  EXPECT_DOUBLE_EQ(s.fabric.oversubscription, 2);
  EXPECT_EQ(s.server.nvlink.links_per_gpu, 18);  // untouched keys keep the preset's value
}

TEST(PlatformSpec, UnknownPresetListsTheKnownOnes) {
  auto msg = error_of("preset: dgx-z9\n");
  EXPECT_HAS(msg, "dgx-z9");
  EXPECT_HAS(msg, "platform.preset");
  EXPECT_HAS(msg, "dgx-a100");
}

TEST(PlatformSpec, UnknownKeyNamesLineAndPath) {
  auto msg = error_of("preset: dgx1-v100\nserver:\n  nvlink:\n    speed: 5\n");
  EXPECT_HAS(msg, "p.yaml:4");
  EXPECT_HAS(msg, "platform.server.nvlink.speed");
}

TEST(PlatformSpec, ZeroOrNegativeBandwidthNamesTheKey) {
  auto zero = error_of("preset: v100-pcie-testbed\nserver:\n  pcie:\n    bandwidth: 0\n");
  EXPECT_HAS(zero, "p.yaml:4");
  EXPECT_HAS(zero, "platform.server.pcie.bandwidth");
  EXPECT_HAS(zero, "positive");
  auto negative = error_of("preset: dgx-a100\nserver:\n  nic: {bandwidth: -200Gbps}\n");
  EXPECT_HAS(negative, "platform.server.nic.bandwidth");
  EXPECT_HAS(error_of("preset: dgx-a100\nserver:\n  nvlink: {bandwidth: 0GB/s}\n"),
             "platform.server.nvlink.bandwidth");
  EXPECT_HAS(error_of("preset: dgx-a100\nserver:\n  cpu: {qpi_bandwidth: -1GB/s}\n"),
             "platform.server.cpu.qpi_bandwidth");
  EXPECT_HAS(error_of("preset: v100-pcie-testbed\nserver:\n  pcie: {write_efficiency: 0}\n"),
             "platform.server.pcie.write_efficiency");
}

TEST(PlatformSpec, CubeMeshOfFiveGpusIsRefused) {
  auto msg = error_of("preset: dgx1-v100\nserver:\n  gpus: 5\n");
  EXPECT_HAS(msg, "p.yaml:3");
  EXPECT_HAS(msg, "platform.server.gpus");
  EXPECT_HAS(msg, "exactly 8 GPUs");
  EXPECT_HAS(error_of("preset: dgx1-v100\nserver:\n  nvlink: {links_per_gpu: 5}\n"),
             "platform.server.nvlink.links_per_gpu");
}

// NVLink bridges pair PCIe cards: GPU 0 with 1 and 2 with 3 over one NVLink link of all their
// links (12 x 25 GB/s x 0.8 = 240 GB/s); 1 reaches 2 over PCIe.
TEST(PlatformSpec, NvlinkBridgesPairTheCards) {
  const PlatformSpec p = parse(
      "preset: pcie-switch-server\nservers: 1\nserver:\n  gpus: 4\n"
      "  nvlink: {topology: bridge, links_per_gpu: 12, bandwidth: 25GB/s}\n");
  const Topology t = build_topology(p);
  EXPECT_EQ(describe_route_nodes(t, "n0_gpu0", "n0_gpu1"),
            (std::vector<std::string>{"n0_gpu0", "n0_gpu1"}));
  EXPECT_EQ(describe_route_nodes(t, "n0_gpu3", "n0_gpu2"),
            (std::vector<std::string>{"n0_gpu3", "n0_gpu2"}));
  const auto across = describe_route_nodes(t, "n0_gpu1", "n0_gpu2");
  EXPECT_GT(across.size(), 2u);  // through the PCIe switches
  bool found = false;
  for (const auto& l : t.links)
    if (l.name == "n0_nvl0_1") {
      found = true;
      EXPECT_DOUBLE_EQ(l.bandwidth, 12 * 25e9 * 0.8);
    }
  EXPECT_TRUE(found);
  EXPECT_HAS(error_of("preset: pcie-switch-server\nserver:\n  gpus: 3\n"
                      "  nvlink: {topology: bridge}\n"),
             "pair the GPUs");
  EXPECT_HAS(error_of("preset: pcie-switch-server\nserver:\n  nvlink: {topology: ring}\n"),
             "expected none, cube-mesh, nvswitch or bridge");
}

TEST(PlatformSpec, NicOnAMissingSwitchIsRefused) {
  auto msg = error_of("preset: dgx1-v100\nserver:\n  nic: {pcie_switch: [0, 1, 2, 7]}\n");
  EXPECT_HAS(msg, "p.yaml:3");
  EXPECT_HAS(msg, "platform.server.nic.pcie_switch");
  EXPECT_HAS(msg, "switch 7, which does not exist");
  EXPECT_HAS(error_of("preset: pai-pcie\nserver:\n  pcie: {switches_per_socket: 0}\n"),
             "no PCIe switches");
  EXPECT_HAS(error_of("preset: dgx1-v100\nserver:\n  nic: {count: 1, pcie_switch: [0, 1]}\n"),
             "places 2 NICs");
}

TEST(PlatformSpec, GpuPlacementIsChecked) {
  EXPECT_HAS(error_of("preset: v100-pcie-testbed\nserver:\n  pcie: {gpu_switch: [0, 0, 1]}\n"),
             "platform.server.pcie.gpu_switch");
  EXPECT_HAS(error_of("preset: v100-pcie-testbed\nserver:\n  pcie: {gpu_switch: [0, 0, 1, 9]}\n"),
             "does not exist");
  EXPECT_HAS(error_of("preset: v100-pcie-testbed\nserver:\n  pcie: {gpu_switch: [0, a, 1, 2]}\n"),
             "non-negative integers");
  EXPECT_HAS(error_of("preset: pai-pcie\nserver:\n  gpus: 7\n"), "split evenly");
  EXPECT_HAS(error_of("preset: dgx-a100\nserver:\n  gpus: 3\n"), "split evenly");
}

// One GPU of a two-socket server (a single-GPU run on a DGX preset) sits on the first socket's
// first PCIe switch, its NICs where the preset has them.
TEST(PlatformSpec, OneGpuOfATwoSocketServer) {
  const PlatformSpec p = parse("preset: dgx-a100\nserver:\n  gpus: 1\n");
  EXPECT_EQ(p.server.gpus, 1);
  EXPECT_EQ(p.server.cpu.sockets, 2);
  const Topology t = build_topology(p);
  EXPECT_EQ(gpu_hosts(t).size(), static_cast<size_t>(p.servers));  // one per server
}

TEST(PlatformSpec, SeveralServersNeedNics) {
  auto msg = error_of("preset: v100-pcie-testbed\nservers: 2\n");
  EXPECT_HAS(msg, "platform.server.nic.count");
}

TEST(PlatformSpec, BadChoicesListTheGoodOnes) {
  EXPECT_HAS(error_of("preset: dgx-a100\nfabric: {topology: torus}\n"),
             "switch, fat-tree or rail-optimized");
  EXPECT_HAS(error_of("preset: dgx-a100\nfabric: {kind: myrinet}\n"),
             "ethernet, roce or infiniband");
  EXPECT_HAS(error_of("preset: dgx-a100\nfabric: {oversubscription: 0.5}\n"),
             "platform.fabric.oversubscription");
  EXPECT_HAS(error_of("preset: dgx1-v100\nserver:\n  nvlink: {nonadjacent: pigeon}\n"),
             "nvlink or pcie");
}

TEST(PlatformSpec, InNetworkReductionNeedsItsHardware) {
  auto cube = error_of("preset: dgx1-v100\nserver:\n  nvlink: {sharp: true}\n");
  EXPECT_HAS(cube, "p.yaml:3");
  EXPECT_HAS(cube, "platform.server.nvlink.sharp");
  EXPECT_HAS(cube, "inside an NVSwitch, but server.nvlink.topology is cube-mesh");
  EXPECT_HAS(error_of("preset: pcie-switch-server\nserver: {nvlink: {sharp: true}}\n"),
             "server.nvlink.topology is none");
  auto roce = error_of("preset: hgx-h100-roce\nfabric: {sharp: true}\n");
  EXPECT_HAS(roce, "platform.fabric.sharp");
  EXPECT_HAS(roce, "InfiniBand switches, but fabric.kind is roce");
  EXPECT_HAS(error_of("preset: dgx-h100\nservers: 1\nserver: {nic: {count: 0}}\n"
                      "fabric: {sharp: true, topology: switch}\n"),
             "server.nic.count is 0");
  EXPECT_HAS(error_of("preset: dgx-h100\nserver: {nvlink: {sharp: maybe}}\n"),
             "platform.server.nvlink.sharp");
  EXPECT_EQ(error_of("preset: dgx-a100\nfabric: {sharp: true}\n"), "");
}

TEST(PlatformSpec, RailOptimizedNeedsRailsTheGpusShareEvenly) {
  auto uneven = error_of("preset: dgx-h100\nserver:\n  nic: {count: 3}\n");
  EXPECT_HAS(uneven, "p.yaml:3");
  EXPECT_HAS(uneven, "platform.server.nic.count");
  EXPECT_HAS(uneven, "8 GPUs cannot share 3 rails evenly (use 1, 2, 4, 8 NICs or a multiple of 8");
  EXPECT_HAS(error_of("preset: dgx-h100\nservers: 1\nserver: {nic: {count: 0}}\n"),
             "rail switch k, but the server has no NICs");
  // Fewer rails than GPUs, shared evenly, and more NICs than GPUs are fine.
  EXPECT_EQ(error_of("preset: dgx-h100\nserver: {nic: {count: 4}}\n"), "");
  EXPECT_EQ(error_of("preset: dgx-h100\nserver: {nic: {count: 16}}\n"), "");
  EXPECT_EQ(error_of("preset: dgx1-v100\nfabric: {topology: rail-optimized}\n"), "");
}

TEST(PlatformSpec, NicMtuFitsTheFabricKind) {
  auto ib = error_of("preset: dgx-a100\nserver:\n  nic: {mtu: 1500}\n");
  EXPECT_HAS(ib, "p.yaml:3");
  EXPECT_HAS(ib, "platform.server.nic.mtu");
  EXPECT_HAS(ib, "256, 512, 1024, 2048 or 4096 bytes, got 1500 (fabric.kind: infiniband)");
  EXPECT_HAS(error_of("preset: pai-pcie\nserver: {nic: {mtu: 100000}}\n"),
             "between 576 and 9216 bytes, got 100000 (fabric.kind: ethernet)");
  EXPECT_HAS(error_of("preset: pai-pcie\nserver: {nic: {mtu: -1}}\n"), "platform.server.nic.mtu");
  EXPECT_HAS(error_of("preset: dgx-a100\nserver: {nvlink: {efficiency: 1.5}}\n"),
             "platform.server.nvlink.efficiency");
  EXPECT_HAS(error_of("preset: dgx-a100\nserver: {nvlink: {efficiency: 0}}\n"),
             "0 is outside the accepted range, above 0 and at most 1");
  EXPECT_EQ(error_of("preset: hgx-h100-roce\nserver: {nic: {mtu: 1024}}\n"), "");
  EXPECT_EQ(error_of("preset: pai-pcie\nserver: {nic: {mtu: 9000}}\n"), "");
}

TEST(PlatformSpec, SpecsBuiltInCodeAreCheckedToo) {
  PlatformSpec s = parse("preset: dgx1-v100\n");
  s.server.gpus = 5;
  try {
    build_topology(s);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_HAS(std::string(e.what()), "platform.server.gpus");
  }
  PlatformSpec nan = parse("preset: dgx-a100\n");
  nan.server.nvlink.efficiency = std::nan("");
  EXPECT_THROW(build_topology(nan), InputError);
}

// Issue 15: magnitudes no hardware has made the replay spin or overflow; each is refused at
// its key and line, with the accepted range.
TEST(PlatformSpec, MagnitudesOutsideTheirRangeNameKeyLineAndRange) {
  auto tiny = error_of("preset: dgx-a100\nserver:\n  pcie:\n    bandwidth: 1e-300Bps\n");
  EXPECT_HAS(tiny, "p.yaml:4");
  EXPECT_HAS(tiny,
             "platform.server.pcie.bandwidth: 1e-300 B/s is outside the accepted range, "
             "between 1 KB/s and 100000 TB/s");
  EXPECT_HAS(error_of("preset: dgx-a100\nserver:\n  nvlink: {latency: 1e300s}\n"),
             "platform.server.nvlink.latency: 1e+300 s is outside the accepted range, between 0 s "
             "and 3600 s");
  EXPECT_HAS(error_of("preset: dgx-a100\nserver:\n  gpu: {flops: 1e30flops}\n"),
             "platform.server.gpu.flops");
  EXPECT_HAS(error_of("preset: dgx-a100\nserver:\n  nic: {bandwidth: 1e18Bps}\n"),
             "platform.server.nic.bandwidth");
  EXPECT_HAS(error_of("preset: dgx-a100\nfabric: {latency: 2h}\n"), "platform.fabric.latency");
  EXPECT_HAS(error_of("preset: dgx-a100\nfabric: {oversubscription: 1e9}\n"),
             "platform.fabric.oversubscription");
  // The bounds themselves are accepted.
  EXPECT_EQ(error_of("preset: dgx-a100\nserver:\n  nic: {bandwidth: 1KBps, latency: 3600s}\n"), "");
}

TEST(PlatformSpec, CountsOutsideTheirRange) {
  EXPECT_HAS(error_of("preset: pcie-server\nserver:\n  gpus: 1000000000\n"),
             "platform.server.gpus: 1000000000 is outside the accepted range, between 1 and 256");
  EXPECT_HAS(error_of("preset: dgx-a100\nservers: 10000000\n"),
             "platform.servers: 10000000 is outside the accepted range, between 1 and 1000000");
  // Each count in range, their product not: 200,000 servers x 8 GPUs.
  EXPECT_HAS(error_of("preset: dgx-a100\nservers: 200000\n"),
             "200000 servers of 8 GPUs make 1600000 GPUs, over the accepted range, between 1 "
             "and 1000000");
  EXPECT_HAS(error_of("preset: dgx-a100\nserver:\n  nic: {count: 1000}\n"),
             "platform.server.nic.count");
}

TEST(PlatformSpec, XmlRatesAreCheckedWhenLoaded) {
  // A SimGrid XML platform skips the spec reader: its link rates are checked on load.
  PlatformSpec spec = parse("preset: pcie-server\nserver: {gpus: 2}\n");
  Topology t = build_topology(spec);
  t.links[0].bandwidth = 1e-300;
  const std::string file = ::testing::TempDir() + "/slow_link.xml";
  std::ofstream(file) << topology_to_simgrid_xml(t);
  PlatformSource source;
  source.xml_file = file;
  std::string msg;
  try {
    replay_isolated(source, ExecutionGraph{}, ReplayOptions{});  // SimGrid in a child process
  } catch (const InputError& e) {
    msg = e.what();
  }
  EXPECT_HAS(msg, file + ": link \"" + t.links[0].name + "\": bandwidth 1e-300 B/s is outside");
}

}  // namespace
}  // namespace orrery
