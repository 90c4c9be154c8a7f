// Fusion rules on op graphs (workloads/kernel_fusion.h), on small graphs built by hand: which
// pairs merge, the bytes they no longer move, and the deps of what is left.
#include "workloads/kernel_fusion.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "workloads/op_counts.h"

namespace orrery {
namespace {

// An op over a [8, 1024] FP32 tensor (32 KiB) with its counts filled in.
ModelOp op(const std::string& name, const std::string& type, std::vector<int> deps,
           Phase phase = Phase::kForward) {
  ModelOp o;
  o.name = name;
  o.type = type;
  o.phase = phase;
  o.layer = name;
  const Shape x = {8, 1024};
  if (type == "add" || type == "mul")
    o.inputs = {x, x};
  else if (type == "matmul")
    o.inputs = {x, {1024, 1024}};
  else if (type == "layernorm")
    o.inputs = {x, {1024}, {1024}};
  else if (type == "batchnorm")
    o.inputs = {x, {1024}, {1024}};
  else
    o.inputs = {x};
  o.output = x;
  const OpCounts c = count_op(o);
  o.flops = c.flops;
  o.bytes = c.bytes;
  o.deps = std::move(deps);
  return o;
}

constexpr double kTensor = 8 * 1024 * 4.0;

ModelGraph graph(std::vector<ModelOp> ops) {
  ModelGraph g;
  g.name = "g";
  g.ops = std::move(ops);
  return g;
}

TEST(KernelFusion, BatchNormAddReluIsOneKernelAndSavesTheIntermediates) {
  // conv -> bn -> add(residual) -> relu -> matmul; the residual comes from op 0.
  const ModelGraph g =
      graph({op("in", "matmul", {}), op("bn", "batchnorm", {0}), op("res", "add", {1, 0}),
             op("relu", "relu", {2}), op("next", "matmul", {3})});
  FusionRules r;
  r.bn_activation = true;
  FusionReport rep;
  const ModelGraph f = fuse_kernels(g, r, &rep);
  ASSERT_EQ(f.ops.size(), 3u);
  EXPECT_EQ(rep.fused, 2);
  const ModelOp& fused = f.ops[1];
  EXPECT_EQ(fused.name, "bn+add+relu");
  EXPECT_EQ(fused.type, "batchnorm");
  EXPECT_EQ(fused.layer, "bn");
  EXPECT_EQ(fused.deps, (std::vector<int>{0}));
  // bn's output and add's output are written and read once less each.
  EXPECT_DOUBLE_EQ(rep.bytes_saved, 4 * kTensor);
  EXPECT_DOUBLE_EQ(fused.bytes, g.ops[1].bytes + g.ops[2].bytes + g.ops[3].bytes - 4 * kTensor);
  EXPECT_DOUBLE_EQ(fused.flops, g.ops[1].flops + g.ops[2].flops + g.ops[3].flops);
  EXPECT_EQ(f.ops[2].deps, (std::vector<int>{1}));
  // Off, nothing changes.
  EXPECT_EQ(fuse_kernels(g, FusionRules{}).ops.size(), g.ops.size());
}

TEST(KernelFusion, AProducerWithTwoConsumersOrAnotherPhaseStaysAKernel) {
  FusionRules r;
  r.bn_activation = true;
  r.elementwise = true;
  // bn feeds relu and a second reader: its output must reach memory.
  const ModelGraph two =
      graph({op("bn", "batchnorm", {}), op("relu", "relu", {0}), op("other", "matmul", {0})});
  EXPECT_EQ(fuse_kernels(two, r).ops.size(), 3u);
  const ModelGraph phases =
      graph({op("relu", "relu", {}), op("g", "relu_bwd", {0}, Phase::kBackward)});
  EXPECT_EQ(fuse_kernels(phases, r).ops.size(), 2u);
  // GEMMs are library calls: never merged.
  const ModelGraph gemm = graph({op("a", "matmul", {}), op("gelu", "gelu", {0})});
  EXPECT_EQ(fuse_kernels(gemm, r).ops.size(), 2u);
}

TEST(KernelFusion, TransformerRulesKeepTheRowOpsType) {
  // dense -> dropout -> add(residual) -> layernorm; scores: mul (scale) -> softmax -> dropout.
  const ModelGraph g =
      graph({op("dense", "matmul", {}), op("drop", "dropout", {0}), op("res", "add", {1, 0}),
             op("ln", "layernorm", {2}), op("scale", "mul", {3, 3}), op("sm", "softmax", {4}),
             op("pdrop", "dropout", {5}), op("ctx", "matmul", {6})});
  FusionRules r;
  r.dropout_add_norm = true;
  r.softmax_mask = true;
  const ModelGraph f = fuse_kernels(g, r);
  ASSERT_EQ(f.ops.size(), 4u);
  EXPECT_EQ(f.ops[1].name, "drop+add+layernorm");
  EXPECT_EQ(f.ops[1].type, "layernorm");
  EXPECT_EQ(f.ops[2].name, "scale+softmax+dropout");
  EXPECT_EQ(f.ops[2].type, "softmax");
  EXPECT_EQ(f.ops[2].deps, (std::vector<int>{1}));
  EXPECT_EQ(f.ops[3].deps, (std::vector<int>{2}));
  // Backward: the dropout's gradient into the softmax's.
  const ModelGraph b = graph({op("gd", "dropout_bwd", {}, Phase::kBackward),
                              op("gs", "softmax_bwd", {0}, Phase::kBackward)});
  EXPECT_EQ(fuse_kernels(b, r).ops.size(), 1u);
}

TEST(KernelFusion, CastsJoinElementwiseKernelsButNotGemms) {
  FusionRules r;
  r.casts = true;
  const ModelGraph g = graph({op("c1", "cast", {}), op("gelu", "gelu", {0}), op("c2", "cast", {1}),
                              op("mm", "matmul", {2})});
  const ModelGraph f = fuse_kernels(g, r);
  ASSERT_EQ(f.ops.size(), 2u);
  EXPECT_EQ(f.ops[0].name, "c1+gelu+cast");
  EXPECT_EQ(f.ops[1].type, "matmul");
  EXPECT_EQ(f.ops[1].deps, (std::vector<int>{0}));
}

TEST(KernelFusion, ElementwiseRuleMergesAnyPointwiseChain) {
  FusionRules r;
  r.elementwise = true;
  const ModelGraph g =
      graph({op("a", "matmul", {}), op("b", "gelu", {0}), op("c", "mul", {1, 1}),
             op("d", "tanh", {2}), op("e", "layernorm", {3}), op("f", "matmul", {4})});
  FusionReport rep;
  const ModelGraph f = fuse_kernels(g, r, &rep);
  ASSERT_EQ(f.ops.size(), 3u);
  EXPECT_EQ(rep.fused, 3);
  EXPECT_EQ(f.ops[1].type, "layernorm");
  EXPECT_EQ(f.ops[1].name, "b+mul+tanh+layernorm");
  EXPECT_DOUBLE_EQ(rep.bytes_saved, 6 * kTensor);
}

}  // namespace
}  // namespace orrery
