// The pieces of Orrery the CPU validation loop (docs/validation.md) added: synchronous host
// overheads (a CPU runs the framework and its ops on one thread, so host time adds to op
// times), the device spec of the validation machine's core, the cpu-host platform preset, and
// the validation scenarios' shape (a model file priced by a CSV database on that device).
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "common/errors.h"
#include "engine/replay.h"
#include "models/host_overhead.h"
#include "platforms/device_spec.h"
#include "platforms/platform_spec.h"
#include "scenario/scenario.h"
#include "tests/test_util.h"

namespace orrery {
namespace {

ModelGraph three_phase_model() {
  ModelGraph m;
  m.name = "three";
  ModelOp f;
  f.name = "f";
  f.type = "relu";
  ModelOp b = f;
  b.name = "b";
  b.phase = Phase::kBackward;
  b.deps = {0};
  ModelOp u = f;
  u.name = "u";
  u.type = "sgd_update";
  u.phase = Phase::kOptimizer;
  u.deps = {1};
  m.ops = {f, b, u};
  return m;
}

TEST(ValidationHost, SynchronousOpTimesAddTheFrameworkTimeOfEachPhase) {
  HostOverheads ov;
  ov.synchronous = true;
  ov.forward = 2e-6;
  ov.backward = -1e-6;  // N/M times that already hold host work a step does not do
  ov.optimizer = 3e-6;
  ov.step = 100e-6;
  std::vector<double> t = synchronous_op_times(three_phase_model(), {10e-6, 10e-6, 10e-6}, ov);
  ASSERT_EQ(t.size(), 3u);
  EXPECT_DOUBLE_EQ(t[0], 10e-6 + 2e-6 + 100e-6);  // the first op carries the per-step time
  EXPECT_DOUBLE_EQ(t[1], 9e-6);
  EXPECT_DOUBLE_EQ(t[2], 13e-6);
  // Never below zero.
  ov.backward = -50e-6;
  EXPECT_DOUBLE_EQ(synchronous_op_times(three_phase_model(), {1e-6, 1e-6, 1e-6}, ov)[1], 0.0);
  EXPECT_THROW(synchronous_op_times(three_phase_model(), {1e-6}, ov), std::invalid_argument);
}

TEST(ValidationHost, DeviceSpecReadsSynchronousOverheads) {
  DeviceSpec d = parse_device_spec(
      YAML::Load("{model: V100, host_overheads: {synchronous: true, forward: 2us, backward: "
                 "-1us, optimizer: 0.5us, step: 300us}}"),
      "test");
  EXPECT_TRUE(d.host.synchronous);
  EXPECT_DOUBLE_EQ(d.host.forward, 2e-6);
  EXPECT_DOUBLE_EQ(d.host.backward, -1e-6);
  EXPECT_DOUBLE_EQ(d.host.optimizer, 0.5e-6);
  EXPECT_DOUBLE_EQ(d.host.step, 300e-6);
  EXPECT_FALSE(d.kernel_speed_overridden());  // measured op times still apply
  EXPECT_THROW(parse_device_spec(YAML::Load("{model: V100, host_overheads: {step: -1us}}"), "t"),
               InputError);
  EXPECT_FALSE(device_spec("V100").host.synchronous);  // GPUs launch asynchronously
}

TEST(ValidationHost, TheValidationCoreIsASynchronousDeviceWithItsProfilerName) {
  DeviceSpec d = device_spec("Xeon-vCPU-1T");
  EXPECT_TRUE(d.host.synchronous);
  EXPECT_EQ(d.sms, 1);
  EXPECT_NEAR(d.fp32, 166.4e9, 1e6);
  // profile_ops.py names this core's rows cpu-intel-xeon-processor-1t by default.
  EXPECT_EQ(device_spec("cpu-intel-xeon-processor-1t").name, "Xeon-vCPU-1T");
}

TEST(ValidationHost, CpuHostPresetLinksTheTwoCoresByOneSharedLoopback) {
  PlatformSpec spec = parse_platform_spec(YAML::Load("{preset: cpu-host}"), "test");
  EXPECT_EQ(spec.server.gpus, 2);
  EXPECT_EQ(spec.server.gpu.name, "Xeon-vCPU-1T");
  EXPECT_EQ(spec.server.nic.count, 0);
  Topology t = build_topology(spec);
  EXPECT_EQ(gpu_hosts(t).size(), 2u);
}

// A scenario shaped like scenarios/validation/*.yaml: the step's time is the sum of the
// database's op times plus the host overheads, on one core.
TEST(ValidationHost, ScenarioOnTheCpuHostPricesOpsAndAddsHostTime) {
  const std::string dir = testing::make_temp_dir("validation_host");
  testing::write_file(dir + "/m.model.json", R"({"format": "orrery-model", "version": 1,
    "name": "m", "batch": 4, "ops": [
    {"name": "f", "type": "relu", "inputs": [[4, 8]], "output": [4, 8]},
    {"name": "b", "type": "relu_bwd", "phase": "backward", "inputs": [[4, 8], [4, 8]],
     "output": [4, 8], "deps": ["f"]},
    {"name": "u", "type": "sgd_update", "phase": "optimizer", "inputs": [[8]], "output": [8],
     "deps": ["b"]}]})");
  testing::write_file(dir + "/db.csv",
                      "op,dtype,device,inputs,output,attrs,time_s\n"
                      "relu,fp32,Xeon-vCPU-1T,4x8,4x8,,1e-3\n"
                      "relu_bwd,fp32,Xeon-vCPU-1T,4x8;4x8,4x8,,2e-3\n"
                      "sgd_update,fp32,Xeon-vCPU-1T,8,8,,3e-3\n");
  testing::write_file(dir + "/s.yaml", R"(name: v
platform: {preset: cpu-host}
workload: {type: model_file, file: m.model.json}
device: {model: Xeon-vCPU-1T, host_overheads: {forward: 10us, backward: 20us, optimizer: 30us, step: 400us}}
cost_model: {profile_db: db.csv}
strategy: {type: 1w1g, input_bytes: 0, host_overheads: true}
)");
  Scenario sc = load_scenario(dir + "/s.yaml");
  RunResult r = replay_isolated(sc.platform, sc.graph, ReplayOptions{});
  EXPECT_NEAR(r.makespan, 6e-3 + 60e-6 + 400e-6, 1e-9);
  Scenario bare = load_scenario(dir + "/s.yaml", {"strategy.host_overheads=false"});
  RunResult r0 = replay_isolated(bare.platform, bare.graph, ReplayOptions{});
  EXPECT_NEAR(r0.makespan, 6e-3, 1e-9);
}

}  // namespace
}  // namespace orrery
