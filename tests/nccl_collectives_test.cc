// Collectives as NCCL runs them (engine/collective_plan.h): channels over the links the topology
// has, the protocols' switch points from NCCL's tuning constants, pipelined hierarchical
// all-reduce, the latency of small messages, and flow and analytical modes agreeing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <set>

#include "common/errors.h"
#include "engine/collective_bench.h"
#include "engine/collective_plan.h"
#include "engine/replay.h"
#include "platforms/platform_spec.h"
#include "test_util.h"

namespace orrery {
namespace {

using Platform = testing::BenchPlatform;
Platform platform(const std::string& yaml) { return testing::bench_platform(yaml); }

ExecutionGraph one_collective(const Platform& p, const Collective& proto) {
  ExecutionGraph g;
  for (const auto& r : p.ranks) g.devices.push_back({r.host, r.host, r.host, r.node, {}});
  Collective c = proto;
  c.ranks.clear();
  for (size_t i = 0; i < p.ranks.size(); ++i) c.ranks.push_back(static_cast<int>(i));
  append_collective(g, "c", c, "comm", {});
  return g;
}

const TopoLink& link_named(const Topology& t, const std::string& name) {
  for (const auto& l : t.links)
    if (l.name == name) return l;
  throw std::runtime_error("no link " + name);
}

// The slowest link of a class, 0 for none: for "infiniband" a generated cluster's NIC port.
double slowest_link(const Topology& t, const std::string& link_class) {
  double bw = 0;
  for (const auto& l : t.links)
    if (l.link_class == link_class && (bw == 0 || l.bandwidth < bw)) bw = l.bandwidth;
  return bw;
}

// Data rate of GPU 0's NVLinks together, one direction: what a ring's busbw can reach.
double nvlink_rate_of_gpu0(const Topology& t) {
  double sum = 0;
  for (const auto& e : t.edges) {
    const TopoLink& l = link_named(t, e.link);
    if (l.link_class == "nvlink" && (e.a == "n0_gpu0" || e.b == "n0_gpu0")) sum += l.bandwidth;
  }
  return sum;
}

CollectiveBenchRow bench_one(const Platform& p, CollectiveType type, double bytes,
                             CollectiveAlgo algo, CollectiveProtocol proto, bool analytical) {
  CollectiveBenchOptions o;
  o.type = type;
  o.algo = algo;
  o.protocol = proto;
  o.analytical = analytical;
  o.min_bytes = o.max_bytes = bytes;
  return run_collective_bench(p.source, p.ranks, o).at(0);
}

TEST(NcclCollectives, DgxOneMeshRunsSeveralRingsOverItsNvlinksOnly) {
  Platform p = platform("{preset: dgx1-v100, servers: 1}");
  Collective c;
  c.type = CollectiveType::kAllReduce;
  c.algo = CollectiveAlgo::kRing;
  c.protocol = CollectiveProtocol::kSimple;
  c.bytes = 256e6;
  RunResult r = replay_isolated(p.source, one_collective(p, c), ReplayOptions{});
  ASSERT_EQ(r.collectives.size(), 1u);
  // Six NVLinks per GPU: the search finds several rings, each hop a direct NVLink.
  EXPECT_GE(r.collectives[0].channels, 4);
  std::set<std::string> used;
  for (const auto& l : r.links) {
    EXPECT_EQ(l.link_class, "nvlink") << l.name << " carried " << l.bytes << " bytes";
    if (l.bytes > 0) used.insert(l.name);
  }
  // The hybrid cube mesh has 16 GPU pairs joined by NVLink: all of them carry traffic.
  EXPECT_GE(used.size(), 16u);
  // Bus bandwidth near all six links of a GPU, where one ring in rank order gets one link's.
  const double bus = 2.0 * 7 / 8 * c.bytes / r.makespan;
  EXPECT_GT(bus, 0.9 * nvlink_rate_of_gpu0(p.source.topology));
  c.protocol = CollectiveProtocol::kIdeal;
  RunResult one = replay_isolated(p.source, one_collective(p, c), ReplayOptions{});
  EXPECT_EQ(one.collectives[0].channels, 1);
  EXPECT_GT(one.makespan, 4 * r.makespan);
}

TEST(NcclCollectives, SmallCollectivesRunOnFewerChannels) {
  // NCCL drops channels while each would get fewer bytes than its threads' threshold: 512 threads
  // of 64 bytes for Simple (32 KiB a channel), 512 of 8 x 8 ranks for LL (32 KiB too on 8
  // GPUs), 640 of 8 for LL128 (5 KiB). On the DGX-1's mesh 64 KiB runs on 2 rings, 1 GiB on
  // every ring the search found.
  Platform p = platform("{preset: dgx1-v100, servers: 1}");
  auto channels = [&](double b, CollectiveProtocol proto) {
    return bench_one(p, CollectiveType::kAllReduce, b, CollectiveAlgo::kRing, proto, true)
        .choice.channels;
  };
  const int all = channels(1 << 30, CollectiveProtocol::kSimple);
  EXPECT_GE(all, 4);
  EXPECT_EQ(channels(64 << 10, CollectiveProtocol::kSimple), 2);
  EXPECT_EQ(channels(64 << 10, CollectiveProtocol::kLL), 2);
  EXPECT_EQ(channels(16 << 10, CollectiveProtocol::kLL128), 3);
  EXPECT_EQ(channels(1 << 10, CollectiveProtocol::kSimple), 1);
}

TEST(NcclCollectives, NvswitchRunsOneRingAtTheGpusNvlinkRate) {
  Platform p = platform("{preset: dgx-a100, servers: 1}");
  auto row = bench_one(p, CollectiveType::kAllReduce, 1 << 30, CollectiveAlgo::kRing,
                       CollectiveProtocol::kSimple, false);
  // Every ring would cross the same GPU <-> NVSwitch links: one is enough.
  EXPECT_EQ(row.choice.channels, 1);
  const double link = link_named(p.source.topology, "n0_gpu0_nvlink").bandwidth;
  // 1 GiB: the 14 steps' latency (tens of us) is well under 1% of the 8 ms transfer.
  EXPECT_NEAR(row.busbw, link, 0.01 * link);
}

TEST(NcclCollectives, ProtocolSwitchPointsFollowNcclsLatencyAndEfficiency) {
  // NVLink latency far below NCCL's per-hop figures, so a step costs exactly the table's value,
  // and NCCL's own launch costs (no measured one).
  Platform p = platform(
      "{preset: dgx-a100, servers: 1, server: {nvlink: {latency: 0.01us}, nccl_launch: 0}}");
  const double bw = link_named(p.source.topology, "n0_gpu0_nvlink").bandwidth;
  // Ring all-reduce on 8 GPUs (NCCL 2.30 tuning constants, microseconds):
  // t = base + 14 x hop + 2 x 7/8 x B / (efficiency x bw).
  auto t = [&](double base, double hop, double eff, double b) {
    return (base + 14 * hop) * 1e-6 + 1.75 * b / (eff * bw);
  };
  // LL (6.6, 0.6, 1/2 of the links, at most NCCL's Ampere ceiling of 87.7 GB/s) against LL128
  // (14, 1.9, 120/128); LL128 against Simple (8.4, 3.4, 1).
  const double ll = std::min(0.5, 87.7e9 / bw);
  ASSERT_LT(ll, 0.5);  // the ceiling binds on NVLink 3
  auto cross = [&](double b0, double h0, double e0, double b1, double h1, double e1) {
    return ((b1 + 14 * h1) - (b0 + 14 * h0)) * 1e-6 / (1.75 / (e0 * bw) - 1.75 / (e1 * bw));
  };
  const double ll_ll128 = cross(6.6, 0.6, ll, 14.0, 1.9, 120.0 / 128);
  const double ll128_simple = cross(14.0, 1.9, 120.0 / 128, 8.4, 3.4, 1.0);
  EXPECT_LT(t(6.6, 0.6, ll, ll_ll128 / 2), t(14.0, 1.9, 120.0 / 128, ll_ll128 / 2));
  ASSERT_LT(ll_ll128, ll128_simple);
  auto proto_at = [&](double b) {
    return bench_one(p, CollectiveType::kAllReduce, b, CollectiveAlgo::kRing,
                     CollectiveProtocol::kAuto, true)
        .choice.protocol;
  };
  EXPECT_EQ(proto_at(ll_ll128 / 1.5), CollectiveProtocol::kLL);
  EXPECT_EQ(proto_at(ll_ll128 * 1.5), CollectiveProtocol::kLL128);
  EXPECT_EQ(proto_at(ll128_simple / 1.5), CollectiveProtocol::kLL128);
  EXPECT_EQ(proto_at(ll128_simple * 1.5), CollectiveProtocol::kSimple);
  // And the time is the formula's.
  auto row = bench_one(p, CollectiveType::kAllReduce, 4096, CollectiveAlgo::kRing,
                       CollectiveProtocol::kLL, false);
  EXPECT_NEAR(row.seconds, t(6.6, 0.6, ll, 4096), 0.01 * row.seconds);
}

TEST(NcclCollectives, LL128StaysOffWherePcieCarriesTheSteps) {
  Platform p = platform("{preset: pcie-server}");
  for (double b : {1e3, 1e6, 1e8}) {
    auto row = bench_one(p, CollectiveType::kAllReduce, b, CollectiveAlgo::kAuto,
                         CollectiveProtocol::kAuto, true);
    EXPECT_NE(row.choice.protocol, CollectiveProtocol::kLL128) << b;
  }
}

TEST(NcclCollectives, LatencyOfEightByteMessagesIsNcclsPerStepLatency) {
  Platform p = platform("{preset: dgx-a100, servers: 1}");
  auto row = bench_one(p, CollectiveType::kAllReduce, 8, CollectiveAlgo::kRing,
                       CollectiveProtocol::kLL, false);
  // A step takes the longer of the route's own latency (GPU -> NVSwitch -> GPU, 2 x 0.488 us:
  // the preset's measured step) and LL's 0.6 us; 14 steps and the server's measured launch,
  // 8.21 us (dgx-a100's nccl_launch, in place of NCCL's 6.6).
  const double route = 2 * link_named(p.source.topology, "n0_gpu0_nvlink").latency;
  EXPECT_NEAR(route, 0.976e-6, 1e-12);
  const double expected = 8.21e-6 + 14 * std::max(0.6e-6, route);
  EXPECT_NEAR(row.seconds, expected, 0.01 * expected);
  // The bytes-only model has only the links' latency.
  auto ideal = bench_one(p, CollectiveType::kAllReduce, 8, CollectiveAlgo::kRing,
                         CollectiveProtocol::kIdeal, false);
  EXPECT_NEAR(ideal.seconds, 14 * route, 0.01 * 14 * route);
  EXPECT_GT(row.seconds - ideal.seconds, 6e-6);
}

TEST(NcclCollectives, EveryProtocolPaysItsStepLatencyOnEachTransport) {
  // 8 B rings whose links have next to no latency of their own, with NCCL's launch figures: the
  // time is NCCL 2.30's ring base plus 2(n - 1) steps of its per-hop latency for what the steps
  // cross (tuning.cc, microseconds; bases LL 6.6, LL128 14, Simple 8.4).
  struct Case {
    const char* yaml;
    int steps;
    double hop[3];  // LL, LL128, Simple
  };
  const Case cases[] = {
      // NVLink: a DGX A100's 8 GPUs through the NVSwitch.
      {"{preset: dgx-a100, servers: 1, server: {nvlink: {latency: 0.001us}, nccl_launch: 0}}",
       14,
       {0.6, 1.9, 3.4}},
      // PCIe: pcie-server's 4 GPUs behind PCIe switches.
      {"{preset: pcie-server, server: {pcie: {latency: 0.001us}}}", 6, {1.0, 2.5, 5.7}},
      // The network: two one-GPU servers over InfiniBand (RoCE and EFA are NCCL's NET too).
      // With one GPU per server nothing hides a step's network latency: NCCL charges rings the
      // tree's (LL 5.0, LL128 8.5, Simple 14 us; its rings' own are 2.7, 4.0 and 14).
      {"{preset: dgx-h100, servers: 2, server: {gpus: 1, nccl_launch: 0, pcie: {latency: 0.001us}, "
       "nic: {count: 1, latency: 0.001us}}, fabric: {latency: 0.001us}}",
       2,
       {5.0, 8.5, 14.0}},
  };
  const double base[3] = {6.6, 14.0, 8.4};
  const CollectiveProtocol protos[3] = {CollectiveProtocol::kLL, CollectiveProtocol::kLL128,
                                        CollectiveProtocol::kSimple};
  for (const Case& c : cases) {
    Platform p = platform(c.yaml);
    for (int k = 0; k < 3; ++k) {
      const double expected = (base[k] + c.steps * c.hop[k]) * 1e-6;
      for (bool analytical : {true, false}) {
        auto row = bench_one(p, CollectiveType::kAllReduce, 8, CollectiveAlgo::kRing, protos[k],
                             analytical);
        EXPECT_NEAR(row.seconds, expected, 0.02 * expected)
            << c.yaml << " " << collective_protocol_name(protos[k])
            << (analytical ? " analytical" : " flow");
      }
    }
  }
}

// Servers of `per_server` GPUs (rank r on server r / per_server), NVLink inside and the network
// between them, routes without links; each server's one ring is its GPUs in order. Built in
// place: `rings` refers to `found`.
struct FlatServers {
  FlatServers(int servers, int per_server) {
    for (int r = 0; r < servers * per_server; ++r) topo.node_of.push_back(r / per_server);
    topo.route = [per_server](int a, int b) -> const RouteInfo& {
      static const RouteInfo nvlink{0.0, {}, HopClass::kNvlink};
      static const RouteInfo net{0.0, {}, HopClass::kNetwork};
      return a / per_server == b / per_server ? nvlink : net;
    };
    rings = [this](const std::vector<int>& d) -> const std::vector<std::vector<int>>& {
      found = {d};
      return found;
    };
  }
  FlatServers(const FlatServers&) = delete;
  FlatServers& operator=(const FlatServers&) = delete;

