// Export: the SimGrid XML of a platform loads back to the same links, routes and benchmark
// numbers; the DOT picture names every node; and the `orrery platform` commands work end to end.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "common/yaml_reader.h"
#include "engine/platform_bench.h"
#include "platforms/platform_dot.h"
#include "platforms/platform_probe.h"
#include "platforms/platform_spec.h"
#include "platforms/routing.h"
#include "tests/test_util.h"
#include "tests/topology_lookup.h"

namespace orrery {
namespace {

using testing::preset;

PlatformSource exported(const Topology& t, const std::string& tag) {
  PlatformSource p;
  p.xml_file = testing::make_temp_dir(tag) + "/platform.xml";
  testing::write_file(p.xml_file, topology_to_simgrid_xml(t));
  return p;
}

void expect_same_platform(const Topology& t) {
  std::vector<std::pair<std::string, std::string>> pairs = routed_host_pairs(t);
  PlatformSource generated;
  generated.topology = t;
  PlatformProbe want = probe_platform(generated, pairs);
  PlatformProbe got = probe_platform(exported(t, "xml"), pairs);
  EXPECT_EQ(got.hosts, want.hosts);
  EXPECT_EQ(got.properties, want.properties);
  ASSERT_EQ(got.links.size(), want.links.size());
  for (size_t i = 0; i < want.links.size(); ++i) {
    EXPECT_EQ(got.links[i].name, want.links[i].name);
    EXPECT_DOUBLE_EQ(got.links[i].bandwidth, want.links[i].bandwidth) << want.links[i].name;
    EXPECT_DOUBLE_EQ(got.links[i].latency, want.links[i].latency) << want.links[i].name;
    EXPECT_EQ(got.links[i].link_class, want.links[i].link_class) << want.links[i].name;
  }
  ASSERT_EQ(got.routes.size(), want.routes.size());
  for (size_t i = 0; i < want.routes.size(); ++i) {
    EXPECT_EQ(got.routes[i].links, want.routes[i].links)
        << want.routes[i].src << " -> " << want.routes[i].dst;
    EXPECT_DOUBLE_EQ(got.routes[i].latency, want.routes[i].latency);
  }
}

TEST(PlatformExport, XmlLoadsBackToTheSameRoutesAndLinks) {
  expect_same_platform(preset("v100-pcie-testbed"));
  expect_same_platform(preset("dgx1-v100", "servers: 2\nfabric: {servers_per_leaf: 1}\n"));
  expect_same_platform(preset("dgx-h100", "servers: 2\nfabric: {sharp: true}\n"));
  expect_same_platform(preset("pcie-server"));
}

TEST(PlatformExport, XmlGivesTheSameBenchmarkNumbers) {
  for (const char* name : {"v100-pcie-testbed", "dgx-a100"}) {
    Topology t = preset(name, std::string(name) == "dgx-a100" ? "servers: 2\n" : "");
    PlatformSource generated;
    generated.topology = t;
    auto pairs = default_bench_pairs(t);
    auto want = run_platform_bench(generated, pairs, 64e6);
    auto got = run_platform_bench(exported(t, "bench"), pairs, 64e6);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_DOUBLE_EQ(got[i].uni, want[i].uni) << name << " " << want[i].pair.label;
      EXPECT_DOUBLE_EQ(got[i].bi, want[i].bi) << name << " " << want[i].pair.label;
      EXPECT_DOUBLE_EQ(got[i].host_to_gpu, want[i].host_to_gpu);
      EXPECT_DOUBLE_EQ(got[i].gpu_to_host, want[i].gpu_to_host);
    }
  }
}

TEST(PlatformExport, HandBuiltTopologiesKeepShortestPathRouting) {
  Topology t;
  t.name = "line";
  t.hosts = {{"a", 1e9, 1, "gpu", {}}, {"b", 1e9, 1, "gpu", {}}};
  t.routers = {"r"};
  t.links = {{"la", 1e9, 1e-6, true, "test"}, {"lb", 2e9, 1e-6, false, "test"}};
  t.edges = {{"a", "r", "la"}, {"b", "r", "lb"}};
  expect_same_platform(t);
  PlatformSource p;
  p.topology = t;
  auto probe = probe_platform(p, {{"a", "b"}, {"b", "a"}});
  EXPECT_EQ(probe.routes[0].links, (std::vector<std::string>{"la_UP", "lb"}));
  EXPECT_EQ(probe.routes[1].links, (std::vector<std::string>{"lb", "la_DOWN"}));
}

TEST(PlatformExport, DotNamesEveryNodeAndLink) {
  Topology t = preset("dgx1-v100", "servers: 2\n");
  std::string dot = topology_to_dot(t);
  EXPECT_EQ(dot.rfind("graph \"dgx1-v100\" {", 0), 0u);
  for (const auto& h : t.hosts) EXPECT_NE(dot.find("\"" + h.name + "\""), std::string::npos);
  for (const auto& r : t.routers) EXPECT_NE(dot.find("\"" + r + "\""), std::string::npos);
  EXPECT_NE(dot.find("subgraph \"cluster_n1\""), std::string::npos);
  // A doubled cube-mesh link: 2 x 25 GB/s signalling, 2 x 20 GB/s of data (efficiency 0.8).
  EXPECT_NE(dot.find("nvlink\\n40 GB/s"), std::string::npos);
  size_t lines = 0;
  for (size_t pos = 0; (pos = dot.find(" -- ", pos)) != std::string::npos; ++pos) ++lines;
  EXPECT_EQ(lines, t.edges.size());
}

// Runs the orrery binary; returns its exit status and output (stdout and stderr).
std::pair<int, std::string> orrery(const std::string& args) {
  const char* bin = std::getenv("ORRERY_BIN");
  if (!bin) return {-1, "ORRERY_BIN is not set"};
  std::string cmd = std::string(bin) + " " + args + " 2>&1";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(cmd.c_str(), "r"), pclose);
  std::string out;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe.get())) > 0) out.append(buf.data(), n);
  int status = pclose(pipe.release());
  return {WEXITSTATUS(status), out};
}

