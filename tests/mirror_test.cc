// Mirrored devices (Device::mirrors): a language model's TP rank 0 standing for its group, its
// flows and execs counted for every copy, against the same step with every TP rank simulated.
// On a rail-optimized fabric each copy has links of its own, on a fat tree the copies share the
// leaf uplinks; both runs agree bit for bit on these small cases (in general, to rounding: a
// link's sums add the copies in another order). Copies whose routes differ are held to one
// rate and counted.
#include <gtest/gtest.h>

#include <sstream>

#include "common/errors.h"
#include "engine/graph_check.h"
#include "engine/replay.h"
#include "strategies/cluster_layout.h"
#include "strategies/llm_strategy.h"
#include "tests/topology_lookup.h"
#include "workloads/graph_json.h"

namespace orrery {
namespace {

const LlmConfig& llama() { return *find_llm("llama2_7b"); }

struct Runs {
  LlmStep expanded, mirrored;
  RunResult all, one;
};

// TP 8 x PP 2 x DP 2 over four DGX H100 (a stage per server, the data-parallel groups across
// servers), TP collectives analytical, pipeline and data-parallel traffic as NCCL flows.
Runs run_both(const std::string& fabric, bool all_replicas) {
  PlatformSource source;
  source.topology = testing::preset("dgx-h100", "servers: 4\nfabric: " + fabric + "\n");
  const ClusterLayout layout = cluster_layout(source.topology);
  ParallelPlan p;
  p.tp = 8;
  p.pp = 2;
  p.dp = 2;
  p.seq_len = 512;
  p.global_batch = 8;
  p.zero = 1;
  p.sequence_parallel = true;
  check_parallel_plan(p, llama(), 32, "test");
  const LlmCosts costs =
      price_llm(llama(), p, [](const ModelOp& op) { return op.flops / 400e12 + op.bytes / 2e12; });
  LlmBuildOptions all;
  all.all_replicas = all_replicas;
  all.tp_analytical = true;
  LlmBuildOptions one = all;
  one.one_tp_rank = true;
  Runs r;
  r.expanded = build_llm_step(llama(), p, layout.gpus, costs, {}, all);
  r.mirrored = build_llm_step(llama(), p, layout.gpus, costs, {}, one);
  check_graph(r.mirrored.graph, "mirrored");
  ReplayOptions opt;
  opt.record_timeline = false;
  r.all = replay_isolated(source, r.expanded.graph, opt);
  r.one = replay_isolated(source, r.mirrored.graph, opt);
  return r;
}

void expect_same_devices(const RunResult& a, const RunResult& b, double tolerance) {
  ASSERT_EQ(a.devices.size(), b.devices.size());
  for (size_t d = 0; d < a.devices.size(); ++d) {
    SCOPED_TRACE(a.devices[d].name);
    EXPECT_EQ(a.devices[d].name, b.devices[d].name);
    EXPECT_EQ(a.devices[d].ops, b.devices[d].ops);
    for (int c = 0; c < kNumStreamClasses; ++c)
      EXPECT_NEAR(a.devices[d].busy[c], b.devices[d].busy[c], tolerance * a.makespan);
    EXPECT_NEAR(a.devices[d].exposed_comm, b.devices[d].exposed_comm, tolerance * a.makespan);
  }
}

void expect_same_links(const RunResult& a, const RunResult& b) {
  ASSERT_EQ(a.links.size(), b.links.size());
  for (size_t l = 0; l < a.links.size(); ++l) {
    EXPECT_EQ(a.links[l].name, b.links[l].name);
    EXPECT_NEAR(a.links[l].bytes, b.links[l].bytes, 1e-12 * a.links[l].bytes);
  }
}

TEST(Mirrors, RailOptimizedFabricGivesTheExpandedRunBitForBit) {
  for (bool all_replicas : {true, false}) {
    SCOPED_TRACE(all_replicas ? "every replica" : "replica 0 in full");
    const Runs r = run_both("{topology: rail-optimized, servers_per_leaf: 2}", all_replicas);
    // TP 8: rank 0 of each group runs the compute and the sends; a TP collective was one op.
    EXPECT_LT(r.mirrored.graph.ops.size() * 3, r.expanded.graph.ops.size());
    EXPECT_LT(r.one.activities * 4, r.all.activities);
    EXPECT_EQ(r.one.makespan, r.all.makespan);  // bit for bit
    EXPECT_EQ(r.one.asymmetric_mirror_flows, 0);
    expect_same_devices(r.one, r.all, 0.0);
    expect_same_links(r.one, r.all);
  }
}

TEST(Mirrors, CopiesSharingALeafUplinkCountOnItAsMany) {
  // Two servers per leaf of a fat tree four times oversubscribed: the data-parallel flows
  // cross the uplinks, which all eight NICs of a server share, so each mirrored flow counts
  // eight times there. Without the count the uplinks would carry an eighth of the load.
  const Runs r = run_both("{topology: fat-tree, servers_per_leaf: 2, oversubscription: 4}", true);
  EXPECT_EQ(r.one.asymmetric_mirror_flows, 0);
  EXPECT_EQ(r.one.makespan, r.all.makespan);  // bit for bit here, equal to rounding in general
  expect_same_devices(r.one, r.all, 0.0);
  expect_same_links(r.one, r.all);
  const Runs rails = run_both("{topology: rail-optimized, servers_per_leaf: 2}", true);
  EXPECT_GT(r.all.makespan, rails.all.makespan);  // the shared uplinks do slow the step
}

// Two GPUs of server 0 and one of server 1 on DGX H100s; device 0 mirrored by `mirror`.
ExecutionGraph transfer_graph(const std::string& mirror) {
  ExecutionGraph g;
  g.devices.push_back({"a", "n0_gpu0", "n0_gpu0", "n0", {}});
  g.devices.push_back({"b", "n0_gpu1", "n0_gpu1", "n0", {}});
  if (!mirror.empty()) {
    g.devices.push_back({"m", mirror, mirror, "", {}});
    g.devices[0].mirrors = {2};
  }
  append_transfer(g, "send", 0, {StreamClass::kComm, 0}, 0, 1, 1e9, "comm", {});
  return g;
}

TEST(Mirrors, CopiesWithRoutesUnlikeTheDevicesAreHeldToOneRateAndCounted) {
  PlatformSource source;
  source.topology = testing::preset("dgx-h100", "servers: 2\n");
  ReplayOptions opt;
  // a -> b crosses NVLink; the mirror's copy, n1_gpu0 -> b, the network: held to one rate,
  // that copy's, the transfer takes the network's time.
  const RunResult alone = replay_isolated(source, transfer_graph(""), opt);
  const RunResult across = replay_isolated(source, transfer_graph("n1_gpu0"), opt);
  EXPECT_EQ(across.asymmetric_mirror_flows, 1);
  EXPECT_GT(across.makespan, 5 * alone.makespan);
  // A mirror beside it in the same server: alike routes through the NVSwitch, both into b's
  // port (b has no mirrors), as the two transfers a -> b and m -> b.
  const RunResult beside = replay_isolated(source, transfer_graph("n0_gpu2"), opt);
  ExecutionGraph two = transfer_graph("n0_gpu2");
  two.devices[0].mirrors.clear();
  append_transfer(two, "send2", 2, {StreamClass::kComm, 0}, 2, 1, 1e9, "comm", {});
  const RunResult expanded = replay_isolated(source, two, opt);
  EXPECT_EQ(beside.asymmetric_mirror_flows, 0);
  EXPECT_GT(beside.makespan, 1.5 * alone.makespan);
  EXPECT_EQ(beside.makespan, expanded.makespan);
  EXPECT_EQ(beside.devices[2].busy, expanded.devices[2].busy);
}

TEST(Mirrors, GraphCheckRejectsMirrorsThatRunOpsOrAreShared) {
  auto fails = [](ExecutionGraph g, const std::string& expected) {
    try {
      check_graph(g, "g.json");
      ADD_FAILURE() << "accepted, expected: " << expected;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
  };
  ExecutionGraph g = transfer_graph("n0_gpu2");
  check_graph(g, "g.json");
  ExecutionGraph own = g;
  append_compute(own, "work", 2, {}, 1e-3, "forward", {});
  fails(own, "ops[1] \"work\": runs on device 2 \"m\", a mirror of device 0 \"a\"");
  ExecutionGraph twice = g;
  twice.devices[1].mirrors = {2};
  fails(twice, "devices[1] \"b\": mirrors: device 2 \"m\" is already a mirror of device 0");
  ExecutionGraph self = g;
  self.devices[0].mirrors = {0};
  fails(self, "is already this device");
  ExecutionGraph out = g;
  out.devices[0].mirrors = {7};
  fails(out, "device index 7 out of range");
  ExecutionGraph queued = g;
  Collective c;
  c.ranks = {2, 1};
  c.bytes = 1e6;
  append_collective(queued, "ar", c, "comm", {});  // queued on its first rank, the mirror
  fails(queued, "ops[1] \"ar\": runs on device 2 \"m\", a mirror of device 0 \"a\"");
  c.ranks = {1, 2};
  ExecutionGraph flows = g;
  append_collective(flows, "ar", c, "comm", {});
  check_graph(flows, "g.json");  // a mirror takes part in collectives, flows or not
}

TEST(Mirrors, ACollectiveAmongMirrorsMovesEachRanksOwnFlows) {
  // Four GPUs of a DGX H100 computing alike, then all-reducing 64 MiB over NCCL's plans: as four
  // devices, and as the first with the other three its mirrors (their compute run once, the
  // all-reduce's flows each rank's own).
  PlatformSource source;
  source.topology = testing::preset("dgx-h100", "servers: 1\n");
  auto build = [](bool mirrored) {
    ExecutionGraph g;
    for (int i = 0; i < 4; ++i) {
      const std::string h = "n0_gpu" + std::to_string(i);
      g.devices.push_back({"g" + std::to_string(i), h, "n0_cpu0", "n0", {}});
    }
    if (mirrored) g.devices[0].mirrors = {1, 2, 3};
    Collective c;
    c.ranks = {0, 1, 2, 3};
    c.bytes = 64.0 * 1024 * 1024;
    c.protocol = CollectiveProtocol::kAuto;
    std::vector<int> deps;
    for (int i = 0; i < (mirrored ? 1 : 4); ++i)
      deps.push_back(append_compute(g, "bwd" + std::to_string(i), i, {}, 2e-3, "backward", {}));
    const int ar = append_collective(g, "ar", c, "comm", deps);
    for (int i = 0; i < (mirrored ? 1 : 4); ++i)
      append_compute(g, "opt" + std::to_string(i), i, {}, 1e-3, "optimizer", {ar});
    check_graph(g, "test");
    return g;
  };
  ReplayOptions opt;
  const RunResult expanded = replay_isolated(source, build(false), opt);
  const RunResult mirrored = replay_isolated(source, build(true), opt);
  EXPECT_GT(expanded.makespan, 3e-3);
  EXPECT_EQ(mirrored.makespan, expanded.makespan);
  EXPECT_EQ(mirrored.asymmetric_mirror_flows, 0);
  expect_same_devices(mirrored, expanded, 0.0);
  expect_same_links(mirrored, expanded);
}

TEST(Mirrors, GraphFilesKeepThemByName) {
  const ExecutionGraph g = transfer_graph("n0_gpu2");
  std::ostringstream out;
  write_graph_json(g, out);
  EXPECT_NE(out.str().find("\"mirrors\":[\"m\"]"), std::string::npos) << out.str();
  const ExecutionGraph back = parse_graph_json(out.str(), "g.json");
  EXPECT_EQ(back.devices[0].mirrors, std::vector<int>{2});
  std::string bad = out.str();
  bad.replace(bad.find("[\"m\"]"), 5, "[\"zz\"]");
  EXPECT_THROW(parse_graph_json(bad, "g.json"), InputError);
}

}  // namespace
}  // namespace orrery
