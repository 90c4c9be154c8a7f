// Rack-scale NVLink (platforms/presets/gb200-nvl72.yaml): 72 GPUs in one NVLink-switch domain,
// racks joined by a rail-optimized scale-out fabric; and the Blackwell devices' FP8/FP4 rates.
// Expectations from the ring and hierarchical formulas at the published link rates.
#include <gtest/gtest.h>

#include <string>

#include "engine/collective_bench.h"
#include "engine/replay.h"
#include "platforms/device_spec.h"
#include "platforms/platform_spec.h"
#include "test_util.h"

namespace orrery {
namespace {

using Platform = testing::BenchPlatform;
Platform platform(const std::string& yaml) { return testing::bench_platform(yaml); }

const TopoLink& link_named(const Topology& t, const std::string& name) {
  for (const auto& l : t.links)
    if (l.name == name) return l;
  throw std::runtime_error("no link " + name);
}

ExecutionGraph all_reduce(const Platform& p, CollectiveAlgo algo, double bytes,
                          CollectiveProtocol protocol = CollectiveProtocol::kSimple) {
  ExecutionGraph g;
  for (const auto& r : p.ranks) g.devices.push_back({r.host, r.host, r.host, r.node, {}});
  Collective c;
  c.type = CollectiveType::kAllReduce;
  c.algo = algo;
  c.protocol = protocol;
  c.bytes = bytes;
  for (size_t i = 0; i < p.ranks.size(); ++i) c.ranks.push_back(static_cast<int>(i));
  append_collective(g, "allreduce", c, "comm", {});
  return g;
}

TEST(Nvl72, OneRackIsOneNvlinkDomainAtThePublishedRate) {
  const PlatformSpec spec =
      parse_platform_spec(YAML::Load("{preset: gb200-nvl72, servers: 1}"), "test");
  EXPECT_EQ(spec.server.gpus, 72);
  EXPECT_EQ(spec.server.gpu.name, "GB200");
  // NVLink 5: 18 links of 50 GB/s each way per GPU (1.8 TB/s both ways), of which NCCL's SM100
  // figure, 40.1 GB/s a link, carries data.
  EXPECT_DOUBLE_EQ(spec.server.nvlink.links_per_gpu * spec.server.nvlink.bandwidth, 900e9);
  const Platform p = platform("{preset: gb200-nvl72, servers: 1}");
  ASSERT_EQ(p.ranks.size(), 72u);
  const double rate = link_named(p.source.topology, "n0_gpu0_nvlink").bandwidth;
  EXPECT_NEAR(rate, 18 * 40.1e9, 1e3);
  // A ring all-reduce of S bytes over the 72 GPUs: each sends 2 x 71/72 x S over its NVLinks,
  // all through the one switch domain: 2 x 71/72 x S / rate, bytes only (the ideal protocol:
  // the 142 steps' link latencies, 0.6 us each, are 0.4% of S = 8 GiB's 23 ms).
  const double S = 8.0 * (1 << 30);
  const RunResult r = replay_isolated(
      p.source, all_reduce(p, CollectiveAlgo::kRing, S, CollectiveProtocol::kIdeal), {});
  EXPECT_NEAR(r.makespan, 2.0 * 71 / 72 * S / rate, 0.01 * r.makespan);
  // NCCL's Simple protocol adds its per-step latency, 142 times: slower, by less than a fifth.
  const RunResult simple = replay_isolated(p.source, all_reduce(p, CollectiveAlgo::kRing, S), {});
  EXPECT_GT(simple.makespan, r.makespan);
  EXPECT_LT(simple.makespan, 1.2 * r.makespan);
  for (const LinkStats& l : r.links)
    EXPECT_TRUE(l.link_class == "nvlink" || l.link_class == "nvswitch")
        << l.name << " (" << l.link_class << ") carried " << l.bytes;
}

TEST(Nvl72, TwoRacksSendOnlyTheInterRackPhaseOverTheScaleOutFabric) {
  // 144 GPUs on two racks, hierarchical all-reduce of S: reduce-scatter inside each rack over
  // NVLink, an all-reduce of S/72 between the two racks' GPUs of the same local rank over their
  // NICs (a two-rank ring sends half of it, twice: S/72 each way), all-gather inside the racks.
  const Platform p = platform("{preset: gb200-nvl72, servers: 2}");
  ASSERT_EQ(p.ranks.size(), 144u);
  const double S = 1 << 30;
  const RunResult r =
      replay_isolated(p.source, all_reduce(p, CollectiveAlgo::kHierarchical, S), {});
  int ports = 0;
  for (const LinkStats& l : r.links) {
    if (l.link_class != "infiniband") continue;
    if (l.name.find("_port_") == std::string::npos) {
      ADD_FAILURE() << l.name << ": traffic on a rail switch's uplink: it left its rail";
      continue;
    }
    ++ports;
    EXPECT_NEAR(l.bytes, S / 72, 0.001 * S / 72) << l.name;
  }
  EXPECT_EQ(ports, 2 * 72 * 2);  // every NIC's port, up and down
  // Nothing of the intra-rack phases crosses a NIC: NVLink carries 2 x 71/72 x S per GPU.
  const LinkStats* nvl = nullptr;
  for (const LinkStats& l : r.links)
    if (l.name == "n0_gpu0_nvlink_UP") nvl = &l;
  ASSERT_NE(nvl, nullptr);
  EXPECT_NEAR(nvl->bytes, 2.0 * 71 / 72 * S, 0.001 * S);
}

TEST(Nvl72, BlackwellDevicesHaveFp8AndFp4AndHopperFp8Only) {
  const DeviceSpec gb200 = device_spec("GB200");
  EXPECT_EQ(gb200.peak_flops(DType::kFP8, true), 5000e12);
  EXPECT_EQ(gb200.fp4_tc, 10000e12);
  EXPECT_EQ(gb200.peak_flops(DType::kBF16, true), 2500e12);
  const DeviceSpec h100 = device_spec("H100-SXM5");
  EXPECT_TRUE(h100.has_tensor_core_path(DType::kFP8));
  EXPECT_EQ(h100.peak_flops(DType::kFP8, true), 1978.9e12);  // twice BF16's 989.4, rounded
  EXPECT_EQ(h100.fp4_tc, 0.0);
  // No FP8 Tensor Cores on an A100: an FP8 GEMM runs at the BF16 Tensor Core rate.
  const DeviceSpec a100 = device_spec("A100-SXM4-80GB");
  EXPECT_FALSE(a100.has_tensor_core_path(DType::kFP8));
  EXPECT_EQ(a100.peak_flops(DType::kFP8, true), a100.bf16_tc);
  for (const char* name : {"B300", "GB300", "H100-NVL", "H200-NVL"}) {
    const DeviceSpec d = device_spec(name);
    EXPECT_GT(d.fp8_tc, d.bf16_tc) << name;
    EXPECT_GT(d.mem_bytes, 90e9) << name;
  }
  EXPECT_GT(device_spec("GB300").fp4_tc, device_spec("GB200").fp4_tc);
}

}  // namespace
}  // namespace orrery
