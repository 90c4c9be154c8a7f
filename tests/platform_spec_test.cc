// Platform YAML: presets load, keys override, and bad input fails with the file, line and key.
#include "platforms/platform_spec.h"

#include <gtest/gtest.h>

#include <fstream>

#include "common/errors.h"
#include "common/yaml_reader.h"
#include "engine/replay.h"
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

#define EXPECT_HAS(text, part) EXPECT_NE((text).find(part), std::string::npos) << (text)

TEST(PlatformSpec, EveryPresetParsesAndBuilds) {
  const std::vector<std::string> expected = {
      "azure-v100-ib",    "cpu-host",   "dgx-a100", "dgx-h100",    "dgx1-v100",
      "ethernet-cluster", "pai-nvlink", "pai-pcie", "pcie-server", "v100-pcie-testbed"};
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
}

TEST(PlatformSpec, SeveralServersNeedNics) {
  auto msg = error_of("preset: v100-pcie-testbed\nservers: 2\n");
  EXPECT_HAS(msg, "platform.server.nic.count");
}

TEST(PlatformSpec, BadChoicesListTheGoodOnes) {
  EXPECT_HAS(error_of("preset: dgx-a100\nfabric: {topology: torus}\n"), "switch or fat-tree");
  EXPECT_HAS(error_of("preset: dgx-a100\nfabric: {oversubscription: 0.5}\n"),
             "platform.fabric.oversubscription");
  EXPECT_HAS(error_of("preset: dgx1-v100\nserver:\n  nvlink: {nonadjacent: pigeon}\n"),
             "nvlink or pcie");
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
}

// Issue 15: magnitudes no hardware has made the replay spin or overflow; each is refused at
// its key and line, with the accepted range.
TEST(PlatformSpec, MagnitudesOutsideTheirRangeNameKeyLineAndRange) {
  auto tiny = error_of("preset: dgx-a100\nserver:\n  pcie:\n    bandwidth: 1e-300Bps\n");
  EXPECT_HAS(tiny, "p.yaml:4");
  EXPECT_HAS(tiny, "platform.server.pcie.bandwidth: 1e-300 B/s is outside the accepted range, "
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
  EXPECT_EQ(error_of("preset: dgx-a100\nserver:\n  nic: {bandwidth: 1KBps, latency: 3600s}\n"),
            "");
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
