// ASTRA-sim's network (YAML) and system (JSON) files run as they are, and give the time of the
// equivalent platform written by hand, and the ring formula with ASTRA-sim's units (GB = 2^30
// bytes, latency per link in ns).
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <string>

#include "common/errors.h"
#include "engine/replay.h"
#include "platforms/astra_network.h"
#include "scenario/scenario.h"
#include "tests/chakra_traces.h"
#include "tests/test_util.h"

namespace orrery {
namespace {

constexpr double kGB = 1073741824.0;

struct Files {
  std::string dir;
  std::string network;
  std::string system;
};

Files astra_files(const std::string& tag, const std::string& network, const std::string& system) {
  Files f;
  f.dir = testing::make_temp_dir(tag);
  f.network = f.dir + "/network.yml";
  f.system = f.dir + "/system.json";
  testing::write_file(f.network, network);
  testing::write_file(f.system, system);
  return f;
}

Scenario astra_scenario(const Files& f, const std::string& traces, const std::string& extra = "") {
  const std::string text = "name: astra\nplatform: {astra_network: " + f.network +
                           "}\nworkload:\n  type: chakra\n  files: [" + traces +
                           "]\n  astra_system: " + f.system + "\n" + extra;
  return build_scenario(YAML::Load(text), f.dir + "/s.yaml", text);
}

double makespan(const PlatformSource& p, const ExecutionGraph& g) {
  return replay_isolated(p, g, ReplayOptions{}).makespan;
}

const char* kRingSystem = R"({
  "scheduling-policy": "LIFO", "endpoint-delay": 10, "active-chunks-per-dimension": 1,
  "preferred-dataset-splits": 1,
  "all-reduce-implementation": ["ring"], "all-gather-implementation": ["ring"],
  "reduce-scatter-implementation": ["ring"], "all-to-all-implementation": ["ring"],
  "collective-optimization": "localBWAware", "local-mem-bw": 1600, "boost-mode": 0
})";

TEST(AstraConfig, SwitchNetworkRunsTheRingInTheFormulasTime) {
  // 8 NPUs on one switch, 100 GB/s and 500 ns per link: a ring step crosses two links.
  const Files f = astra_files("astra_switch",
                              "topology: [ Switch ]\nnpus_count: [ 8 ]\n"
                              "bandwidth: [ 100.0 ]  # GB/s\nlatency: [ 500.0 ]  # ns\n",
                              kRingSystem);
  const double S = 64.0 * 1024 * 1024;
  const std::string traces =
      testing::one_collective_traces(CollectiveType::kAllReduce, 8, S, "astra_switch_traces");
  const Scenario sc = astra_scenario(f, traces);
  EXPECT_EQ(sc.platform_summary, "ASTRA-sim network Switch(8): 8 NPUs");
  const double t = makespan(sc.platform, sc.graph);
  const double B = 100 * kGB;
  const double expected = 2 * 7 * (2 * 500e-9 + S / 8 / B);
  EXPECT_NEAR(t, expected, 1e-9 * expected);

  // The same platform by hand: a star of 8 GPUs.
  Topology star;
  star.name = "star";
  star.routers = {"sw"};
  for (int i = 0; i < 8; ++i) {
    const std::string h = "g" + std::to_string(i);
    star.hosts.push_back({h, 1e12, 1, "gpu", {}});
    star.links.push_back({h + "_l", B, 500e-9, true, "nvlink"});
    star.edges.push_back({h, "sw", h + "_l"});
  }
  ExecutionGraph g = sc.graph;
  for (int i = 0; i < 8; ++i)
    g.devices[i].host = g.devices[i].launch_host = "g" + std::to_string(i);
  PlatformSource by_hand;
  by_hand.topology = star;
  EXPECT_DOUBLE_EQ(makespan(by_hand, g), t);
}

