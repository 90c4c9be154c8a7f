// Mixed clusters (platform.server_groups): servers of different GPU models on one fabric,
// every GPU's ops priced on its own model's datasheet (scenario/gpu_kinds.cc).
#include <gtest/gtest.h>

#include "common/errors.h"
#include "engine/replay.h"
#include "platforms/device_spec.h"
#include "platforms/platform_spec.h"
#include "scenario/job_report.h"
#include "scenario/scenario.h"
#include "test_util.h"

namespace orrery {
namespace {

// Three one-GPU servers on one Ethernet switch: a V100 server, then two A100 servers whose GPUs
// are NVLink-less too, so that only the GPU model differs between them.
constexpr const char* kMixed = R"(
  preset: ethernet-cluster
  server: {gpus: 1, cpu: {sockets: 1}}
  server_groups:
    - {servers: 1, gpu: V100-SXM2}
    - {servers: 2, gpu: A100-SXM4-80GB}
)";

PlatformSpec mixed_spec() { return parse_platform_spec(YAML::Load(kMixed), "test"); }

const TopoHost& host(const Topology& t, const std::string& name) {
  for (const TopoHost& h : t.hosts)
    if (h.name == name) return h;
  throw std::runtime_error("no host " + name);
}

ReplayOptions timeline() {
  ReplayOptions o;
  o.record_timeline = true;
  return o;
}

Scenario scenario(const std::string& yaml) {
  const std::string dir = testing::make_temp_dir("mixed");
  testing::write_file(dir + "/s.yaml", yaml);
  return load_scenario(dir + "/s.yaml");
}

double makespan(const Scenario& sc) {
  return replay_isolated(sc.platform, sc.graph, timeline()).makespan;
}

// A resnet50 data-parallel step on the GPUs listed, as the only job of the mixed platform.
Scenario resnet_job(const std::string& gpus) {
  return scenario(std::string("platform:") + kMixed + R"(
jobs:
  - {name: j, gpus: )" +
                  gpus + R"(, workload: {type: model, model: resnet50, batch: 32},
     strategy: {type: allreduce}}
)");
}

// The compute time of one device's compute stream, as priced.
double compute_seconds(const ExecutionGraph& g, int device) {
  double t = 0;
  for (const Op& op : g.ops)
    if (op.device == device && op.kind == OpKind::kCompute &&
        op.stream.cls == StreamClass::kCompute)
      t += op.duration;
  return t;
}

TEST(MixedCluster, GroupsGiveConsecutiveServersTheirOwnGpu) {
  const PlatformSpec spec = mixed_spec();
  EXPECT_EQ(spec.servers, 3);
  EXPECT_EQ(server_spec(spec, 0).gpu.name, "V100-SXM2");
  EXPECT_EQ(server_spec(spec, 1).gpu.name, "A100-SXM4-80GB");
  EXPECT_EQ(server_spec(spec, 2).gpu.name, "A100-SXM4-80GB");
  EXPECT_EQ(server_group_of(spec, 2), 1);
  // A GPU host's speed is its own model's FP32 peak (the rate flops-only ops run at).
  const Topology t = build_topology(spec);
  EXPECT_EQ(host(t, "n0_gpu0").speed, device_spec("V100-SXM2").fp32);
  EXPECT_EQ(host(t, "n1_gpu0").speed, device_spec("A100-SXM4-80GB").fp32);
  EXPECT_EQ(host(t, "n2_gpu0").speed, device_spec("A100-SXM4-80GB").fp32);
  EXPECT_NE(device_spec("V100-SXM2").fp32, device_spec("A100-SXM4-80GB").fp32);
}

