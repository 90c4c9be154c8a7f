// The analytic models (roofline with per-class efficiency, Tensor Core rule, the embedding
// lookup heuristic of the DLRM performance model) and the order in which CostModel consults its
// sources. Expected values are worked out by hand in the comments.
#include "models/cost_model.h"

#include <gtest/gtest.h>

#include <cmath>

#include "common/errors.h"
#include "models/embedding_model.h"
#include "models/pricing.h"
#include "models/roofline.h"
#include "models/tensor_cores.h"
#include "workloads/op_counts.h"

namespace orrery {
namespace {

// These tests check the roofline (`cost_model: roofline`); tests/kernel_model_test.cc checks the
// kernel models that price ops by default.
CostModelOptions roofline_model() {
  CostModelOptions o;
  o.model = AnalyticModel::kRoofline;
  return o;
}

ModelOp make(const std::string& type, std::vector<Shape> inputs, Shape output,
             DType dt = DType::kFP32) {
  ModelOp op;
  op.name = type;
  op.type = type;
  op.inputs = std::move(inputs);
  op.output = std::move(output);
  op.dtype = dt;
  return op;
}

ModelOp square_matmul(int64_t n, DType dt = DType::kFP32) {
  return make("matmul", {{n, n}, {n, n}}, {n, n}, dt);
}

TEST(Roofline, PicksTheBindingTerm) {
  // 1 TFLOP and 1 GB on 10 TFLOP/s, 1 TB/s: compute 0.1 s vs memory 1 ms -> compute-bound.
  RooflineTime c = roofline(1e12, 1e9, 10e12, 1e12, 1.0);
  EXPECT_FALSE(c.memory_bound);
  EXPECT_DOUBLE_EQ(c.seconds, 0.1);
  EXPECT_DOUBLE_EQ(c.memory_s, 1e-3);
  // 1 GFLOP and 1 GB: compute 0.1 ms vs memory 1 ms -> memory-bound.
  RooflineTime m = roofline(1e9, 1e9, 10e12, 1e12, 1.0);
  EXPECT_TRUE(m.memory_bound);
  EXPECT_DOUBLE_EQ(m.seconds, 1e-3);
  // 70% efficiency stretches both terms by 1/0.7.
  EXPECT_DOUBLE_EQ(roofline(1e9, 1e9, 10e12, 1e12, 0.7).seconds, 1e-3 / 0.7);
  EXPECT_THROW(roofline(1, 1, 0, 1, 0.7), std::invalid_argument);
}

TEST(CostModel, LargeGemmIsComputeBoundAtSeventyPercent) {
  DeviceSpec v100 = device_spec("V100-SXM2");
  CostModel cm(roofline_model());
  ModelOp op = square_matmul(4096);
  // 2 * 4096^3 FLOPs at 15.7 TFLOP/s x 0.7; its 3 x 4096^2 x 4 bytes take far less.
  OpEstimate e = cm.estimate(op, v100);
  EXPECT_EQ(e.source, EstimateSource::kAnalytic);
  EXPECT_NEAR(e.seconds, 2.0 * std::pow(4096.0, 3) / (15.7e12 * 0.7), 1e-12);
  EXPECT_NE(e.detail.find("compute-bound"), std::string::npos);
}

TEST(CostModel, ElementwiseIsMemoryBound) {
  DeviceSpec v100 = device_spec("V100-SXM2");
  CostModel cm(roofline_model());
  ModelOp relu = make("relu", {{1 << 20}}, {1 << 20});
  // 2^20 reads + 2^20 writes of 4 bytes at 900 GB/s x 0.7.
  OpEstimate e = cm.estimate(relu, v100);
  EXPECT_NEAR(e.seconds, 8.0 * (1 << 20) / (900e9 * 0.7), 1e-15);
  EXPECT_NE(e.detail.find("memory-bound"), std::string::npos);
}

TEST(CostModel, EfficiencyIsPerOpClass) {
  DeviceSpec v100 = device_spec("V100-SXM2");
  CostModelOptions o = roofline_model();
  o.efficiency[static_cast<int>(OpClass::kElementwise)] = 0.9;
  CostModel cm(o);
  ModelOp relu = make("relu", {{1 << 20}}, {1 << 20});
  EXPECT_NEAR(cm.estimate(relu, v100).seconds, 8.0 * (1 << 20) / (900e9 * 0.9), 1e-15);
  // GEMMs keep the default 0.7.
  EXPECT_NEAR(cm.estimate(square_matmul(4096), v100).seconds,
              2.0 * std::pow(4096.0, 3) / (15.7e12 * 0.7), 1e-12);
}

TEST(CostModel, UsesMeasuredCountsWhenAnImporterGaveThem) {
  DeviceSpec v100 = device_spec("V100-SXM2");
  ModelOp op = make("relu", {{10}}, {10});
  op.bytes = 630e6;  // measured
  EXPECT_NEAR(CostModel(roofline_model()).estimate(op, v100).seconds, 1e-3, 1e-15);
}

TEST(TensorCores, AlignmentRule) {
  EXPECT_EQ(tensor_core_alignment(DType::kFP16), 8);
  EXPECT_EQ(tensor_core_alignment(DType::kTF32), 4);
  EXPECT_EQ(tensor_core_alignment(DType::kINT8), 16);
  EXPECT_EQ(tensor_core_alignment(DType::kFP32), 0);
  EXPECT_TRUE(tensor_core_shapes_ok(square_matmul(64, DType::kFP16), DType::kFP16));
  // K = 60 is not a multiple of 8 (but is of 4).
  ModelOp k60 = make("matmul", {{64, 60}, {60, 64}}, {64, 64}, DType::kFP16);
  EXPECT_FALSE(tensor_core_shapes_ok(k60, DType::kFP16));
  EXPECT_TRUE(tensor_core_shapes_ok(k60, DType::kTF32));
  // Convolutions: input and output channels. C = 3 (an RGB input layer) fails.
  ModelOp rgb = make("conv2d", {{8, 3, 32, 32}, {64, 3, 3, 3}}, {8, 64, 32, 32}, DType::kFP16);
  EXPECT_FALSE(tensor_core_shapes_ok(rgb, DType::kFP16));
  ModelOp c64 = make("conv2d", {{8, 64, 32, 32}, {64, 64, 3, 3}}, {8, 64, 32, 32}, DType::kFP16);
  EXPECT_TRUE(tensor_core_shapes_ok(c64, DType::kFP16));
  EXPECT_FALSE(tensor_core_shapes_ok(make("relu", {{64}}, {64}, DType::kFP16), DType::kFP16));
}

// cuBLAS runs a GEMM off the 16-byte alignment on Tensor Cores with narrower loads, not on
// CUDA cores: the roofline prices it at the Tensor Core rate, as an aligned one.
TEST(CostModel, UnalignedShapesStillRunOnTensorCores) {
  DeviceSpec v100 = device_spec("V100-SXM2");
  CostModel cm(roofline_model());
  OpEstimate tc = cm.estimate(square_matmul(4096, DType::kFP16), v100);
  EXPECT_NEAR(tc.seconds, 2.0 * std::pow(4096.0, 3) / (125e12 * 0.7), 1e-12);
  EXPECT_NE(tc.detail.find("tensor cores"), std::string::npos);
  ModelOp odd = make("matmul", {{4096, 4092}, {4092, 4096}}, {4096, 4096}, DType::kFP16);
  OpEstimate cc = cm.estimate(odd, v100);
  EXPECT_NEAR(cc.seconds, 2.0 * 4096 * 4096 * 4092 / (125e12 * 0.7), 1e-12);
  EXPECT_NE(cc.detail.find("tensor cores"), std::string::npos);
}

TEST(CostModel, Tf32OnlyWhenAllowedAndAvailable) {
  DeviceSpec a100 = device_spec("A100-SXM4-40GB");
  ModelOp op = square_matmul(4096);
  double flops = 2.0 * std::pow(4096.0, 3);
  EXPECT_NEAR(CostModel(roofline_model()).estimate(op, a100).seconds, flops / (19.5e12 * 0.7),
              1e-12);
  CostModelOptions o = roofline_model();
  o.allow_tf32 = true;
  EXPECT_NEAR(CostModel(o).estimate(op, a100).seconds, flops / (156e12 * 0.7), 1e-12);
  // Volta has no TF32: the option changes nothing there.
  DeviceSpec v100 = device_spec("V100-SXM2");
  EXPECT_NEAR(CostModel(o).estimate(op, v100).seconds, flops / (15.7e12 * 0.7), 1e-12);
}

// PyTorch's defaults: matmul TF32 off, cuDNN convolution TF32 on (Ampere and later only).
TEST(CostModel, Tf32DefaultsFollowPyTorch) {
  // A 256 -> 256 channel 3x3 convolution over 64 x 56 x 56, compute-bound on an A100.
  ModelOp conv;
  conv.type = "conv2d";
  conv.inputs = {{64, 256, 56, 56}, {256, 256, 3, 3}};
  conv.output = {64, 256, 56, 56};
  conv.attrs = {{"pad_h", 1}, {"pad_w", 1}};
  const double flops = 2.0 * 64 * 256 * 56 * 56 * 256 * 9;
  DeviceSpec a100 = device_spec("A100-SXM4-40GB");
  EXPECT_NEAR(CostModel(roofline_model()).estimate(conv, a100).seconds, flops / (156e12 * 0.7),
              1e-12);
  CostModelOptions off = roofline_model();
  off.cudnn_allow_tf32 = false;
  EXPECT_NEAR(CostModel(off).estimate(conv, a100).seconds, flops / (19.5e12 * 0.7), 1e-12);
  // The GEMM of the same size stays FP32 by default (Tf32OnlyWhenAllowedAndAvailable).
  EXPECT_EQ(math_mode(square_matmul(4096), a100, false, true).dtype, DType::kFP32);
  // No TF32 on a V100: the convolution runs in FP32.
  EXPECT_NEAR(CostModel(roofline_model()).estimate(conv, device_spec("V100-SXM2")).seconds,
              flops / (15.7e12 * 0.7), 1e-12);
}

TEST(EmbeddingModel, HitRateIsAllLRowsCached) {
  // C(10,2)/C(20,2) = (10*9)/(20*19).
  EXPECT_NEAR(l2_hit_rate(10, 20, 2), 90.0 / 380.0, 1e-15);
  EXPECT_DOUBLE_EQ(l2_hit_rate(8192, 16384, 1), 0.5);
  EXPECT_DOUBLE_EQ(l2_hit_rate(1000, 1000, 4), 1.0);  // the whole table is cached
  EXPECT_DOUBLE_EQ(l2_hit_rate(3, 1000, 4), 0.0);     // fewer cached rows than lookups
}

TEST(EmbeddingModel, SmallTableLivesInL2) {
  // V100: 80 SMs, 6 MiB L2. B=1024, T=1, E=1000, D=64, L=4, fp32, 32 rows per block:
  // tables in flight ceil(32*80/1024) = 3; cached rows min(6 MiB/(3*64*4) = 8192, 1000) = 1000
  // -> p = 1. Per warp: L2 = 32 + 64 + 4*256 = 1120 B; DRAM = indices 32 + outputs 256 = 288 B.
  DeviceSpec v100 = device_spec("V100-SXM2");
  EmbeddingLookup e{1024, 1, 1000, 64, 4, 4, false};
  EXPECT_DOUBLE_EQ(cached_rows_per_table(e, v100, 32), 1000);
  EmbeddingTime t = embedding_lookup_time(e, v100, 32, true, 0.7);
  EXPECT_DOUBLE_EQ(t.hit_rate, 1.0);
  EXPECT_DOUBLE_EQ(t.l2_bytes, 1024 * 1120.0);
  EXPECT_DOUBLE_EQ(t.dram_bytes, 1024 * 288.0);
  EXPECT_NEAR(t.seconds, 1024 * (288 / (900e9 * 0.7) + 1120 / (2847e9 * 0.7)), 1e-18);
}

TEST(EmbeddingModel, HalfTheTableCachedWithSingleLookups) {
  // E = 16384 rows, L = 1: 8192 rows cached -> p = 0.5. Per warp: weights 1*256 B, so
  // L2 = 96 + 128 = 224 B and DRAM = 32 + 256 + 128 = 416 B. Without L2: DRAM = 544 B.
  DeviceSpec v100 = device_spec("V100-SXM2");
  EmbeddingLookup e{1024, 2, 16384, 64, 1, 4, false};
  EmbeddingTime t = embedding_lookup_time(e, v100, 32, true, 1.0);
  EXPECT_DOUBLE_EQ(t.hit_rate, 0.5);
  EXPECT_DOUBLE_EQ(t.l2_bytes, 2048 * 224.0);
  EXPECT_DOUBLE_EQ(t.dram_bytes, 2048 * 416.0);
  EmbeddingTime plain = embedding_lookup_time(e, v100, 32, false, 1.0);
  EXPECT_DOUBLE_EQ(plain.hit_rate, 0.0);
  EXPECT_DOUBLE_EQ(plain.dram_bytes, 2048 * 544.0);
  EXPECT_DOUBLE_EQ(plain.l2_bytes, 2048 * 96.0);
}

TEST(EmbeddingModel, BackwardWeightTraffic) {
  // Backward per warp: weights ceil(2*4*L*D/32)*32 = 2048 B for L=4, D=64 (huge table, p ~ 0):
  // DRAM = 32 + 256 + 2048 B.
  DeviceSpec v100 = device_spec("V100-SXM2");
  EmbeddingLookup e{1024, 1, 10000000, 64, 4, 4, true};
  EmbeddingTime t = embedding_lookup_time(e, v100, 32, true, 1.0);
  EXPECT_LT(t.hit_rate, 1e-9);
  EXPECT_NEAR(t.dram_bytes, 1024 * (32 + 256 + 2048.0), 1e-3);
}

TEST(EmbeddingModel, CostModelUsesItForEmbeddingOps) {
  DeviceSpec v100 = device_spec("V100-SXM2");
  ModelOp op = make("embedding_fwd", {{1000, 64}, {1024, 4}}, {1024, 64});
  OpEstimate e = CostModel(roofline_model()).estimate(op, v100);
  EXPECT_NEAR(e.seconds, 1024 * (288 / (900e9 * 0.7) + 1120 / (2847e9 * 0.7)), 1e-18);
  EXPECT_NE(e.detail.find("L2 hit rate 1"), std::string::npos) << e.detail;
  EmbeddingLookup parsed;
  ASSERT_TRUE(embedding_lookup_from_op(
      make("embedding_bwd", {{8, 1024, 64}, {8, 1024, 4}}, {5000, 64}), &parsed));
  EXPECT_EQ(parsed.tables, 8);
  EXPECT_EQ(parsed.batch, 1024);
  EXPECT_EQ(parsed.rows, 5000);
  EXPECT_EQ(parsed.bag, 4);
  EXPECT_TRUE(parsed.backward);
}

class FixedEstimator : public LearnedEstimator {
 public:
  std::optional<double> estimate(const ModelOp& op, const DeviceSpec&) const override {
    if (op.type == "matmul") return 42e-6;
    return std::nullopt;
  }
};

TEST(CostModel, SourcesAreTriedInOrder) {
  DeviceSpec v100 = device_spec("V100-SXM2");
  auto db = std::make_shared<ProfileDb>();
  ProfileRow r;
  r.op = "matmul";
  r.dtype = "fp32";
  r.device = "V100-SXM2";
  r.inputs = "64x256;256x256";
  r.output = "64x256";
  r.time_s = 1e-5;
  db->add(r);
  r.inputs = "256x256;256x256";
  r.output = "256x256";
  r.time_s = 4e-5;
  db->add(r);
  CostModelOptions o = roofline_model();
  o.db = db;
  o.learned = std::make_shared<FixedEstimator>();
  CostModel cm(o);

  OpEstimate exact = cm.estimate(make("matmul", {{64, 256}, {256, 256}}, {64, 256}), v100);
  EXPECT_EQ(exact.source, EstimateSource::kDatabase);
  EXPECT_DOUBLE_EQ(exact.seconds, 1e-5);
  OpEstimate mid = cm.estimate(make("matmul", {{128, 256}, {256, 256}}, {128, 256}), v100);
  EXPECT_EQ(mid.source, EstimateSource::kInterpolated);
  EXPECT_NEAR(mid.seconds, 2e-5, 1e-15);  // halfway in log space between 1e-5 and 4e-5
  OpEstimate learned = cm.estimate(make("matmul", {{512, 256}, {256, 256}}, {512, 256}), v100);
  EXPECT_EQ(learned.source, EstimateSource::kLearned);
  EXPECT_DOUBLE_EQ(learned.seconds, 42e-6);
  OpEstimate analytic = cm.estimate(make("relu", {{100}}, {100}), v100);
  EXPECT_EQ(analytic.source, EstimateSource::kAnalytic);
  EXPECT_STREQ(estimate_source_name(EstimateSource::kInterpolated), "interpolated");
  EXPECT_STREQ(estimate_source_name(EstimateSource::kDatabase), "db");

  // The rows describe the V100 as shipped: a V100 with its FP32 rate overridden skips them.
  DeviceSpec faster = v100;
  faster.fp32 = 20e12;
  faster.overridden = {"fp32"};
  EXPECT_EQ(cm.estimate(make("matmul", {{64, 256}, {256, 256}}, {64, 256}), faster).source,
            EstimateSource::kAnalytic);
  // Rows are found under an alias too.
  DeviceSpec alias = v100;
  alias.name = "renamed";
  alias.aliases = {"v100-sxm2"};
  EXPECT_EQ(cm.estimate(make("matmul", {{64, 256}, {256, 256}}, {64, 256}), alias).source,
            EstimateSource::kDatabase);
}

TEST(CostModel, PriceOpsCountsSources) {
  DeviceSpec v100 = device_spec("V100-SXM2");
  ModelGraph g;
  g.ops.push_back(make("relu", {{1 << 20}}, {1 << 20}));
  g.ops.push_back(square_matmul(1024));
  OpPrices p = price_ops(g, v100, CostModel(roofline_model()));
  ASSERT_EQ(p.seconds.size(), 2u);
  EXPECT_EQ(p.count[static_cast<int>(EstimateSource::kAnalytic)], 2);
  EXPECT_NEAR(p.total_s, p.seconds[0] + p.seconds[1], 1e-18);
  EXPECT_NEAR(p.seconds[0], 8.0 * (1 << 20) / (900e9 * 0.7), 1e-15);
}

TEST(CostModel, ParsesScenarioOptions) {
  YAML::Node n = load_yaml_text(
      "cost_model:\n  efficiency: {default: 0.6, gemm: 0.8}\n  allow_tf32: true\n", "s.yaml");
  CostModelOptions o = parse_cost_model_options(YamlMap(n["cost_model"], "s.yaml", "cost_model"));
  EXPECT_DOUBLE_EQ(o.efficiency_of(OpClass::kGemm), 0.8);
  EXPECT_DOUBLE_EQ(o.efficiency_of(OpClass::kEmbedding), 0.6);
  EXPECT_TRUE(o.allow_tf32);
  EXPECT_TRUE(o.cudnn_allow_tf32);  // PyTorch's default
  YAML::Node bad = load_yaml_text("cost_model: {efficiency: 1.5}\n", "s.yaml");
  EXPECT_THROW(parse_cost_model_options(YamlMap(bad["cost_model"], "s.yaml", "cost_model")),
               InputError);
  YAML::Node unknown = load_yaml_text("cost_model: {efficiency: {gemmm: 0.5}}\n", "s.yaml");
  EXPECT_THROW(parse_cost_model_options(YamlMap(unknown["cost_model"], "s.yaml", "cost_model")),
               InputError);
}

}  // namespace
}  // namespace orrery
