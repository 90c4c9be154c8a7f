// FP8 training as Transformer Engine runs it (models/mixed_precision.h, policy fp8): which ops
// run in FP8, the casts and scaling ops that come with them, and the GPUs that cannot.
#include <gtest/gtest.h>

#include "common/errors.h"
#include "models/cost_model.h"
#include "models/mixed_precision.h"
#include "platforms/device_spec.h"
#include "test_util.h"
#include "workloads/op_counts.h"

namespace orrery {
namespace {

ModelOp make(const std::string& name, const std::string& type, const std::string& layer,
             std::vector<Shape> inputs, Shape output, std::vector<int> deps) {
  return testing::model_op(name, type, std::move(inputs), std::move(output), std::move(deps),
                           layer);
}

// One linear layer and an attention product, forward and backward:
//   ln -> fc (weights) -> scores (bmm) -> softmax; fc_dgrad and fc_wgrad in fc's layer.
ModelGraph block() {
  ModelGraph g;
  g.name = "block";
  g.ops.push_back(make("ln", "layernorm", "norm", {{512, 1024}}, {512, 1024}, {}));
  g.ops.push_back(make("fc", "matmul", "fc", {{512, 1024}, {1024, 1024}}, {512, 1024}, {0}));
  g.ops[1].params = 1024 * 1024;
  g.ops.push_back(
      make("scores", "bmm", "attn", {{16, 512, 64}, {16, 64, 512}}, {16, 512, 512}, {1}));
  g.ops.push_back(make("softmax", "softmax", "attn", {{8192, 512}}, {8192, 512}, {2}));
  g.ops.push_back(make("fc_dgrad", "matmul", "fc", {{512, 1024}, {1024, 1024}}, {512, 1024}, {3}));
  g.ops.push_back(make("fc_wgrad", "matmul", "fc", {{1024, 512}, {512, 1024}}, {1024, 1024}, {3}));
  fill_op_counts(g);
  return g;
}

const ModelOp& find(const ModelGraph& g, const std::string& name) {
  return testing::model_op_named(g, name);
}

MixedPrecisionOptions fp8_on(const DeviceSpec& dev) {
  MixedPrecisionOptions o = parse_precision_options(YAML::Load("fp8"), "test");
  o.device = &dev;
  return o;
}

TEST(Fp8, LinearLayerGemmsRunInFp8WithTheirCastsAndScaling) {
  const DeviceSpec h100 = device_spec("H100-SXM5");
  MixedPrecisionReport rep;
  const ModelGraph g = apply_mixed_precision(block(), fp8_on(h100), &rep);
  // fprop, dgrad and wgrad of the linear layer: FP8; the attention product stays in bf16 (the
  // recipe's low precision), softmax and the norm in FP32 (amp's deny list).
  for (const char* gemm : {"fc", "fc_dgrad", "fc_wgrad"})
    EXPECT_EQ(find(g, gemm).dtype, DType::kFP8) << gemm;
  EXPECT_EQ(find(g, "scores").dtype, DType::kBF16);
  EXPECT_EQ(find(g, "softmax").dtype, DType::kFP32);
  EXPECT_EQ(find(g, "ln").dtype, DType::kFP32);
  EXPECT_EQ(rep.fp8_ops, 3);
  EXPECT_TRUE(rep.fp8_fallback.empty());
  // Casts into FP8: ln's FP32 output into fc, fc's weights each step; one scaling op per GEMM.
  EXPECT_EQ(find(g, "cast:ln->fp8").dtype, DType::kFP8);
  EXPECT_EQ(find(g, "cast:fc:weights").dtype, DType::kFP8);
  for (const char* gemm : {"fc", "fc_dgrad", "fc_wgrad"}) {
    const ModelOp& s = find(g, std::string("fp8_scale:") + gemm);
    EXPECT_EQ(s.type, "reduce");
    EXPECT_EQ(g.ops[s.deps.at(0)].name, gemm);
  }
  // The FP8 GEMM writes bf16: the bmm after it needs no cast.
  for (const auto& op : g.ops) EXPECT_NE(op.name, "cast:fc->bf16");
  // A cast into FP8 reads 4 bytes (FP32) and writes 1 per element.
  EXPECT_DOUBLE_EQ(find(g, "cast:fc:weights").bytes, 5.0 * 1024 * 1024);
}

TEST(Fp8, AGpuWithoutFp8TensorCoresKeepsAmpsGraphAndSaysWhy) {
  const DeviceSpec a100 = device_spec("A100-SXM4-80GB");
  MixedPrecisionReport rep;
  const ModelGraph g = apply_mixed_precision(block(), fp8_on(a100), &rep);
  EXPECT_EQ(rep.fp8_ops, 0);
  EXPECT_EQ(find(g, "fc").dtype, DType::kBF16);
  EXPECT_NE(rep.fp8_fallback.find("A100-SXM4-80GB has no FP8 Tensor Cores"), std::string::npos)
      << rep.fp8_fallback;
  MixedPrecisionOptions amp;
  amp.policy = PrecisionPolicy::kAMP;
  amp.low = DType::kBF16;
  EXPECT_EQ(apply_mixed_precision(block(), amp).ops.size(), g.ops.size());
  MixedPrecisionOptions no_device = parse_precision_options(YAML::Load("fp8"), "test");
  EXPECT_THROW(apply_mixed_precision(block(), no_device), InputError);
}

// Blackwell's block-scaled formats: the same GEMMs in FP8 (MXFP8) or FP4 (NVFP4), casts writing
// one scale byte per block, no amax-history op; refused with the reason on a Hopper GPU.
TEST(Fp8, BlockScaledPoliciesRunTheSameGemmsWithTheirScalesOnBlackwell) {
  const DeviceSpec b200 = device_spec("B200");
  const DeviceSpec h100 = device_spec("H100-SXM5");
  auto on = [](const char* policy, const DeviceSpec& dev) {
    MixedPrecisionOptions o = parse_precision_options(YAML::Load(policy), "test");
    o.device = &dev;
    return o;
  };
  MixedPrecisionReport mx, nv, hopper;
  const ModelGraph g_mx = apply_mixed_precision(block(), on("mxfp8", b200), &mx);
  const ModelGraph g_nv = apply_mixed_precision(block(), on("nvfp4", b200), &nv);
  for (const char* gemm : {"fc", "fc_dgrad", "fc_wgrad"}) {
    EXPECT_EQ(find(g_mx, gemm).dtype, DType::kFP8) << gemm;
    EXPECT_EQ(find(g_nv, gemm).dtype, DType::kFP4) << gemm;
  }
  EXPECT_EQ(find(g_nv, "scores").dtype, DType::kBF16);
  EXPECT_EQ(mx.fp8_ops, 3);
  EXPECT_EQ(nv.fp8_ops, 3);
  for (const auto& op : g_nv.ops) EXPECT_EQ(op.name.rfind("fp8_scale:", 0), std::string::npos);
  // The weights' cast reads 4 bytes and writes 1 (MXFP8) or 0.5 (NVFP4) per element, plus one
  // scale byte per 32 or 16 elements.
  const double w = 1024.0 * 1024;
  EXPECT_DOUBLE_EQ(find(g_mx, "cast:fc:weights").bytes, w * (4 + 1 + 1.0 / 32));
  EXPECT_DOUBLE_EQ(find(g_nv, "cast:fc:weights").bytes, w * (4 + 0.5 + 1.0 / 16));
  // NVFP4's GEMMs run on the FP4 Tensor Cores, MXFP8's on the FP8 ones.
  CostModel cost;
  const auto nv_fc = cost.kernel_estimate(find(g_nv, "fc"), b200);
  const auto mx_fc = cost.kernel_estimate(find(g_mx, "fc"), b200);
  EXPECT_EQ(nv_fc->mode.dtype, DType::kFP4);
  EXPECT_TRUE(nv_fc->mode.tensor_cores);
  EXPECT_EQ(mx_fc->mode.dtype, DType::kFP8);
  EXPECT_TRUE(mx_fc->mode.tensor_cores);
  const ModelGraph g_h = apply_mixed_precision(block(), on("nvfp4", h100), &hopper);
  EXPECT_EQ(find(g_h, "fc").dtype, DType::kBF16);
  EXPECT_NE(hopper.fp8_fallback.find("H100-SXM5 has no block-scaled (nvfp4) Tensor Cores"),
            std::string::npos)
      << hopper.fp8_fallback;
}

TEST(Fp8, ALargeGemmOnHopperGainsUpToTheFp8OverBf16PeakRatio) {
  // 8192^3: compute-bound at any precision; FP8's dense peak is twice BF16's on an H100, so the
  // GEMM takes between half and all of its BF16 time.
  const DeviceSpec h100 = device_spec("H100-SXM5");
  ModelOp gemm = make("g", "matmul", "g", {{8192, 8192}, {8192, 8192}}, {8192, 8192}, {});
  CostModel cost;
  auto seconds = [&](DType t) {
    ModelOp op = gemm;
    op.dtype = t;
    const OpCounts c = count_op(op);
    op.flops = c.flops;
    op.bytes = c.bytes;
    return cost.estimate(op, h100).seconds;
  };
  const double bf16 = seconds(DType::kBF16), fp8 = seconds(DType::kFP8);
  EXPECT_LT(fp8, 0.75 * bf16);
  EXPECT_GE(fp8, 0.5 * bf16 * (1 - 1e-9));
}

}  // namespace
}  // namespace orrery