TEST(MixedCluster, AGroupMayChangeItsServersNvlink) {
  const PlatformSpec spec = parse_platform_spec(YAML::Load(R"(
    preset: dgx1-v100
    server_groups:
      - {servers: 1}
      - {servers: 1, gpu: A100-SXM4-80GB, nvlink: {topology: nvswitch, links_per_gpu: 12}}
  )"),
                                                "test");
  const Topology t = build_topology(spec);
  int cube_mesh = 0, nvswitch = 0;
  for (const TopoLink& l : t.links) {
    cube_mesh += l.name.rfind("n0_nvl", 0) == 0;
    nvswitch += l.name.rfind("n1_gpu", 0) == 0 && l.name.find("_nvlink") != std::string::npos;
  }
  EXPECT_EQ(cube_mesh, 16);  // the hybrid cube mesh's 16 GPU pairs, on server 0 only
  EXPECT_EQ(nvswitch, 8);    // one link per GPU into server 1's NVSwitch
}

TEST(MixedCluster, ErrorsNameTheGroupAndKey) {
  auto error = [](const std::string& yaml) {
    return testing::input_error_of([&] { parse_platform_spec(YAML::Load(yaml), "p.yaml"); });
  };
  EXPECT_NE(error("{preset: ethernet-cluster, servers: 4, server_groups: [{servers: 1}, "
                  "{servers: 2}]}")
                .find("platform.servers: is 4 but the server_groups add up to 3"),
            std::string::npos);
  EXPECT_NE(error("{preset: ethernet-cluster, server_groups: [{servers: 1, gpus: 4}]}")
                .find("gpus: is the platform's (server.gpus), the same in every server"),
            std::string::npos);
  EXPECT_NE(error("{preset: ethernet-cluster, server_groups: [{servers: 1, colour: red}]}")
                .find("colour"),
            std::string::npos);
  EXPECT_NE(
      error("{preset: ethernet-cluster, server_groups: [{servers: 1, gpu: V99}]}").find("V99"),
      std::string::npos);
  EXPECT_NE(error("{preset: ethernet-cluster, server_groups: [{servers: 0}]}").find("servers"),
            std::string::npos);
  EXPECT_NE(error("{preset: ethernet-cluster, server_groups: []}").find("expected a list"),
            std::string::npos);
  // A group whose own keys clash: cube-mesh needs 8 GPUs, these servers have 1.
  EXPECT_NE(error(std::string(kMixed) + "    - {servers: 1, nvlink: {topology: cube-mesh}}\n")
                .find("server_groups: [2].server.gpus: an NVLink hybrid cube mesh"),
            std::string::npos);
  const std::string dir = testing::make_temp_dir("mixed");
  testing::write_file(dir + "/s.yaml", std::string("device: H100-SXM5\nplatform:") + kMixed +
                                           "workload: {type: synthetic-dp}\n");
  EXPECT_NE(testing::input_error_of([&] {
              load_scenario(dir + "/s.yaml");
            }).find("set gpu in the groups instead"),
            std::string::npos);
}

TEST(MixedCluster, AJobIsPricedOnItsOwnGpusModel) {
  // A one-GPU job on the A100 server of the mixed platform takes exactly what the same job
  // takes on a platform of A100s only; on the V100 server, what it takes on V100s.
  auto alone_on = [](const std::string& gpu) {
    return makespan(scenario(
        "platform: {preset: ethernet-cluster, servers: 1, server: {gpus: 1, cpu: {sockets: 1}, "
        "gpu: " +
        gpu + "}}\nworkload: {type: model, model: resnet50, batch: 32}\n"));
  };
  const Scenario sc = scenario(std::string("platform:") + kMixed + R"(
jobs:
  - {name: v, gpus: [n0_gpu0], workload: {type: model, model: resnet50, batch: 32}}
  - {name: a, gpus: [n1_gpu0], workload: {type: model, model: resnet50, batch: 32}}
)");
  const JobsOutcome o = job_outcomes(sc, replay_isolated(sc.platform, sc.graph, timeline()),
                                     replay_jobs_alone(sc, timeline()));
  ASSERT_EQ(o.jobs.size(), 2u);
  EXPECT_DOUBLE_EQ(o.jobs[0].mean, alone_on("V100-SXM2"));
  EXPECT_DOUBLE_EQ(o.jobs[1].mean, alone_on("A100-SXM4-80GB"));
  EXPECT_LT(o.jobs[1].mean, 0.5 * o.jobs[0].mean);
}

