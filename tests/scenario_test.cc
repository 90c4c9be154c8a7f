// Scenario loading: presets and overrides, errors naming file/line/key, and the end-to-end
// round trip through the `orrery` binary into HDF5 and back.
#include "scenario/scenario.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "common/errors.h"
#include "engine/replay.h"
#include "results/h5_store.h"
#include "tests/test_util.h"

namespace orrery {
namespace {

using testing::make_temp_dir;
using testing::write_file;

std::string error_of(const std::string& path, std::vector<std::string> overrides = {}) {
  try {
    load_scenario(path, overrides);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

const char* kBase = R"(name: t
platform:
  preset: pcie-server
  server:
    gpus: 2
workload:
  type: synthetic-dp
  layers: 2
  forward_time: 1ms
  gradient_bytes: 1MB
)";

TEST(Scenario, PresetWithOverridesBuildsTheGraph) {
  auto dir = make_temp_dir("scn");
  write_file(dir + "/s.yaml", kBase);
  Scenario sc = load_scenario(dir + "/s.yaml", {"platform.server.gpus=4"});
  // 4 GPUs: 2 forward + 2 backward + 1 update per GPU, plus one all-reduce collective per layer.
  EXPECT_EQ(sc.graph.devices.size(), 4u);
  EXPECT_EQ(sc.graph.ops.size(), 4u * 5 + 2);
  ASSERT_EQ(sc.graph.collectives.size(), 2u);
  EXPECT_EQ(sc.graph.collectives[0].ranks.size(), 4u);
  EXPECT_DOUBLE_EQ(sc.graph.collectives[0].bytes, 1e6);
  EXPECT_EQ(sc.name, "t");
  EXPECT_NE(sc.text.find("--set platform.server.gpus=4"), std::string::npos);
}

TEST(Scenario, UnknownKeyNamesFileLineAndPath) {
  auto dir = make_temp_dir("scn");
  write_file(dir + "/s.yaml", std::string(kBase) + "  colour: blue\n");
  auto msg = error_of(dir + "/s.yaml");
  EXPECT_NE(msg.find("s.yaml:11"), std::string::npos) << msg;
  EXPECT_NE(msg.find("workload.colour"), std::string::npos) << msg;
}

TEST(Scenario, UnknownPresetListsTheKnownOnes) {
  auto dir = make_temp_dir("scn");
  write_file(dir + "/s.yaml", kBase);
  auto msg = error_of(dir + "/s.yaml", {"platform.preset=cray"});
  EXPECT_NE(msg.find("cray"), std::string::npos) << msg;
  EXPECT_NE(msg.find("pcie-server"), std::string::npos) << msg;
}

TEST(Scenario, BadValuesAreRejectedWithTheKey) {
  auto dir = make_temp_dir("scn");
  write_file(dir + "/s.yaml", kBase);
  EXPECT_NE(error_of(dir + "/s.yaml", {"platform.server.pcie.bandwidth=0"})
                .find("platform.server.pcie.bandwidth"),
            std::string::npos);
  EXPECT_NE(error_of(dir + "/s.yaml", {"workload.forward_time=-1ms"}).find("workload.forward_time"),
            std::string::npos);
  EXPECT_NE(error_of(dir + "/s.yaml", {"workload.layers=many"}).find("expected an integer"),
            std::string::npos);
  EXPECT_NE(error_of(dir + "/s.yaml", {"workload.gpus=9"}).find("workload.gpus"),
            std::string::npos);
}

TEST(Scenario, AllReduceOnTheHostsIsAStrategyKey) {
  auto dir = make_temp_dir("scn");
  write_file(dir + "/s.yaml", R"(name: t
platform: {preset: ethernet-cluster, servers: 2, server: {gpus: 2}}
workload: {type: model, model: resnet50, batch: 8}
strategy: {type: allreduce, allreduce_on: host, host_stream_bandwidth: 2GB/s}
)");
  const std::string ok = error_of(dir + "/s.yaml");
  EXPECT_EQ(ok, "");
  const std::string bad = error_of(dir + "/s.yaml", {"strategy.allreduce_on=cpu"});
  EXPECT_NE(bad.find("strategy.allreduce_on"), std::string::npos) << bad;
  EXPECT_NE(bad.find("expected gpu"), std::string::npos) << bad;
  EXPECT_NE(error_of(dir + "/s.yaml", {"strategy.host_stream_bandwidth=-1GB/s"})
                .find("strategy.host_stream_bandwidth"),
            std::string::npos);
  const Scenario sc = load_scenario(dir + "/s.yaml", {});
  int rings = 0;
  for (const auto& op : sc.graph.ops)
    if (op.kind == OpKind::kCollective && op.name.find(".ring") != std::string::npos) ++rings;
  EXPECT_GT(rings, 0);
}

TEST(Scenario, YamlSyntaxErrorHasLine) {
  auto dir = make_temp_dir("scn");
  write_file(dir + "/s.yaml", "name: t\nplatform: [unclosed\n");
  auto msg = error_of(dir + "/s.yaml");
  EXPECT_NE(msg.find("s.yaml:"), std::string::npos) << msg;
  EXPECT_NE(msg.find("syntax"), std::string::npos) << msg;
}

TEST(Scenario, GraphFileWorkloadAndMissingHost) {
  auto dir = make_temp_dir("scn");
  write_file(dir + "/g.json", R"({"format": "orrery-graph", "version": 1,
    "devices": [{"name": "a", "host": "n0_gpu0"}, {"name": "b", "host": "n0_gpu7"}],
    "ops": [{"name": "x", "device": "a", "duration": 0.001}]})");
  write_file(dir + "/s.yaml",
             "platform: {preset: pcie-server}\nworkload: {type: graph, file: g.json}\n");
  auto msg = error_of(dir + "/s.yaml");
  EXPECT_NE(msg.find("n0_gpu7"), std::string::npos) << msg;
  Scenario sc = load_scenario(dir + "/s.yaml", {"platform.server.gpus=8"});
  EXPECT_EQ(sc.graph.ops.size(), 1u);
}

// Eager mode by default: every kernel of a model workload is launched by its GPU's host thread
// (models/host_overhead.h); `host_overheads: false` (a CUDA graph) launches none, and the
// launch-bound step of a small LSTM gets faster without them (1.49x with the shipped fit).
TEST(Scenario, ModelWorkloadsLaunchKernelsByDefault) {
  auto dir = make_temp_dir("scn");
  write_file(dir + "/s.yaml", R"(platform: {preset: pcie-server}
workload: {type: model, model: lstm_lm, batch: 2}
strategy: {type: 1w1g}
)");
  auto launches = [](const Scenario& sc) {
    size_t n = 0;
    for (const auto& op : sc.graph.ops) n += op.stream.cls == StreamClass::kHost;
    return n;
  };
  Scenario eager = load_scenario(dir + "/s.yaml");
  Scenario graph = load_scenario(dir + "/s.yaml", {"strategy.host_overheads=false"});
  EXPECT_EQ(launches(graph), 0u);
  EXPECT_GT(launches(eager), graph.graph.ops.size() / 2);  // one per kernel, plus the tail
  const double t_eager = replay_isolated(eager.platform, eager.graph, {}).makespan;
  const double t_graph = replay_isolated(graph.platform, graph.graph, {}).makespan;
  EXPECT_GT(t_eager, 1.3 * t_graph);
}

TEST(Scenario, SyntheticStepMatchesHandComputation) {
  // 2 GPUs under one PCIe switch (15.75 GB/s, 1 us per hop, no input copy). Each layer: 1 ms
  // forward, 2 ms backward; per-layer gradient 1 MB ring-all-reduced in 2 steps of 0.5 MB over
  // gpu -> switch -> gpu (2 us latency + 0.5e6 / 15.75e9 s). The last all-reduce (layer 0)
  // starts after the last backward at 2 + 4 = 6 ms, so the step ends at
  // 6 ms + 2 x (2 us + 31.746 us) + 0.2 ms update with the bytes-only model (protocol ideal).
  // NCCL's plan (the default) is Simple (LL128 needs NVLink, LL loses at 1 MB): its 8.4 us
  // launch latency, and each step takes 5.7 us (NCCL's per-step latency over PCIe) in place of
  // the route's 2 us.
  auto dir = make_temp_dir("scn");
  write_file(dir + "/s.yaml", kBase);
  const double step = 2e-6 + 0.5e6 / 15.75e9;
  Scenario ideal = load_scenario(dir + "/s.yaml", {"workload.protocol=ideal"});
  RunResult r = replay_isolated(ideal.platform, ideal.graph, ReplayOptions{});
  EXPECT_NEAR(r.makespan, 6e-3 + 2 * step + 2e-4, 1e-9);
  Scenario nccl = load_scenario(dir + "/s.yaml");
  r = replay_isolated(nccl.platform, nccl.graph, ReplayOptions{});
  EXPECT_NEAR(r.makespan, 6e-3 + 8.4e-6 + 2 * (step + 3.7e-6) + 2e-4, 1e-9);
}

TEST(Scenario, RunWritesHdf5ThatReadsBack) {
  const char* bin = std::getenv("ORRERY_BIN");
  if (!bin) GTEST_SKIP() << "ORRERY_BIN not set (run through ctest)";
  auto dir = make_temp_dir("scn");
  write_file(dir + "/s.yaml", kBase);
  std::string out = dir + "/r.h5";
  std::string cmd = std::string(bin) + " run -q " + dir + "/s.yaml -o " + out;
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  LoadedResults back = read_results_h5(out);
  ASSERT_EQ(back.runs.size(), 1u);
  EXPECT_EQ(back.runs[0].name, "t");
  EXPECT_NE(back.meta.scenario_text.find("synthetic-dp"), std::string::npos);
  EXPECT_FALSE(back.meta.orrery_version.empty());
  // Same scenario replayed here: the stored numbers are the simulated ones, bit for bit.
  Scenario sc = load_scenario(dir + "/s.yaml");
  RunResult r = replay_isolated(sc.platform, sc.graph, ReplayOptions{});
  EXPECT_EQ(back.runs[0].result.makespan, r.makespan);
  ASSERT_EQ(back.runs[0].result.devices.size(), r.devices.size());
  EXPECT_EQ(back.runs[0].result.devices[1].busy[0], r.devices[1].busy[0]);
  EXPECT_EQ(back.timelines[0].size(), sc.graph.ops.size());
  EXPECT_FALSE(std::filesystem::exists(out + ".tmp"));
}

TEST(Scenario, CliExitStatuses) {
  const char* bin = std::getenv("ORRERY_BIN");
  if (!bin) GTEST_SKIP() << "ORRERY_BIN not set (run through ctest)";
  auto dir = make_temp_dir("scn");
  write_file(dir + "/s.yaml", kBase);
  auto status = [](const std::string& cmd) {
    int s = std::system((cmd + " >/dev/null 2>&1").c_str());
    return WEXITSTATUS(s);
  };
  EXPECT_EQ(status(std::string(bin) + " validate " + dir + "/s.yaml"), 0);
  EXPECT_EQ(status(std::string(bin) + " --version"), 0);
  EXPECT_EQ(status(std::string(bin) + " --help"), 0);
  EXPECT_EQ(status(std::string(bin) + " validate " + dir + "/missing.yaml"), 2);
  EXPECT_EQ(status(std::string(bin) + " run " + dir + "/s.yaml --set workload.layers=0"), 2);
  EXPECT_EQ(status(std::string(bin) + " frobnicate"), 2);
  // A failed run leaves no result file behind.
  EXPECT_EQ(status(std::string(bin) + " run " + dir + "/s.yaml -o " + dir +
                   "/r.h5 --set platform.server.pcie.latency=-1us"),
            2);
  EXPECT_FALSE(std::filesystem::exists(dir + "/r.h5"));
}

}  // namespace
}  // namespace orrery

