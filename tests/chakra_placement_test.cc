// Chakra ranks on a platform's servers: with servers known, a trace's collectives run the same
// hierarchical algorithms as built-in workloads; the scenario keys rank_map and
// ranks_per_server place ranks; analytical mode prices trace collectives.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <fstream>
#include <string>
#include <vector>

#include "common/errors.h"
#include "engine/replay.h"
#include "scenario/scenario.h"
#include "tests/chakra_traces.h"
#include "tests/test_util.h"
#include "workloads/chakra/chakra_export.h"
#include "workloads/chakra/chakra_import.h"

namespace orrery {
namespace {

constexpr double kLink = 2e-6;

// Two servers of four GPUs: 100 GB/s GPU links to the server switch, one 10 GB/s uplink per
// server to the core.
Topology two_servers() {
  Topology t;
  t.name = "two";
  t.routers = {"core", "s0", "s1"};
  for (int s = 0; s < 2; ++s) {
    const std::string sw = "s" + std::to_string(s);
    t.links.push_back({sw + "_up", 10e9, kLink, true, "ethernet"});
    t.edges.push_back({sw, "core", sw + "_up"});
    for (int i = 0; i < 4; ++i) {
      const std::string h = "n" + std::to_string(s) + "_gpu" + std::to_string(i);
      t.hosts.push_back({h, 1e12, 1, "gpu", {}});
      t.links.push_back({h + "_l", 100e9, kLink, true, "nvlink"});
      t.edges.push_back({h, sw, h + "_l"});
    }
  }
  return t;
}

double uplink_bytes(const RunResult& r) {
  double b = 0;
  for (const auto& l : r.links)
    if (l.name.find("_up") != std::string::npos) b += l.bytes;
  return b;
}

RunResult replay_on_two_servers(const ExecutionGraph& g) {
  PlatformSource p;
  p.topology = two_servers();
  return replay_isolated(p, g, ReplayOptions{});
}

// Engine collectives for 8 ranks on the GPUs of two_servers(), in order; with `servers`, each
// rank also knows its server (as scenarios place ranks), else each is its own node.
ChakraImportOptions on_two_servers(bool servers) {
  ChakraImportOptions o;
  o.engine_collectives = true;
  for (int s = 0; s < 2; ++s)
    for (int i = 0; i < 4; ++i) {
      o.device_hosts.push_back("n" + std::to_string(s) + "_gpu" + std::to_string(i));
      if (servers) o.device_nodes.push_back("server" + std::to_string(s));
    }
  return o;
}

TEST(ChakraPlacement, RanksOnServersMakeTheAllReduceHierarchical) {
  const double S = 80e6;
  const std::string prefix =
      testing::one_collective_traces(CollectiveType::kAllReduce, 8, S, "chakra_placement_ar");
  ChakraImportOptions o = on_two_servers(false);
  // Each rank its own node: one flat ring of 8. Its two server-crossing edges (3 -> 4, 7 -> 0)
  // each carry 2 x 7/8 S: 3.5 S over the uplinks, once on each server's uplink: 7 S in all.
  const RunResult flat = replay_on_two_servers(load_chakra_traces({prefix}, o));
  EXPECT_NEAR(uplink_bytes(flat), 2 * 2 * 2 * 7.0 / 8 * S, 1e-6 * S);
  // On their servers: reduce-scatter inside, an all-reduce of each server's S/4 shards across
  // (each server sends 4 x S/4 = S to the other, merged into one ring of leaders), all-gather
  // inside: 2 S cross, each crossing both uplinks: 4 S.
  o = on_two_servers(true);
  const RunResult hier = replay_on_two_servers(load_chakra_traces({prefix}, o));
  EXPECT_NEAR(uplink_bytes(hier), 2 * 2 * S, 1e-6 * S);
  ASSERT_EQ(hier.collectives.size(), 1u);
  EXPECT_EQ(hier.collectives[0].algo, CollectiveAlgo::kHierarchical);
  EXPECT_LT(hier.makespan, flat.makespan);
}

TEST(ChakraPlacement, AllToAllAgreesInEveryMode) {
  // Every rank sends S / 7 to each of 7 peers (the trace's comm_size is 8/7 S: each rank keeps
  // its own eighth). Per server, 4 x 4 x S / 7 cross its uplink each way (16/7 S at 10 GB/s)
  // while the 100 GB/s GPU links carry 7 x S / 7 = S each: the uplinks set the time. The
  // importer's own flows, the engine's flows and the analytical model agree within 1%, 1% and
  // 5% (the model prices the plan's link sharing per flow class, not flow by flow).
  const double S = 70e6;
  const std::string prefix =
      testing::one_collective_traces(CollectiveType::kAllToAll, 8, S, "chakra_placement_a2a");
  ChakraImportOptions o = on_two_servers(true);
  const double flows = replay_on_two_servers(load_chakra_traces({prefix}, o)).makespan;
  EXPECT_NEAR(flows, 16.0 / 7 * S / 10e9 + 4 * kLink, 0.01 * flows);
  o.engine_collectives = false;
  const double importer = replay_on_two_servers(load_chakra_traces({prefix}, o)).makespan;
  EXPECT_NEAR(importer, flows, 0.01 * flows);
  o.engine_collectives = true;
  o.analytical = true;
  const double model = replay_on_two_servers(load_chakra_traces({prefix}, o)).makespan;
  EXPECT_NEAR(model, flows, 0.05 * flows);
}

// A scenario around the traces at `prefix` on two DGX A100 servers (8 GPUs each), with the
// workload keys `extra` ("key: value" lines).
Scenario chakra_scenario(const std::string& prefix, const std::string& extra) {
  const std::string text =
      "name: t\nplatform: {preset: dgx-a100, servers: 2}\n"
      "workload:\n  type: chakra\n  files: [" +
      prefix + "]\n" + extra;
  return build_scenario(YAML::Load(text), "t.yaml", text);
}

std::string scenario_error(const std::string& prefix, const std::string& extra) {
  return testing::input_error_of([&] { chakra_scenario(prefix, extra); });
}

TEST(ChakraPlacement, ScenarioPlacesRanksByServerOrMap) {
  const std::string prefix = testing::one_collective_traces(CollectiveType::kAllReduce, 8, 1e6,
                                                            "chakra_placement_scenario");
  // Default: rank i on GPU i, all 8 on server 0.
  Scenario a = chakra_scenario(prefix, "");
  ASSERT_EQ(a.graph.devices.size(), 8u);
  EXPECT_EQ(a.graph.devices[7].host, "n0_gpu7");
  EXPECT_EQ(a.graph.devices[7].node, "server0");
  EXPECT_EQ(a.graph.devices[7].launch_host.rfind("n0_cpu", 0), 0u)
      << a.graph.devices[7].launch_host;
  // Four ranks per server: ranks 4..7 on server 1's first four GPUs.
  Scenario b = chakra_scenario(prefix, "  ranks_per_server: 4\n");
  EXPECT_EQ(b.graph.devices[3].host, "n0_gpu3");
  EXPECT_EQ(b.graph.devices[4].host, "n1_gpu0");
  EXPECT_EQ(b.graph.devices[4].node, "server1");
  // A map by host name or platform GPU index (12 is n1_gpu4).
  Scenario c =
      chakra_scenario(prefix, "  rank_map: [n0_gpu0, n1_gpu0, n0_gpu1, n1_gpu1, 4, 12, 5, 13]\n");
  EXPECT_EQ(c.graph.devices[1].host, "n1_gpu0");
  EXPECT_EQ(c.graph.devices[4].host, "n0_gpu4");
  EXPECT_EQ(c.graph.devices[5].host, "n1_gpu4");
  // Analytical collectives.
  Scenario d = chakra_scenario(prefix, "  collectives: {mode: analytical, algo: ring}\n");
  ASSERT_EQ(d.graph.collectives.size(), 1u);
  EXPECT_TRUE(d.graph.collectives[0].analytical);
  EXPECT_EQ(d.graph.collectives[0].algo, CollectiveAlgo::kRing);
}

TEST(ChakraPlacement, BadPlacementsNameTheKey) {
  const std::string prefix =
      testing::one_collective_traces(CollectiveType::kAllReduce, 8, 1e6, "chakra_placement_errors");
  EXPECT_NE(scenario_error(prefix, "  rank_map: [n0_gpu0]\n").find("has 1 entries for 8 rank"),
            std::string::npos);
  EXPECT_NE(scenario_error(prefix, "  rank_map: [0, 1, 2, 3, 4, 5, 6, 6]\n")
                .find("rank 7: GPU \"n0_gpu6\" already runs another rank"),
            std::string::npos);
  EXPECT_NE(scenario_error(prefix, "  rank_map: [0, 1, 2, 3, 4, 5, 6, gpu9]\n")
                .find("rank 7: \"gpu9\" is neither a GPU host of the platform nor a GPU index "
                      "below 16"),
            std::string::npos);
  EXPECT_NE(scenario_error(prefix, "  ranks_per_server: 1\n")
                .find("8 ranks at 1 per server need 8 servers; the platform has 2"),
            std::string::npos);
  EXPECT_NE(scenario_error(prefix, "  ranks_per_server: 4\n  rank_map: [0]\n")
                .find("either rank_map or ranks_per_server"),
            std::string::npos);
  EXPECT_NE(scenario_error(prefix, "  protocol: LL\n  collectives: {mode: analytical}\n")
                .find("collectives.protocol"),
            std::string::npos);
  EXPECT_NE(
      scenario_error(prefix, "  collectives: {mode: fast}\n").find("expected flow or analytical"),
      std::string::npos);
}

}  // namespace
}  // namespace orrery
