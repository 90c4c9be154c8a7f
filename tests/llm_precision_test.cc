// Low-precision recipes of language-model training (strategies/llm_precision.h): which GEMMs
// take the FP8 / FP4 path, the quantization and scaling kernels priced with them, the memory
// of quantized weight copies and saved inputs, the fallback on GPUs without the Tensor Cores,
// and flash attention's pricing (strategies/llm_pricing.h).
#include "strategies/llm_precision.h"

#include <gtest/gtest.h>

#include <map>

#include "engine/replay.h"
#include "scenario/scenario.h"
#include "strategies/llm_memory.h"
#include "strategies/llm_pricing.h"
#include "tests/test_util.h"

namespace orrery {
namespace {

const LlmConfig& llama() { return *find_llm("llama2_7b"); }

ParallelPlan plan_in(Precision p) {
  ParallelPlan plan;
  plan.precision = p;
  plan.global_batch = 1;
  plan.seq_len = 1024;
  return plan;
}

// Prices nothing; counts the ops priced, by type and element type.
struct Tally {
  std::map<std::string, int> ops;  // "matmul/fp8", "cast/fp4", "reduce/fp32"...
  OpPricer pricer() {
    return [this](const ModelOp& op) {
      ++ops[op.type + "/" + dtype_name(op.dtype)];
      return 0.0;
    };
  }
};

TEST(LlmPrecision, RecipesStoreTheirElementsAndBlockScales) {
  EXPECT_DOUBLE_EQ(low_precision(Precision::kFp8).element_bytes(), 1.0);
  EXPECT_DOUBLE_EQ(low_precision(Precision::kMxfp8).element_bytes(), 1.0 + 1.0 / 32);
  EXPECT_DOUBLE_EQ(low_precision(Precision::kNvfp4).element_bytes(), 0.5 + 1.0 / 16);
  EXPECT_FALSE(low_precision(Precision::kBf16).active());
  EXPECT_TRUE(low_precision(Precision::kFp8).delayed_scaling);
  EXPECT_FALSE(low_precision(Precision::kMxfp8).delayed_scaling);
  EXPECT_TRUE(low_precision(Precision::kFp8Cs).current_scaling);
  EXPECT_FALSE(low_precision(Precision::kFp8Cs).delayed_scaling);
  EXPECT_EQ(low_precision(Precision::kNvfp4).hadamard, 16);
  Precision p;
  ASSERT_TRUE(parse_precision("nvfp4", &p));
  EXPECT_EQ(p, Precision::kNvfp4);
  EXPECT_STREQ(precision_name(Precision::kMxfp8), "mxfp8");
  EXPECT_FALSE(parse_precision("fp6", &p));
}

TEST(LlmPrecision, GpusWithoutTheTensorCoresFallBackToBf16WithTheReason) {
  const DeviceSpec a100 = device_spec("A100-SXM4-80GB");
  const DeviceSpec h100 = device_spec("H100-SXM5");
  const DeviceSpec b200 = device_spec("B200");
  std::string why;
  EXPECT_EQ(plan_on_device(plan_in(Precision::kFp8), a100, &why).precision, Precision::kBf16);
  EXPECT_NE(why.find("no FP8 Tensor Cores"), std::string::npos) << why;
  EXPECT_EQ(plan_on_device(plan_in(Precision::kFp8), h100, &why).precision, Precision::kFp8);
  EXPECT_EQ(why, "");
  EXPECT_EQ(plan_on_device(plan_in(Precision::kFp8Cs), h100, &why).precision, Precision::kFp8Cs);
  EXPECT_EQ(plan_on_device(plan_in(Precision::kFp8Cs), a100, &why).precision, Precision::kBf16);
  EXPECT_EQ(plan_on_device(plan_in(Precision::kMxfp8), h100, &why).precision, Precision::kBf16);
  EXPECT_NE(why.find("block-scaled (mxfp8)"), std::string::npos) << why;
  EXPECT_EQ(plan_on_device(plan_in(Precision::kNvfp4), b200, &why).precision, Precision::kNvfp4);
  EXPECT_EQ(why, "");
  EXPECT_EQ(plan_on_device(plan_in(Precision::kFp16), a100, &why).precision, Precision::kFp16);
}

TEST(LlmPrecision, LinearLayersRunInTheRecipeAndTheRestInBf16) {
  // A dense layer has four linear layers (QKV, output projection, up/gate, down), three GEMMs
  // each; the output head's three GEMMs stay in bf16 with the attention products.
  Tally bf16, fp8, fp8cs, nvfp4;
  price_llm(llama(), plan_in(Precision::kFp8Cs), fp8cs.pricer());
  price_llm(llama(), plan_in(Precision::kBf16), bf16.pricer());
  price_llm(llama(), plan_in(Precision::kFp8), fp8.pricer());
  price_llm(llama(), plan_in(Precision::kNvfp4), nvfp4.pricer());
  EXPECT_EQ(bf16.ops["matmul/bf16"], 12 + 3);
  EXPECT_EQ(fp8.ops["matmul/fp8"], 12);
  EXPECT_EQ(fp8.ops["matmul/bf16"], 3);
  EXPECT_EQ(nvfp4.ops["matmul/fp4"], 12);
  EXPECT_EQ(fp8.ops["bmm/bf16"], bf16.ops["bmm/bf16"]);
  EXPECT_EQ(fp8.ops["softmax/bf16"], bf16.ops["softmax/bf16"]);
  // Casts: each linear layer's input (forward) and output gradient (backward), and once per
  // step the weights of the one pipeline stage; delayed scaling: one scale update per layer.
  EXPECT_EQ(bf16.ops["cast/bf16"], 0);
  EXPECT_EQ(fp8.ops["cast/fp8"], 4 * 2 + 1);
  EXPECT_EQ(nvfp4.ops["cast/fp4"], 4 * 2 + 1);
  EXPECT_EQ(fp8.ops["reduce/fp32"], 4);
  EXPECT_EQ(nvfp4.ops["reduce/fp32"], 0);
  EXPECT_EQ(fp8cs.ops["reduce/fp32"], 0);
  EXPECT_EQ(fp8cs.ops["matmul/fp8"], 12);
}

TEST(LlmPrecision, QuantizingReadsBf16AndWritesBothLayoutsWithTheirScales) {
  // Price only bytes at 1 TB/s: the forward MLP's extra time over bf16 is its GEMMs' smaller
  // operands (not counted: a cast's bytes are what this test prices) plus two casts.
  auto bytes_of_casts = [](Precision p, bool any_layout = false) {
    double bytes = 0;
    price_llm(
        llama(), plan_in(p),
        [&](const ModelOp& op) {
          if (op.type == "cast") bytes += op.bytes;
          return 0.0;
        },
        LlmGpu{any_layout});
    return bytes;
  };
  const LlmConfig& m = llama();
  const double tokens = 1024, h = static_cast<double>(m.hidden), f = static_cast<double>(m.ffn);
  // Per layer: inputs of QKV (h), output projection (h), up/gate (h), down (f); output
  // gradients of QKV (3h: MHA), projection (h), up/gate (2f), down (h); the weights once.
  const double acts = tokens * (3 * h + f) + tokens * (5 * h + 2 * f);
  const double weights = m.layers * layer_linear_parameters(m, plan_in(Precision::kFp8));
  for (Precision p : {Precision::kFp8, Precision::kFp8Cs, Precision::kMxfp8, Precision::kNvfp4}) {
    // Current scaling reads each tensor once more for its amax.
    const double read = p == Precision::kFp8Cs ? 4 : 2;
    const double per = read + 2 * low_precision(p).element_bytes();
    EXPECT_NEAR(bytes_of_casts(p), (acts + weights) * per, 1e-6 * (acts + weights) * per)
        << precision_name(p);
  }
  // On Blackwell per-tensor FP8 writes one copy: 2 bytes read, 1 written.
  EXPECT_NEAR(bytes_of_casts(Precision::kFp8, true), (acts + weights) * 3, 1e-6 * (acts + weights));
}

TEST(LlmPrecision, MemoryHoldsQuantizedWeightCopiesAndSmallerSavedInputs) {
  const LlmConfig& m = llama();
  EXPECT_DOUBLE_EQ(bytes_per_parameter(Precision::kFp8).quantized, 2.0);
  EXPECT_DOUBLE_EQ(bytes_per_parameter(Precision::kMxfp8).quantized, 2.0 * (1 + 1.0 / 32));
  EXPECT_DOUBLE_EQ(bytes_per_parameter(Precision::kNvfp4).quantized, 2.0 * (0.5 + 1.0 / 16));
  EXPECT_DOUBLE_EQ(bytes_per_parameter(Precision::kBf16).quantized, 0.0);
  // Blackwell's FP8 GEMMs take any layout: one FP8 copy; block scales still need both.
  EXPECT_TRUE(any_layout_fp8(device_spec("B200")));
  EXPECT_FALSE(any_layout_fp8(device_spec("H100-SXM5")));
  EXPECT_DOUBLE_EQ(bytes_per_parameter(Precision::kFp8, true).quantized, 1.0);
  EXPECT_DOUBLE_EQ(bytes_per_parameter(Precision::kFp8Cs, true).quantized, 1.0);
  EXPECT_DOUBLE_EQ(bytes_per_parameter(Precision::kMxfp8, true).quantized, 2.0 * (1 + 1.0 / 32));
  const ParallelPlan bf = plan_in(Precision::kBf16), f8 = plan_in(Precision::kFp8);
  const MemoryBreakdown a = llm_memory(m, bf)[0], b = llm_memory(m, f8)[0];
  EXPECT_NEAR(b.weights - a.weights, 2.0 * m.layers * layer_linear_parameters(m, f8), 1.0);
  EXPECT_DOUBLE_EQ(b.optimizer, a.optimizer);
  // Saved inputs of the four linear layers at one byte instead of two: 3sbh + sbf less (s
  // 1024, b 1, no parallelism; the down projection reads the SwiGLU product, sbf).
  const double s = 1024, h = static_cast<double>(m.hidden), f = static_cast<double>(m.ffn);
  EXPECT_DOUBLE_EQ(layer_activation_bytes(m, bf) - layer_activation_bytes(m, f8),
                   3 * s * h + s * f);
}

// Flash attention is one fused kernel each way (its softmax inside, priced by the kernel model),
// over the causal half of the scores: s (s + 1) / 2 pairs per head, 2 products of 2 d FLOPs
// and 5 softmax FLOPs per pair forward, 5 products backward.
TEST(LlmPrecision, FlashAttentionIsOneFusedKernelOverTheCausalHalf) {
  const LlmConfig& m = llama();
  ParallelPlan p = plan_in(Precision::kBf16);
  Tally tally;
  const LlmCosts c = price_llm(m, p, tally.pricer());
  EXPECT_EQ(tally.ops["attention/bf16"], 1);
  EXPECT_EQ(tally.ops["attention_bwd/bf16"], 1);
  EXPECT_EQ(tally.ops.count("bmm/bf16"), 0u);
  const double s = 1024, heads = static_cast<double>(m.heads),
               d = static_cast<double>(m.head_dim());
  const double pairs = heads * s * (s + 1) / 2;
  EXPECT_NEAR(c.attention_core_fwd.flops, pairs * (2 * 2 * d + 5), 1.0);
  // Materialized scores (flash_attention off) cost their full s x s products and a softmax.
  p.flash_attention = false;
  const LlmCosts plain = price_llm(m, p, tally.pricer());
  EXPECT_GT(plain.attention_core_fwd.flops, 1.9 * c.attention_core_fwd.flops);
}

// The recipe in a scenario: FP8 on an H100 shortens the step (its GEMMs at the FP8 rate, about
// 1.4 times BF16's as measured, less the quantization it adds); on an A100 the plan runs in
// bf16 and the workload line says why.
TEST(LlmPrecision, ScenarioStepsFasterInFp8AndFallsBackOnAnA100) {
  auto step = [](const std::string& device, const std::string& precision, std::string* line) {
    Scenario sc = load_scenario(testing::source_path("scenarios/llm/llama2-7b-dgx-a100.yaml"),
                                {"workload.global_batch=8", "workload.seq_len=1024",
                                 "device=" + device, "strategy.precision=" + precision});
    if (line) *line = sc.workload_summary;
    return replay_isolated(sc.platform, sc.graph, ReplayOptions{}).makespan;
  };
  std::string line;
  const double h100_bf16 = step("H100-SXM5", "bf16", nullptr);
  const double h100_fp8 = step("H100-SXM5", "fp8", &line);
  EXPECT_NE(line.find(", fp8, megatron-te;"), std::string::npos) << line;
  EXPECT_LT(h100_fp8, h100_bf16);
  EXPECT_GT(h100_fp8, 0.5 * h100_bf16);
  const double a100_fp8 = step("A100-SXM4-80GB", "fp8", &line);
  EXPECT_NE(line.find("fp8 not used: A100-SXM4-80GB has no FP8 Tensor Cores"), std::string::npos)
      << line;
  EXPECT_DOUBLE_EQ(a100_fp8, step("A100-SXM4-80GB", "bf16", nullptr));
  // Blackwell: NVFP4's GEMMs at twice FP8's rate.
  EXPECT_LT(step("B200", "nvfp4", nullptr), step("B200", "mxfp8", nullptr));
}

}  // namespace
}  // namespace orrery
