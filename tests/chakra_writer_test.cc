// Chakra writer (workloads/chakra/chakra_writer.h) and `orrery workload export --chakra`: a graph
// written as traces and read back by the importer is the same graph, and a scenario exported
// and replayed from its traces takes the same simulated time.
#include "workloads/chakra/chakra_writer.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "common/errors.h"
#include "engine/replay.h"
#include "scenario/scenario.h"
#include "tests/test_util.h"
#include "workloads/chakra/chakra_export.h"
#include "workloads/chakra/chakra_import.h"
#include "workloads/chakra/chakra_trace.h"

namespace orrery {
namespace {

Op compute(const std::string& name, int device, double duration, std::vector<int> deps,
           StreamClass cls = StreamClass::kCompute) {
  Op op;
  op.name = name;
  op.device = device;
  op.stream = {cls, 0};
  op.duration = duration;
  op.phase = "compute";
  op.deps = std::move(deps);
  return op;
}

// Two devices: every op kind, every stream the importer knows, both ways to cost compute.
ExecutionGraph two_device_graph() {
  ExecutionGraph g;
  g.devices = {{"d0", "g0", "g0", "g0", {}}, {"d1", "g1", "g1", "g1", {}}};
  g.ops.push_back(compute("fwd0", 0, 1e-3, {}));                                   // 0
  g.ops.push_back(compute("fwd1", 1, 2e-3, {}));                                   // 1
  append_transfer(g, "send", 0, {StreamClass::kComm, 0}, 0, 1, 1e6, "comm", {0});  // 2
  Op gemm = compute("gemm", 1, -1.0, {1, 2});                                      // 3
  gemm.flops = 2e9;
  g.ops.push_back(gemm);
  Collective c;
  c.ranks = {0, 1};
  c.bytes = 4e6;
  append_collective(g, "ar", c, "comm", {0, 3});                            // 4
  g.ops.push_back(compute("load", 0, 0.5e-3, {4}, StreamClass::kCopyH2D));  // 5
  g.ops.push_back(compute("cpu", 1, 0.1e-3, {4}, StreamClass::kHost));      // 6
  return g;
}

ExecutionGraph read_back(const ChakraTraceSet& set, const std::vector<std::string>& hosts,
                         const std::map<std::string, std::vector<int>>& groups = {}) {
  std::vector<chakra::Trace> traces;
  for (size_t r = 0; r < set.ranks.size(); ++r)
    traces.push_back(chakra::parse_trace(set.ranks[r], "t." + std::to_string(r) + ".et"));
  ChakraImportOptions o;
  o.device_hosts = hosts;
  o.engine_collectives = true;
  o.comm_groups = groups;
  return chakra_to_execution_graph(traces, o);
}

TEST(ChakraWriter, HandBuiltGraphReadsBackTheSame) {
  const ExecutionGraph g = two_device_graph();
  const ChakraTraceSet set = encode_chakra_traces(g);
  ASSERT_EQ(set.ranks.size(), 2u);
  // Rank 0: fwd0, send, ar, load; rank 1: fwd1, recv, gemm, ar, cpu.
  EXPECT_EQ(set.nodes, 9u);
  EXPECT_EQ(set.sync_pairs, 0u);
  EXPECT_EQ(set.rounded_durations, 0u);
  EXPECT_TRUE(set.comm_groups.empty());
  const chakra::Trace r1 = chakra::parse_trace(set.ranks[1], "t.1.et");
  ASSERT_EQ(r1.nodes.size(), 5u);
  EXPECT_EQ(r1.nodes[1].type, chakra::kCommRecvNode);
  EXPECT_EQ(r1.nodes[2].name, "gemm");
  EXPECT_EQ(r1.nodes[2].data_deps, (std::vector<uint64_t>{1, 2}));  // fwd1 and the receive

  // The importer names ops r<rank>.<node id>:<name>; node ids are op indices.
  const ExecutionGraph back = read_back(set, {"g0", "g1"});
  const std::vector<std::string> names = {
      "r0.0:fwd0", "r1.1:fwd1", "r0.2:send->r1", "r1.3:gemm", "coll.world.0:ALL_REDUCE",
      "r0.5:load", "r1.6:cpu"};
  ASSERT_EQ(back.ops.size(), g.ops.size());
  for (size_t i = 0; i < g.ops.size(); ++i) {
    SCOPED_TRACE(g.ops[i].name);
    const int j = back.find_op(names[i]);
    ASSERT_GE(j, 0);
    const Op &a = g.ops[i], &b = back.ops[j];
    EXPECT_EQ(b.kind, a.kind);
    EXPECT_EQ(b.device, a.device);
    EXPECT_EQ(b.stream, a.stream);
    EXPECT_DOUBLE_EQ(b.duration, a.duration);
    EXPECT_DOUBLE_EQ(b.flops, a.flops);
    EXPECT_EQ(b.src, a.src);
    EXPECT_EQ(b.dst, a.dst);
    EXPECT_DOUBLE_EQ(b.transfer_bytes, a.transfer_bytes);
    std::set<std::string> want, got;
    for (int d : a.deps) want.insert(names[d]);
    for (int d : b.deps) got.insert(back.ops[d].name);
    EXPECT_EQ(got, want);
  }
  ASSERT_EQ(back.collectives.size(), 1u);
  EXPECT_EQ(back.collectives[0].type, CollectiveType::kAllReduce);
  EXPECT_EQ(back.collectives[0].ranks, (std::vector<int>{0, 1}));
  EXPECT_DOUBLE_EQ(back.collectives[0].bytes, 4e6);

  // Hand timeline (hosts 1 Tflop/s, links 1 GB/s, no latency): fwd0 [0,1] ms, fwd1 [0,2], send
  // 1 MB [1,2], gemm 2e9 flop [2,4], all-reduce of 4 MB on 2 ranks: ring, 2 steps of 2 MB flows
  // in both directions [4,8]; load [8,8.5], cpu [8,8.1].
  const RunResult before = replay_isolated(testing::star_platform(2, 1e9, 0), g, ReplayOptions{});
  const RunResult after = replay_isolated(testing::star_platform(2, 1e9, 0), back, ReplayOptions{});
  EXPECT_NEAR(before.makespan, 8.5e-3, 1e-9);
  EXPECT_NEAR(after.makespan, before.makespan, 1e-15);
}

TEST(ChakraWriter, CrossDeviceDependencyTravelsAsAZeroByteTransfer) {
  ExecutionGraph g;
  g.devices = {{"d0", "g0", "g0", "g0", {}}, {"d1", "g1", "g1", "g1", {}}};
  g.ops.push_back(compute("a", 0, 1e-3, {}));
  g.ops.push_back(compute("b", 1, 1e-3, {0}));
  g.ops.push_back(compute("c", 1, 1.5e-9, {0}));  // same dependency: the same pair
  const ChakraTraceSet set = encode_chakra_traces(g);
  EXPECT_EQ(set.sync_pairs, 1u);
  EXPECT_EQ(set.rounded_durations, 1u);
  const ExecutionGraph back = read_back(set, {"g0", "g1"});
  ASSERT_EQ(back.ops.size(), 4u);
  const int sync = back.find_op("r0.3:sync:a->rank1->r1");
  ASSERT_GE(sync, 0);
  EXPECT_DOUBLE_EQ(back.ops[sync].transfer_bytes, 0);
  EXPECT_EQ(back.ops[sync].deps, (std::vector<int>{back.find_op("r0.0:a")}));
  EXPECT_EQ(back.ops[back.find_op("r1.1:b")].deps, (std::vector<int>{sync}));
  EXPECT_DOUBLE_EQ(back.ops[back.find_op("r1.2:c")].duration, 0);  // 1.5 ns: 0 microseconds
}

TEST(ChakraWriter, SubgroupCollectivesGetAProcessGroup) {
  ExecutionGraph g;
  for (int i = 0; i < 4; ++i) {
    const std::string h = "g" + std::to_string(i);
    g.devices.push_back({"d" + std::to_string(i), h, h, h, {}});
  }
  for (std::vector<int> ranks : {std::vector<int>{0, 2}, std::vector<int>{1, 3},
                                 std::vector<int>{0, 2}, std::vector<int>{0, 1, 2, 3}}) {
    Collective c;
    c.type = CollectiveType::kAllGather;
    c.ranks = ranks;
    c.bytes = 1 << 20;
    append_collective(g, "ag" + std::to_string(g.ops.size()), c, "comm", {});
  }
  const ChakraTraceSet set = encode_chakra_traces(g);
  const std::map<std::string, std::vector<int>> groups = {{"group0", {0, 2}}, {"group1", {1, 3}}};
  EXPECT_EQ(set.comm_groups, groups);
  const ExecutionGraph back = read_back(set, {"g0", "g1", "g2", "g3"}, groups);
  ASSERT_EQ(back.collectives.size(), 4u);
  std::multiset<std::vector<int>> got;
  for (const auto& c : back.collectives) {
    EXPECT_EQ(c.type, CollectiveType::kAllGather);
    got.insert(c.ranks);
  }
  EXPECT_EQ(got, (std::multiset<std::vector<int>>{{0, 2}, {0, 2}, {1, 3}, {0, 1, 2, 3}}));
}

TEST(ChakraWriter, QuickstartScenarioReplaysInTheSameTime) {
  // The quickstart's step without its input copies (their host-to-GPU stream is not carried:
  // the importer queues a transfer on its source's comm stream). Durations are whole
  // microseconds and the all-reduces ring either way, so the time is the same (to rounding:
  // 1000 x 1e-6 s is not 1e-3 s to the last bit).
  Scenario sc =
      load_scenario(testing::source_path("scenarios/quickstart.yaml"), {"workload.input_bytes=0"});
  const std::string dir = testing::make_temp_dir("chakra_export");
  ChakraExport out = export_chakra_traces(sc.graph, dir, sc.name);
  EXPECT_EQ(out.prefix, dir + "/quickstart");
  ASSERT_EQ(out.files.size(), 4u);
  EXPECT_TRUE(out.notes.empty());
  ChakraImportOptions o;
  for (const auto& d : sc.graph.devices) o.device_hosts.push_back(d.host);
  o.engine_collectives = true;
  o.protocol = CollectiveProtocol::kAuto;  // as the scenario's collectives
  const ExecutionGraph back = load_chakra_traces({out.prefix}, o);
  EXPECT_EQ(back.ops.size(), sc.graph.ops.size());
  const RunResult before = replay_isolated(sc.platform, sc.graph, ReplayOptions{});
  const RunResult after = replay_isolated(sc.platform, back, ReplayOptions{});
  EXPECT_GT(before.makespan, 0);
  EXPECT_NEAR(after.makespan, before.makespan, before.makespan * 1e-12);

  // A rank file of a larger set in the way is refused before anything is written.
  testing::write_file(dir + "/quickstart.7.et", "x");
  try {
    export_chakra_traces(sc.graph, dir + "/quickstart", sc.name);
    ADD_FAILURE() << "wrote over a larger set";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("quickstart.7.et: is in the way"), std::string::npos)
        << e.what();
  }
}

TEST(ChakraWriter, ExportCommandWritesTracesTheScenarioReads) {
  const char* bin = std::getenv("ORRERY_BIN");
  if (!bin) GTEST_SKIP() << "ORRERY_BIN not set (run through ctest)";
  const std::string dir = testing::make_temp_dir("chakra_cli");
  const std::string cmd = std::string(bin) + " workload export " +
                          testing::source_path("scenarios/quickstart.yaml") +
                          " --set workload.layers=2 --chakra " + dir + "/ 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string text;
  char buf[512];
  while (fgets(buf, sizeof buf, p)) text += buf;
  EXPECT_EQ(pclose(p), 0) << text;
  EXPECT_NE(text.find(dir + "/quickstart.{0..4}.et: 5 rank traces"), std::string::npos) << text;
  EXPECT_TRUE(std::filesystem::exists(dir + "/quickstart.4.et"));  // the input copies' CPU
  // A model alone has no devices to write traces for.
  const std::string bad = std::string(bin) + " workload export resnet50 --chakra " + dir + " 2>&1";
  p = popen(bad.c_str(), "r");
  ASSERT_NE(p, nullptr);
  text.clear();
  while (fgets(buf, sizeof buf, p)) text += buf;
  EXPECT_EQ(WEXITSTATUS(pclose(p)), 2) << text;
  EXPECT_NE(text.find("give a scenario that places it on a platform"), std::string::npos) << text;
}

}  // namespace
}  // namespace orrery
