// The PAI analytical estimate of a scenario's workload (scenario/pai_estimate.h), by hand.
#include "scenario/pai_estimate.h"

#include <gtest/gtest.h>

#include "scenario/scenario.h"
#include "tests/test_util.h"
#include "tests/tiny_model_graph.h"

namespace orrery {
namespace {

TEST(PaiEstimate, StrategiesMapToTableIIArchitectures) {
  using A = PaiArchitecture;
  EXPECT_EQ(pai_architecture_of(StrategyType::k1w1g, 1, true), A::k1w1g);
  EXPECT_EQ(pai_architecture_of(StrategyType::k1wng, 1, false), A::k1wng);
  EXPECT_EQ(pai_architecture_of(StrategyType::kPsWorker, 3, false), A::kPsWorker);
  EXPECT_EQ(pai_architecture_of(StrategyType::kPearl, 1, true), A::kPearl);
  EXPECT_EQ(pai_architecture_of(StrategyType::kAllReduce, 1, true), A::kAllReduceLocal);
  EXPECT_EQ(pai_architecture_of(StrategyType::kAllReduce, 2, true), A::kAllReduceCluster);
  // Without NVLink the weights of a one-server AllReduce cross PCIe, as 1wng's do.
  EXPECT_EQ(pai_architecture_of(StrategyType::kAllReduce, 1, false), A::k1wng);
}

TEST(PaiEstimate, PsWorkerStepByHand) {
  ModelGraph g = testing::tiny_model_graph();
  DeviceSpec dev;
  dev.fp32 = 10e12;
  dev.mem_bw = 1e12;
  ServerSpec server;
  server.pcie.bandwidth = 10e9;
  server.nic.count = 2;
  server.nic.bandwidth = 1e9;
  StrategyOptions opt;
  opt.type = StrategyType::kPsWorker;
  opt.input_bytes = 1e6;
  PaiBreakdown b = pai_estimate(g, dev, server, opt, 2);
  const double e = 0.7, flops = 2.0 * 640 * 128 + 2.0 * 1280 * 64, mem = 1280 * 4.0;
  const double grads = 1280 * 4.0;
  EXPECT_DOUBLE_EQ(b.t_d, 1e6 / (10e9 * e));
  EXPECT_DOUBLE_EQ(b.t_c, flops / (10e12 * e) + mem / (1e12 * e));
  // Ethernet is both NICs together; PS/Worker adds the PCIe crossing (eq. 3).
  EXPECT_DOUBLE_EQ(b.t_w, grads / (2e9 * e) + grads / (10e9 * e));
  EXPECT_DOUBLE_EQ(b.total, b.t_d + b.t_c + b.t_w);
  // The input batch derived from the model: the first forward op's first input, fp32.
  opt.input_bytes = -1;
  EXPECT_DOUBLE_EQ(pai_estimate(g, dev, server, opt, 2).t_d, 64 * 128 * 4.0 / (10e9 * e));
}

// Computed only when asked: by the build option (`orrery run --analytical`, Python's
// analytical=True) or by the scenario's output.analytical.
TEST(PaiEstimate, ScenarioCarriesItWhenAskedAndXmlPlatformsHaveNone) {
  auto dir = testing::make_temp_dir("pai_estimate");
  testing::write_file(dir + "/one.yaml", R"(
platform: {preset: pai-nvlink, servers: 2}
workload: {type: model, model: resnet50, batch: 8}
strategy: {type: allreduce, gpus: 8}
)");
  EXPECT_EQ(load_scenario(dir + "/one.yaml").analytical_seconds, 0);
  EXPECT_FALSE(load_scenario(dir + "/one.yaml").analytical);
  ScenarioBuildOptions asked;
  asked.analytical = true;
  Scenario local = load_scenario(dir + "/one.yaml", {}, asked);
  Scenario cluster = load_scenario(dir + "/one.yaml", {"strategy.gpus=16"}, asked);
  EXPECT_GT(local.analytical_seconds, 0);
  EXPECT_EQ(load_scenario(dir + "/one.yaml", {"output.analytical=true"}).analytical_seconds,
            local.analytical_seconds);
  // The same gradients over Ethernet and NVLink instead of NVLink alone.
  EXPECT_GT(cluster.analytical_seconds, local.analytical_seconds);
  testing::write_file(dir + "/syn.yaml", R"(
platform: {preset: pai-nvlink, servers: 1}
workload: {type: synthetic-dp, layers: 2}
)");
  EXPECT_EQ(load_scenario(dir + "/syn.yaml", {}, asked).analytical_seconds, 0);
}

}  // namespace
}  // namespace orrery
