// Training of the learned estimator on small synthetic databases: the principal-component
// search finds the complexity hidden in the data, mode parameters get their own networks, the
// held-out rows stay out, and a seed fixes the result. Also the `orrery estimator` commands.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <set>

#include "engine/errors.h"
#include "models/learned/evaluation.h"
#include "models/learned/model_file.h"
#include "models/learned/rng.h"
#include "models/learned/trainer.h"
#include "models/profile_io.h"
#include "tests/test_util.h"

namespace orrery {
namespace {

int64_t log_uniform(Rng& rng, int64_t lo, int64_t hi) {
  return std::min<int64_t>(
      hi, static_cast<int64_t>(std::exp(rng.uniform(std::log(lo), std::log(hi + 1.0)))));
}

// matmul rows timed as 3 us + M*K*N / (5 GFLOP/s / 2), fp16 twice as fast as fp32.
ProfileDb synthetic_matmul(size_t n, const std::vector<std::string>& dtypes) {
  ProfileDb db;
  Rng rng(5);
  while (db.size() < n) {
    int64_t m = log_uniform(rng, 1, 256), k = log_uniform(rng, 1, 256),
            c = log_uniform(rng, 1, 256);
    for (const auto& dt : dtypes) {
      ProfileRow r;
      r.op = "matmul";
      r.dtype = dt;
      r.device = "V100-SXM2";
      r.inputs = std::to_string(m) + "x" + std::to_string(k) + ";" + std::to_string(k) + "x" +
                 std::to_string(c);
      r.output = std::to_string(m) + "x" + std::to_string(c);
      r.time_s = (3e-6 + 4e-10 * m * k * c) / (dt == "fp16" ? 2.0 : 1.0);
      db.add(r);
    }
  }
  return db;
}

TrainerOptions quick_options() {
  TrainerOptions o;
  o.budget_s = 0.3;
  o.defaults.max_epochs = 60;
  o.defaults.patience = 15;
  o.max_layers = 6;
  o.max_neurons = 10;
  o.fine_tune.resize(2);
  for (auto& f : o.fine_tune) f.max_epochs = 60;
  return o;
}

std::vector<std::string> pc_names(const OpModel& m) {
  std::vector<std::string> out;
  for (int i : m.pc.linear) out.push_back(m.schema.params[i].name);
  return out;
}

TEST(LearnedTrainer, PrincipalComponentSearchFindsTheComplexity) {
  ProfileDb db = synthetic_matmul(400, {"fp32"});
  TrainerOptions o = quick_options();
  OpModel m = train_op_model(db.rows(), o);
  ASSERT_EQ(m.pc_search.size(), 16u);
  EXPECT_TRUE(m.pc_search[0].candidate.empty());
  auto pc = pc_names(m);
  // M, N and one of the two (equal) K dimensions.
  EXPECT_TRUE(pc == (std::vector<std::string>{"a.M", "a.K", "b.N"}) ||
              pc == (std::vector<std::string>{"a.M", "b.K", "b.N"}))
      << candidate_text(m.pc, m.schema.params);
  EXPECT_TRUE(m.pc.inverse.empty());
  double best = m.pc_search[0].val_error;
  for (const auto& t : m.pc_search) best = std::min(best, t.val_error);
  EXPECT_LT(best, m.pc_search[0].val_error);  // better than no principal component
  // Kinds follow the choice; dtype with one value is a mode.
  EXPECT_EQ(m.params[0].kind, ParamKind::kLinear);
  EXPECT_EQ(m.params[4].kind, ParamKind::kMode);
  ASSERT_EQ(m.groups.size(), 1u);
  EXPECT_EQ(m.groups[0].mode, std::vector<std::string>{"fp32"});
  EXPECT_LT(m.groups[0].model.test_error, 0.15);
  EXPECT_GE(m.groups[0].model.net.layers(), o.min_layers);
  EXPECT_LE(m.groups[0].model.net.neurons(), o.max_neurons);
}

TEST(LearnedTrainer, HeldOutRowsAreTenPercentAndNeverTrainedOn) {
  ProfileDb db = synthetic_matmul(300, {"fp32"});
  OpModel m = train_op_model(db.rows(), quick_options());
  EXPECT_EQ(m.held_out.size(), 30u);
  const ModeGroup& g = m.groups[0];
  EXPECT_EQ(g.test_rows, 30u);
  EXPECT_EQ(g.val_rows, 30u);
  EXPECT_EQ(g.train_rows, 240u);
  std::set<std::string> held(m.held_out.begin(), m.held_out.end());
  EXPECT_EQ(held.size(), 30u);
  // The held-out error the trainer reports is the one `eval` measures on those rows.
  LearnedModel lm;
  lm.ops.push_back(m);
  auto acc = evaluate_learned_model(lm, db, true);
  ASSERT_EQ(acc.size(), 1u);
  EXPECT_EQ(acc[0].rows, 30u);
  EXPECT_DOUBLE_EQ(acc[0].error, g.model.test_error);
  EXPECT_DOUBLE_EQ(acc[0].no_pc_error, g.no_pc.test_error);
  EXPECT_EQ(evaluate_learned_model(lm, db, false)[0].rows, 300u);
}

TEST(LearnedTrainer, OneNetworkPerModeValue) {
  ProfileDb db = synthetic_matmul(400, {"fp32", "fp16"});
  OpModel m = train_op_model(db.rows(), quick_options());
  ASSERT_EQ(m.groups.size(), 2u);
  EXPECT_EQ(m.groups[0].mode, std::vector<std::string>{"fp16"});
  EXPECT_EQ(m.groups[1].mode, std::vector<std::string>{"fp32"});
  ModelOp op;
  op.type = "matmul";
  op.inputs = {{100, 100}, {100, 100}};
  op.output = {100, 100};
  auto t32 = predict_op(m, op);
  op.dtype = DType::kFP16;
  auto t16 = predict_op(m, op);
  ASSERT_TRUE(t32 && t16);
  EXPECT_NEAR(t32->seconds / t16->seconds, 2.0, 0.5);
  op.dtype = DType::kBF16;  // no network for this mode
  EXPECT_FALSE(predict_op(m, op));
}

TEST(LearnedTrainer, SameSeedSameModelFile) {
  ProfileDb db = synthetic_matmul(200, {"fp32"});
  TrainerOptions o = quick_options();
  std::string a = learned_model_to_json(train_learned_model(db, {}, o));
  std::string b = learned_model_to_json(train_learned_model(db, {}, o));
  EXPECT_EQ(a, b);
  o.seed = 2;
  EXPECT_NE(a, learned_model_to_json(train_learned_model(db, {}, o)));
}

TEST(LearnedTrainer, TooFewRowsIsAnInputError) {
  ProfileDb db = synthetic_matmul(20, {"fp32"});
  EXPECT_THROW(train_op_model(db.rows(), quick_options()), InputError);
}

TEST(LearnedTrainer, TrainAndEvalCommands) {
  const char* bin = std::getenv("ORRERY_BIN");
  if (!bin) GTEST_SKIP() << "ORRERY_BIN not set (run through ctest)";
  std::string dir = testing::make_temp_dir("estimator");
  write_profile_csv(dir + "/rows.csv", synthetic_matmul(200, {"fp32"}), {"grid seed 5"});
  std::string cmd = std::string(bin) + " estimator train " + dir + "/rows.csv -o " + dir +
                    "/model.json --budget 0.2 --seed 3 -q > " + dir + "/train.txt 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << testing::read_file(dir + "/train.txt");
  EXPECT_NE(testing::read_file(dir + "/train.txt").find("| matmul |"), std::string::npos);
  LearnedModel m = read_learned_model(dir + "/model.json");
  ASSERT_EQ(m.sources.size(), 1u);
  EXPECT_EQ(m.sources[0].rows, 200u);
  EXPECT_EQ(m.sources[0].sha256.size(), 64u);
  EXPECT_EQ(m.seed, 3u);
  EXPECT_NE(std::find(m.sources[0].header.begin(), m.sources[0].header.end(), "# grid seed 5"),
            m.sources[0].header.end());
  EXPECT_NE(m.command.find("estimator train"), std::string::npos);
  cmd = std::string(bin) + " estimator eval " + dir + "/model.json " + dir +
        "/rows.csv --table > " + dir + "/eval.txt 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << testing::read_file(dir + "/eval.txt");
  std::string table = testing::read_file(dir + "/eval.txt");
  EXPECT_NE(table.find("| op | principal component | best model | error | no-PC error |"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("| 20 |"), std::string::npos) << table;  // the 10% held out
  cmd = std::string(bin) + " estimator train " + dir + "/rows.csv -o " + dir +
        "/m2.json --ops relu > " + dir + "/bad.txt 2>&1";
  EXPECT_EQ(WEXITSTATUS(std::system(cmd.c_str())), 2);
  EXPECT_NE(testing::read_file(dir + "/bad.txt").find("relu"), std::string::npos);
}

}  // namespace
}  // namespace orrery
