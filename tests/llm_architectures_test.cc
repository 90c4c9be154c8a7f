// The architectures beyond the LLaMA family (workloads/llm_config.h): parameter counts by hand
// against the published figures, training FLOPs per token by hand, their config.json files
// read, and their plans priced and run.
//   DeepSeek-V3 (DeepSeek-AI, "DeepSeek-V3 Technical Report"): 671B, 37B active; 250 GFLOPs per
//     token at 4096 (DeepSeek-AI, "Insights into DeepSeek-V3", Table 2), causal scores halved.
//   gpt-oss (OpenAI, "gpt-oss-120b & gpt-oss-20b Model Card", Table 1): 116.83B / 20.91B.
//   Nemotron-4 15B / 340B: 3.2B + 12.5B and 9.4B + 331.6B embedding + non-embedding.
//   Nemotron-H 8B / 56B, Grok-1 (314B without the embedding), Gemma 3 12B / 27B (non-embedding
//   10,759M / 25,600M, Gemma 3 Technical Report, Table 1).
#include <gtest/gtest.h>

#include "common/errors.h"
#include "engine/replay.h"
#include "strategies/llm_memory.h"
#include "strategies/llm_pricing.h"
#include "strategies/llm_strategy.h"
#include "tests/llm_cluster.h"
#include "tests/test_util.h"
#include "workloads/llm_config.h"

