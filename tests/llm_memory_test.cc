// Parallel plans and per-GPU memory (strategies/parallel_plan.h, strategies/llm_memory.h): the
// plan's checks with the key named, the pipeline's layer split, 16 bytes per parameter for
// mixed-precision Adam divided by the data-parallel degree stage by stage as in the ZeRO paper,
// activations per layer as Korthikanti et al.'s Table 2, the micro-batches each pipeline
// schedule holds, and the out-of-memory verdict.
#include "strategies/llm_memory.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "common/errors.h"
#include "strategies/parallel_plan.h"
#include "tests/test_util.h"

namespace orrery {
namespace {

const LlmConfig& model(const std::string& name) { return *find_llm(name); }

std::string refusal(const ParallelPlan& p, const LlmConfig& m, int gpus) {
  try {
    check_parallel_plan(p, m, gpus, "strategy");
  } catch (const InputError& e) {
    return e.what();
  }
  return "accepted";
}
std::string refusal(const ParallelPlan& p, const std::string& name, int gpus) {
  return refusal(p, model(name), gpus);
}

TEST(ParallelPlan, RefusesPlansThatCannotRunWithTheKeyNamed) {
  ParallelPlan p;
  p.tp = 8;
  p.pp = 4;
  p.dp = 2;
  EXPECT_EQ(refusal(p, "llama2_70b", 64), "accepted");
  EXPECT_NE(refusal(p, "llama2_70b", 32)
                .find("tp x pp x dp x cp: 8 x 4 x 2 x 1 = 64 GPUs, the "
                      "platform has 32"),
            std::string::npos);
  p.tp = 16;  // LLaMA-2 70B has 8 KV heads
  EXPECT_NE(refusal(p, "llama2_70b", 0).find("tp = 16 must divide the 8 key/value heads"),
            std::string::npos);
  LlmConfig odd = model("llama2_7b");
  odd.ffn = 11000;
  p.tp = 16;
  EXPECT_NE(refusal(p, odd, 0).find("tp = 16 must divide the FFN width 11000"), std::string::npos);
  p = ParallelPlan{};
  p.pp = 97;
  EXPECT_NE(refusal(p, "gpt3_175b", 0).find("pp = 97 stages for 96 layers"), std::string::npos);
  p = ParallelPlan{};
  p.pp = 4;
  p.schedule = PipelineSchedule::kInterleaved;
  p.virtual_stages = 5;  // 20 chunks do not divide 96 layers
  p.global_batch = 8;
  EXPECT_NE(refusal(p, "gpt3_175b", 0).find("virtual_stages"), std::string::npos);
  p.virtual_stages = 3;
  p.global_batch = 6;  // 6 micro-batches, not a multiple of 4
  EXPECT_NE(refusal(p, "gpt3_175b", 0).find("groups of pp = 4"), std::string::npos);
  p = ParallelPlan{};
  p.ep = 2;
  EXPECT_NE(refusal(p, "llama2_7b", 0).find("mixture-of-experts"), std::string::npos);
  p.dp = 4;
  p.ep = 3;
  EXPECT_NE(refusal(p, "mixtral_8x7b", 0).find("ep = 3 must divide the 8 experts"),
            std::string::npos);
  p = ParallelPlan{};
  p.dp = 4;
  p.micro_batch = 2;
  p.global_batch = 12;
  EXPECT_NE(refusal(p, "llama2_7b", 0).find("12 sequences are not a multiple of micro_batch x dp"),
            std::string::npos);
  p = ParallelPlan{};
  p.pp = 2;
  p.zero = 3;  // FSDP beside pipeline stages (Llama 3's 4D parallelism) runs
  EXPECT_EQ(refusal(p, "llama2_7b", 0), "accepted");
  p = ParallelPlan{};
  p.sequence_parallel = true;
  EXPECT_NE(refusal(p, "llama2_7b", 0).find("sequence_parallel: needs tp >= 2"), std::string::npos);
  p = ParallelPlan{};
  p.cp = 3;
  EXPECT_NE(refusal(p, "llama2_7b", 0).find("2 x cp chunks"), std::string::npos);
}

TEST(ParallelPlan, UnevenLayersGoToTheMiddleStagesFirst) {
  ParallelPlan p;
  p.pp = 4;
  LlmConfig m = model("llama2_7b");
  m.layers = 10;
  EXPECT_EQ(stage_layers(p, m), (std::vector<int>{2, 3, 3, 2}));
  m.layers = 11;
  EXPECT_EQ(stage_layers(p, m), (std::vector<int>{2, 3, 3, 3}));
  m.layers = 32;
  EXPECT_EQ(stage_layers(p, m), (std::vector<int>{8, 8, 8, 8}));
}

TEST(ParallelPlan, EmbeddingAndLossCountAsLayersInMegatronsSplit) {
  // Llama 3.1 405B's 126 layers on PP 16 x VP 4 (NVIDIA's GB200 recipe): 64 chunks of
  // (126 + 2) / 64 = 2, the first and the last holding one layer.
  ParallelPlan p;
  p.pp = 16;
  p.dp = 1;
  p.global_batch = 16;
  p.schedule = PipelineSchedule::kInterleaved;
  p.virtual_stages = 4;
  const LlmConfig& m = model("llama3_405b");
  EXPECT_NE(refusal(p, m, 16).find("chunks must divide the 126 layers"), std::string::npos);
  p.account_for_embedding_and_loss = true;
  EXPECT_EQ(refusal(p, m, 16), "accepted");
  const auto chunks = chunk_layers(p, m);
  ASSERT_EQ(chunks.size(), 16u);
  EXPECT_EQ(chunks[0], (std::vector<int>{1, 2, 2, 2}));
  EXPECT_EQ(chunks[7], (std::vector<int>{2, 2, 2, 2}));
  EXPECT_EQ(chunks[15], (std::vector<int>{2, 2, 2, 1}));
  const std::vector<int> stages = stage_layers(p, m);
  EXPECT_EQ(stages[0], 7);
  EXPECT_EQ(stages[15], 7);
  int total = 0;
  for (int s : stages) total += s;
  EXPECT_EQ(total, 126);
  // PP 16 x VP 8 (the NVFP4 recipe): 128 chunks of one part; the first and the last are the
  // embedding and the loss alone.
  p.virtual_stages = 8;
  EXPECT_EQ(refusal(p, m, 16), "accepted");
  EXPECT_EQ(chunk_layers(p, m)[0], (std::vector<int>{0, 1, 1, 1, 1, 1, 1, 1}));
  EXPECT_EQ(chunk_layers(p, m)[15], (std::vector<int>{1, 1, 1, 1, 1, 1, 1, 0}));
  // Without interleaving the first and last stages hold one layer fewer; a split that does not
  // divide is refused with the key named.
  p.schedule = PipelineSchedule::k1f1b;
  p.virtual_stages = 1;
  p.pp = 8;
  p.global_batch = 8;
  EXPECT_EQ(stage_layers(p, m), (std::vector<int>{15, 16, 16, 16, 16, 16, 16, 15}));
  p.pp = 3;
  p.global_batch = 3;
  EXPECT_NE(refusal(p, m, 3).find("account_for_embedding_and_loss: 3 pipeline chunks must divide "
                                  "the 126 layers + the embedding + the loss = 128"),
            std::string::npos)
      << refusal(p, m, 3);
}

TEST(LlmMemory, SixteenBytesPerParameterDividedStageByStage) {
  // Mixed-precision Adam: 2 (weights) + 2 (gradients) + 12 (fp32 weights, momentum, variance)
  // bytes per parameter (ZeRO, section 3.1); ZeRO-1 shards the 12 over the replicas, ZeRO-2 the
  // gradients too, ZeRO-3 everything. One stage, no TP: the GPU holds the whole model.
  const LlmConfig& m = model("llama2_7b");
  const double n = llm_params(m).total;
  ParallelPlan p;
  p.dp = 8;
  auto states = [&](int zero) {
    p.zero = zero;
    const MemoryBreakdown b = llm_memory(m, p).at(0);
    EXPECT_EQ(b.parameters, n);
    return b.weights + b.gradients + b.optimizer;
  };
  EXPECT_NEAR(states(0), 16 * n, 1e-9 * n);
  EXPECT_NEAR(states(1), (4 + 12.0 / 8) * n, 1e-9 * n);
  EXPECT_NEAR(states(2), (2 + 14.0 / 8) * n, 1e-9 * n);
  EXPECT_NEAR(states(3), 16.0 / 8 * n, 1e-9 * n);
  // fp32 training with Adam: 4 + 4 + 8.
  p.zero = 0;
  p.precision = Precision::kFp32;
  const MemoryBreakdown b = llm_memory(m, p).at(0);
  EXPECT_NEAR(b.weights + b.gradients + b.optimizer, 16 * n, 1e-9 * n);
  EXPECT_EQ(b.weights, 4 * n);
}

TEST(LlmMemory, LayerActivationsAreKorthikantisTable2) {
  // GPT-3 175B layer, s = 2048, b = 1, a = 96, h = 12288, t = 8, attention scores materialized:
  // the five rows of Table 2 of "Reducing Activation Recomputation in Large Transformer Models".
  const LlmConfig& m = model("gpt3_175b");
  ParallelPlan p;
  p.flash_attention = false;
  const double s = 2048, b = 1, h = 12288, a = 96, t = 8;
  const double sbh = s * b * h;
  EXPECT_NEAR(layer_activation_bytes(m, p), sbh * (34 + 5 * a * s / h), 1);
  p.tp = 8;
  EXPECT_NEAR(layer_activation_bytes(m, p), sbh * (10 + 24 / t + 5 * a * s / (h * t)), 1);
  p.sequence_parallel = true;
  EXPECT_NEAR(layer_activation_bytes(m, p), sbh / t * (34 + 5 * a * s / h), 1);
  p.recompute = Recompute::kSelective;
  EXPECT_NEAR(layer_activation_bytes(m, p), sbh * 34 / t, 1);
  p.sequence_parallel = false;
  EXPECT_NEAR(layer_activation_bytes(m, p), sbh * (10 + 24 / t), 1);
  p.recompute = Recompute::kFull;
  EXPECT_NEAR(layer_activation_bytes(m, p), 2 * sbh, 1);
  // Context parallelism splits the tokens: half the sequence, half the (linear) activations.
  p = ParallelPlan{};
  p.cp = 2;
  const double half = layer_activation_bytes(m, p);
  p.cp = 1;
  EXPECT_NEAR(half, layer_activation_bytes(m, p) / 2, 1);
}

TEST(LlmMemory, PipelineSchedulesHoldTheirMicroBatches) {
  // 8 stages, 16 micro-batches: GPipe holds all 16 everywhere; 1F1B holds pp - stage (the first
  // stage 8: its L/p layers x p micro-batches = the whole model's layers once); interleaving over
  // 2 chunks multiplies by 1 + (p - 1) / (p x 2).
  const LlmConfig& m = model("gpt3_13b");  // 40 layers: 5 a stage
  ParallelPlan p;
  p.pp = 8;
  p.global_batch = 16;
  const double per_layer = layer_activation_bytes(m, p);
  p.schedule = PipelineSchedule::kGpipe;
  auto g = llm_memory(m, p);
  EXPECT_EQ(g[0].in_flight, 16);
  EXPECT_EQ(g[3].in_flight, 16);
  EXPECT_NEAR(g[3].activations, 5 * per_layer * 16, 1);
  p.schedule = PipelineSchedule::k1f1b;
  auto f = llm_memory(m, p);
  EXPECT_EQ(f[0].in_flight, 8);
  EXPECT_EQ(f[5].in_flight, 3);
  EXPECT_NEAR(f[0].activations, 40 * per_layer, 1);
  p.schedule = PipelineSchedule::kInterleaved;
  p.virtual_stages = 5;  // 40 chunks of one layer
  auto i = llm_memory(m, p);
  EXPECT_NEAR(i[0].activations, 40 * per_layer * (1 + 7.0 / 40), 1);
  // The last stage also keeps the fp32 logits of its micro-batch in flight: 4 s b V, V the
  // vocabulary padded to a multiple of 128 x tp as Megatron-LM pads it.
  p.schedule = PipelineSchedule::k1f1b;
  p.virtual_stages = 1;
  const double padded = std::ceil(m.vocab / (128.0 * p.tp)) * 128 * p.tp;
  EXPECT_EQ(p.padded_vocab(m), static_cast<int64_t>(padded));
  EXPECT_NEAR(f[7].activations, 5 * per_layer + 4.0 * 2048 * padded, 1);
}

TEST(LlmMemory, OutOfMemoryVerdictSaysByHowMuchAndWhatWouldFit) {
  // A 6.7-billion-parameter model on one 16 GB V100: 16 bytes a parameter alone is 107 GB.
  ParallelPlan one;
  MemoryVerdict v = check_memory(model("gpt3_6.7b"), one, 16e9);
  EXPECT_FALSE(v.fits);
  EXPECT_GT(v.peak, 16 * llm_params(model("gpt3_6.7b")).total);
  EXPECT_NE(v.message().find("out of memory: needs"), std::string::npos);
  EXPECT_NE(v.message().find("no single change"), std::string::npos);  // only more GPUs help
  // LLaMA-2 7B on 8 x 80 GB, data parallel, micro-batch 2 of 4096 tokens (37 GB of
  // activations): the states (108 GB a GPU) do not fit, ZeRO-1 (37 GB) to ZeRO-3 (13.5 GB) do;
  // the verdict names the cheapest of them, ZeRO-1, once.
  ParallelPlan dp;
  dp.dp = 8;
  dp.micro_batch = 2;
  v = check_memory(model("llama2_7b"), dp, 80e9);
  EXPECT_FALSE(v.fits);
  ASSERT_FALSE(v.would_fit.empty());
  EXPECT_NE(std::find(v.would_fit.begin(), v.would_fit.end(), "zero: 1"), v.would_fit.end());
  EXPECT_EQ(std::find(v.would_fit.begin(), v.would_fit.end(), "zero: 3"), v.would_fit.end());
  ParallelPlan z3 = dp;
  z3.zero = 3;
  MemoryVerdict ok = check_memory(model("llama2_7b"), z3, 80e9);
  EXPECT_TRUE(ok.fits);
  EXPECT_NE(ok.message().find("fits: "), std::string::npos);
}

TEST(LlmMemory, CommandPrintsEachStageAndTheVerdict) {
  const std::string bin = testing::orrery_bin();
  auto r = testing::run_shell(bin +
                              " llm memory llama2_70b --tp 8 --pp 4 --dp 2 --global-batch 64 "
                              "--zero 1 --recompute selective --sp --device H100-SXM5");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("TP 8 x PP 4 x DP 2 x CP 1 = 64 GPUs"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("Verdict    stage 0: fits: "), std::string::npos) << r.output;
  r = testing::run_shell(bin + " llm memory gpt3_6.7b --device V100-SXM2");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("out of memory: needs"), std::string::npos) << r.output;
  r = testing::run_shell(bin + " llm memory llama2_70b --tp 16");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("tp = 16 must divide the 8 key/value heads"), std::string::npos)
      << r.output;
  // Megatron's split: the first and last stages hold 7 of the 405B's layers, the rest 8; a
  // precision the device cannot run is sized in bf16 with the reason.
  r = testing::run_shell(bin +
                         " llm memory llama3_405b --pp 16 --schedule interleaved "
                         "--virtual-stages 4 --global-batch 16 --account-for-embedding-and-loss "
                         "--precision nvfp4 --device H100-SXM5");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("\n    0      7 "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("\n    1      8 "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("\n   15      7 "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("nvfp4 not used: H100-SXM5 has no block-scaled (nvfp4) Tensor Cores"),
            std::string::npos)
      << r.output;
  r = testing::run_shell(bin + " llm memory gpt5");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("unknown model \"gpt5\" (built in: gpt3_1.3b"), std::string::npos)
      << r.output;
}

}  // namespace
}  // namespace orrery