TEST(AstraConfig, TwoDimensionsRunHierarchicalWithTheDatasetSplits) {
  // Ring(4) x Switch(2): servers of 4 NPUs in a ring of 200 GB/s links, NPU c of every server
  // on switch c at 25 GB/s. The all-reduce runs hierarchical: reduce-scatter on the rings, the
  // shards across the switches, all-gather on the rings; the network bounds it.
  const Files f = astra_files(
      "astra_2d",
      "topology: [ Ring, Switch ]\nnpus_count: [ 4, 2 ]\nbandwidth: [ 200.0, 25.0 ]\n"
      "latency: [ 100.0, 1000.0 ]\n",
      R"({"all-reduce-implementation": ["ring", "ring"], "preferred-dataset-splits": 4})");
  const double S = 32.0 * 1024 * 1024;
  const std::string traces =
      testing::one_collective_traces(CollectiveType::kAllReduce, 8, S, "astra_2d_traces");
  const Scenario sc = astra_scenario(f, traces);
  EXPECT_EQ(sc.platform_summary, "ASTRA-sim network Ring(4) x Switch(2): 8 NPUs");
  ASSERT_EQ(sc.graph.collectives.size(), 1u);
  EXPECT_EQ(sc.graph.collectives[0].algo, CollectiveAlgo::kHierarchical);
  EXPECT_EQ(sc.graph.collectives[0].pipeline, 4);
  EXPECT_EQ(sc.graph.devices[5].host, "n1_gpu1");
  EXPECT_EQ(sc.graph.devices[5].node, "server1");
  const RunResult r = replay_isolated(sc.platform, sc.graph, ReplayOptions{});
  ASSERT_EQ(r.collectives.size(), 1u);
  EXPECT_EQ(r.collectives[0].algo, CollectiveAlgo::kHierarchical);
  // Unpipelined, by hand: 3 ring steps of S/4 at 200 GB/s (100 ns), an all-reduce of the S/4
  // shard between two NPUs through their switch (2 steps of S/8, two 1 us links each), 3 ring
  // steps again. Four splits pipeline the phases: faster than that, but never faster than the
  // across phase alone.
  const double ring = 3 * (100e-9 + S / 4 / (200 * kGB));
  const double across = 2 * (2 * 1000e-9 + S / 8 / (25 * kGB));
  EXPECT_LT(r.makespan, 2 * ring + across);
  EXPECT_GT(r.makespan, across);
  // Analytical mode from the same files agrees with the flows within 2%.
  const Scenario an = astra_scenario(f, traces, "  collectives: {mode: analytical}\n");
  EXPECT_NEAR(makespan(an.platform, an.graph), r.makespan, 0.02 * r.makespan);
}

TEST(AstraConfig, ShippedScenarioRunsItsRingAllReduce) {
  // scenarios/astra-sim-allreduce-8.yaml: 1 MiB over 8 NPUs on a switch of 400 GB/s (2^30)
  // and 936.25 ns links: 14 steps of two links and 128 KiB.
  const Scenario sc = load_scenario(testing::source_path("scenarios/astra-sim-allreduce-8.yaml"));
  const double step = 2 * 936.25e-9 + 131072 / (400 * kGB);
  EXPECT_NEAR(makespan(sc.platform, sc.graph), 14 * step, 1e-9 * 14 * step);
}

TEST(AstraConfig, BadFilesNameTheKey) {
  const std::string traces =
      testing::one_collective_traces(CollectiveType::kAllReduce, 4, 1e6, "astra_bad_traces");
  auto expect = [&](const std::string& net, const std::string& sys, const std::string& text) {
    const std::string msg = testing::input_error_of(
        [&] { astra_scenario(astra_files("astra_bad", net, sys), traces); });
    EXPECT_NE(msg.find(text), std::string::npos) << msg;
  };
  const std::string net4 = "topology: [Switch]\nnpus_count: [4]\nbandwidth: [50]\nlatency: [500]\n";
  expect("topology: [Torus]\nnpus_count: [4]\nbandwidth: [50]\nlatency: [500]\n", kRingSystem,
         "dimension 0: expected Ring, FullyConnected or Switch, got \"Torus\"");
  expect("topology: [Switch, Ring]\nnpus_count: [4]\nbandwidth: [50, 5]\nlatency: [5, 5]\n",
         kRingSystem, "npus_count: has 1 values for 2 dimensions");
  expect("topology: [Switch]\nnpus_count: [4]\nbandwidth: [0]\nlatency: [500]\n", kRingSystem,
         "bandwidth: dimension 0: GB/s must be above 0");
  expect(net4, R"({"all-reduce-implementation": ["halvingDoubling"]})",
         "all-reduce-implementation[0]: \"halvingDoubling\" has no counterpart in Orrery");
  expect(net4, R"({"all-reduce-implementaton": ["ring"]})", "all-reduce-implementaton");
  expect(net4, "{not json", "not valid JSON");
  // 1,000 x 1,000 NPUs fully connected in groups of 1,000: 5e8 links, refused before building.
  expect(
      "topology: [FullyConnected, Switch]\nnpus_count: [1000, 1000]\nbandwidth: [50, 5]\n"
      "latency: [5, 5]\n",
      kRingSystem, "building this network would need about");
}

}  // namespace
}  // namespace orrery
