// The learned estimator inside the CostModel: consulted only when the profile database misses,
// recorded as "learned", and declining (so the analytic model answers) for ops it was not
// trained for. Also the scenario key cost_model.learned.
#include <gtest/gtest.h>

#include <cmath>

#include "common/errors.h"
#include "common/yaml_reader.h"
#include "models/cost_model.h"
#include "models/learned/estimator.h"
#include "models/learned/model_file.h"
#include "models/learned/trainer.h"
#include "tests/test_util.h"

namespace orrery {
namespace {

ProfileRow matmul_row(int64_t m, int64_t k, int64_t n, const std::string& device) {
  ProfileRow r;
  r.op = "matmul";
  r.dtype = "fp32";
  r.device = device;
  r.inputs = std::to_string(m) + "x" + std::to_string(k) + ";" + std::to_string(k) + "x" +
             std::to_string(n);
  r.output = std::to_string(m) + "x" + std::to_string(n);
  r.time_s = 4e-6 + 1e-12 * m * k * n;
  return r;
}

ModelOp matmul_op(int64_t m, int64_t k, int64_t n) {
  ModelOp op;
  op.name = op.type = "matmul";
  op.inputs = {{m, k}, {k, n}};
  op.output = {m, n};
  return op;
}

std::shared_ptr<const LearnedOpEstimator> trained_on(const std::string& device) {
  ProfileDb db;
  for (int64_t m = 16; m <= 512; m *= 2)
    for (int64_t k = 16; k <= 512; k *= 2)
      for (int64_t n = 16; n <= 512; n *= 2) db.add(matmul_row(m, k, n, device));
  TrainerOptions o;
  o.inputs = TrainerOptions::Inputs::kLog;
  o.budget_s = 0.05;
  o.defaults.max_epochs = 150;
  o.defaults.patience = 30;
  o.max_layers = 4;
  o.max_neurons = 6;
  o.fine_tune.resize(1);
  o.fine_tune[0].max_epochs = 150;
  return std::make_shared<LearnedOpEstimator>(
      std::make_shared<const LearnedModel>(train_learned_model(db, {}, o)));
}

TEST(LearnedCostModel, DatabaseThenLearnedThenAnalytic) {
  DeviceSpec v100 = device_spec("V100-SXM2");
  auto db = std::make_shared<ProfileDb>();
  db->add(matmul_row(64, 64, 64, "V100-SXM2"));
  CostModelOptions o;
  o.db = db;
  o.learned = trained_on("V100-SXM2");
  CostModel cm(o);

  OpEstimate hit = cm.estimate(matmul_op(64, 64, 64), v100);
  EXPECT_EQ(hit.source, EstimateSource::kDatabase);
  EXPECT_DOUBLE_EQ(hit.seconds, 4e-6 + 1e-12 * 64 * 64 * 64);

  OpEstimate learned = cm.estimate(matmul_op(100, 300, 50), v100);  // no row, no bracket
  EXPECT_EQ(learned.source, EstimateSource::kLearned);
  EXPECT_STREQ(estimate_source_name(learned.source), "learned");
  double truth = 4e-6 + 1e-12 * 100 * 300 * 50;
  EXPECT_NEAR(learned.seconds, truth, 0.5 * truth);

  // Outside the trained range, another op type, another device: the kernel models.
  EXPECT_EQ(cm.estimate(matmul_op(4096, 300, 50), v100).source, EstimateSource::kKernelModel);
  ModelOp relu;
  relu.name = relu.type = "relu";
  relu.inputs = {{1024}};
  relu.output = {1024};
  EXPECT_EQ(cm.estimate(relu, v100).source, EstimateSource::kKernelModel);
  EXPECT_EQ(cm.estimate(matmul_op(100, 300, 50), device_spec("A100")).source,
            EstimateSource::kKernelModel);
  ModelOp half = matmul_op(100, 300, 50);
  half.dtype = DType::kFP16;  // a mode the model has no network for
  EXPECT_EQ(cm.estimate(half, v100).source, EstimateSource::kKernelModel);
}

TEST(LearnedCostModel, DeviceAliasesMatchAndOverriddenDevicesSkipIt) {
  CostModelOptions o;
  o.learned = trained_on("v100");  // an alias, in another case
  CostModel cm(o);
  DeviceSpec v100 = device_spec("V100-SXM2");
  EXPECT_EQ(cm.estimate(matmul_op(100, 300, 50), v100).source, EstimateSource::kLearned);
  v100.overridden.push_back("fp32");  // a scenario changed its speed: measurements no longer apply
  EXPECT_EQ(cm.estimate(matmul_op(100, 300, 50), v100).source, EstimateSource::kKernelModel);
}

TEST(LearnedCostModel, ScenarioKeyLoadsAModelFile) {
  std::string dir = testing::make_temp_dir("learned_key");
  write_learned_model(dir + "/m.json", trained_on("V100-SXM2")->model());
  YAML::Node n = load_yaml_text("learned: m.json\n", "scenario.yaml");
  CostModelOptions o = parse_cost_model_options(YamlMap(n, "scenario.yaml", "cost_model"), dir);
  ASSERT_TRUE(o.learned);
  CostModel cm(o);
  EXPECT_EQ(cm.estimate(matmul_op(100, 300, 50), device_spec("V100")).source,
            EstimateSource::kLearned);

  YAML::Node bad = load_yaml_text("learned: missing.json\n", "scenario.yaml");
  try {
    parse_cost_model_options(YamlMap(bad, "scenario.yaml", "cost_model"), dir);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("learned"), std::string::npos) << what;
    EXPECT_NE(what.find("missing.json"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace orrery