#define EXPECT_HAS(text, part) EXPECT_NE((text).find(part), std::string::npos) << (text)

TEST(PlatformCli, ListShowExportBench) {
  auto [list_rc, list] = orrery("platform list");
  EXPECT_EQ(list_rc, 0) << list;
  EXPECT_HAS(list, "dgx-h100");
  EXPECT_HAS(list, "v100-pcie-testbed");

  auto [show_rc, show] = orrery("platform show dgx-a100 --set servers=2 --route n0_gpu2 n1_gpu5");
  EXPECT_EQ(show_rc, 0) << show;
  EXPECT_HAS(show, "links by class");
  EXPECT_HAS(show, "infiniband");
  EXPECT_HAS(show, "route n0_gpu2 -> n1_gpu5 (Network");
  EXPECT_HAS(show, "n0_nic2");

  auto dir = testing::make_temp_dir("cli");
  auto [xml_rc, xml_out] =
      orrery("platform export pai-nvlink --set platform.servers=2 -o " + dir + "/pai.xml");
  EXPECT_EQ(xml_rc, 0) << xml_out;
  EXPECT_HAS(testing::read_file(dir + "/pai.xml"), "<bypassRoute src=\"n1_gpu0\"");
  auto [dot_rc, dot] = orrery("platform export v100-pcie-testbed --dot");
  EXPECT_EQ(dot_rc, 0) << dot;
  EXPECT_HAS(dot, "\"n0_gpu3\"");

  auto [bench_rc, bench] = orrery("platform bench v100-pcie-testbed --size 64MiB");
  EXPECT_EQ(bench_rc, 0) << bench;
  EXPECT_HAS(bench, "GPU to GPU bi-direct");
  EXPECT_HAS(bench, "Root complex");
  auto [xml_bench_rc, xml_bench] =
      orrery("platform bench " + dir + "/pai.xml --pair n0_gpu0:n1_gpu0:n0_cpu0");
  EXPECT_EQ(xml_bench_rc, 0) << xml_bench;
  // 25 Gb/s Ethernet: 3125 MB/s x 1448/1538 of TCP/IP data = 2942.13 MB/s, less the path's
  // latency on 256 MiB.
  EXPECT_HAS(xml_bench, "2941.");
}

TEST(PlatformCli, BadInputExitsWithStatus2AndSaysWhy) {
  auto [rc, out] = orrery("platform show dgx-z9");
  EXPECT_EQ(rc, 2) << out;
  EXPECT_HAS(out, "unknown platform preset \"dgx-z9\"");
  EXPECT_HAS(out, "dgx-a100");
  auto [key_rc, key] = orrery("platform show dgx1-v100 --set server.gpus=5");
  EXPECT_EQ(key_rc, 2) << key;
  EXPECT_HAS(key, "platform.server.gpus");
  auto [nic_rc, nic] = orrery("platform show dgx1-v100 --set server.nic.pcie_switch=[9]");
  EXPECT_EQ(nic_rc, 2) << nic;
  EXPECT_HAS(nic, "platform.server.nic.pcie_switch");
  auto [bw_rc, bw] = orrery("platform bench pai-pcie --set server.pcie.bandwidth=0");
  EXPECT_EQ(bw_rc, 2) << bw;
  EXPECT_HAS(bw, "platform.server.pcie.bandwidth");
  auto [route_rc, route] = orrery("platform show pai-pcie --route n0_gpu0 n7_gpu0");
  EXPECT_EQ(route_rc, 2) << route;
  EXPECT_HAS(route, "n7_gpu0");
}

}  // namespace
}  // namespace orrery