TEST(MixedCluster, ADataParallelJobOverAV100AndAnA100RunsAtTheV100sPace) {
  // Each GPU of the mixed job carries its own model's op times: the A100 rank's compute is
  // exactly that of a rank of the A100-only job, the V100 rank's that of the V100-only job.
  const Scenario mixed = resnet_job("[n0_gpu0, n1_gpu0]");
  const Scenario a100s = resnet_job("[n1_gpu0, n2_gpu0]");
  const Scenario v100s = scenario(R"(
platform: {preset: ethernet-cluster, servers: 2, server: {gpus: 1, cpu: {sockets: 1}, gpu: V100-SXM2}}
workload: {type: model, model: resnet50, batch: 32}
strategy: {type: allreduce}
)");
  ASSERT_EQ(mixed.graph.devices.size(), a100s.graph.devices.size());
  double mixed_v = 0, mixed_a = 0;
  for (size_t d = 0; d < mixed.graph.devices.size(); ++d) {
    const double t = compute_seconds(mixed.graph, static_cast<int>(d));
    if (t == 0) continue;  // the CPU-side devices of the input pipeline
    (mixed.graph.devices[d].host == "n0_gpu0" ? mixed_v : mixed_a) = t;
  }
  double only_a = 0, only_v = 0;
  for (size_t d = 0; d < a100s.graph.devices.size(); ++d)
    only_a = std::max(only_a, compute_seconds(a100s.graph, static_cast<int>(d)));
  for (size_t d = 0; d < v100s.graph.devices.size(); ++d)
    only_v = std::max(only_v, compute_seconds(v100s.graph, static_cast<int>(d)));
  EXPECT_DOUBLE_EQ(mixed_a, only_a);
  EXPECT_DOUBLE_EQ(mixed_v, only_v);
  EXPECT_LT(mixed_a, 0.5 * mixed_v);
  // Every bucket's all-reduce waits for the V100's gradients, so the step takes as long as on
  // two V100s (the same network: one NIC of each server); the A100 pair is far faster.
  EXPECT_NEAR(makespan(mixed), makespan(v100s), 1e-3 * makespan(v100s));
  EXPECT_LT(makespan(a100s), 0.6 * makespan(mixed));
  EXPECT_NE(scenario_device_line(mixed).find("V100-SXM2, A100-SXM4-80GB"), std::string::npos);
}

TEST(MixedCluster, ALanguageModelJobRunsOnOneGpuModel) {
  // An H100 server and an H200 server: a language-model job inside either is priced on that
  // GPU; one spanning both is refused, naming the rule.
  auto sc = [](const std::string& gpus) {
    return scenario(R"(
platform:
  preset: dgx-h100
  server_groups: [{servers: 1}, {servers: 1, gpu: H200-SXM}]
jobs:
  - {name: llm, gpus: )" +
                    gpus + R"(, workload: {type: llm, model: llama2_7b, seq_len: 1024,
     global_batch: 8, micro_batch: 1}, strategy: {tp: 8, pp: 1}}
)");
  };
  const Scenario h100 = sc("[0, 1, 2, 3, 4, 5, 6, 7]");
  const Scenario h200 = sc("[8, 9, 10, 11, 12, 13, 14, 15]");
  EXPECT_NE(h100.jobs->jobs[0].workload_summary.find("H100"), std::string::npos)
      << h100.jobs->jobs[0].workload_summary;
  EXPECT_NE(h200.jobs->jobs[0].workload_summary.find("H200"), std::string::npos)
      << h200.jobs->jobs[0].workload_summary;
  // The H200's faster memory (4.8 vs 3.35 TB/s) and equal dense peak: never slower.
  EXPECT_LE(makespan(h200), makespan(h100));
  EXPECT_NE(testing::input_error_of([&] {
              sc("16");
            }).find("a language-model workload runs on GPUs of one model"),
            std::string::npos);
}

}  // namespace
}  // namespace orrery
