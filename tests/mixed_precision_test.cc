// Mixed precision (Campo): AMP list rules on a small graph, cast insertion
// where precision changes, and the cost-aware policy.
#include "models/mixed_precision.h"

#include <gtest/gtest.h>

#include "common/errors.h"
#include "test_util.h"
#include "workloads/op_counts.h"

namespace orrery {
namespace {

using testing::model_op;
ModelOp make(const std::string& name, const std::string& type, std::vector<Shape> inputs,
             Shape output, std::vector<int> deps) {
  return model_op(name, type, std::move(inputs), std::move(output), std::move(deps));
}

//  fc1 (allow) -> bias (infer) -> relu (clear) -> fc2 (allow) -> softmax (deny)
//      -> scale (infer, below a deny op) -> drop (clear, fed by an FP32 op)
ModelGraph mlp() {
  ModelGraph g;
  g.name = "mlp";
  g.ops.push_back(make("fc1", "matmul", {{64, 128}, {128, 256}}, {64, 256}, {}));
  g.ops[0].params = 128 * 256;
  g.ops.push_back(make("bias", "bias_add", {{64, 256}, {256}}, {64, 256}, {0}));
  g.ops.push_back(make("relu", "relu", {{64, 256}}, {64, 256}, {1}));
  g.ops.push_back(make("fc2", "matmul", {{64, 256}, {256, 128}}, {64, 128}, {2}));
  g.ops[3].params = 256 * 128;
  g.ops.push_back(make("softmax", "softmax", {{64, 128}}, {64, 128}, {3}));
  g.ops.push_back(make("scale", "mul", {{64, 128}, {64, 128}}, {64, 128}, {4}));
  g.ops.push_back(make("drop", "dropout", {{64, 128}}, {64, 128}, {5}));
  fill_op_counts(g);
  return g;
}

const ModelOp& find(const ModelGraph& g, const std::string& name) {
  return testing::model_op_named(g, name);
}

int index_of(const ModelGraph& g, const std::string& name) {
  for (size_t i = 0; i < g.ops.size(); ++i)
    if (g.ops[i].name == name) return static_cast<int>(i);
  return -1;
}

MixedPrecisionOptions amp() {
  MixedPrecisionOptions o;
  o.policy = PrecisionPolicy::kAMP;
  return o;
}

// Batch norm runs in FP16 under autocast; its backward writes dx [64,256,14,14] and the
// gradients of its 256 scales. The FP32 optimizer update reads the scales' gradient, so the cast
// in front of it converts 256 values, not the 3.2 M of dx.
TEST(MixedPrecision, CastBeforeAnUpdateConvertsTheWeightGradient) {
  ModelGraph g;
  g.name = "bn";
  g.ops.push_back(make("bn", "batchnorm", {{64, 256, 14, 14}}, {64, 256, 14, 14}, {}));
  g.ops[0].params = 256;
  g.ops.push_back(make("bn_bwd", "batchnorm_bwd", {{64, 256, 14, 14}, {64, 256, 14, 14}},
                       {64, 256, 14, 14}, {0}));
  g.ops[1].phase = Phase::kBackward;
  g.ops.push_back(make("bn.update", "sgd_update", {{256}}, {256}, {1}));
  g.ops[2].phase = Phase::kOptimizer;
  fill_op_counts(g);
  MixedPrecisionReport rep;
  ModelGraph out = apply_mixed_precision(g, amp(), &rep);
  EXPECT_EQ(find(out, "bn_bwd").dtype, DType::kFP16);
  EXPECT_EQ(find(out, "bn.update").dtype, DType::kFP32);
  const ModelOp& cast = find(out, "cast:bn_bwd->fp32");
  ASSERT_EQ(cast.inputs.size(), 1u);
  EXPECT_EQ(numel(cast.inputs[0]), 256);
}

TEST(MixedPrecision, Fp32PolicyChangesNothing) {
  ModelGraph g = mlp();
  MixedPrecisionReport rep;
  ModelGraph out = apply_mixed_precision(g, MixedPrecisionOptions{}, &rep);
  EXPECT_EQ(out.ops.size(), g.ops.size());
  EXPECT_EQ(rep.casts, 0);
  for (const auto& op : out.ops) EXPECT_EQ(op.dtype, DType::kFP32);
}

TEST(MixedPrecision, AmpListRules) {
  MixedPrecisionReport rep;
  ModelGraph out = apply_mixed_precision(mlp(), amp(), &rep);
  EXPECT_EQ(find(out, "fc1").dtype, DType::kFP16);      // allowlist
  EXPECT_EQ(find(out, "bias").dtype, DType::kFP16);     // inferlist, no deny upstream
  EXPECT_EQ(find(out, "relu").dtype, DType::kFP16);     // clearlist between two FP16 ops
  EXPECT_EQ(find(out, "fc2").dtype, DType::kFP16);      // allowlist
  EXPECT_EQ(find(out, "softmax").dtype, DType::kFP32);  // denylist
  EXPECT_EQ(find(out, "scale").dtype, DType::kFP32);    // inferlist below a deny op
  EXPECT_EQ(find(out, "drop").dtype, DType::kFP32);     // clearlist next to FP32 ops
  EXPECT_EQ(rep.low_ops, 4);
  // Counts follow the dtype: fc1's bytes halve, its FLOPs do not change.
  EXPECT_DOUBLE_EQ(find(out, "fc1").bytes, (8192 + 32768 + 16384) * 2.0);
  EXPECT_DOUBLE_EQ(find(out, "fc1").flops, 2.0 * 64 * 256 * 128);
}

TEST(MixedPrecision, CastsWherePrecisionChanges) {
  MixedPrecisionReport rep;
  ModelGraph out = apply_mixed_precision(mlp(), amp(), &rep);
  // fc1's input batch and the FP32 master weights of fc1 and fc2 are cast to FP16; fc2's
  // FP16 output is cast back to FP32 for softmax. Nothing else changes precision.
  ASSERT_EQ(rep.casts, 4);
  ASSERT_EQ(out.ops.size(), 11u);
  EXPECT_DOUBLE_EQ(rep.cast_elements, 8192 + 32768 + 32768 + 8192);

  const ModelOp& in = find(out, "cast:fc1:input");
  EXPECT_EQ(in.type, "cast");
  EXPECT_EQ(in.dtype, DType::kFP16);
  EXPECT_EQ(in.attrs.at("src_bytes"), 4);
  EXPECT_DOUBLE_EQ(in.bytes, 8192 * 6.0);  // read 4 bytes, write 2, per element
  EXPECT_TRUE(in.deps.empty());

  const ModelOp& w2 = find(out, "cast:fc2:weights");
  EXPECT_DOUBLE_EQ(w2.bytes, 32768 * 6.0);
  EXPECT_EQ(w2.deps, std::vector<int>{index_of(out, "relu")});  // issued just before fc2

  const ModelOp& back = find(out, "cast:fc2->fp32");
  EXPECT_EQ(back.dtype, DType::kFP32);
  EXPECT_EQ(back.attrs.at("src_bytes"), 2);
  EXPECT_DOUBLE_EQ(back.bytes, 8192 * 6.0);
  EXPECT_EQ(back.deps, std::vector<int>{index_of(out, "fc2")});

  // Deps are rewired through the casts.
  EXPECT_EQ(find(out, "softmax").deps, std::vector<int>{index_of(out, "cast:fc2->fp32")});
  const auto& fc1_deps = find(out, "fc1").deps;
  EXPECT_EQ(fc1_deps,
            (std::vector<int>{index_of(out, "cast:fc1:input"), index_of(out, "cast:fc1:weights")}));
  EXPECT_EQ(find(out, "relu").deps, std::vector<int>{index_of(out, "bias")});
  // Every dep points at an earlier op: the rewritten graph keeps a valid order.
  for (size_t i = 0; i < out.ops.size(); ++i)
    for (int d : out.ops[i].deps) EXPECT_LT(d, static_cast<int>(i)) << out.ops[i].name;
}

TEST(MixedPrecision, ClearOpFollowsItsNeighbours) {
  // fc (allow) -> relu (clear) -> softmax (deny): relu's consumer is FP32, so relu stays FP32
  // and the cast sits between fc and relu.
  ModelGraph g;
  g.ops.push_back(make("fc", "matmul", {{64, 64}, {64, 64}}, {64, 64}, {}));
  g.ops.push_back(make("relu", "relu", {{64, 64}}, {64, 64}, {0}));
  g.ops.push_back(make("sm", "softmax", {{64, 64}}, {64, 64}, {1}));
  MixedPrecisionReport rep;
  ModelGraph out = apply_mixed_precision(g, amp(), &rep);
  EXPECT_EQ(find(out, "fc").dtype, DType::kFP16);
  EXPECT_EQ(find(out, "relu").dtype, DType::kFP32);
  EXPECT_EQ(find(out, "relu").deps, std::vector<int>{index_of(out, "cast:fc->fp32")});
  // Between two FP16 GEMMs the same relu runs in FP16.
  g.ops[2] = make("fc2", "matmul", {{64, 64}, {64, 64}}, {64, 64}, {1});
  out = apply_mixed_precision(g, amp(), &rep);
  EXPECT_EQ(find(out, "relu").dtype, DType::kFP16);
  EXPECT_EQ(rep.casts, 1);  // only fc's graph input
}

TEST(MixedPrecision, UserListsAndBf16) {
  MixedPrecisionOptions o = amp();
  o.low = DType::kBF16;
  o.lists.deny.insert("mul");
  o.lists.infer.erase("mul");
  ModelGraph out = apply_mixed_precision(mlp(), o);
  EXPECT_EQ(find(out, "fc1").dtype, DType::kBF16);
  YAML::Node n = load_yaml_text(
      "precision: {policy: amp, low: bf16, deny: [softmax, mul]}\nplain: cost-aware\n", "s.yaml");
  MixedPrecisionOptions parsed = parse_precision_options(n["precision"], "s.yaml");
  EXPECT_EQ(parsed.policy, PrecisionPolicy::kAMP);
  EXPECT_EQ(parsed.low, DType::kBF16);
  EXPECT_EQ(parsed.lists.deny, (std::set<std::string>{"softmax", "mul"}));
  EXPECT_EQ(parsed.lists.allow, AmpLists::defaults().allow);
  EXPECT_EQ(parse_precision_options(n["plain"], "s.yaml").policy, PrecisionPolicy::kCostAware);
  YAML::Node bad = load_yaml_text("precision: {policy: amp, allow: [matmult]}\n", "s.yaml");
  EXPECT_THROW(parse_precision_options(bad["precision"], "s.yaml"), InputError);
  YAML::Node low = load_yaml_text("precision: {policy: amp, low: int8}\n", "s.yaml");
  EXPECT_THROW(parse_precision_options(low["precision"], "s.yaml"), InputError);
}

TEST(MixedPrecision, CostAwareKeepsFp16OnlyWhereItPays) {
  DeviceSpec v100 = device_spec("V100-SXM2");
  CostModel cost;
  MixedPrecisionOptions o;
  o.policy = PrecisionPolicy::kCostAware;
  o.device = &v100;
  o.cost = &cost;
  // Cast cost r * size + C_I: C_I is one op's host cost on the V100 (T1 + T4 = 18 us).
  CastCost c = default_cast_cost(v100, cost.options());
  EXPECT_DOUBLE_EQ(c.fixed_s, 18e-6);
  EXPECT_DOUBLE_EQ(c(1e6), 6e6 / (900e9 * 0.7) + 18e-6);

  // A large aligned GEMM gains ~11 ms on Tensor Cores, far more than its casts: FP16.
  ModelGraph big;
  big.ops.push_back(make("fc", "matmul", {{4096, 4096}, {4096, 4096}}, {4096, 4096}, {}));
  MixedPrecisionReport rep;
  EXPECT_EQ(apply_mixed_precision(big, o, &rep).ops.back().dtype, DType::kFP16);
  EXPECT_EQ(rep.casts, 1);
  // A tiny GEMM gains nanoseconds and would pay an 18 us cast: it stays FP32, and no casts.
  ModelGraph tiny;
  tiny.ops.push_back(make("fc", "matmul", {{8, 8}, {8, 8}}, {8, 8}, {}));
  ModelGraph t = apply_mixed_precision(tiny, o, &rep);
  EXPECT_EQ(t.ops.back().dtype, DType::kFP32);
  EXPECT_EQ(rep.casts, 0);
  // AMP casts the same tiny GEMM regardless.
  apply_mixed_precision(tiny, amp(), &rep);
  EXPECT_EQ(rep.casts, 1);

  MixedPrecisionOptions missing;
  missing.policy = PrecisionPolicy::kCostAware;
  EXPECT_THROW(apply_mixed_precision(tiny, missing), InputError);
}

TEST(MixedPrecision, CostAwareAvoidsACastForASmallMemoryBoundOp) {
  // fc (2048^3 GEMM, FP16 saves ~1.4 ms) -> relu (clear) -> fc2 (the same GEMM): relu in FP16
  // halves its 33.5 MB of traffic and, between two FP16 ops, needs no cast; in FP32 it would
  // need two. Cost-aware keeps all three in FP16 and casts only the graph input.
  DeviceSpec v100 = device_spec("V100-SXM2");
  CostModel cost;
  MixedPrecisionOptions o;
  o.policy = PrecisionPolicy::kCostAware;
  o.device = &v100;
  o.cost = &cost;
  ModelGraph g;
  g.ops.push_back(make("fc", "matmul", {{2048, 2048}, {2048, 2048}}, {2048, 2048}, {}));
  g.ops.push_back(make("relu", "relu", {{2048, 2048}}, {2048, 2048}, {0}));
  g.ops.push_back(make("fc2", "matmul", {{2048, 2048}, {2048, 2048}}, {2048, 2048}, {1}));
  MixedPrecisionReport rep;
  ModelGraph out = apply_mixed_precision(g, o, &rep);
  EXPECT_EQ(find(out, "relu").dtype, DType::kFP16);
  EXPECT_EQ(find(out, "fc2").dtype, DType::kFP16);
  EXPECT_EQ(rep.casts, 1);  // the graph input only
}

}  // namespace
}  // namespace orrery