namespace orrery {
namespace {

const LlmConfig& model(const char* name) {
  const LlmConfig* m = find_llm(name);
  EXPECT_NE(m, nullptr) << name;
  return *m;
}

TEST(LlmArchitectures, ParameterCountsAreThePublishedOnes) {
  // DeepSeek-V3: MLA 187,107,328 a layer (q_a 7168 x 1536, its norm, q_b 1536 x 128 x 192,
  // kv_a 7168 x 576, its norm, kv_b 512 x 128 x 256, o 16384 x 7168); 3 dense layers of
  // 3 x 7168 x 18432; 58 MoE layers of 257 experts of 3 x 7168 x 2048 and a 7168 x 256 router;
  // untied 129,280 x 7168 tables: 671,026,419,200 less the routers' 58 x 256 score biases.
  const LlmParams ds = llm_params(model("deepseek_v3"));
  EXPECT_NEAR(ds.total, 671026419200.0 - 58 * 256, 1);
  EXPECT_NEAR(ds.active, 37552297472.0 - 58 * 256, 1);  // 8 routed + 1 shared, both tables
  EXPECT_NEAR(ds.mtp, 11610068224.0 - 256, 1);          // 2h -> h, one MoE layer, 3 norms
  // gpt-oss: attention 2880 x 5120 + 4096 x 2880 with biases and 64 sinks; experts 2880 x 5760
  // + 2880 x 2880 with biases; untied 201,088 x 2880 tables.
  EXPECT_NEAR(llm_params(model("gpt_oss_120b")).total, 116829156672.0, 1);
  EXPECT_NEAR(llm_params(model("gpt_oss_20b")).total, 20914757184.0, 1);
  // The model card's 5.13B active leaves out the input table.
  EXPECT_NEAR(llm_params(model("gpt_oss_120b")).active - 201088.0 * 2880, 5132849472.0, 1);
  // Nemotron-4: LayerNorm with biases, squared-ReLU MLP of 2 h f, untied 256,000-token tables.
  const LlmParams n15 = llm_params(model("nemotron4_15b"));
  EXPECT_NEAR(n15.embedding, 3.146e9, 0.001e9);
  EXPECT_NEAR(n15.total - n15.embedding, 12.483e9, 0.001e9);
  const LlmParams n340 = llm_params(model("nemotron4_340b"));
  EXPECT_NEAR(n340.total - n340.embedding, 331.592e9, 0.001e9);
  // Nemotron-H: Mamba-2 mixers of in_proj h x (2 x 8192 + 2 x 8 x 128 + 128), a width-4
  // convolution over 10,240 channels, 3 x 128 head parameters, a norm and out_proj (8B:
  // 109,635,968 with the layer's norm); attention 41,943,040; MLP 2 x 4096 x 21504.
  EXPECT_NEAR(llm_params(model("nemotron_h_8b")).total, 8.101e9, 0.001e9);
  EXPECT_NEAR(llm_params(model("nemotron_h_56b")).total, 56.324e9, 0.001e9);
  // Grok-1: 64 x (attention 88,080,384 + 8 experts of 3 x 6144 x 32768 + router + 4 norms)
  // = 314.88B, and the tied 131,072 x 6144 table.
  const LlmParams grok = llm_params(model("grok1"));
  EXPECT_NEAR(grok.total - grok.embedding, 314879508480.0 + 6144, 1);
  // Gemma 3: 4 norms and q/k norms a layer, GeGLU, tied tables.
  const LlmParams g27 = llm_params(model("gemma3_27b"));
  EXPECT_NEAR(g27.total - g27.embedding, 25599716096.0, 1);
  EXPECT_NEAR(llm_params(model("gemma3_12b")).total - llm_params(model("gemma3_12b")).embedding,
              10759155456.0, 1);
}

TEST(LlmArchitectures, TrainingFlopsPerTokenByHand) {
  // DeepSeek-V3 at 4096 tokens without its MTP module: 2 x 36.63B active matmul weights (head
  // included, input table not) + 61 x 2 x 4096 x 128 x (192 + 128) for the scores, times 3.
  LlmConfig ds = model("deepseek_v3");
  ds.mtp_layers = 0;
  const double matmul = 61 * 187107328.0 - 61 * (1536 + 512) + 58 * (7168 * 256 + 9 * 44040192.0) +
                        3 * 396361728.0 + 7168.0 * 129280;
  const double scores = 61 * 2 * 4096.0 * 128 * 320;
  EXPECT_NEAR(llm_training_flops_per_token(ds, 4096), 3 * (2 * matmul + scores), 1e3);
  // Halving the causal scores gives the published 250 GFLOPs.
  EXPECT_NEAR((3 * (2 * matmul + scores / 2)) / 1e9, 250, 1);
  // gpt-oss-120b: every other layer attends over 128 keys only.
  const LlmConfig& oss = model("gpt_oss_120b");
  LlmConfig full = oss;
  full.local_layers = 0;
  const double per_layer_keys = (4096 - (4096 + 128) / 2.0) * 2 * 64 * 128;  // full - average
  EXPECT_NEAR(llm_training_flops_per_token(full, 4096) - llm_training_flops_per_token(oss, 4096),
              3 * 36 * per_layer_keys, 1);
  // Nemotron-H 8B: 24 Mamba-2 mixers scanning in chunks of 128: 2 x 128 x (8 x 128 + 8192) +
  // 4 x 8192 x 128 FLOPs each per token forward, beside the projections.
  LlmConfig nh = model("nemotron_h_8b");
  const double with = llm_training_flops_per_token(nh, 8192);
  nh.ssm_chunk = 64;  // half the chunk: the intra-chunk part halves
  EXPECT_NEAR(with - llm_training_flops_per_token(nh, 8192), 3 * 24 * 64 * 2 * (8 * 128 + 8192.0),
              1);
}

TEST(LlmArchitectures, ReadsTheirConfigJson) {
  const LlmConfig ds = read_llm_config(
      R"({"model_type": "deepseek_v3", "hidden_size": 7168, "num_hidden_layers": 61,
          "num_attention_heads": 128, "num_key_value_heads": 128, "intermediate_size": 18432,
          "moe_intermediate_size": 2048, "vocab_size": 129280, "max_position_embeddings": 163840,
          "first_k_dense_replace": 3, "n_routed_experts": 256, "n_shared_experts": 1,
          "num_experts_per_tok": 8, "q_lora_rank": 1536, "kv_lora_rank": 512,
          "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128,
          "num_nextn_predict_layers": 1, "tie_word_embeddings": false})",
      "ds.json", "ds");
  EXPECT_DOUBLE_EQ(llm_params(ds).total, llm_params(model("deepseek_v3")).total);
  const LlmConfig nh = read_llm_config(
      R"({"model_type": "nemotron_h", "hidden_size": 4096, "num_attention_heads": 32,
          "num_key_value_heads": 8, "intermediate_size": 21504, "vocab_size": 131072,
          "max_position_embeddings": 8192, "num_hidden_layers": 52,
          "hybrid_override_pattern": "M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M-",
          "mamba_num_heads": 128, "mamba_head_dim": 64, "ssm_state_size": 128, "n_groups": 8,
          "conv_kernel": 4, "chunk_size": 128, "tie_word_embeddings": false})",
      "nh.json", "nh");
  EXPECT_EQ(nh.layers, 28);
  EXPECT_EQ(nh.mamba_layers, 24);
  EXPECT_DOUBLE_EQ(llm_params(nh).total, llm_params(model("nemotron_h_8b")).total);
  const LlmConfig g3 = read_llm_config(
      R"({"model_type": "gemma3", "text_config": {"hidden_size": 5376, "num_hidden_layers": 62,
          "num_attention_heads": 32, "num_key_value_heads": 16, "head_dim": 128,
          "intermediate_size": 21504, "vocab_size": 262208, "max_position_embeddings": 131072,
          "sliding_window": 1024, "sliding_window_pattern": 6}})",
      "g3.json", "g3");
  EXPECT_EQ(g3.local_layers, 5);
  EXPECT_DOUBLE_EQ(llm_params(g3).total, llm_params(model("gemma3_27b")).total);
  try {
    read_llm_config(R"({"model_type": "nemotron_h", "hidden_size": 64, "num_hidden_layers": 2,
        "num_attention_heads": 4, "intermediate_size": 64, "vocab_size": 10,
        "max_position_embeddings": 8, "hybrid_override_pattern": "M*X",
        "mamba_num_heads": 2, "mamba_head_dim": 8, "ssm_state_size": 4})",
                    "bad.json", "bad");
    FAIL() << "accepted an unknown layer kind";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.json: \"hybrid_override_pattern\": unexpected 'X'"),
              std::string::npos)
        << e.what();
  }
}