  CollectiveTopology topo;
  std::vector<std::vector<int>> found;
  RingSearch rings;
};

// An all-reduce of `bytes` over ranks 0 to ranks - 1.
Collective all_reduce(int ranks, double bytes) {
  Collective c;
  c.type = CollectiveType::kAllReduce;
  c.bytes = bytes;
  for (int r = 0; r < ranks; ++r) c.ranks.push_back(r);
  return c;
}

TEST(NcclCollectives, RingsAcrossServersWaitForTheNetworkProxyInsideToo) {
  // Two servers of two GPUs: inside a ring across servers a step waits at least for the network
  // proxy's post, NCCL's 1 us (3 us for Simple); the network's steps keep the ring's NET
  // latencies (2.7, 4.0, 14 us). One server keeps NVLink's own (0.6, 1.9, 3.4).
  FlatServers s(2, 2);
  const CollectiveTopology& topo = s.topo;
  const RingSearch& rings = s.rings;
  Collective c = all_reduce(4, 8);
  const double inside[3] = {1.0, 1.9, 3.4}, network[3] = {2.7, 4.0, 14.0};
  const CollectiveProtocol protos[3] = {CollectiveProtocol::kLL, CollectiveProtocol::kLL128,
                                        CollectiveProtocol::kSimple};
  for (int k = 0; k < 3; ++k) {
    const CollectivePlan plan = plan_collective(c, CollectiveAlgo::kRing, protos[k], topo, rings);
    EXPECT_NEAR(plan.hop_latency[static_cast<int>(HopClass::kNvlink)], inside[k] * 1e-6, 1e-12);
    EXPECT_NEAR(plan.hop_latency[static_cast<int>(HopClass::kNetwork)], network[k] * 1e-6, 1e-12);
  }
  CollectiveTopology one = topo;
  one.node_of = {0, 0, 0, 0};
  const CollectivePlan ll =
      plan_collective(c, CollectiveAlgo::kRing, CollectiveProtocol::kLL, one, rings);
  EXPECT_NEAR(ll.hop_latency[static_cast<int>(HopClass::kNvlink)], 0.6e-6, 1e-12);
}

TEST(NcclCollectives, RingsAcrossServersStopAtNcclsGraphLimit) {
  // A ring across servers gets a channel per GPU of a server, entering each at another GPU, but
  // NCCL's ring graph stops at 32 (MAXCHANNELS / 2). Two servers of 40 GPUs keep 20 rings, every
  // second one (the largest divisor of 40 within 32), so they stay turns of one another.
  FlatServers wide(2, 40);
  const CollectivePlan plan = plan_collective(all_reduce(80, 1 << 30), CollectiveAlgo::kRing,
                                              CollectiveProtocol::kSimple, wide.topo, wide.rings);
  ASSERT_EQ(plan.channels.size(), 20u);
  EXPECT_EQ(plan.channels[1][0], 2);
  EXPECT_EQ(plan.channels[19][0], 38);
  EXPECT_EQ(plan.channels[19][40], 78);
  FlatServers eight(2, 8);
  EXPECT_EQ(plan_collective(all_reduce(16, 1 << 30), CollectiveAlgo::kRing,
                            CollectiveProtocol::kSimple, eight.topo, eight.rings)
                .channels.size(),
            8u);
}

TEST(NcclCollectives, TreesAcrossServersRunOnEveryChannelsChainAndNic) {
  // Four servers of four GPUs, one ring each (0 1 2 3), routes without links (each GPU a NIC of
  // its own): NCCL's tree graph gets four channels, one per NIC; channel k's chains head every
  // server at its GPU k, the tree on channels 0-3 and its mirror on 4-7. Each moves an eighth
  // of the bytes.
  FlatServers s(4, 4);
  const CollectiveTopology& topo = s.topo;
  const RingSearch& rings = s.rings;
  Collective c = all_reduce(16, 64 << 20);
  const CollectivePlan plan =
      plan_collective(c, CollectiveAlgo::kTree, CollectiveProtocol::kSimple, topo, rings);
  ASSERT_EQ(plan.tree.size(), 8u);
  EXPECT_EQ(plan.tree_chains, 4);
  for (int t = 0; t < 8; ++t) {
    SCOPED_TRACE(t);
    const int k = t % 4;
    // Heads first (server order, reversed for the mirror), then each server's chain from k on.
    const std::vector<int> servers =
        t < 4 ? std::vector<int>{0, 1, 2, 3} : std::vector<int>{3, 2, 1, 0};
    for (int q = 0; q < 4; ++q) EXPECT_EQ(plan.tree[t][q], 4 * servers[q] + k);
    EXPECT_EQ(plan.tree[t][4], 4 * servers[0] + (k + 1) % 4);
    EXPECT_EQ(plan.parent[t][4], 0);  // the head's next GPU hangs off the head
    EXPECT_EQ(plan.parent[t][5], 4);
  }
  // 64 MiB over 8 channels, in Simple's 512 KiB steps: 16 pieces per channel.
  EXPECT_EQ(plan.chunks, 16);

  // Fewer channels for small collectives, 4 KiB each for LL: 8 KiB runs on two, both the first
  // tree (over chains 0 and 1); 1 MiB on all eight.
  c.bytes = 8192;
  const CollectivePlan small =
      plan_collective(c, CollectiveAlgo::kTree, CollectiveProtocol::kLL, topo, rings);
  ASSERT_EQ(small.tree.size(), 2u);
  EXPECT_EQ(small.tree[0][0], 0);
  EXPECT_EQ(small.tree[1][0], 1);
  EXPECT_EQ(small.tree[1][1], 5);
  c.bytes = 1 << 20;
  EXPECT_EQ(
      plan_collective(c, CollectiveAlgo::kTree, CollectiveProtocol::kLL, topo, rings).tree.size(),
      8u);

  // LL128 halves its step until each channel has enough pieces for the tree's depth: with four
  // servers of four, (1 + 2 + 0.4) x 64 / 4 = 54.4 pieces wanted, so 512 KiB -> 128 KiB, then
  // x 16 / 4 = 13.6: 128 KiB leaves 64 MiB / (8 x 128 KiB) = 64, enough.
  c.bytes = 64 << 20;
  EXPECT_EQ(
      plan_collective(c, CollectiveAlgo::kTree, CollectiveProtocol::kLL128, topo, rings).chunks,
      64);
  c.bytes = 4 << 20;  // 4 MiB / (8 x 128 KiB) = 4 < 13.6: down to 32 KiB, 16 pieces
  EXPECT_EQ(
      plan_collective(c, CollectiveAlgo::kTree, CollectiveProtocol::kLL128, topo, rings).chunks,
      16);

  // Two NICs a server, GPUs 0 and 1 on the first (link 50), 2 and 3 on the second (51), each
  // narrower than the GPUs' own PCIe links: two channels, headed by GPUs 0 and 2, four trees.
  static std::map<std::pair<int, int>, RouteInfo> routes;
  for (int a = 0; a < 16; ++a)
    for (int b = 0; b < 16; ++b) {
      RouteInfo& r = routes[{a, b}];
      r.hop = a / 4 == b / 4 ? HopClass::kNvlink : HopClass::kNetwork;
      if (r.hop == HopClass::kNetwork)
        r.links = {
            {100 + a, 32e9}, {50 + (a % 4) / 2, 25e9}, {50 + (b % 4) / 2, 25e9}, {100 + b, 32e9}};
    }
  CollectiveTopology two_nics = topo;
  two_nics.route = [](int a, int b) -> const RouteInfo& { return routes.at({a, b}); };
  const CollectivePlan by_nic =
      plan_collective(c, CollectiveAlgo::kTree, CollectiveProtocol::kSimple, two_nics, rings);
  EXPECT_EQ(by_nic.tree_chains, 2);
  ASSERT_EQ(by_nic.tree.size(), 4u);
  EXPECT_EQ(by_nic.tree[0][0], 0);
  EXPECT_EQ(by_nic.tree[1][0], 2);
  EXPECT_EQ(by_nic.tree[1][4], 3);   // channel 1's chain: 2 3 0 1
  EXPECT_EQ(by_nic.tree[3][0], 14);  // the mirror over chain 1 starts at the last server

  // NCCL's graphs stop at 32 channels: two servers of 40 GPUs, each with a NIC, keep every
  // second chain, 20, and run 40 trees.
  FlatServers wide(2, 40);
  const CollectivePlan capped = plan_collective(all_reduce(80, 1 << 30), CollectiveAlgo::kTree,
                                                CollectiveProtocol::kSimple, wide.topo, wide.rings);
  EXPECT_EQ(capped.tree_chains, 20);
  EXPECT_EQ(capped.tree.size(), 40u);
  EXPECT_EQ(capped.tree[1][0], 2);

  // One server: its chain, one tree.
  CollectiveTopology one = topo;
  one.node_of.assign(16, 0);
  EXPECT_EQ(plan_collective(c, CollectiveAlgo::kTree, CollectiveProtocol::kSimple, one, rings)
                .tree.size(),
            1u);
}

// A server's measured launch cost (server.nccl_launch) takes the place of NCCL's 6.6 us ring
// LL base, and every other protocol's base moves by the same difference: a 64 MiB Simple
// all-reduce on a DGX A100 takes 8.21 - 6.6 = 1.61 us longer than with NCCL's figures.
TEST(NcclCollectives, MeasuredLaunchMovesEveryProtocolsBase) {
  const Platform measured = platform("{preset: dgx-a100, servers: 1}");
  const Platform tuner = platform("{preset: dgx-a100, servers: 1, server: {nccl_launch: 0}}");
  for (auto proto :
       {CollectiveProtocol::kLL, CollectiveProtocol::kLL128, CollectiveProtocol::kSimple}) {
    const double a = bench_one(measured, CollectiveType::kAllReduce, 64 << 20,
                               CollectiveAlgo::kRing, proto, true)
                         .seconds;
    const double b =
        bench_one(tuner, CollectiveType::kAllReduce, 64 << 20, CollectiveAlgo::kRing, proto, true)
            .seconds;
    EXPECT_NEAR(a - b, 1.61e-6, 1e-9) << collective_protocol_name(proto);
  }
}

TEST(NcclCollectives, PipelinedHierarchicalOverlapsItsPhases) {
  // Two DGX A100: reduce-scatter over NVSwitch, all-reduce over the NICs, all-gather over
  // NVSwitch. Run the three phases one after the other (one chunk) and pipelined in 8 chunks.
  Platform p = platform("{preset: dgx-a100, servers: 2}");
  Collective c;
  c.type = CollectiveType::kAllReduce;
  c.algo = CollectiveAlgo::kHierarchical;
  c.protocol = CollectiveProtocol::kSimple;
  c.bytes = 1 << 30;
  c.pipeline = 1;
  const double serial = replay_isolated(p.source, one_collective(p, c), ReplayOptions{}).makespan;
  c.pipeline = 8;
  const double piped = replay_isolated(p.source, one_collective(p, c), ReplayOptions{}).makespan;
  // Phase times by hand (bytes dominate at 1 GiB): reduce-scatter and all-gather each send
  // 7/8 of B per GPU over its NVLink at rate N; the inter-server all-reduce of B/8 per local
  // rank over 2 servers sends 2 x 1/2 x B/8 over the GPU's NIC at rate R.
  const Topology& t = p.source.topology;
  const double nvl = link_named(t, "n0_gpu0_nvlink").bandwidth;
  const double nic = slowest_link(t, "infiniband");
  ASSERT_GT(nic, 0);
  const double B = c.bytes;
  const double rs = 7.0 / 8 * B / nvl, ar = B / 8 / nic;
  EXPECT_NEAR(serial, 2 * rs + ar, 0.03 * serial);
  // Pipelined over 8 chunks: never faster than the busier resource (the two NVLink phases
  // share the links, the NIC phase runs beside them), never slower than stage-by-stage
  // pipelining, where each later chunk adds the busier resource's share.
  const double bound = (2 * rs + ar) / 8 + 7 * std::max(2 * rs, ar) / 8;
  EXPECT_GT(piped, std::max(2 * rs, ar));
  EXPECT_LT(piped, 1.01 * bound);
  EXPECT_LT(piped, 0.75 * serial);
}

// Share of an NVLS channel's step that moves payload: a chunk at the GPU's NVLink rate over the
// channels, then a wait of one NVLink step up and one down to the switch (NCCL's chunk
// synchronization; the preset's nvlink.latency is half of the measured LL step).
double nvls_efficiency(double chunk, double rate, int channels, double nvlink_latency) {
  const double move = chunk / (rate / channels);
  return move / (move + 2 * nvlink_latency);
}

TEST(NcclCollectives, NvlsReducesInTheSwitchWhereThePlatformHasIt) {
  // DGX H100: NVLink SHARP. At 1 GiB the tuner picks NVLS: each GPU sends (n+1)/n of each of the
  // 16 pipeline chunks of B/16 up to the switch and receives as much back; up and down use the
  // two directions of the links, so the pipeline takes 17 chunk times, plus NCCL's 25 us once
  // (moved by the measured launch, 4.68 - 6.6 us). NCCL runs NVLS on 16 channels on Hopper in
  // steps of 128 KiB at this size (1 GiB is not below 64 x 16 channels x 8 heads x 128 KiB).
  Platform p = platform("{preset: dgx-h100, servers: 1}");
  const double B = 1 << 30;
  auto row = bench_one(p, CollectiveType::kAllReduce, B, CollectiveAlgo::kAuto,
                       CollectiveProtocol::kAuto, true);
  EXPECT_EQ(row.choice.algo, CollectiveAlgo::kNvls);
  EXPECT_EQ(row.choice.protocol, CollectiveProtocol::kSimple);
  const double link = link_named(p.source.topology, "n0_gpu0_nvlink").bandwidth;
  const double eff = nvls_efficiency(128 << 10, link, 16, 0.395e-6);
  // What NCCL's tuner folds into its Hopper constant, 0.85 (nvlsEfficiency).
  EXPECT_NEAR(eff, 0.85, 0.04);
  const double chunk = 9.0 / 8 * B / 16 / (eff * link);
  EXPECT_NEAR(row.seconds, (25 + 4.68 - 6.6) * 1e-6 + 17 * chunk, 0.01 * row.seconds);
  // Without NVLink SHARP NVLS is never a candidate: a ring, at the links' full rate.
  Platform off = platform("{preset: dgx-h100, servers: 1, server: {nvlink: {sharp: false}}}");
  auto ring = bench_one(off, CollectiveType::kAllReduce, B, CollectiveAlgo::kAuto,
                        CollectiveProtocol::kAuto, false);
  EXPECT_EQ(ring.choice.algo, CollectiveAlgo::kRing);
  EXPECT_GT(row.busbw, 1.15 * ring.busbw);
}

TEST(NcclCollectives, NvlsChunksShrinkAtMediumSizesAndPayTheirWait) {
  // 16 MiB on a DGX H100: NCCL halves the 128 KiB chunk below 64 x 128 concurrent operations x
  // 128 KiB (1 GiB) and again below 8 x 128 x 64 KiB (64 MiB), not below 2 x 128 x 32 KiB
  // (8 MiB): 32 KiB. Four pipeline chunks of 4 MiB through up and down: 5 chunk times.
  Platform p = platform("{preset: dgx-h100, servers: 1}");
  const double B = 16 << 20;
  auto row = bench_one(p, CollectiveType::kAllReduce, B, CollectiveAlgo::kNvls,
                       CollectiveProtocol::kSimple, true);
  const double link = link_named(p.source.topology, "n0_gpu0_nvlink").bandwidth;
  const double eff = nvls_efficiency(32 << 10, link, 16, 0.395e-6);
  EXPECT_NEAR(eff, 0.64, 0.03);
  const double chunk = 9.0 / 8 * B / 4 / (eff * link);
  EXPECT_NEAR(row.seconds, (25 + 4.68 - 6.6) * 1e-6 + 5 * chunk, 0.02 * row.seconds);
  // DGX B200: 24 channels on one Blackwell server, NVLink 5's 0.636 us half step: at 128 KiB
  // chunks (2 GiB, not below 64 x 24 x 8 x 128 KiB = 1.5 GiB) the mechanism gives what NCCL's
  // tuner takes for Blackwell, 0.74.
  Platform b200 = platform("{preset: dgx-b200, servers: 1}");
  const double big = 2.0 * (1 << 30);
  auto nvls = bench_one(b200, CollectiveType::kAllReduce, big, CollectiveAlgo::kNvls,
                        CollectiveProtocol::kSimple, true);
  const double rate = link_named(b200.source.topology, "n0_gpu0_nvlink").bandwidth;
  const double e = nvls_efficiency(128 << 10, rate, 24, 0.636e-6);
  EXPECT_NEAR(e, 0.74, 0.04);
  EXPECT_NEAR(nvls.seconds, (25 + 7.64 - 6.6) * 1e-6 + 17 * 9.0 / 8 * big / 16 / (e * rate),
              0.01 * nvls.seconds);
}

TEST(NcclCollectives, NvlsTreeAcrossServersReducesInEachSwitch) {
  // Two DGX H100 at 8 GiB: NCCL's NVLS_TREE. Per pipeline chunk b = B/16: the buffer up to the
  // switch and the GPU's shard b/8 back; a ring all-reduce of each shard between the two
  // servers' GPUs of one local index (2 steps of b/16 over the NIC); the shard up and the buffer
  // back. The NVLink directions carry b + b/8 each, the NIC phase runs beside them.
  Platform p = platform("{preset: dgx-h100, servers: 2}");
  const double B = 8.0 * (1 << 30);
  auto row = bench_one(p, CollectiveType::kAllReduce, B, CollectiveAlgo::kAuto,
                       CollectiveProtocol::kAuto, true);
  EXPECT_EQ(row.choice.algo, CollectiveAlgo::kNvlsTree);
  const Topology& t = p.source.topology;
  const double nvl = link_named(t, "n0_gpu0_nvlink").bandwidth;
  const double nic = slowest_link(t, "infiniband");
  ASSERT_GT(nic, 0);
  const double eff = nvls_efficiency(128 << 10, nvl, 16, 0.395e-6);
  const double b = B / 16;
  const double up = b / (eff * nvl), shard = up / 8, ar = 2 * (b / 16) / (eff * nic);
  const double expected = 2 * (up + shard) + ar + 15 * std::max(up + shard, ar);
  EXPECT_NEAR(row.seconds, expected, 0.03 * expected);
  // Far above the ring between the servers that NCCL ran before NVLS_TREE (about 1.2x here).
  auto ring = bench_one(p, CollectiveType::kAllReduce, B, CollectiveAlgo::kRing,
                        CollectiveProtocol::kSimple, true);
  EXPECT_GT(row.busbw, 1.15 * ring.busbw);
  // Flow replay agrees with the phases by hand.
  auto flow = bench_one(p, CollectiveType::kAllReduce, B, CollectiveAlgo::kNvlsTree,
                        CollectiveProtocol::kSimple, false);
  EXPECT_NEAR(flow.seconds, expected, 0.05 * expected);
  // Not a candidate on one server, nor without NVLink SHARP: forcing it runs a ring.
  Platform one = platform("{preset: dgx-h100, servers: 1}");
  EXPECT_EQ(bench_one(one, CollectiveType::kAllReduce, B, CollectiveAlgo::kNvlsTree,
                      CollectiveProtocol::kAuto, true)
                .choice.algo,
            CollectiveAlgo::kRing);
  Platform off = platform("{preset: dgx-h100, servers: 2, server: {nvlink: {sharp: false}}}");
  EXPECT_NE(bench_one(off, CollectiveType::kAllReduce, B, CollectiveAlgo::kAuto,
                      CollectiveProtocol::kAuto, true)
                .choice.algo,
            CollectiveAlgo::kNvlsTree);
}

TEST(NcclCollectives, CollNetOnlyWithSharpSwitches) {
  // Two DGX H100: with SHARP in the fabric the tuner takes CollNet for some sizes (NCCL's
  // CollNet Direct wins medium messages); without it CollNet never runs, and forcing it falls
  // back to a ring.
  Platform sharp = platform("{preset: dgx-h100, servers: 2, fabric: {sharp: true}}");
  Platform plain = platform("{preset: dgx-h100, servers: 2}");
  int collnet = 0;
  for (double b = 8; b <= 8.0 * (1 << 30); b *= 4) {
    collnet += bench_one(sharp, CollectiveType::kAllReduce, b, CollectiveAlgo::kAuto,
                         CollectiveProtocol::kAuto, true)
                   .choice.algo == CollectiveAlgo::kCollNet;
    EXPECT_NE(bench_one(plain, CollectiveType::kAllReduce, b, CollectiveAlgo::kAuto,
                        CollectiveProtocol::kAuto, true)
                  .choice.algo,
              CollectiveAlgo::kCollNet);
  }
  EXPECT_GT(collnet, 0);
  EXPECT_EQ(bench_one(plain, CollectiveType::kAllReduce, 1 << 24, CollectiveAlgo::kCollNet,
                      CollectiveProtocol::kAuto, true)
                .choice.algo,
            CollectiveAlgo::kRing);
}

TEST(NcclCollectives, FlowAndAnalyticalAgreeOnUncontendedTopologies) {
  // Tolerance 10%: equal shares of a link (analytical) against max-min fairness (flows) differ
  // only where flows of unequal routes share a link, as all-to-all's do on the DGX-1 mesh.
  // Pipelined chains (broadcast, reduce) across servers get 18%: under LL's ceiling their two
  // pieces of 32 KiB take long on every hop, and the flow replay overlaps them more than the
  // analytical first path plus one slowest hop per further piece.
  for (const std::string yaml :
       {"{preset: dgx1-v100, servers: 1}", "{preset: dgx-a100, servers: 1}",
        "{preset: dgx-h100, servers: 2}", "{preset: pcie-server}"}) {
    Platform p = platform(yaml);
    for (auto type :
         {CollectiveType::kAllReduce, CollectiveType::kAllGather, CollectiveType::kReduceScatter,
          CollectiveType::kBroadcast, CollectiveType::kReduce, CollectiveType::kAllToAll,
          CollectiveType::kSendRecv})
      for (double b : {8.0, 65536.0, 16e6, 1e9}) {
        auto f = bench_one(p, type, b, CollectiveAlgo::kAuto, CollectiveProtocol::kAuto, false);
        auto a = bench_one(p, type, b, CollectiveAlgo::kAuto, CollectiveProtocol::kAuto, true);
        const bool chain = type == CollectiveType::kBroadcast || type == CollectiveType::kReduce;
        EXPECT_NEAR(a.seconds, f.seconds, (chain ? 0.18 : 0.10) * f.seconds)
            << yaml << " " << collective_type_name(type) << " " << b << " B";
      }
  }
}

TEST(NcclCollectives, BenchSizesAndBusBandwidthAreNcclTests) {
  CollectiveBenchOptions o;
  EXPECT_EQ(bench_sizes(o, 16).size(), 31u);  // 8 B to 8 GiB by factors of 2
  o.type = CollectiveType::kAllGather;
  for (double s : bench_sizes(o, 16)) EXPECT_EQ(std::fmod(s, 16 * 4), 0.0) << s;
  EXPECT_DOUBLE_EQ(busbw_factor(CollectiveType::kAllReduce, 8), 1.75);
  EXPECT_DOUBLE_EQ(busbw_factor(CollectiveType::kAllGather, 8), 0.875);
  EXPECT_DOUBLE_EQ(busbw_factor(CollectiveType::kBroadcast, 8), 1.0);
  EXPECT_DOUBLE_EQ(busbw_factor(CollectiveType::kSendRecv, 8), 1.0);
}

TEST(NcclCollectives, ReadsNcclTestsLogsWithAndWithoutTheRootColumn) {
  const std::string dir = testing::make_temp_dir("nccl_log");
  testing::write_file(dir + "/new.txt",
                      "# nThread 1 nGpus 1\n"
                      "#       size         count      type   redop    root     time   algbw   "
                      "busbw #wrong     time   algbw   busbw #wrong\n"
                      "           8             2     float     sum      -1    18.50    0.00    "
                      "0.00      0    18.20    0.00    0.00      0\n"
                      "   1073741824     268435456     float     sum      -1   4683.1  229.28  "
                      "401.24      0   4680.0  229.43  401.50      0\n"
                      "# Avg bus bandwidth    : 200.6\n");
  auto rows = read_nccl_tests_log(dir + "/new.txt");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_DOUBLE_EQ(rows[1].bytes, 1073741824.0);
  EXPECT_NEAR(rows[1].seconds, 4683.1e-6, 1e-12);
  EXPECT_NEAR(rows[1].busbw, 401.24e9, 1);
  testing::write_file(dir + "/old.txt",
                      "     1048576        262144   float     sum    102.3   10.25   17.94  "
                      "0e+00    101.9   10.29   18.01  0e+00\n");
  rows = read_nccl_tests_log(dir + "/old.txt");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_NEAR(rows[0].seconds, 102.3e-6, 1e-12);
  EXPECT_NEAR(rows[0].busbw, 17.94e9, 1);
  testing::write_file(dir + "/bad.txt", "# header\n  1024  256  float  sum  -1  abc  1  2  0\n");
  try {
    read_nccl_tests_log(dir + "/bad.txt");
    FAIL() << "a malformed row was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.txt:2"), std::string::npos) << e.what();
  }
  testing::write_file(dir + "/empty.txt", "# nothing measured\n");
  EXPECT_THROW(read_nccl_tests_log(dir + "/empty.txt"), InputError);
}

