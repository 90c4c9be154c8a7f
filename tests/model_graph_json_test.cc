// The orrery-model JSON format (workloads/model_graph_json.h, docs/workloads.md): round trips,
// defaults, FLOP filling from workloads/op_counts.h, and strict errors.
#include "workloads/model_graph_json.h"

#include <gtest/gtest.h>

#include <sstream>

#include "common/errors.h"
#include "tests/test_util.h"
#include "workloads/model_graph_check.h"
#include "workloads/workload_summary.h"
#include "workloads/zoo/zoo.h"

namespace orrery {
namespace {

std::string error_of(const std::string& text) {
  try {
    parse_model_graph_json(text, "m.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no InputError)";
}

std::string with_ops(const std::string& ops) {
  return R"({"format": "orrery-model", "version": 1, "name": "t", "batch": 4, "ops": [)" + ops +
         "]}";
}

TEST(ModelGraphJson, ZooModelRoundTripsExactly) {
  YAML::Node keys = YAML::Load("{batch: 2, image: 64}");
  ModelGraph g = make_zoo_model("resnet50", YamlMap(keys, "t"));
  std::ostringstream out;
  write_model_graph_json(g, out);
  ModelGraph back = parse_model_graph_json(out.str(), "rt.json");
  EXPECT_EQ(back.name, g.name);
  EXPECT_EQ(back.batch, 2);
  EXPECT_EQ(back.hyper, g.hyper);
  ASSERT_EQ(back.ops.size(), g.ops.size());
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const ModelOp& a = g.ops[i];
    const ModelOp& b = back.ops[i];
    ASSERT_EQ(a.name, b.name);
    EXPECT_EQ(a.type, b.type);
    EXPECT_EQ(a.phase, b.phase);
    EXPECT_EQ(a.layer, b.layer);
    EXPECT_EQ(a.dtype, b.dtype);
    EXPECT_EQ(a.inputs, b.inputs);
    EXPECT_EQ(a.output, b.output);
    EXPECT_EQ(a.attrs, b.attrs);
    EXPECT_EQ(a.flops, b.flops);  // exact: JSON numbers round-trip doubles
    EXPECT_EQ(a.bytes, b.bytes);
    EXPECT_EQ(a.params, b.params);
    EXPECT_EQ(a.grads, b.grads);
    EXPECT_EQ(a.sparse_grad, b.sparse_grad);
    EXPECT_EQ(a.deps, b.deps);
  }
  // Writing again gives the same text.
  std::ostringstream again;
  write_model_graph_json(back, again);
  EXPECT_EQ(again.str(), out.str());
}

TEST(ModelGraphJson, DefaultsAndCountsFilledFromShapes) {
  // matmul [4,8] x [8,16]: 2 x 4 x 16 x 8 = 1024 FLOPs; fp32 bytes (32 + 128 + 64) x 4 = 896
  // (workloads/op_counts.cc: every input read once, the output written once).
  ModelGraph g = parse_model_graph_json(
      with_ops(R"({"name": "fc", "type": "matmul", "inputs": [[4, 8], [8, 16]], "output": [4, 16],
                   "params": 128},
                  {"name": "fc_grad", "type": "matmul", "phase": "backward", "inputs": [[16, 4], [4, 8]],
                   "output": [16, 8], "grads": 128, "deps": ["fc"], "dtype": "fp16"},
                  {"name": "given", "type": "relu", "flops": 5, "bytes": 7, "deps": ["fc"]})"),
      "m.json");
  ASSERT_EQ(g.ops.size(), 3u);
  EXPECT_EQ(g.ops[0].phase, Phase::kForward);
  EXPECT_EQ(g.ops[0].dtype, DType::kFP32);
  EXPECT_DOUBLE_EQ(g.ops[0].flops, 1024);
  EXPECT_DOUBLE_EQ(g.ops[0].bytes, 896);
  EXPECT_DOUBLE_EQ(g.ops[1].bytes, (64 + 32 + 128) * 2.0);  // fp16
  EXPECT_EQ(g.ops[1].deps, (std::vector<int>{0}));
  EXPECT_DOUBLE_EQ(g.ops[2].flops, 5);  // measured values are kept
  EXPECT_DOUBLE_EQ(g.ops[2].bytes, 7);
  EXPECT_DOUBLE_EQ(g.total_params(), 128);
  EXPECT_DOUBLE_EQ(g.total_grad_bytes(), 128 * 4);
}

TEST(ModelGraphJson, DependenciesMayPointForward) {
  ModelGraph g = parse_model_graph_json(
      with_ops(R"({"name": "b", "type": "relu", "inputs": [[2]], "deps": ["a"]},
                  {"name": "a", "type": "relu", "inputs": [[2]]})"),
      "m.json");
  EXPECT_EQ(g.ops[0].deps, (std::vector<int>{1}));
}

TEST(ModelGraphJson, StrictErrorsNameFileItemAndExpectation) {
  const std::pair<std::string, std::string> cases[] = {
      {with_ops(R"({"name": "a", "type": "relu", "inputs": [[2]], "colour": 1})"),
       R"(m.json: ops[0] "a": unknown key "colour")"},
      {with_ops(R"({"name": "a", "type": "conv3d"})"),
       R"(m.json: ops[0] "a": unknown op type "conv3d" (did you mean "conv2d"?) (expected one of: )"},
      {with_ops(R"({"name": "a", "type": "relu", "inputs": [[2]], "phase": "fwd"})"),
       R"(unknown phase "fwd" (expected forward, backward or optimizer))"},
      {with_ops(R"({"name": "a", "type": "relu", "inputs": [[2]], "dtype": "fp64"})"),
       R"(unknown dtype "fp64")"},
      {with_ops(R"({"name": "a", "type": "relu", "inputs": [[2]], "deps": ["z"]})"),
       R"(m.json: ops[0] "a": unknown dependency "z")"},
      // A number past the range of a double is the file's error, not an internal one.
      {with_ops(R"({"name": "a", "type": "relu", "inputs": [[1e400]]})"),
       R"(m.json: invalid JSON: [json.exception.out_of_range.406] number overflow)"},
      {with_ops(
           R"({"name": "a", "type": "relu", "inputs": [[2]]}, {"name": "a", "type": "relu", "inputs": [[2]]})"),
       R"(ops[1] "a": duplicate op name)"},
      {with_ops(R"({"name": "a", "type": "relu", "inputs": [[2]], "deps": ["b"]},
                   {"name": "b", "type": "relu", "inputs": [[2]], "deps": ["a"]})"),
       "m.json: dependency cycle: a -> b -> a"},
      {with_ops(R"({"name": "a", "type": "relu", "inputs": [[2]], "deps": ["c"]},
                   {"name": "b", "type": "relu", "inputs": [[2]], "deps": ["a"]},
                   {"name": "c", "type": "relu", "inputs": [[2]], "deps": ["b"]})"),
       "m.json: dependency cycle: a -> b -> c -> a"},  // "x -> y": y depends on x
      {with_ops(R"({"name": "a", "type": "relu", "inputs": [[2, -1]]})"),
       "inputs[0] dimensions must be integers >= 0, got number -1"},
      {with_ops(R"({"name": "a", "type": "relu", "inputs": [[2]], "flops": -3})"),
       R"("flops" must be a number >= 0)"},
      {with_ops(
           R"({"name": "mm", "type": "matmul", "inputs": [[4, 8], [9, 16]], "output": [4, 16]})"),
       R"(m.json: op "mm" (matmul): shapes a [4,8], b [9,16])"},
      {with_ops(R"({"name": "a", "type": "relu", "inputs": [[2]], "name": "b"})"),
       R"(duplicate key "name")"},
      {R"({"format": "orrery-graph", "version": 1, "name": "t", "ops": []})",
       R"("format" is "orrery-graph", expected "orrery-model")"},
      {R"({"format": "orrery-model", "version": 2, "name": "t", "ops": []})",
       "unsupported \"version\" number 2"},
      {R"({"format": "orrery-model", "version": 1, "name": "t", "batch": 0, "ops": []})",
       "\"batch\" must be an integer >= 1"},
      {"{\"format\": \"orrery-model\",\n \"version\": 1,, }",
       "m.json: line 2, column 15: invalid JSON"},
  };
  for (const auto& [text, expect] : cases) {
    std::string msg = error_of(text);
    EXPECT_NE(msg.find(expect), std::string::npos) << "expected: " << expect << "\n got: " << msg;
  }
}

TEST(ModelGraphJson, FilesAndDetection) {
  std::string dir = testing::make_temp_dir("model_json");
  YAML::Node keys = YAML::Load("{batch: 4, seq_len: 3, vocab: 100, embed: 8, hidden: 8}");
  ModelGraph g = make_zoo_model("lstm_lm", YamlMap(keys, "t"));
  write_model_graph_json(g, dir + "/lm.json");
  ModelGraph back = load_model_graph_json(dir + "/lm.json");
  EXPECT_EQ(back.ops.size(), g.ops.size());
  EXPECT_DOUBLE_EQ(back.total_params(), g.total_params());
  EXPECT_TRUE(looks_like_model_graph_json(testing::read_file(dir + "/lm.json")));
  EXPECT_FALSE(looks_like_model_graph_json(R"({"format": "orrery-graph"})"));
  EXPECT_THROW(load_model_graph_json(dir + "/missing.json"), InputError);
  EXPECT_THROW(write_model_graph_json(g, dir + "/no/such/dir/x.json"), InputError);
}

TEST(ModelGraphJson, SummaryCountsOpsFlopsAndLayers) {
  // The MLP of the round trip: 2 matmuls forward, 3 backward (no dx for the first layer).
  ModelGraph g = parse_model_graph_json(
      with_ops(R"({"name": "fc1", "type": "matmul", "layer": "fc1", "inputs": [[4, 8], [8, 16]],
                   "output": [4, 16], "params": 128},
                  {"name": "fc2", "type": "matmul", "layer": "fc2", "inputs": [[4, 16], [16, 2]],
                   "output": [4, 2], "params": 32, "deps": ["fc1"]},
                  {"name": "up", "type": "sgd_update", "phase": "optimizer", "layer": "fc1",
                   "inputs": [[16, 8]], "deps": ["fc2"]})"),
      "m.json");
  ModelGraphSummary s = summarize_model_graph(g);
  EXPECT_EQ(s.ops[0], 2);
  EXPECT_EQ(s.ops[2], 1);
  EXPECT_DOUBLE_EQ(s.flops[0], 1024 + 2 * 4 * 2 * 16);
  EXPECT_DOUBLE_EQ(s.flops[2], 2 * 128);  // sgd: 2 FLOPs per parameter
  ASSERT_FALSE(s.layers.empty());
  EXPECT_EQ(s.layers[0].layer, "fc1");  // largest by parameters
  EXPECT_EQ(s.types[0].type, "matmul");
  std::ostringstream text, dot;
  print_model_graph_summary(g, text, 5);
  EXPECT_NE(text.str().find("Ops        3: 2 forward, 0 backward, 1 optimizer"), std::string::npos)
      << text.str();
  write_model_graph_dot(g, dot);
  EXPECT_NE(dot.str().find("n0 -> n1;"), std::string::npos);
  EXPECT_NE(dot.str().find("n1 -> n2;"), std::string::npos);
}

}  // namespace
}  // namespace orrery
