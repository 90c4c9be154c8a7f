// Learned-estimator model files: a file read back is the same model (bit-identical weights,
// same estimates, same text when written again), and broken files are errors naming the file
// and the item.
#include <gtest/gtest.h>

#include <cmath>

#include "common/errors.h"
#include "models/learned/model_file.h"
#include "models/learned/rng.h"
#include "models/learned/trainer.h"
#include "tests/test_util.h"

namespace orrery {
namespace {

// relu rows [r, c] timed 2 us + r*c / 1 G elements/s, and conv2d rows with two strides.
ProfileDb synthetic_db() {
  ProfileDb db;
  Rng rng(9);
  for (int i = 0; i < 150; ++i) {
    int64_t r = 1 + static_cast<int64_t>(rng.below(512)),
            c = 1 + static_cast<int64_t>(rng.below(512));
    ProfileRow row;
    row.op = "relu";
    row.dtype = "fp32";
    row.device = "T4";
    row.inputs = std::to_string(r) + "x" + std::to_string(c);
    row.output = row.inputs;
    row.time_s = 2e-6 + r * c * 1e-9;
    db.add(row);
  }
  for (int i = 0; i < 160; ++i) {
    int64_t n = 1 + static_cast<int64_t>(rng.below(16)),
            ch = 1 + static_cast<int64_t>(rng.below(64));
    int64_t hw = 8 + static_cast<int64_t>(rng.below(24)), s = 1 + (i % 2);
    int64_t p = (hw + 2 - 3) / s + 1;
    ProfileRow row;
    row.op = "conv2d";
    row.dtype = "fp32";
    row.device = "T4";
    row.inputs = std::to_string(n) + "x" + std::to_string(ch) + "x" + std::to_string(hw) + "x" +
                 std::to_string(hw) + ";16x" + std::to_string(ch) + "x3x3";
    row.output = std::to_string(n) + "x16x" + std::to_string(p) + "x" + std::to_string(p);
    row.attrs = "pad_h=1;pad_w=1;stride_h=" + std::to_string(s) + ";stride_w=" + std::to_string(s);
    row.time_s = 5e-6 + 2e-11 * n * ch * p * p * 16 * 9;
    db.add(row);
  }
  return db;
}

LearnedModel tiny_model() {
  TrainerOptions o;
  o.budget_s = 0.1;
  o.defaults.max_epochs = 30;
  o.defaults.patience = 10;
  o.max_layers = 4;
  o.max_neurons = 6;
  o.fine_tune.resize(1);
  o.fine_tune[0].max_epochs = 30;
  o.min_group_rows = 20;
  LearnedModel m = train_learned_model(synthetic_db(), {}, o);
  m.command = "orrery estimator train test";
  m.sources.push_back({"db.csv", std::string(64, 'a'), 310, {"# random grid: seed=1"}});
  return m;
}

TEST(LearnedModelFile, RoundTripIsExact) {
  LearnedModel m = tiny_model();
  ASSERT_EQ(m.ops.size(), 2u);
  std::string dir = testing::make_temp_dir("learned_file");
  write_learned_model(dir + "/m.json", m);
  LearnedModel back = read_learned_model(dir + "/m.json");
  EXPECT_EQ(learned_model_to_json(back), learned_model_to_json(m));
  EXPECT_EQ(back.sources[0].header, m.sources[0].header);
  ASSERT_EQ(back.ops.size(), m.ops.size());
  for (size_t i = 0; i < m.ops.size(); ++i) {
    const OpModel &a = m.ops[i], &b = back.ops[i];
    EXPECT_EQ(a.pc, b.pc);
    ASSERT_EQ(a.pc_search.size(), b.pc_search.size());
    for (size_t k = 0; k < a.pc_search.size(); ++k)
      EXPECT_EQ(a.pc_search[k].candidate, b.pc_search[k].candidate);
    ASSERT_EQ(a.groups.size(), b.groups.size());
    for (size_t g = 0; g < a.groups.size(); ++g) {
      EXPECT_EQ(a.groups[g].model.net.params(), b.groups[g].model.net.params());
      EXPECT_EQ(a.groups[g].no_pc.net.params(), b.groups[g].no_pc.net.params());
      EXPECT_EQ(a.groups[g].mode, b.groups[g].mode);
    }
  }
  // Same estimates for every row.
  ProfileDb db = synthetic_db();
  for (const auto& r : db.rows()) {
    ModelOp op = op_from_row(r);
    const OpModel* ma = m.find(r.op, "t4");
    const OpModel* mb = back.find(r.op, "T4");
    ASSERT_TRUE(ma && mb);
    auto pa = predict_op(*ma, op), pb = predict_op(*mb, op);
    ASSERT_EQ(pa.has_value(), pb.has_value());
    if (pa) {
      EXPECT_EQ(pa->seconds, pb->seconds);
    }
  }
}

TEST(LearnedModelFile, ConvolutionStridesAreModes) {
  LearnedModel m = tiny_model();
  const OpModel* conv = m.find("conv2d", "T4");
  ASSERT_TRUE(conv);
  EXPECT_EQ(conv->groups.size(), 2u);  // stride 1 and stride 2 (pads constant)
  for (size_t i = 0; i < conv->schema.params.size(); ++i) {
    if (conv->schema.params[i].source == ParamSource::kAttr) {
      EXPECT_EQ(conv->params[i].kind, ParamKind::kMode) << conv->schema.params[i].name;
    }
  }
}

void expect_error(const std::string& text, const std::string& needle) {
  try {
    learned_model_from_json(text, "bad.json");
    ADD_FAILURE() << "no error for " << needle;
  } catch (const InputError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("bad.json"), std::string::npos) << what;
    EXPECT_NE(what.find(needle), std::string::npos) << what;
  }
}

TEST(LearnedModelFile, BrokenFilesNameTheFileAndItem) {
  EXPECT_THROW(read_learned_model("/nonexistent/model.json"), InputError);
  expect_error("{", "not JSON");
  expect_error("{\"format\": \"orrery-profile\"}", "format");
  std::string good = learned_model_to_json(tiny_model());
  std::string v2 = good;
  v2.replace(v2.find("\"format_version\": 1"), 19, "\"format_version\": 9");
  expect_error(v2, "format_version");
  std::string weights = good;
  size_t w = weights.find("\"weights_f64le_base64\": \"") + 25;
  weights.erase(w, 12);  // 12 base64 characters: 9 bytes fewer
  expect_error(weights, "ops[0]");
  std::string kind = good;
  kind.replace(kind.find("\"kind\": \"mode\""), 14, "\"kind\": \"cubic\"");
  expect_error(kind, "kind");
  // A damaged shape must be refused before a net of that shape is allocated.
  std::string huge = good;
  // The net's own shape, next to its weights (not an architecture-search record).
  const size_t n = huge.rfind("\"neurons\": ", huge.find("\"weights_f64le_base64\""));
  ASSERT_NE(n, std::string::npos);
  huge.replace(n, huge.find_first_of(",\n}", n) - n, "\"neurons\": 2000000000");
  expect_error(huge, "2000000000 neurons needs");
  std::string wraps = good;
  wraps.replace(n, wraps.find_first_of(",\n}", n) - n, "\"neurons\": 4294967297");
  expect_error(wraps, "neurons: 4294967297 is out of range");
  // A list where an object belongs, anywhere: named, not an internal error.
  std::string list = good;
  const size_t s = list.find("\"pc_search\": ");
  ASSERT_NE(s, std::string::npos);
  list.insert(s + 13, "7, \"was\": ");
  expect_error(list, "bad.json: ");
}

}  // namespace
}  // namespace orrery
