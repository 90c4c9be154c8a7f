// Simulated microbenchmarks: Table 1 of the offline-profiling paper within 5%, the bandwidth of
// each link class, full-duplex behaviour, and the fat-tree's bisection bandwidth.
#include "engine/platform_bench.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "common/yaml_reader.h"
#include "engine/replay.h"
#include "platforms/platform_spec.h"
#include "tests/concurrent_transfers.h"

namespace orrery {
namespace {

constexpr double kBytes = 256.0 * 1024 * 1024;

PlatformSource preset(const std::string& name, const std::string& extra = "") {
  std::string yaml = "preset: " + name + "\n" + extra;
  PlatformSource p;
  p.topology =
      build_topology(parse_platform_spec(load_yaml_text(yaml, "t.yaml"), "t.yaml", "platform"));
  return p;
}

std::map<std::string, BenchColumn> bench(const PlatformSource& p) {
  std::map<std::string, BenchColumn> out;
  for (const auto& c : run_platform_bench(p, default_bench_pairs(p.topology), kBytes))
    out[c.pair.label] = c;
  return out;
}

// Table 1 of the offline-profiling paper, MB/s (10^6 bytes/s), without the NCCL rows.
struct PaperColumn {
  const char* label;
  double uni, bi, host_to_gpu, gpu_to_host;
};
const PaperColumn kTable1[] = {{"QPI", 10948.81, 16475.93, 11956.69, 13200.21},
                               {"Root complex", 10270.59, 19325.81, 12027.22, 13201.87},
                               {"PCIe switch", 13181.03, 25037.41, 12347.09, 13121.95}};

TEST(PlatformBench, ReproducesTable1Within5Percent) {
  auto cols = bench(preset("v100-pcie-testbed"));
  ASSERT_EQ(cols.size(), 3u);
  for (const auto& paper : kTable1) {
    ASSERT_TRUE(cols.count(paper.label)) << paper.label;
    const BenchColumn& c = cols[paper.label];
    const std::pair<const char*, std::pair<double, double>> cells[] = {
        {"GPU to GPU uni", {paper.uni, c.uni}},
        {"GPU to GPU bi", {paper.bi, c.bi}},
        {"Host to GPU", {paper.host_to_gpu, c.host_to_gpu}},
        {"GPU to Host", {paper.gpu_to_host, c.gpu_to_host}}};
    for (const auto& [row, v] : cells) {
      double want = v.first, got = v.second / 1e6;
      double err = std::fabs(got - want) / want;
      std::printf("%-13s %-15s paper %9.2f  simulated %9.2f  error %5.2f%%\n", paper.label, row,
                  want, got, 100 * err);
      EXPECT_LT(err, 0.05) << paper.label << " / " << row;
    }
  }
}

// Share of a NIC's line rate that is data (platforms/link_rates.h, docs/platforms.md): a 4096-byte
// payload per packet with 26 bytes of InfiniBand headers and CRCs, and a 1500-byte IP MTU holding
// 1448 bytes of TCP data in 1538 bytes on the wire.
constexpr double kInfiniband = 4096.0 / (4096 + 26);
constexpr double kTcpEthernet = 1448.0 / 1538;

TEST(PlatformBench, EachLinkClassDeliversItsBandwidth) {
  // At these rates the route's latency shows: GPU-NVSwitch-GPU crosses two NVLinks of the
  // preset's latency (half the LL step measured on it: 0.488 us on the A100, 0.395 on the H100).
  auto through_switch = [](double bw, double link_latency) {
    return kBytes / (2 * link_latency + kBytes / bw);
  };
  // Links carry their achievable rate: NVLink at nvlink.efficiency of its signalling rate, NICs
  // at their packet efficiency.
  auto a100 = bench(preset("dgx-a100", "servers: 2\n"));
  EXPECT_NEAR(a100["NVSwitch"].uni, through_switch(12 * 25e9 * 0.8, 0.488e-6),
              1e6);                                                   // 12 NVLink 3.0
  EXPECT_NEAR(a100["Network"].uni, 25e9 * kInfiniband, 25e9 * 1e-3);  // HDR 200 Gb/s
  EXPECT_NEAR(a100["Network"].host_to_gpu, 31.508e9 * 0.7687, 1e7);   // PCIe 4.0 reads
  auto h100 = bench(preset("dgx-h100", "servers: 2\n"));
  EXPECT_NEAR(h100["NVSwitch"].uni, through_switch(18 * 25e9 * 0.824, 0.395e-6),
              1e6);                                                   // 18 NVLink 4.0
  EXPECT_NEAR(h100["Network"].uni, 50e9 * kInfiniband, 50e9 * 1e-3);  // NDR 400 Gb/s
  auto dgx1 = bench(preset("dgx1-v100", "servers: 2\n"));
  EXPECT_NEAR(dgx1["NVLink"].uni, 25e9 * 0.8, 25e9 * 1e-3);  // GPUs 0-1: one NVLink 2.0 link
  EXPECT_NEAR(dgx1["Network"].uni, 12.5e9 * kInfiniband, 12.5e9 * 1e-3);  // EDR 100 Gb/s
  PlatformSource d = preset("dgx1-v100", "servers: 1\n");
  auto doubled = run_platform_bench(d, {{"0-3", "n0_gpu0", "n0_gpu3", ""}}, kBytes);
  EXPECT_NEAR(doubled[0].uni, 2 * 25e9 * 0.8, 50e9 * 1e-3);  // GPUs 0-3: two links
  auto pai = bench(preset("pai-nvlink"));
  EXPECT_NEAR(pai["NVLink"].uni, 50e9 * 0.8, 50e9 * 1e-3);  // Table I: NVLink 50 GB/s signalling
  EXPECT_NEAR(pai["Network"].uni, 25e9 / 8 * kTcpEthernet, 25e9 / 8 * 1e-3);  // Ethernet 25 Gb/s
  EXPECT_NEAR(pai["Network"].host_to_gpu, 10e9, 10e9 * 1e-3);                 // PCIe 10 GB/s
  auto azure = bench(preset("azure-v100-ib"));
  EXPECT_NEAR(azure["Network"].uni, 5e9 * kInfiniband, 5e9 * 1e-3);  // InfiniBand 40 Gb/s
}

TEST(PlatformBench, FullDuplexWhereTheHardwareIs) {
  auto ratio = [](const BenchColumn& c) { return c.bi / c.uni; };
  auto dgx1 = bench(preset("dgx1-v100", "servers: 2\n"));
  EXPECT_NEAR(ratio(dgx1["NVLink"]), 2.0, 0.01);
  EXPECT_NEAR(ratio(dgx1["NVLink 2-hop"]), 2.0, 0.01);
  EXPECT_NEAR(ratio(dgx1["Network"]), 2.0, 0.01);
  auto a100 = bench(preset("dgx-a100", "servers: 2\n"));
  EXPECT_NEAR(ratio(a100["NVSwitch"]), 2.0, 0.01);
  auto pai = bench(preset("pai-pcie"));
  EXPECT_NEAR(ratio(pai["PCIe switch"]), 2.0, 0.01);  // Table I's nominal PCIe: no overhead
  // Table 1 shows where it is not: 1.90 under a switch, 1.88 through the root complex, 1.50
  // across QPI.
  auto testbed = bench(preset("v100-pcie-testbed"));
  EXPECT_NEAR(ratio(testbed["PCIe switch"]), 25037.41 / 13181.03, 0.02);
  EXPECT_NEAR(ratio(testbed["Root complex"]), 19325.81 / 10270.59, 0.05);
  EXPECT_NEAR(ratio(testbed["QPI"]), 16475.93 / 10948.81, 0.02);
}

// Total rate of transfers that all start at once.
double aggregate_rate(const PlatformSource& p,
                      const std::vector<std::pair<std::string, std::string>>& flows) {
  RunResult r = replay_isolated(p, testing::concurrent_transfers(flows, kBytes), ReplayOptions{});
  return flows.size() * kBytes / r.makespan;
}

TEST(PlatformBench, FatTreeBisectionIsLeavesTimesUplinks) {
  // 4 servers, 2 per leaf, one HDR NIC (25 GB/s line rate, 25 x 4096/4122 GB/s of data) each:
  // a leaf's downlinks carry twice that, its uplink as much / oversubscription. Leaf 0 sending to
  // leaf 1 is the bisection.
  const double port = 25e9 * kInfiniband;
  for (double over : {1.0, 2.0, 4.0}) {
    char extra[200];
    std::snprintf(extra, sizeof extra,
                  "servers: 4\nserver: {nic: {count: 1}}\n"
                  "fabric: {servers_per_leaf: 2, oversubscription: %g}\n",
                  over);
    PlatformSource p = preset("dgx-a100", extra);
    double bisection = aggregate_rate(p, {{"n0_gpu0", "n2_gpu0"}, {"n1_gpu0", "n3_gpu0"}});
    EXPECT_NEAR(bisection, 2 * port / over, 50e9 / over * 1e-3) << "oversubscription " << over;
    // Both directions at once: the uplinks are full duplex.
    double both = aggregate_rate(p, {{"n0_gpu0", "n2_gpu0"},
                                     {"n1_gpu0", "n3_gpu0"},
                                     {"n2_gpu1", "n0_gpu1"},
                                     {"n3_gpu1", "n1_gpu1"}});
    EXPECT_NEAR(both, 2 * 2 * port / over, 2 * 50e9 / over * 1e-3) << "oversubscription " << over;
    // Inside a leaf the oversubscription does not matter.
    EXPECT_NEAR(aggregate_rate(p, {{"n0_gpu0", "n1_gpu0"}}), port, 25e6);
  }
}

TEST(PlatformBench, RailOptimizedCrossesTheSpineOnlyBetweenRails) {
  // Units of 2 DGX H100: rail switch k holds NIC k of both servers, and its uplink carries
  // 2 NDR ports' data / oversubscription. GPU i leaves by NIC i, so GPU 0 to GPU 0 stays on rail
  // 0, while GPU 0 to GPU 1 goes up rail 0's uplink and down rail 1's.
  const double port = 50e9 * kInfiniband;
  // Two flows at once, each of kBytes after its route's latency: 2 PCIe links (1 us) and a NIC
  // end (0.6 us) on each side, half a switch latency (0.13 us) per port, and the uplinks' full
  // switch latency each.
  const double same_rail_latency = 4e-6 + 2 * 0.6e-6 + 0.13e-6;
  const double cross_rail_latency = same_rail_latency + 2 * 0.13e-6;
  auto two_flows = [](double latency, double rate) {
    return 2 * kBytes / (latency + kBytes / rate);
  };
  for (double over : {1.0, 4.0}) {
    char extra[160];
    std::snprintf(extra, sizeof extra,
                  "servers: 2\nfabric: {servers_per_leaf: 2, oversubscription: %g}\n", over);
    PlatformSource p = preset("dgx-h100", extra);
    // Two flows leave rail 0 for rail 1 and share its uplink of 2 x port / over: the spine is
    // non-blocking only at 1:1.
    double cross = aggregate_rate(p, {{"n0_gpu0", "n1_gpu1"}, {"n1_gpu0", "n0_gpu1"}});
    EXPECT_NEAR(cross, two_flows(cross_rail_latency, std::min(port, port / over)), 1e6) << over;
    // Same rail: one switch, each flow at its NIC's rate whatever the uplinks.
    double same = aggregate_rate(p, {{"n0_gpu0", "n1_gpu0"}, {"n1_gpu1", "n0_gpu1"}});
    EXPECT_NEAR(same, two_flows(same_rail_latency, port), 1e6) << over;
  }
}

TEST(PlatformBench, FormatsATable1LikeTable) {
  std::vector<BenchColumn> cols = {{{"PCIe switch", "n0_gpu0", "n0_gpu1", "n0_cpu0"},
                                    13181.03e6,
                                    25037.41e6,
                                    12347.09e6,
                                    13121.95e6}};
  std::string table = format_bench_table(cols);
  EXPECT_NE(table.find("GPU to GPU uni-direct  13181.03"), std::string::npos) << table;
  EXPECT_NE(table.find("PCIe switch"), std::string::npos) << table;
  EXPECT_NE(table.find("n0_gpu0:n0_gpu1"), std::string::npos) << table;
}

}  // namespace
}  // namespace orrery