namespace orrery {
namespace {

TEST(Scenario, PlatformGpuRatesPriceModelWorkloads) {
  // Doubling platform.server.gpu.flops (Table III's GPU axis of PAI)
  // halves compute-bound kernels and leaves memory-bound ones: the step gets faster, by less
  // than 2x. Doubling memory bandwidth speeds up the memory-bound part instead.
  auto dir = testing::make_temp_dir("scn");
  testing::write_file(dir + "/s.yaml", R"(platform: {preset: pai-pcie}
workload: {type: model, model: resnet50, batch: 32}
strategy: {type: 1w1g, input_bytes: 0}
)");
  auto step = [&](const std::vector<std::string>& sets) {
    Scenario sc = load_scenario(dir + "/s.yaml", sets);
    return replay_isolated(sc.platform, sc.graph, ReplayOptions{false});
  };
  RunResult base = step({});
  RunResult fast = step({"platform.server.gpu.flops=22TFLOP/s"});
  RunResult wide = step({"platform.server.gpu.mem_bw=2TB/s"});
  EXPECT_LT(fast.makespan, 0.9 * base.makespan);
  EXPECT_GT(fast.makespan, 0.5 * base.makespan);
  EXPECT_LT(wide.makespan, base.makespan);
  // The memory-bound part does not move with FLOP/s.
  EXPECT_NEAR(fast.devices[0].memory_bound, base.devices[0].memory_bound,
              0.05 * base.devices[0].memory_bound);
}

}  // namespace
}  // namespace orrery
