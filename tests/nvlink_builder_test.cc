// NVLink inside a server (platforms/nvlink_builder.cc): the NVLS endpoint n<S>_nvls exists only
// with server.nvlink.sharp, every GPU names it in its host property nvls_host, it is reached
// from its own server's GPUs over their NVLink into the NVSwitch and from nowhere else, SimGrid
// and the XML export agree, and a GPU's flow to it runs at that GPU's own NVLink rate.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "common/errors.h"
#include "common/yaml_reader.h"
#include "engine/replay.h"
#include "platforms/platform_probe.h"
#include "platforms/platform_spec.h"
#include "platforms/routing.h"
#include "tests/concurrent_transfers.h"
#include "tests/test_util.h"
#include "tests/topology_lookup.h"

namespace orrery {
namespace {

using testing::preset;

using testing::find_host;
using testing::find_link;

TEST(NvlinkBuilder, NvlsHostOnlyWithNvlinkSharp) {
  for (const char* name : {"dgx-a100", "dgx2-v100", "dgx1-v100", "pai-nvlink"}) {
    Topology t = preset(name, "servers: 2\n");
    for (const auto& h : t.hosts) {
      EXPECT_NE(h.role, "nvls") << name << ": " << h.name;
      EXPECT_EQ(h.properties.count("nvls_host"), 0u) << name << ": " << h.name;
    }
    for (const auto& l : t.links) EXPECT_NE(l.link_class, "nvswitch") << name << ": " << l.name;
  }
  Topology off = preset("dgx-h100", "servers: 1\nserver: {nvlink: {sharp: false}}\n");
  EXPECT_EQ(find_host(off, "n0_nvls"), nullptr);
}

TEST(NvlinkBuilder, NvlsHostPerServerNamedByEveryGpu) {
  Topology t = preset("dgx-h100", "servers: 2\n");
  for (int s = 0; s < 2; ++s) {
    const std::string nvls = "n" + std::to_string(s) + "_nvls";
    const TopoHost* h = find_host(t, nvls);
    ASSERT_NE(h, nullptr) << nvls;
    EXPECT_EQ(h->role, "nvls");
    const TopoLink* l = find_link(t, nvls + "_link");
    ASSERT_NE(l, nullptr);
    EXPECT_EQ(l->link_class, "nvswitch");
    EXPECT_EQ(l->latency, 0);
    // Twice all 8 GPUs' NVLink (18 x 25 GB/s x 0.824 each): never the bottleneck.
    EXPECT_NEAR(l->bandwidth, 2 * 8 * 370.8e9, 1);
  }
  for (const auto& h : t.hosts) {
    if (h.role != "gpu") {
      EXPECT_EQ(h.properties.count("nvls_host"), 0u) << h.name;
      continue;
    }
    EXPECT_EQ(h.properties.at("nvls_host"), h.name.substr(0, h.name.find('_')) + "_nvls") << h.name;
  }
  // Not a GPU: strategies and benches never place work on it.
  EXPECT_EQ(gpu_hosts(t).size(), 16u);
}

TEST(NvlinkBuilder, NvlsIsReachedOverTheGpusOwnNvlinkOnly) {
  Topology t = preset("dgx-h100", "servers: 2\n");
  RouteFinder f(t);
  auto in = f.route("n1_gpu4", "n1_nvls");
  ASSERT_EQ(in.size(), 2u);
  EXPECT_EQ(in[0].hop.link, "n1_gpu4_nvlink");
  EXPECT_FALSE(in[0].hop.reverse);
  EXPECT_EQ(in[0].to, "n1_nvswitch");
  EXPECT_EQ(in[1].hop.link, "n1_nvls_link");
  EXPECT_EQ(route_relation(f, in), "NVSwitch");
  auto out = f.route("n1_nvls", "n1_gpu4");
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[1].hop.link, "n1_gpu4_nvlink");
  EXPECT_TRUE(out[1].hop.reverse);
  // The switch's reduction engine serves its own server's NVLink traffic only.
  EXPECT_THROW(f.route("n0_gpu0", "n1_nvls"), InputError);
  EXPECT_THROW(f.route("n0_cpu0", "n0_nvls"), InputError);
  EXPECT_THROW(f.route("n0_nvls", "n1_nvls"), InputError);
}

TEST(NvlinkBuilder, NvlsReachesSimgridAndItsXml) {
  Topology t = preset("dgx-h100", "servers: 2\n");
  PlatformSource generated;
  generated.topology = t;
  PlatformSource xml;
  xml.xml_file = testing::make_temp_dir("nvls") + "/platform.xml";
  testing::write_file(xml.xml_file, topology_to_simgrid_xml(t));
  for (const auto* source : {&generated, &xml}) {
    PlatformProbe p = probe_platform(*source, {{"n0_gpu2", "n0_nvls"}, {"n0_nvls", "n0_gpu5"}});
    EXPECT_EQ(p.properties.at("n0_gpu2").at("nvls_host"), "n0_nvls");
    EXPECT_EQ(p.properties.at("n1_gpu7").at("nvls_host"), "n1_nvls");
    ASSERT_EQ(p.routes.size(), 2u);
    std::vector<std::string> in = p.routes[0].links, out = p.routes[1].links;
    std::sort(in.begin(), in.end());
    std::sort(out.begin(), out.end());
    EXPECT_EQ(in, (std::vector<std::string>{"n0_gpu2_nvlink_UP", "n0_nvls_link_DOWN"}));
    EXPECT_EQ(out, (std::vector<std::string>{"n0_gpu5_nvlink_DOWN", "n0_nvls_link_UP"}));
    // The GPU's NVLink hop (the preset's 0.395 us, half its measured LL step); the NVLS link
    // has none.
    EXPECT_NEAR(p.routes[0].latency, 0.395e-6, 1e-15);
  }
}

TEST(NvlinkBuilder, FlowsToNvlsRunAtEachGpusNvlinkRate) {
  // The 8 GPUs of a DGX H100 each send 1 GB to the NVLS endpoint at once, and it sends 1 GB
  // back to each: every flow is alone on its GPU's NVLink (370.8 GB/s each way) and the
  // endpoint's link carries 8 x 370.8 of its 2 x 8 x 370.8 GB/s, so each takes 0.395 us (the
  // NVLink hop's latency) + 1 GB / 370.8 GB/s, as if the switch were not there.
  Topology t = preset("dgx-h100", "servers: 1\n");
  std::vector<std::pair<std::string, std::string>> flows;
  for (int i = 0; i < 8; ++i) {
    const std::string gpu = "n0_gpu" + std::to_string(i);
    flows.push_back({gpu, "n0_nvls"});
    flows.push_back({"n0_nvls", gpu});
  }
  PlatformSource p;
  p.topology = t;
  const ExecutionGraph g = testing::concurrent_transfers(flows, 1e9);
  RunResult r = replay_isolated(p, g, ReplayOptions{});
  EXPECT_NEAR(r.makespan, 0.395e-6 + 1e9 / (18 * 25e9 * 0.824), 1e-9);
}

}  // namespace
}  // namespace orrery