// The error is predicted busbw over measured, minus one, from the times (measured over
// predicted, minus one): + is too fast.
TEST(NcclCollectives, ComparisonPrintsTheErrorPerRowAndTheMedian) {
  CollectiveBenchRow p1;
  p1.bytes = 1 << 20;
  p1.seconds = 100e-6;
  p1.busbw = 20e9;
  CollectiveBenchRow p2 = p1;
  p2.bytes = 1 << 30;
  p2.seconds = 1e-3;
  p2.busbw = 300e9;
  std::vector<MeasuredRow> m = {{double(1 << 20), 111.11e-6, 18e9},
                                {double(1 << 30), 0.75e-3, 400e9}};
  const auto compared = compare_bench({p1, p2}, m);
  ASSERT_EQ(compared.size(), 2u);
  EXPECT_NEAR(compared[0].error, 0.1111, 1e-6);  // 100 us predicted, 111.11 measured: too fast
  EXPECT_NEAR(compared[1].error, -0.25, 1e-12);  // 1 ms predicted, 0.75 measured: too slow
  const std::string out = format_bench_comparison({p1, p2}, m);
  EXPECT_NE(out.find("+11.1"), std::string::npos) << out;
  EXPECT_NE(out.find("-25.0"), std::string::npos) << out;
  EXPECT_NE(out.find("median |error| 18.1%, median error -6.9%"), std::string::npos) << out;
  // For programs: CSV and JSON rows carry the measurement and the error where compared.
  const CollectiveBenchOptions opt;
  const std::string csv = collective_bench_csv({p1, p2}, opt, &m);
  EXPECT_NE(csv.find(",measured_time_us,measured_busbw_GBps,error\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find(",111.11,18,0.1111"), std::string::npos) << csv;
  const std::string json = collective_bench_json({p1, p2}, opt, 8, &m);
  EXPECT_NE(json.find("\"ranks\": 8"), std::string::npos) << json;
  EXPECT_NE(json.find("\"error\": -0.25"), std::string::npos) << json;
  EXPECT_EQ(json.find("\"error\"", json.find("\"error\": -0.25") + 1), std::string::npos);
}

TEST(NcclCollectives, BenchCommandPrintsNcclTestsColumnsAndRejectsBadInput) {
  const std::string bin = testing::orrery_bin();
  auto r =
      testing::run_shell(bin +
                         " bench collective all_reduce --platform dgx-a100 --min 8B --max 1MiB "
                         "--mode analytical");
  ASSERT_EQ(r.status, 0) << r.output;
  for (const char* col : {"size", "count", "type", "redop", "root", "time", "algbw", "busbw"})
    EXPECT_NE(r.output.find(col), std::string::npos) << col;
  EXPECT_NE(r.output.find("Avg bus bandwidth"), std::string::npos);
  auto bad =
      testing::run_shell(bin + " bench collective all_reduce --platform dgx-a100 --proto XL");
  EXPECT_EQ(bad.status, 2) << bad.output;
  EXPECT_NE(bad.output.find("--proto XL"), std::string::npos) << bad.output;
  bad = testing::run_shell(bin + " bench collective all_sum --platform dgx-a100");
  EXPECT_EQ(bad.status, 2) << bad.output;
  EXPECT_NE(bad.output.find("all_sum"), std::string::npos) << bad.output;
  bad = testing::run_shell(bin + " bench collective all_reduce --platform dgx-a100 --csv --json");
  EXPECT_EQ(bad.status, 2) << bad.output;
  EXPECT_NE(bad.output.find("choose one"), std::string::npos) << bad.output;
  bad = testing::run_shell(bin + " bench collective all_reduce --platform dgx-a100 --loop jax");
  EXPECT_EQ(bad.status, 2) << bad.output;
  EXPECT_NE(bad.output.find("--loop jax"), std::string::npos) << bad.output;
  // --json: one JSON object of the rows, nothing else on stdout.
  r = testing::run_shell(bin +
                         " bench collective all_gather --platform dgx-a100 -b 1KiB -e 4KiB "
                         "--mode analytical --json 2>/dev/null");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output.rfind("{\"collective\": \"allgather\"", 0), 0u) << r.output;
  EXPECT_EQ(r.output.find("Avg bus"), std::string::npos) << r.output;
}

TEST(NcclCollectives, PytorchLoopAddsItsHostWorkToEveryCall) {
  // 8 B on one DGX H200: nccl-tests' loop hides the host's work behind the running call; a
  // PyTorch loop that waits for each call adds its 21.4 us (36.6 against 15.2 us measured side
  // by side on 8 x H200).
  Platform p = platform("{preset: dgx-h200, servers: 1}");
  CollectiveBenchOptions o;
  o.analytical = true;
  o.min_bytes = o.max_bytes = 8;
  const auto tests = run_collective_bench(p.source, p.ranks, o).at(0);
  o.host_overhead = kPytorchCallOverhead;
  const auto torch = run_collective_bench(p.source, p.ranks, o).at(0);
  EXPECT_NEAR(torch.seconds - tests.seconds, 21.4e-6, 1e-12);
  EXPECT_NEAR(torch.algbw, torch.bytes / torch.seconds, 1e-9 * torch.algbw);
  // The table says so.
  EXPECT_NE(format_collective_bench({torch}, o, 8).find("host work"), std::string::npos);
}

// docs/collectives.md's table against AIConfigurator's nccl-tests runs is what
// scripts/validate_nccl.py prints now (a golden result: regenerate it with --update-doc when
// the collective model changes on purpose).
TEST(NcclCollectives, MeasuredTableInTheDocsIsWhatTheScriptPrints) {
  if (testing::orrery_bin().empty()) GTEST_SKIP() << "ORRERY_BIN is set by ctest";
  const std::string output = testing::expect_doc_block_is_script_output(
      "validate_nccl.py", "docs/collectives.md", "nccl-validation");
  EXPECT_NE(output.find("756 measured sizes"), std::string::npos) << output;
}

TEST(NcclCollectives, AllToAllInDeepEpsTwoLegs) {
  // Two DGX H100, a buffer of 4 GiB per GPU (nccl-tests' size): 15/16 of it go to the 15
  // others, in 16 pipeline chunks of b, a block of b/15 per peer. Each GPU sends the 8 blocks
  // bound for the other server to the GPU of its own local index there (8b/15 over its NIC),
  // which forwards to each of its 7 local peers its block with its own block for it (2b/15
  // each, 14b/15 over its NVLink). The legs use different links: the pipeline takes both once
  // and the slower 15 more times.
  Platform p = platform("{preset: dgx-h100, servers: 2}");
  const double B = 4.0 * (1 << 30);
  auto row = bench_one(p, CollectiveType::kAllToAll, B, CollectiveAlgo::kHierarchical,
                       CollectiveProtocol::kAuto, true);
  EXPECT_EQ(row.choice.algo, CollectiveAlgo::kHierarchical);
  EXPECT_EQ(row.choice.protocol, CollectiveProtocol::kSimple);
  const Topology& t = p.source.topology;
  const double nvl = link_named(t, "n0_gpu0_nvlink").bandwidth;
  const double nic = slowest_link(t, "infiniband");
  ASSERT_GT(nic, 0);
  const double b = B * 15 / 16 / 16;
  const double net = 8 * b / 15 / nic, fwd = 14 * b / 15 / nvl;
  const double expected = net + fwd + 15 * std::max(net, fwd);
  EXPECT_NEAR(row.seconds, expected, 0.02 * expected);
  auto flow = bench_one(p, CollectiveType::kAllToAll, B, CollectiveAlgo::kHierarchical,
                        CollectiveProtocol::kAuto, false);
  EXPECT_NEAR(flow.seconds, expected, 0.05 * expected);
  // NCCL's own choice stays the direct all-to-all; one server has no second leg.
  EXPECT_EQ(bench_one(p, CollectiveType::kAllToAll, B, CollectiveAlgo::kAuto,
                      CollectiveProtocol::kAuto, true)
                .choice.algo,
            CollectiveAlgo::kDirect);
  Platform one = platform("{preset: dgx-h100, servers: 1}");
  EXPECT_EQ(bench_one(one, CollectiveType::kAllToAll, B, CollectiveAlgo::kHierarchical,
                      CollectiveProtocol::kAuto, true)
                .choice.algo,
            CollectiveAlgo::kDirect);
}

TEST(NcclCollectives, PatRunsLog2StepsWithOneGpuPerServer) {
  // Bruck's order over 16 ranks: 1, 2, 4, 8 blocks to the rank 1, 2, 4, 8 before; reduce-scatter
  // the reverse. Every rank sends 15 blocks in 4 steps.
  const auto ag = pat_steps(16, CollectiveType::kAllGather);
  ASSERT_EQ(ag.size(), 4u);
  EXPECT_EQ(ag[3].distance, 8);
  EXPECT_EQ(ag[3].blocks, 8);
  const auto rs = pat_steps(16, CollectiveType::kReduceScatter);
  EXPECT_EQ(rs[0].distance, 8);
  // 5 ranks: 1, 2, then the remaining 1 at distance 4.
  const auto odd = pat_steps(5, CollectiveType::kAllGather);
  ASSERT_EQ(odd.size(), 3u);
  EXPECT_EQ(odd[2].blocks, 1);

  // 16 one-GPU H100 servers: each step pays PAT's network step latency (NCCL's 14 us / 3.5)
  // and moves its blocks of B/16 at 0.75 of the NIC (NCCL's tuner figure for PAT), after PAT's
  // 8 us base and 2.8 us per rank, moved by the preset's measured launch (4.68 - 6.6 us).
  // The links' own latencies are next to nothing, so every step costs PAT's.
  Platform p = platform(
      "{preset: dgx-h100, servers: 16, server: {gpus: 1, pcie: {latency: 0.001us}, "
      "nic: {count: 1, latency: 0.001us}}, fabric: {latency: 0.001us}}");
  const double nic = slowest_link(p.source.topology, "infiniband");
  ASSERT_GT(nic, 0);
  const double B = 16 << 20;
  const double expected =
      (8 + 2.8 * 16 + 4.68 - 6.6) * 1e-6 + 4 * 4e-6 + 15 * B / 16 / (0.75 * nic);
  for (auto type : {CollectiveType::kAllGather, CollectiveType::kReduceScatter}) {
    auto row = bench_one(p, type, B, CollectiveAlgo::kPat, CollectiveProtocol::kSimple, true);
    EXPECT_EQ(row.choice.algo, CollectiveAlgo::kPat);
    EXPECT_NEAR(row.seconds, expected, 0.01 * expected);
    auto flow = bench_one(p, type, B, CollectiveAlgo::kPat, CollectiveProtocol::kSimple, false);
    EXPECT_NEAR(flow.seconds, expected, 0.03 * expected);
  }
  // The tuner takes it for small all-gathers, where 4 steps beat the ring's 15.
  EXPECT_EQ(bench_one(p, CollectiveType::kAllGather, 4096, CollectiveAlgo::kAuto,
                      CollectiveProtocol::kAuto, true)
                .choice.algo,
            CollectiveAlgo::kPat);
  // Never with several GPUs per server (NCCL enables PAT with one rank per node only).
  Platform dgx = platform("{preset: dgx-h100, servers: 2}");
  EXPECT_EQ(bench_one(dgx, CollectiveType::kAllGather, 4096, CollectiveAlgo::kPat,
                      CollectiveProtocol::kAuto, true)
                .choice.algo,
            CollectiveAlgo::kRing);
}

}  // namespace
}  // namespace orrery