// Each architecture prices and runs: a pipeline of 2 stages on 2 GPUs at 1 ms per op; a step
// takes at least its compute, and the mixer's parts price what they should (MLA's and Mamba's
// GEMMs are priced; a windowed layer costs less than a full one).
TEST(LlmArchitectures, PlansPriceAndRun) {
  for (const char* name :
       {"deepseek_v3", "gpt_oss_20b", "nemotron4_15b", "nemotron_h_8b", "grok1", "gemma3_12b"}) {
    const LlmConfig& m = model(name);
    ParallelPlan p;
    p.pp = 2;
    p.seq_len = 1024;
    p.global_batch = 4;
    check_parallel_plan(p, m, 2, name);
    int gemms = 0;
    const LlmCosts c = price_llm(m, p, [&](const ModelOp& op) {
      if (op.inputs.size() >= 2) ++gemms;  // GEMMs and batched products
      return 1e-6;
    });
    EXPECT_GT(c.attention_fwd.seconds, 0) << name;
    EXPECT_GT(c.mlp_wgrad.seconds, 0) << name;
    EXPECT_GT(gemms, 8) << name;
    const testing::LlmCluster cl = testing::dgx_a100(2);
    const LlmStep step = build_llm_step(m, p, cl.gpus, c, {});
    const RunResult r = replay_isolated(cl.source, step.graph, ReplayOptions{});
    EXPECT_GT(r.makespan, 0) << name;
    EXPECT_GT(llm_memory(m, p)[0].activations, 0) << name;
  }
}

// docs/validation.md's architecture table is what `orrery accuracy` prints now: each published
// run simulated from its setup (a golden result; regenerate it with --update-doc when a model
// changes on purpose).
TEST(LlmArchitectures, ValidationTableInTheDocsIsWhatAccuracyPrints) {
  if (testing::orrery_bin().empty()) GTEST_SKIP() << "ORRERY_BIN is set by ctest";
  const std::string output = testing::expect_doc_block_is_command_output(
      "accuracy --only architectures --only v25.05.05 --only model-zoo --markdown -j 2",
      "docs/validation.md", "architecture-validation");
  for (const char* model : {"| DeepSeek-V3, 512 H100 bf16 |", "| Qwen3-30B-A3B, 16 H100 fp8-cs |",
                            "| Nemotron-H 56B, 256 H100 fp8-cs |"})
    EXPECT_NE(output.find(model), std::string::npos) << model;
}

}  // namespace
}  // namespace orrery
